/* group-norm.c: group normalisation (torch.nn.functional.group_norm) of an input [N, C, ...]
 * whose C channels form `groups` groups of C / groups.
 *
 * Each group of each sample (a contiguous block of C / groups * L values, L the product of
 * the dims after C) is normalised by its mean and biased variance, accumulated in double,
 * then each channel is scaled by weight and shifted by bias: y = (x - mean) * invstd * w + b.
 *
 * The backward formula is written with ops, over x seen as [N, G, K] (K = C / G * L):
 *   xhat = (x - mean) * invstd, gh = g * weight,
 *   dx = invstd * (gh - mean(gh) - xhat * mean(gh * xhat)), means over K;
 *   dweight = sum(g * xhat), dbias = sum(g), over all dims but C.
 * The mean and invstd are recomputed from the saved x with ops, so the formula's own
 * derivative (a double backward) follows the group statistics as they move with x.
 *
 * weight and bias are each optional, as torch's, in any combination; unlike torch 1.13, whose
 * backward fails with bias but no weight ("tensor does not have a device"), that case has its
 * gradients here (tests/python/test_torch_names_gaps.py checks them by finite differences);
 * and an empty input's weight gradient is 0 (an empty sum) where torch's is NaN.
 * The [N, C, ...] input and [C] operand checks are batch_norm's (gs__check_channels_input).
 */
#include <math.h>
#include <stdlib.h>

#include "ops-impl.h"

/* ints: the group count, then the input numbers of weight and bias (-1 when not given). */
enum { GN_GROUPS, GN_WEIGHT_INPUT, GN_BIAS_INPUT };

void gs__formula_normalise(gs_tensor x, int k, double eps, gs_tensor *xhat, gs_tensor *invstd) {
  gs_tensor mean = gs__formula_temp(gs_mean(x, &k, 1, true));
  gs_tensor centred = gs__formula_temp(gs_sub(x, mean));
  gs_tensor var =
      gs__formula_temp(gs_mean(gs__formula_temp(gs_mul(centred, centred)), &k, 1, true));
  *invstd = gs__formula_temp(gs_rsqrt(gs__formula_temp(gs_add_scalar(var, eps))));
  *xhat = gs__formula_temp(gs_mul(centred, *invstd));
}

gs_tensor gs__formula_normalise_grad(gs_tensor gh, gs_tensor xhat, gs_tensor invstd, int k) {
  gs_tensor m1 = gs__formula_temp(gs_mean(gh, &k, 1, true));
  gs_tensor m2 = gs__formula_temp(gs_mean(gs__formula_temp(gs_mul(gh, xhat)), &k, 1, true));
  gs_tensor d = gs__formula_temp(
      gs_sub(gs__formula_temp(gs_sub(gh, m1)), gs__formula_temp(gs_mul(xhat, m2))));
  return gs__formula_temp(gs_mul(d, invstd));
}

/* A [C] tensor seen as [1, C, 1, ...] so it broadcasts against an input of ndim dims. */
static gs_tensor per_channel(gs_tensor t, int ndim, int64_t c) {
  int64_t shape[GS_MAX_DIMS];
  for (int d = 0; d < ndim; d++)
    shape[d] = d == 1 ? c : 1;
  return gs__formula_temp(gs_reshape(t, shape, ndim));
}

/* t [N, C, ...] seen as [N, G, K]. */
static gs_tensor as_groups(gs_tensor t, int64_t n, int64_t groups) {
  return gs__formula_temp(gs_reshape(t, (int64_t[]){n, groups, -1}, 3));
}

/* (saved: x in slot 0, weight in slot 1 when given) */
static void group_norm_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  const gs__input_meta *in = &n->inputs[0];
  int ndim = in->ndim;
  int64_t c = in->shape[1], groups = n->ints[GN_GROUPS];
  int wi = (int)n->ints[GN_WEIGHT_INPUT], bi = (int)n->ints[GN_BIAS_INPUT];
  int other[GS_MAX_DIMS], no = 0;
  for (int d = 0; d < ndim; d++)
    if (d != 1)
      other[no++] = d;
  gs_tensor x = as_groups(gs__saved(n, 0), in->shape[0], groups);
  int k = 2;
  gs_tensor xhat, invstd;
  gs__formula_normalise(x, k, n->reals[0], &xhat, &invstd);
  if (gs__needs_grad(n, 0)) {
    gs_tensor gw = wi >= 0 ? gs__formula_temp(gs_mul(g, per_channel(gs__saved(n, 1), ndim, c))) : g;
    gs_tensor gh = as_groups(gw, in->shape[0], groups);
    gs_tensor dx = gs__formula_normalise_grad(gh, xhat, invstd, k);
    grads[0] = gs__reduce_grad(n, 0, gs_reshape(dx, in->shape, ndim));
  }
  if (wi >= 0 && gs__needs_grad(n, wi)) {
    gs_tensor xh = gs__formula_temp(gs_reshape(xhat, in->shape, ndim));
    grads[wi] = gs__reduce_grad(n, wi, gs_sum(gs__formula_temp(gs_mul(g, xh)), other, no, false));
  }
  if (bi >= 0 && gs__needs_grad(n, bi))
    grads[bi] = gs__reduce_grad(n, bi, gs_sum(g, other, no, false));
}
GS__BACKWARD_TWICE(NativeGroupNormBackward, group_norm_backward);

static bool check_operands(const gs__tensor *x, int64_t groups, const gs__tensor *w,
                           const gs__tensor *b, double eps, const char *fn) {
  char s[GS__SHAPE_STR];
  if (!gs__check_channels_input(x, fn))
    return false;
  if (groups <= 0 || x->shape[1] % groups != 0) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected the number of channels to be divisible by groups, got input of shape %s "
              "and groups %lld",
              gs__shape_str(s, x->shape, x->ndim), (long long)groups);
    return false;
  }
  if (!(eps >= 0)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected eps >= 0, got %g", eps);
    return false;
  }
  return gs__check_channel_operand(w, "weight", x->shape[1], x->dtype, fn) &&
         gs__check_channel_operand(b, "bias", x->shape[1], x->dtype, fn);
}

static double load(const char *data, gs_dtype dt, int64_t i) {
  return dt == GS_F32 ? (double)((const float *)data)[i] : ((const double *)data)[i];
}

static double channel_value(const gs__tensor *t, int64_t ch, double absent) {
  if (!t)
    return absent;
  return gs__load_f64(gs__tensor_data(t) + ch * t->strides[0] * (int64_t)gs__elsize(t->dtype),
                      t->dtype);
}

/* y = (x - mean) * invstd * w + b, group by group, over a contiguous x. */
static void group_norm_kernel(const gs__tensor *cx, const gs__tensor *w, const gs__tensor *b,
                              int64_t groups, double eps, gs__tensor *out) {
  gs_dtype dt = cx->dtype;
  int64_t n = cx->shape[0], c = cx->shape[1], per = c / groups;
  int64_t l = n > 0 && c > 0 ? cx->numel / (n * c) : 0, k = per * l;
  const char *in = gs__tensor_data(cx);
  char *po = gs__tensor_data(out);
  for (int64_t grp = 0; grp < n * groups; grp++) {
    int64_t base = grp * k;
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < k; i++)
      sum += load(in, dt, base + i);
    double mean = k > 0 ? sum / (double)k : 0;
    for (int64_t i = 0; i < k; i++) {
      double d = load(in, dt, base + i) - mean;
      sq += d * d;
    }
    double invstd = 1.0 / sqrt((k > 0 ? sq / (double)k : 0) + eps);
    for (int64_t j = 0; j < per; j++) {
      int64_t ch = (grp % groups) * per + j;
      double alpha = invstd * channel_value(w, ch, 1.0);
      double beta = channel_value(b, ch, 0.0) - mean * alpha;
      int64_t at = base + j * l;
      if (dt == GS_F32)
        for (int64_t i = 0; i < l; i++)
          ((float *)po)[at + i] = (float)((double)((const float *)in)[at + i] * alpha + beta);
      else
        for (int64_t i = 0; i < l; i++)
          ((double *)po)[at + i] = ((const double *)in)[at + i] * alpha + beta;
    }
  }
}

gs_tensor gs_group_norm(gs_tensor hx, int64_t groups, gs_tensor weight, gs_tensor bias,
                        double eps) {
  const char *fn = "group_norm";
  gs__tensor *x = gs__lookup(hx, fn), *w = NULL, *b = NULL;
  if (!x || (weight.id && !(w = gs__lookup(weight, fn))) ||
      (bias.id && !(b = gs__lookup(bias, fn))))
    return GS_NO_TENSOR;
  if (!check_operands(x, groups, w, b, eps, fn))
    return GS_NO_TENSOR;
  gs__tensor cx;
  if (!gs__as_contiguous(x, x->dtype, &cx, fn))
    return GS_NO_TENSOR;
  gs__tensor *out;
  gs_tensor h = gs__tensor_new(x->dtype, x->shape, x->ndim, fn, &out);
  if (h.id)
    group_norm_kernel(&cx, w, b, groups, eps, out);
  gs__tensor_release(&cx);
  if (!h.id)
    return h;
  gs__record_affine_norm(&NativeGroupNormBackward, h, x, w, b, groups, eps, fn);
  return h;
}

void gs__record_affine_norm(const gs__node_kind *kind, gs_tensor h, const gs__tensor *x,
                            const gs__tensor *w, const gs__tensor *b, int64_t param, double eps,
                            const char *fn) {
  const gs__tensor *inputs[3] = {x};
  int count = 1, wi = w ? count++ : -1, bi = b ? count++ : -1;
  if (w)
    inputs[wi] = w;
  if (b)
    inputs[bi] = b;
  gs__node *node = gs__record(kind, gs__lookup(h, fn), count, inputs, 2);
  if (node) {
    node->ints[0] = param;
    node->ints[1] = wi;
    node->ints[2] = bi;
    node->reals[0] = eps;
    gs__save(node, 0, x);
    if (w)
      gs__save(node, 1, w);
  }
}
