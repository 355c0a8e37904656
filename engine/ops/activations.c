/* activations.c: the activations torch.nn has beyond relu, gelu and sigmoid (silu, elu and
 * selu, softplus, hardtanh and relu6, hardsigmoid, hardswish, logsigmoid, mish), as unary
 * ops with torch's node kinds. Each backward is g times the op's derivative, an internal
 * unary op (kernels.c) over the saved input, so the slopes at the kinks are torch's. */
#include <math.h>

#include "ops-impl.h"

/* g times grad_op (the activation's derivative, ops-impl.h) at the saved input, with the
 * node's two parameters. It records no node: no second derivative. */
static void activation_backward(gs__node *n, gs_tensor g, gs_tensor *grads, gs__unop grad_op) {
  gs__unary_params p = {.arg = {n->reals[0], n->reals[1]}};
  gs_tensor d = gs__formula_temp(gs__unary_op(grad_op, gs__saved(n, 0), &p, n->kind->name));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, d));
}

#define ACTIVATION_BACKWARD(KIND, GRAD_OP)                                                         \
  static void KIND##_formula(gs__node *n, gs_tensor g, gs_tensor *grads) {                         \
    activation_backward(n, g, grads, GRAD_OP);                                                     \
  }                                                                                                \
  GS__BACKWARD(KIND, KIND##_formula)

ACTIVATION_BACKWARD(SiluBackward, GS__SILU_GRAD);
ACTIVATION_BACKWARD(EluBackward, GS__ELU_GRAD); /* selu too, as in torch */
ACTIVATION_BACKWARD(SoftplusBackward, GS__SOFTPLUS_GRAD);
ACTIVATION_BACKWARD(HardtanhBackward, GS__HARDTANH_GRAD); /* relu6 too, as in torch */
ACTIVATION_BACKWARD(HardsigmoidBackward, GS__HARDSIGMOID_GRAD);
ACTIVATION_BACKWARD(HardswishBackward, GS__HARDSWISH_GRAD);
ACTIVATION_BACKWARD(LogSigmoidBackward, GS__LOGSIGMOID_GRAD);
ACTIVATION_BACKWARD(MishBackward, GS__MISH_GRAD);

/* Runs op over h (integers compute in f32, as torch.exp) and records its node, which saves the
 * input and the two parameters. */
static gs_tensor activation(gs__unop op, const gs__node_kind *kind, gs_tensor h, double arg0,
                            double arg1, const char *fn) {
  gs__unary_params p = {.arg = {arg0, arg1}};
  gs_tensor r = gs__unary_op(op, h, &p, fn); /* records nothing: the op has no kind there */
  if (!r.id)
    return r;
  gs__tensor *in = gs__lookup(h, fn), *out = gs__lookup(r, fn);
  if (!in || !out || !gs__any_requires_grad(1, (const gs__tensor *const[]){in}))
    return r;
  gs__node *n = gs__record(kind, out, 1, (const gs__tensor *const[]){in}, 1);
  if (!n)
    return r;
  gs__save(n, 0, in);
  n->reals[0] = arg0;
  n->reals[1] = arg1;
  return r;
}

/* Checks that a parameter is a finite number, as fn's name. */
static bool finite_param(double v, const char *name, const char *fn) {
  if (isfinite(v))
    return true;
  gs__error(GS_ERR_ARGUMENT, fn, "expected a finite %s, got %g", name, v);
  return false;
}

gs_tensor gs_silu(gs_tensor t) { return activation(GS__SILU, &SiluBackward, t, 0, 0, "silu"); }

gs_tensor gs_elu(gs_tensor t, double alpha) {
  if (!finite_param(alpha, "alpha", "elu"))
    return GS_NO_TENSOR;
  return activation(GS__ELU, &EluBackward, t, alpha, 1.0, "elu");
}

/* torch's constants (Klambauer et al., 2017). */
#define SELU_ALPHA 1.6732632423543772848170429916717
#define SELU_SCALE 1.0507009873554804934193349852946

gs_tensor gs_selu(gs_tensor t) {
  return activation(GS__ELU, &EluBackward, t, SELU_ALPHA, SELU_SCALE, "selu");
}

gs_tensor gs_softplus(gs_tensor t, double beta, double threshold) {
  if (!finite_param(beta, "beta", "softplus") || !finite_param(threshold, "threshold", "softplus"))
    return GS_NO_TENSOR;
  if (beta == 0) {
    gs__error(GS_ERR_ARGUMENT, "softplus", "expected a non-zero beta, got 0");
    return GS_NO_TENSOR;
  }
  return activation(GS__SOFTPLUS, &SoftplusBackward, t, beta, threshold, "softplus");
}

gs_tensor gs_hardtanh(gs_tensor t, double min_val, double max_val) {
  if (isnan(min_val) || isnan(max_val) || min_val > max_val) {
    gs__error(GS_ERR_ARGUMENT, "hardtanh",
              "expected min_val <= max_val, got min_val %g, "
              "max_val %g",
              min_val, max_val);
    return GS_NO_TENSOR;
  }
  return activation(GS__HARDTANH, &HardtanhBackward, t, min_val, max_val, "hardtanh");
}

gs_tensor gs_relu6(gs_tensor t) {
  return activation(GS__HARDTANH, &HardtanhBackward, t, 0.0, 6.0, "relu6");
}

gs_tensor gs_hardsigmoid(gs_tensor t) {
  return activation(GS__HARDSIGMOID, &HardsigmoidBackward, t, 0, 0, "hardsigmoid");
}

gs_tensor gs_hardswish(gs_tensor t) {
  return activation(GS__HARDSWISH, &HardswishBackward, t, 0, 0, "hardswish");
}

gs_tensor gs_logsigmoid(gs_tensor t) {
  return activation(GS__LOGSIGMOID, &LogSigmoidBackward, t, 0, 0, "logsigmoid");
}

gs_tensor gs_mish(gs_tensor t) { return activation(GS__MISH, &MishBackward, t, 0, 0, "mish"); }
