/* prelu.c: the parametric ReLU (F.prelu): x where x > 0, weight * x elsewhere, weight one
 * value shared by all channels or one per channel (dim 1).
 *
 * Computed with the engine's own ops with grad mode off and recorded as one node with both
 * operands as inputs, PreluBackward0 as torch records it; its formula is written with ops, so
 * it differentiates again.
 */
#include "ops-impl.h"

/* The weight's shape for broadcasting against x of nd dims: [C, 1, ...] (dim 1 of x) when it
 * has numel > 1 values (one per channel), [] when one for all; its number of dims. */
static int broadcast_shape(int64_t numel, int nd, int64_t *shape) {
  if (numel == 1)
    return 0;
  shape[0] = numel;
  for (int d = 1; d < nd - 1; d++)
    shape[d] = 1;
  return nd - 1;
}

/* d prelu(x, w) = g where x > 0, w g elsewhere for x; x g where x <= 0, summed over all but
 * the channels, for w (saved: x, w) */
static void prelu_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  const gs__input_meta *xm = &n->inputs[0], *wm = &n->inputs[1];
  gs_tensor x = gs__saved(n, 0), w = gs__saved(n, 1);
  int64_t numel = 1, shape[GS_MAX_DIMS];
  for (int d = 0; d < wm->ndim; d++)
    numel *= wm->shape[d];
  int bnd = broadcast_shape(numel, xm->ndim, shape);
  gs_tensor wb = gs__formula_temp(gs_reshape(w, shape, bnd));
  gs_tensor positive = gs__formula_temp(gs_gt_scalar(x, 0.0));
  if (gs__needs_grad(n, 0))
    grads[0] = gs__reduce_grad(n, 0, gs_where(positive, g, gs__formula_temp(gs_mul(wb, g))));
  if (gs__needs_grad(n, 1)) {
    gs_tensor zero = gs__formula_temp(gs_scalar(gs_dtype_of(g), 0.0));
    gs_tensor xg = gs__formula_temp(gs_mul(x, g));
    gs_tensor part = gs__formula_temp(gs_where(positive, zero, xg));
    int dims[GS_MAX_DIMS], nd = 0;
    for (int d = 0; d < xm->ndim; d++)
      if (bnd == 0 || d != 1)
        dims[nd++] = d;
    gs_tensor summed = nd ? gs__formula_temp(gs_sum(part, dims, nd, false)) : part;
    grads[1] = gs__reduce_grad(n, 1, gs_reshape(summed, wm->shape, wm->ndim));
  }
}
GS__BACKWARD_TWICE(PreluBackward, prelu_backward);

gs_tensor gs_prelu(gs_tensor hx, gs_tensor hw) {
  const char *fn = "prelu";
  gs__tensor *x = gs__lookup(hx, fn);
  gs__tensor *w = x ? gs__lookup(hw, fn) : NULL;
  if (!w)
    return GS_NO_TENSOR;
  if (!gs_dtype_is_floating(x->dtype) || w->dtype != x->dtype) {
    gs__error(GS_ERR_DTYPE, fn,
              "expected a floating input and a weight of its dtype, got %s and %s",
              gs_dtype_name(x->dtype), gs_dtype_name(w->dtype));
    return GS_NO_TENSOR;
  }
  int64_t channels = x->ndim >= 2 ? x->shape[1] : 1;
  if (w->numel != 1 && (x->ndim < 2 || w->numel != channels)) {
    gs__error(
        GS_ERR_SHAPE, fn,
        "expected a weight of 1 value or one per channel (%lld, dim 1 of the input), got %lld "
        "values",
        (long long)channels, (long long)w->numel);
    return GS_NO_TENSOR;
  }
  int64_t shape[GS_MAX_DIMS];
  int bnd = broadcast_shape(w->numel, x->ndim, shape);
  gs_no_grad_begin();
  gs_tensor wb = gs_reshape(hw, shape, bnd);
  gs_tensor scaled = wb.id ? gs_mul(hx, wb) : GS_NO_TENSOR;
  gs_tensor positive = gs_gt_scalar(hx, 0.0);
  gs_tensor out = scaled.id && positive.id ? gs_where(positive, hx, scaled) : GS_NO_TENSOR;
  gs_no_grad_end();
  gs_tensor temps[] = {wb, scaled, positive};
  for (int i = 0; i < 3; i++)
    if (temps[i].id)
      gs_dispose(temps[i]);
  gs__node *n = gs__record_result(&PreluBackward, out, 2, (const gs__tensor *[]){x, w}, 2, fn);
  if (n) {
    gs__save(n, 0, x);
    gs__save(n, 1, w);
  }
  return out;
}
