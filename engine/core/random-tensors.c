/* random-tensors.c: the random tensor constructors, drawing as torch 1.13's CPU kernels draw,
 * so that one seed gives torch's numbers: uniform from 24 bits of one 32-bit number (f32) or
 * 53 bits of a 64-bit one (f64); normal through normal_fill for 16 values or more and the
 * cached double sampler below that; randint as (number mod range) + low; randperm by torch's
 * swaps; bernoulli comparing a uniform with p. */
#include <math.h>
#include <string.h>

#include "core-impl.h"

static float uniform_f32(gs_rng *g, float from, float to) {
  float x = (float)(gs_rng_next_u32(g) & 0xffffffu) * 0x1.0p-24f;
  return fmaf(x, to - from, from); /* torch's AVX2 build fuses this multiply-add */
}

static double uniform_f64(gs_rng *g, double from, double to) {
  double x = (double)(gs_rng_next_u64(g) & ((1ull << 53) - 1)) * 0x1.0p-53;
  return fma(x, to - from, from);
}

static bool floating_or_error(gs_dtype dtype, const char *fn) {
  if (gs_dtype_is_floating(dtype))
    return true;
  gs__error(GS_ERR_DTYPE, fn, "expected a floating dtype (f32 or f64), got %s",
            gs_dtype_name(dtype));
  return false;
}

/* fn names the call in errors and in the event log (rand and uniform share this). */
static gs_tensor uniform_as(gs_dtype dtype, const int64_t *shape, int ndim, double low, double high,
                            gs_rng *rng, const char *fn) {
  if (!floating_or_error(dtype, fn))
    return GS_NO_TENSOR;
  if (!(low <= high)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected low <= high, got low %g, high %g", low, high);
    return GS_NO_TENSOR;
  }
  gs__tensor *t;
  gs_tensor h = gs__tensor_new(dtype, shape, ndim, fn, &t);
  if (!h.id)
    return h;
  gs_rng *g = gs__rng_acquire(rng);
  if (dtype == GS_F32) {
    float *p = (float *)gs__tensor_data(t);
    for (int64_t i = 0; i < t->numel; i++)
      p[i] = uniform_f32(g, (float)low, (float)high);
  } else {
    double *p = (double *)gs__tensor_data(t);
    for (int64_t i = 0; i < t->numel; i++)
      p[i] = uniform_f64(g, low, high);
  }
  gs__rng_release(rng, g);
  return h;
}

gs_tensor gs_uniform(gs_dtype dtype, const int64_t *shape, int ndim, double low, double high,
                     gs_rng *rng) {
  return uniform_as(dtype, shape, ndim, low, high, rng, "uniform");
}

gs_tensor gs_rand(gs_dtype dtype, const int64_t *shape, int ndim, gs_rng *rng) {
  return uniform_as(dtype, shape, ndim, 0.0, 1.0, rng, "rand");
}

static gs_tensor normal_as(gs_dtype dtype, const int64_t *shape, int ndim, double mean, double std,
                           gs_rng *rng, const char *fn) {
  if (!floating_or_error(dtype, fn))
    return GS_NO_TENSOR;
  if (!(std >= 0.0)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected std >= 0, got %g", std);
    return GS_NO_TENSOR;
  }
  gs__tensor *t;
  gs_tensor h = gs__tensor_new(dtype, shape, ndim, fn, &t);
  if (!h.id)
    return h;
  gs_rng *g = gs__rng_acquire(rng);
  void *p = gs__tensor_data(t);
  if (t->numel >= 16 && dtype == GS_F32) {
    gs__normal_fill_f32(g, p, t->numel, (float)mean, (float)std);
  } else if (t->numel >= 16) {
    gs__normal_fill_f64(g, p, t->numel, mean, std);
  } else { /* torch's element-by-element path: the double sampler, its cache included */
    for (int64_t i = 0; i < t->numel; i++) {
      double v = fma(gs_rng_normal(g), std, mean);
      if (dtype == GS_F32)
        ((float *)p)[i] = (float)v;
      else
        ((double *)p)[i] = v;
    }
  }
  gs__rng_release(rng, g);
  return h;
}

gs_tensor gs_normal(gs_dtype dtype, const int64_t *shape, int ndim, double mean, double std,
                    gs_rng *rng) {
  return normal_as(dtype, shape, ndim, mean, std, rng, "normal");
}

gs_tensor gs_randn(gs_dtype dtype, const int64_t *shape, int ndim, gs_rng *rng) {
  return normal_as(dtype, shape, ndim, 0.0, 1.0, rng, "randn");
}

gs_tensor gs_bernoulli_p(gs_dtype dtype, const int64_t *shape, int ndim, double p, gs_rng *rng) {
  if (!(p >= 0.0 && p <= 1.0)) {
    gs__error(GS_ERR_ARGUMENT, "bernoulli_p", "expected a probability in [0, 1], got %g", p);
    return GS_NO_TENSOR;
  }
  gs__tensor *t;
  gs_tensor h = gs__tensor_new(dtype, shape, ndim, "bernoulli_p", &t);
  if (!h.id)
    return h;
  char *o = gs__tensor_data(t);
  size_t es = gs_dtype_size(dtype);
  gs_rng *g = gs__rng_acquire(rng);
  for (int64_t i = 0; i < t->numel; i++)
    gs__store_f64(o + (size_t)i * es, dtype, gs_rng_uniform(g) < p ? 1.0 : 0.0);
  gs__rng_release(rng, g);
  return h;
}

gs_tensor gs_randint(int64_t low, int64_t high, const int64_t *shape, int ndim, gs_rng *rng) {
  if (low >= high) {
    gs__error(GS_ERR_ARGUMENT, "randint", "expected low < high, got low %lld, high %lld",
              (long long)low, (long long)high);
    return GS_NO_TENSOR;
  }
  gs__tensor *t;
  gs_tensor h = gs__tensor_new(GS_I64, shape, ndim, "randint", &t);
  if (!h.id)
    return h;
  int64_t *p = (int64_t *)gs__tensor_data(t);
  uint64_t range = (uint64_t)high - (uint64_t)low;
  gs_rng *g = gs__rng_acquire(rng);
  for (int64_t i = 0; i < t->numel; i++) { /* torch's modulo, its small bias included */
    uint64_t r = range >= (1ull << 32) ? gs_rng_next_u64(g) : gs_rng_next_u32(g);
    p[i] = (int64_t)(r % range + (uint64_t)low);
  }
  gs__rng_release(rng, g);
  return h;
}

void gs_rng_permutation(gs_rng *rng, int64_t *out, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    out[i] = i;
  gs_rng *g = gs__rng_acquire(rng);
  for (int64_t i = 0; i + 1 < n; i++) { /* swap i with a uniform pick from i .. n-1 */
    uint64_t left = (uint64_t)(n - i);
    int64_t z = (int64_t)((left > UINT32_MAX ? gs_rng_next_u64(g) : gs_rng_next_u32(g)) % left);
    int64_t tmp = out[i];
    out[i] = out[i + z];
    out[i + z] = tmp;
  }
  gs__rng_release(rng, g);
}

gs_tensor gs_randperm(int64_t n, gs_rng *rng) {
  if (n < 0) {
    gs__error(GS_ERR_ARGUMENT, "randperm", "expected n >= 0, got %lld", (long long)n);
    return GS_NO_TENSOR;
  }
  gs__tensor *t;
  gs_tensor h = gs__tensor_new(GS_I64, &n, 1, "randperm", &t);
  if (!h.id)
    return h;
  gs_rng_permutation(rng, (int64_t *)gs__tensor_data(t), n);
  return h;
}

gs_tensor gs_bernoulli(gs_tensor probs, gs_rng *rng) {
  gs__tensor *pt = gs__lookup(probs, "bernoulli");
  if (!pt)
    return GS_NO_TENSOR;
  if (!gs_dtype_is_floating(pt->dtype)) {
    gs__error(GS_ERR_DTYPE, "bernoulli", "expected floating probabilities, got %s",
              gs_dtype_name(pt->dtype));
    return GS_NO_TENSOR;
  }
  gs__tensor probs_c;
  if (!gs__as_contiguous(pt, GS_F64, &probs_c, "bernoulli"))
    return GS_NO_TENSOR;
  const double *pv = (const double *)gs__tensor_data(&probs_c);
  for (int64_t i = 0; i < probs_c.numel; i++) {
    if (!(pv[i] >= 0.0 && pv[i] <= 1.0)) {
      gs__error(GS_ERR_ARGUMENT, "bernoulli",
                "expected probabilities in [0, 1], got %g at flat index %lld", pv[i], (long long)i);
      gs__tensor_release(&probs_c);
      return GS_NO_TENSOR;
    }
  }
  gs__tensor *t;
  gs_tensor h = gs__tensor_new(pt->dtype, pt->shape, pt->ndim, "bernoulli", &t);
  if (h.id) {
    char *o = gs__tensor_data(t);
    size_t es = gs_dtype_size(t->dtype);
    gs_rng *g = gs__rng_acquire(rng);
    /* torch compares f32 probabilities with a 24-bit f32 uniform, f64 with a 53-bit one */
    for (int64_t i = 0; i < t->numel; i++) {
      bool one = t->dtype == GS_F32 ? uniform_f32(g, 0.0f, 1.0f) < (float)pv[i]
                                    : gs_rng_uniform(g) < pv[i];
      gs__store_f64(o + (size_t)i * es, t->dtype, one ? 1.0 : 0.0);
    }
    gs__rng_release(rng, g);
  }
  gs__tensor_release(&probs_c);
  return h;
}
