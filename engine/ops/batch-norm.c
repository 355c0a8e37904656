/* batch-norm.c: batch normalisation (torch.nn.functional.batch_norm) over dim 1 of an input
 * [N, C, ...].
 *
 * In training, each channel is normalised by the mean and biased variance of its N * L
 * values (L: the product of the dims after C), accumulated in double as PyTorch's CPU kernel
 * does, and the running estimates move towards the batch's: running = (1 - momentum) *
 * running + momentum * batch, with the unbiased variance (N L / (N L - 1)). In evaluation the
 * running estimates normalise. The output is x * alpha + beta per channel, alpha =
 * weight / sqrt(var + eps), beta = bias - mean * alpha.
 *
 * The backward formula is written with ops from the saved input and the mean and 1/std the
 * forward used (copies, so later updates of the running estimates do not change them):
 *   xhat = (x - mean) * invstd, gh = g * weight,
 *   training: dx = invstd * (gh - mean(gh) - xhat * mean(gh * xhat)), means over all dims but C;
 *   evaluation: dx = invstd * gh;
 *   dweight = sum(g * xhat), dbias = sum(g).
 * A backward that creates a graph in training recomputes mean and invstd from x with ops, so
 * the formula's own derivative follows the batch statistics too (as PyTorch's
 * batchnorm_double_backward).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops-impl.h"

/* The channel-sized tensors of a call, looked up (NULL when not given). */
typedef struct bn_operands {
  gs__tensor *x, *mean, *var, *weight, *bias;
} bn_operands;

/* Input numbers in the node: x is 0, then weight and bias when given. */
enum { BN_TRAINING, BN_WEIGHT_INPUT, BN_BIAS_INPUT };

/* All dims but 1, for the reductions of the formula. */
static int other_dims(int ndim, int *dims) {
  int n = 0;
  for (int d = 0; d < ndim; d++)
    if (d != 1)
      dims[n++] = d;
  return n;
}

/* A [C] tensor seen as [1, C, 1, ...] so it broadcasts against x. */
static gs_tensor per_channel(gs_tensor t, int ndim, int64_t c) {
  int64_t shape[GS_MAX_DIMS];
  for (int d = 0; d < ndim; d++)
    shape[d] = d == 1 ? c : 1;
  return gs__formula_temp(gs_reshape(t, shape, ndim));
}

/* (saved: x in slot 0, weight in slot 1 when given, mean in 2, invstd in 3) */
static void batch_norm_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  int ndim = n->inputs[0].ndim;
  int64_t c = n->inputs[0].shape[1];
  int dims[GS_MAX_DIMS], nd = other_dims(ndim, dims);
  int wi = (int)n->ints[BN_WEIGHT_INPUT], bi = (int)n->ints[BN_BIAS_INPUT];
  gs_tensor x = gs__saved(n, 0);
  gs_tensor mean, invstd;
  if (n->ints[BN_TRAINING] && gs__formula_creates_graph()) {
    /* The batch's statistics are functions of x: recomputed with ops, so a second derivative
     * sees them move with x (the saved copies are constants). */
    mean = gs__formula_temp(gs_mean(x, dims, nd, true));
    gs_tensor centred = gs__formula_temp(gs_sub(x, mean));
    gs_tensor var =
        gs__formula_temp(gs_mean(gs__formula_temp(gs_mul(centred, centred)), dims, nd, true));
    invstd = gs__formula_temp(gs_rsqrt(gs__formula_temp(gs_add_scalar(var, n->reals[0]))));
  } else {
    mean = per_channel(gs__saved(n, 2), ndim, c);
    invstd = per_channel(gs__saved(n, 3), ndim, c);
  }
  bool want_w = wi >= 0 && gs__needs_grad(n, wi);
  gs_tensor xhat = GS_NO_TENSOR;
  if (want_w || (gs__needs_grad(n, 0) && n->ints[BN_TRAINING]))
    xhat = gs__formula_temp(gs_mul(gs__formula_temp(gs_sub(x, mean)), invstd));
  if (gs__needs_grad(n, 0)) {
    gs_tensor gh = wi >= 0 ? gs__formula_temp(gs_mul(g, per_channel(gs__saved(n, 1), ndim, c)))
                           : g;
    if (n->ints[BN_TRAINING]) {
      gs_tensor m1 = gs__formula_temp(gs_mean(gh, dims, nd, true));
      gs_tensor m2 = gs__formula_temp(
          gs_mean(gs__formula_temp(gs_mul(gh, xhat)), dims, nd, true));
      gh = gs__formula_temp(gs_sub(gs__formula_temp(gs_sub(gh, m1)),
                                   gs__formula_temp(gs_mul(xhat, m2))));
    }
    grads[0] = gs__reduce_grad(n, 0, gs_mul(gh, invstd));
  }
  if (want_w)
    grads[wi] = gs__reduce_grad(n, wi, gs_sum(gs__formula_temp(gs_mul(g, xhat)), dims, nd, false));
  if (bi >= 0 && gs__needs_grad(n, bi))
    grads[bi] = gs__reduce_grad(n, bi, gs_sum(g, dims, nd, false));
}
GS__BACKWARD_TWICE(BatchNormBackward, batch_norm_backward);

/* Reads a [C] operand as doubles (any dtype and stride). */
static void load_channels(const gs__tensor *t, int64_t c, double *out) {
  for (int64_t i = 0; i < c; i++)
    out[i] = gs__load_f64(gs__tensor_data(t) + i * t->strides[0] * (int64_t)gs__elsize(t->dtype),
                          t->dtype);
}

bool gs__check_channels_input(const gs__tensor *x, const char *fn) {
  char s[GS__SHAPE_STR];
  if (x->ndim < 2) {
    gs__error(GS_ERR_SHAPE, fn, "expected an input [N, C, ...] of at least 2 dimensions, got %s",
              gs__shape_str(s, x->shape, x->ndim));
    return false;
  }
  if (!gs_dtype_is_floating(x->dtype)) {
    gs__error(GS_ERR_DTYPE, fn, "expected a floating input (f32 or f64), got %s",
              gs_dtype_name(x->dtype));
    return false;
  }
  return true;
}

bool gs__check_channel_operand(const gs__tensor *t, const char *what, int64_t c, gs_dtype dtype,
                               const char *fn) {
  if (!t)
    return true;
  if (t->ndim != 1 || t->shape[0] != c) {
    char s[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn, "expected %s of shape [%lld] (the input's channels), got %s",
              what, (long long)c, gs__shape_str(s, t->shape, t->ndim));
    return false;
  }
  if (t->dtype != dtype) {
    gs__error(GS_ERR_DTYPE, fn, "expected %s of the input's dtype %s, got %s", what,
              gs_dtype_name(dtype), gs_dtype_name(t->dtype));
    return false;
  }
  return true;
}

static bool check_operands(const bn_operands *o, bool training, const char *fn) {
  const gs__tensor *x = o->x;
  char s[GS__SHAPE_STR];
  if (!gs__check_channels_input(x, fn))
    return false;
  int64_t c = x->shape[1];
  if (!gs__check_channel_operand(o->mean, "running_mean", c, x->dtype, fn) ||
      !gs__check_channel_operand(o->var, "running_var", c, x->dtype, fn) ||
      !gs__check_channel_operand(o->weight, "weight", c, x->dtype, fn) ||
      !gs__check_channel_operand(o->bias, "bias", c, x->dtype, fn))
    return false;
  if (!o->mean != !o->var) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected both running_mean and running_var, or neither");
    return false;
  }
  if (!training && !o->mean) {
    gs__error(GS_ERR_ARGUMENT, fn, "running_mean and running_var must be given in evaluation "
              "(training false)");
    return false;
  }
  if (training && (c == 0 || x->numel / c <= 1)) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected more than 1 value per channel when training, got input size %s",
              gs__shape_str(s, x->shape, x->ndim));
    return false;
  }
  return true;
}

/* Per channel: the batch's mean and biased variance, over a contiguous x. */
static void batch_stats(const gs__tensor *x, int64_t n, int64_t c, int64_t l, double *mean,
                        double *var) {
  const char *data = gs__tensor_data(x);
  bool f32 = x->dtype == GS_F32;
  for (int64_t ch = 0; ch < c; ch++) {
    double sum = 0, sq = 0;
    for (int64_t s = 0; s < n; s++) {
      int64_t base = (s * c + ch) * l;
      for (int64_t i = 0; i < l; i++)
        sum += f32 ? (double)((const float *)data)[base + i] : ((const double *)data)[base + i];
    }
    double m = sum / (double)(n * l);
    for (int64_t s = 0; s < n; s++) {
      int64_t base = (s * c + ch) * l;
      for (int64_t i = 0; i < l; i++) {
        double d = (f32 ? (double)((const float *)data)[base + i]
                        : ((const double *)data)[base + i]) - m;
        sq += d * d;
      }
    }
    mean[ch] = m;
    var[ch] = sq / (double)(n * l);
  }
}

/* A new [C] tensor of dtype holding values. */
static gs_tensor channel_tensor(gs_dtype dtype, int64_t c, const double *values, const char *fn) {
  gs__tensor *t;
  gs_tensor h = gs__tensor_new(dtype, &c, 1, fn, &t);
  if (h.id)
    for (int64_t i = 0; i < c; i++)
      gs__store_f64(gs__tensor_data(t) + i * (int64_t)gs__elsize(dtype), dtype, values[i]);
  return h;
}

/* running = (1 - momentum) * running + momentum * batch, written in place (a version bump, as
 * PyTorch's in-place update). */
static void update_running(gs_tensor running, gs_dtype dtype, int64_t c, const double *batch,
                           double momentum, const char *fn) {
  gs__tensor *r = gs__lookup(running, fn);
  double *now = malloc(sizeof(double) * (size_t)c);
  if (!r || !now) {
    free(now);
    return;
  }
  load_channels(r, c, now);
  for (int64_t i = 0; i < c; i++)
    now[i] = (1.0 - momentum) * now[i] + momentum * batch[i];
  gs_tensor values = channel_tensor(dtype, c, now, fn);
  free(now);
  gs_no_grad_begin();
  gs_copy_(running, values);
  gs_no_grad_end();
  gs_dispose(values);
}

gs_tensor gs_batch_norm(gs_tensor hx, gs_tensor running_mean, gs_tensor running_var,
                        gs_tensor weight, gs_tensor bias, bool training, double momentum,
                        double eps) {
  const char *fn = "batch_norm";
  bn_operands o = {0};
  if (!(o.x = gs__lookup(hx, fn)) ||
      (running_mean.id && !(o.mean = gs__lookup(running_mean, fn))) ||
      (running_var.id && !(o.var = gs__lookup(running_var, fn))) ||
      (weight.id && !(o.weight = gs__lookup(weight, fn))) ||
      (bias.id && !(o.bias = gs__lookup(bias, fn))))
    return GS_NO_TENSOR;
  if (!check_operands(&o, training, fn))
    return GS_NO_TENSOR;
  if (!(eps > 0) || !(momentum >= 0 && momentum <= 1)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected eps > 0 and momentum in [0, 1], got eps %g, "
              "momentum %g", eps, momentum);
    return GS_NO_TENSOR;
  }
  gs__tensor *x = o.x;
  gs_dtype dt = x->dtype;
  int64_t n = x->shape[0], c = x->shape[1], l = c > 0 && n > 0 ? x->numel / (n * c) : 0;
  double *stats = calloc((size_t)(5 * c + 1), sizeof(double));
  if (!stats) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    return GS_NO_TENSOR;
  }
  double *mean = stats, *var = stats + c, *invstd = stats + 2 * c, *alpha = stats + 3 * c,
         *beta = stats + 4 * c;
  gs__tensor cx;
  if (!gs__as_contiguous(x, dt, &cx, fn)) {
    free(stats);
    return GS_NO_TENSOR;
  }
  if (training) {
    batch_stats(&cx, n, c, l, mean, var);
  } else {
    load_channels(o.mean, c, mean);
    load_channels(o.var, c, var);
  }
  double *w = alpha, *b = beta; /* weight and bias first, then folded into alpha and beta */
  for (int64_t i = 0; i < c; i++)
    w[i] = 1.0, b[i] = 0.0;
  if (o.weight)
    load_channels(o.weight, c, w);
  if (o.bias)
    load_channels(o.bias, c, b);
  for (int64_t i = 0; i < c; i++) {
    invstd[i] = 1.0 / sqrt(var[i] + eps);
    alpha[i] = w[i] * invstd[i];
    beta[i] = b[i] - mean[i] * alpha[i];
  }
  gs__tensor *out;
  gs_tensor h = gs__tensor_new(dt, x->shape, x->ndim, fn, &out);
  if (h.id) {
    const char *in = gs__tensor_data(&cx);
    char *po = gs__tensor_data(out);
    for (int64_t s = 0; s < n; s++)
      for (int64_t ch = 0; ch < c; ch++) {
        int64_t base = (s * c + ch) * l;
        if (dt == GS_F32) {
          float a = (float)alpha[ch], bb = (float)beta[ch];
          for (int64_t i = 0; i < l; i++)
            ((float *)po)[base + i] = ((const float *)in)[base + i] * a + bb;
        } else {
          for (int64_t i = 0; i < l; i++)
            ((double *)po)[base + i] = ((const double *)in)[base + i] * alpha[ch] + beta[ch];
        }
      }
  }
  gs__tensor_release(&cx);
  if (h.id && training && o.mean) {
    double m = (double)(n * l);
    for (int64_t i = 0; i < c; i++)
      var[i] *= m / (m - 1.0); /* the running estimate takes the unbiased variance */
    update_running(running_mean, dt, c, mean, momentum, fn);
    update_running(running_var, dt, c, var, momentum, fn);
  }
  if (h.id) {
    const gs__tensor *inputs[3] = {x};
    int count = 1;
    int wi = o.weight ? count : -1;
    if (o.weight)
      inputs[count++] = o.weight;
    int bi = o.bias ? count : -1;
    if (o.bias)
      inputs[count++] = o.bias;
    gs__node *node = gs__record(&BatchNormBackward, gs__lookup(h, fn), count, inputs, 4);
    if (node) {
      node->ints[BN_TRAINING] = training;
      node->ints[BN_WEIGHT_INPUT] = wi;
      node->ints[BN_BIAS_INPUT] = bi;
      node->reals[0] = eps; /* for the statistics a double backward recomputes */
      gs_tensor hm = channel_tensor(dt, c, mean, fn), hs = channel_tensor(dt, c, invstd, fn);
      gs__save(node, 0, x);
      if (o.weight)
        gs__save(node, 1, o.weight);
      if (hm.id && hs.id) {
        gs__save_constant(node, 2, gs__lookup(hm, fn));
        gs__save_constant(node, 3, gs__lookup(hs, fn));
      }
      gs_dispose(hm), gs_dispose(hs);
    }
  }
  free(stats);
  return h;
}
