/* remainder-scalar.c: Python's % and torch.fmod by a number (torch.remainder(t, 2.5),
 * t % 2): one node with the tensor as its only input, as torch records the Scalar overloads
 * (RemainderBackward0, FmodBackward0), where a 0-dim tensor for the number would show as a
 * second input.
 *
 * The values come from the tensor forms (gs_remainder, gs_fmod) with grad mode off. The
 * gradient is g: t - floor(t / s) s (or trunc) has slope 1 wherever it is smooth, as torch.
 */
#include "ops-impl.h"

/* d (t mod s) = g */
static void mod_scalar_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad_through(n, 0, g);
}
GS__BACKWARD_TWICE(RemainderScalarBackward, mod_scalar_backward);
GS__BACKWARD_TWICE(FmodScalarBackward, mod_scalar_backward);

static gs_tensor mod_scalar(gs_tensor h, double s, bool remainder, const char *fn) {
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return GS_NO_TENSOR;
  gs_no_grad_begin();
  gs_tensor divisor = gs_scalar(t->dtype, s);
  gs_tensor out = divisor.id ? (remainder ? gs_remainder : gs_fmod)(h, divisor) : GS_NO_TENSOR;
  gs_no_grad_end();
  if (divisor.id)
    gs_dispose(divisor);
  gs__record_result(remainder ? &RemainderScalarBackward : &FmodScalarBackward, out, 1,
                    (const gs__tensor *[]){t}, 0, fn);
  return out;
}

gs_tensor gs_remainder_scalar(gs_tensor t, double s) {
  return mod_scalar(t, s, true, "remainder_scalar");
}

gs_tensor gs_fmod_scalar(gs_tensor t, double s) { return mod_scalar(t, s, false, "fmod_scalar"); }
