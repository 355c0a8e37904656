/* layer-norm.c: layer normalisation (torch.nn.functional.layer_norm) of an input over its
 * last k dims (the normalized shape).
 *
 * Each row (the K = product of the normalized shape values that end at one position of the
 * leading dims) is normalised by its mean and biased variance, accumulated in double, then
 * scaled elementwise by weight and shifted by bias (both of the normalized shape, or absent):
 * y = (x - mean) * invstd * w + b. One node, as torch's NativeLayerNormBackward0.
 *
 * The backward formula is written with ops, over x seen as [M, K]:
 *   xhat = (x - mean) * invstd, gh = g * weight,
 *   dx = invstd * (gh - mean(gh) - xhat * mean(gh * xhat)), means over K;
 *   dweight = sum(g * xhat), dbias = sum(g), over the leading dims.
 * The statistics are recomputed from the saved x with ops, so the formula's own derivative (a
 * double backward) follows them as they move with x.
 */
#include <math.h>
#include <string.h>

#include "ops-impl.h"

/* ints (gs__record_affine_norm's): the normalized dims' count, then the input numbers of weight
 * and bias (-1: none). */
enum { LN_DIMS, LN_WEIGHT_INPUT, LN_BIAS_INPUT };

/* (saved: x in slot 0, weight in slot 1 when given) */
static void layer_norm_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  const gs__input_meta *in = &n->inputs[0];
  int wi = (int)n->ints[LN_WEIGHT_INPUT], bi = (int)n->ints[LN_BIAS_INPUT];
  int64_t rows = 1;
  for (int d = 0; d < in->ndim - (int)n->ints[LN_DIMS]; d++)
    rows *= in->shape[d];
  int64_t as_rows[2] = {rows, -1};
  gs_tensor x = gs__formula_temp(gs_reshape(gs__saved(n, 0), as_rows, 2));
  int k = 1;
  gs_tensor xhat, invstd;
  gs__formula_normalise(x, k, n->reals[0], &xhat, &invstd);
  if (gs__needs_grad(n, 0)) {
    gs_tensor gw = wi >= 0 ? gs__formula_temp(gs_mul(g, gs__saved(n, 1))) : g;
    gs_tensor gh = gs__formula_temp(gs_reshape(gw, as_rows, 2));
    gs_tensor dx = gs__formula_normalise_grad(gh, xhat, invstd, k);
    grads[0] = gs__reduce_grad(n, 0, gs_reshape(dx, in->shape, in->ndim));
  }
  /* gs__reduce_grad sums the leading dims away: weight and bias are the trailing shape */
  if (wi >= 0 && gs__needs_grad(n, wi)) {
    gs_tensor xh = gs__formula_temp(gs_reshape(xhat, in->shape, in->ndim));
    grads[wi] = gs__reduce_grad(n, wi, gs_mul(g, xh));
  }
  if (bi >= 0 && gs__needs_grad(n, bi))
    grads[bi] = gs__reduce_grad_through(n, bi, g);
}
GS__BACKWARD_TWICE(NativeLayerNormBackward, layer_norm_backward);

/* Whether a weight or bias has the normalized shape and the input's dtype; reports when not. */
static bool check_affine(const gs__tensor *t, const char *what, const int64_t *shape, int k,
                         gs_dtype dtype, const char *fn) {
  if (!t)
    return true;
  if (t->ndim != k || memcmp(t->shape, shape, (size_t)k * sizeof *shape) != 0) {
    char s[GS__SHAPE_STR], ns[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn,
              "expected %s of the same shape as normalized_shape %s, got %s of shape %s", what,
              gs__shape_str(ns, shape, k), what, gs__shape_str(s, t->shape, t->ndim));
    return false;
  }
  if (t->dtype != dtype) {
    gs__error(GS_ERR_DTYPE, fn, "expected %s of the input's dtype %s, got %s", what,
              gs_dtype_name(dtype), gs_dtype_name(t->dtype));
    return false;
  }
  return true;
}

static bool check_operands(const gs__tensor *x, const int64_t *shape, int k, const gs__tensor *w,
                           const gs__tensor *b, double eps, const char *fn) {
  char s[GS__SHAPE_STR], ns[GS__SHAPE_STR];
  if (x->dtype != GS_F32 && x->dtype != GS_F64) {
    gs__error(GS_ERR_DTYPE, fn, "expected a floating input (f32 or f64), got %s",
              gs_dtype_name(x->dtype));
    return false;
  }
  if (k < 1 || k > GS_MAX_DIMS) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a normalized_shape of 1 to %d sizes, got %d",
              GS_MAX_DIMS, k);
    return false;
  }
  bool fits = x->ndim >= k && memcmp(x->shape + x->ndim - k, shape, (size_t)k * sizeof *shape) == 0;
  if (!fits) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected an input whose last %d dims are normalized_shape %s, got an input of "
              "shape %s",
              k, gs__shape_str(ns, shape, k), gs__shape_str(s, x->shape, x->ndim));
    return false;
  }
  if (!(eps >= 0) || !isfinite(eps)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a finite eps >= 0, got %g", eps);
    return false;
  }
  return check_affine(w, "weight", shape, k, x->dtype, fn) &&
         check_affine(b, "bias", shape, k, x->dtype, fn);
}

/* y = (x - mean) * invstd * w + b, row by row, over contiguous x, w and b (w, b may be NULL). */
#define LAYER_NORM_ROWS(T)                                                                         \
  static void layer_norm_rows_##T(const T *x, const T *w, const T *b, int64_t rows, int64_t k,     \
                                  double eps, T *y) {                                              \
    for (int64_t r = 0; r < rows; r++, x += k, y += k) {                                           \
      double sum = 0, sq = 0;                                                                      \
      for (int64_t i = 0; i < k; i++)                                                              \
        sum += (double)x[i];                                                                       \
      double mean = k > 0 ? sum / (double)k : 0;                                                   \
      for (int64_t i = 0; i < k; i++) {                                                            \
        double d = (double)x[i] - mean;                                                            \
        sq += d * d;                                                                               \
      }                                                                                            \
      double invstd = 1.0 / sqrt((k > 0 ? sq / (double)k : 0) + eps);                              \
      for (int64_t i = 0; i < k; i++) {                                                            \
        double v = ((double)x[i] - mean) * invstd;                                                 \
        if (w)                                                                                     \
          v *= (double)w[i];                                                                       \
        if (b)                                                                                     \
          v += (double)b[i];                                                                       \
        y[i] = (T)v;                                                                               \
      }                                                                                            \
    }                                                                                              \
  }
LAYER_NORM_ROWS(float)
LAYER_NORM_ROWS(double)

/* A contiguous copy (or alias) of t, or an empty stand-in for an absent operand. */
static bool contiguous_or_none(const gs__tensor *t, gs__tensor *out, const char *fn) {
  if (!t) {
    memset(out, 0, sizeof *out);
    return true;
  }
  return gs__as_contiguous(t, t->dtype, out, fn);
}

gs_tensor gs_layer_norm_shape(gs_tensor hx, const int64_t *normalized_shape, int k,
                              gs_tensor weight, gs_tensor bias, double eps) {
  const char *fn = "layer_norm";
  gs__tensor *x = gs__lookup(hx, fn), *w = NULL, *b = NULL;
  if (!x || (weight.id && !(w = gs__lookup(weight, fn))) ||
      (bias.id && !(b = gs__lookup(bias, fn))))
    return GS_NO_TENSOR;
  if (!normalized_shape && k != 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected normalized_shape, got NULL");
    return GS_NO_TENSOR;
  }
  if (!check_operands(x, normalized_shape, k, w, b, eps, fn))
    return GS_NO_TENSOR;
  int64_t per_row = 1;
  for (int d = 0; d < k; d++)
    per_row *= normalized_shape[d];
  int64_t rows = per_row > 0 ? x->numel / per_row : 0;
  gs__tensor cx, cw, cb;
  if (!gs__as_contiguous(x, x->dtype, &cx, fn))
    return GS_NO_TENSOR;
  if (!contiguous_or_none(w, &cw, fn)) {
    gs__tensor_release(&cx);
    return GS_NO_TENSOR;
  }
  if (!contiguous_or_none(b, &cb, fn)) {
    gs__tensor_release(&cx);
    if (w)
      gs__tensor_release(&cw);
    return GS_NO_TENSOR;
  }
  gs__tensor *out;
  gs_tensor h = gs__tensor_new(x->dtype, x->shape, x->ndim, fn, &out);
  if (h.id) {
    const void *pw = w ? gs__tensor_data(&cw) : NULL, *pb = b ? gs__tensor_data(&cb) : NULL;
    if (x->dtype == GS_F32)
      layer_norm_rows_float((const float *)gs__tensor_data(&cx), pw, pb, rows, per_row, eps,
                            (float *)gs__tensor_data(out));
    else
      layer_norm_rows_double((const double *)gs__tensor_data(&cx), pw, pb, rows, per_row, eps,
                             (double *)gs__tensor_data(out));
  }
  gs__tensor_release(&cx);
  if (w)
    gs__tensor_release(&cw);
  if (b)
    gs__tensor_release(&cb);
  if (!h.id)
    return h;
  gs__record_affine_norm(&NativeLayerNormBackward, h, x, w, b, k, eps, fn);
  return h;
}
