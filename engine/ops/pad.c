/* pad.c: constant padding (torch.constant_pad_nd, F.pad's mode 'constant'): the input
 * surrounded by value along its last dims, or cropped where a pad is negative.
 *
 * Computed with the engine's own ops with grad mode off (a filled tensor and a copy into its
 * interior) and recorded as one node, ConstantPadNdBackward0 as torch records it, whose
 * formula is the same op with the pads negated (a crop where the input was padded), so it
 * differentiates again.
 */
#include <string.h>

#include "ops-impl.h"

/* d pad(t, p) = pad(g, -p): the part of g over t, t's own size again (ints: the pads, two per
 * dim of t from the last, 0 where none were given) */
static void constant_pad_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  int npad = 2 * n->inputs[0].ndim;
  int64_t crop[GS__NODE_INTS];
  for (int i = 0; i < npad; i++)
    crop[i] = -n->ints[i];
  grads[0] = gs__reduce_grad(n, 0, gs_constant_pad_nd(g, crop, npad, 0.0));
}
GS__BACKWARD_TWICE(ConstantPadNdBackward, constant_pad_backward);
_Static_assert(GS__NODE_INTS >= 2 * GS_MAX_DIMS, "a pad node keeps two pads per dim");

/* The part of t that stays (src) written into out's interior, both narrowed along each padded
 * dim; grad mode is off. */
static void copy_interior(gs_tensor h, const gs__tensor *t, gs_tensor out, const int64_t *pad,
                          int npad) {
  gs_tensor src = h, dst = out; /* narrowed views of them once a dim is narrowed */
  bool ok = true;
  for (int i = 0; i < npad / 2 && ok; i++) {
    int d = t->ndim - 1 - i;
    int64_t left = pad[2 * i], right = pad[2 * i + 1];
    int64_t from = left < 0 ? -left : 0, len = t->shape[d] - from - (right < 0 ? -right : 0);
    ok = len > 0; /* else everything of t along d is cropped: nothing to copy */
    gs_tensor s = ok ? gs_narrow(src, d, from, len) : GS_NO_TENSOR;
    gs_tensor o = ok ? gs_narrow(dst, d, left > 0 ? left : 0, len) : GS_NO_TENSOR;
    if (src.id != h.id)
      gs_dispose(src);
    if (dst.id != out.id)
      gs_dispose(dst);
    src = s, dst = o;
    ok = ok && src.id && dst.id;
  }
  if (ok)
    gs_copy_(dst, src);
  if (src.id && src.id != h.id)
    gs_dispose(src);
  if (dst.id && dst.id != out.id)
    gs_dispose(dst);
}

gs_tensor gs_constant_pad_nd(gs_tensor h, const int64_t *pad, int npad, double value) {
  const char *fn = "constant_pad_nd";
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return GS_NO_TENSOR;
  if (npad < 0 || npad % 2 != 0 || (npad > 0 && !pad)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected an even number of pads (two per dim), got %d", npad);
    return GS_NO_TENSOR;
  }
  if (npad / 2 > t->ndim) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected at most two pads per dim of the input (%d dims: at most %d), got %d",
              t->ndim, 2 * t->ndim, npad);
    return GS_NO_TENSOR;
  }
  int64_t shape[GS_MAX_DIMS];
  memcpy(shape, t->shape, sizeof shape);
  for (int i = 0; i < npad / 2; i++) {
    int d = t->ndim - 1 - i;
    if (__builtin_add_overflow(shape[d], pad[2 * i], &shape[d]) ||
        __builtin_add_overflow(shape[d], pad[2 * i + 1], &shape[d]) || shape[d] < 0) {
      gs__error(GS_ERR_ARGUMENT, fn,
                "dim %d of size %lld padded by %lld and %lld gives a negative or overflowing "
                "size",
                d, (long long)t->shape[d], (long long)pad[2 * i], (long long)pad[2 * i + 1]);
      return GS_NO_TENSOR;
    }
  }
  gs_no_grad_begin();
  gs_tensor out = gs_full(t->dtype, shape, t->ndim, value);
  if (out.id)
    copy_interior(h, t, out, pad, npad);
  gs_no_grad_end();
  gs__node *n = gs__record_result(&ConstantPadNdBackward, out, 1, (const gs__tensor *[]){t}, 0, fn);
  for (int i = 0; n && i < 2 * t->ndim; i++)
    n->ints[i] = i < npad ? pad[i] : 0;
  return out;
}
