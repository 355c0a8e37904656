/* random.c: a seedable generator (xoshiro256** seeded through splitmix64) and the random
 * tensor constructors. Same seed, same numbers, on every machine: the samplers use only exact
 * integer arithmetic and libm functions with correctly rounded inputs. */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "core-impl.h"

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void gs_rng_seed(gs_rng *rng, uint64_t seed) {
  if (!rng)
    return;
  uint64_t x = seed;
  for (int i = 0; i < 4; i++)
    rng->s[i] = splitmix64(&x);
  rng->has_spare_normal = false;
  rng->spare_normal = 0.0;
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t gs_rng_next_u64(gs_rng *rng) {
  uint64_t *s = rng->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double gs_rng_uniform(gs_rng *rng) {
  return (double)(gs_rng_next_u64(rng) >> 11) * 0x1.0p-53;
}

/* Box-Muller; the second value of each pair is kept for the next call. */
double gs_rng_normal(gs_rng *rng) {
  if (rng->has_spare_normal) {
    rng->has_spare_normal = false;
    return rng->spare_normal;
  }
  double u1 = 1.0 - gs_rng_uniform(rng); /* (0, 1]: log(u1) is finite */
  double u2 = gs_rng_uniform(rng);
  double r = sqrt(-2.0 * log(u1));
  rng->spare_normal = r * sin(2.0 * M_PI * u2);
  rng->has_spare_normal = true;
  return r * cos(2.0 * M_PI * u2);
}

static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
GS__FORK_GUARD_MUTEX(GS__FORK_RANK_RANDOM, default_lock)
static gs_rng default_rng;
static bool default_seeded;

gs_rng *gs__rng_acquire(gs_rng *rng) {
  if (rng)
    return rng;
  pthread_mutex_lock(&default_lock);
  if (!default_seeded) {
    gs_rng_seed(&default_rng, 67280421310721ull); /* PyTorch's default seed */
    default_seeded = true;
  }
  return &default_rng;
}

void gs__rng_release(gs_rng *rng, gs_rng *acquired) {
  if (!rng && acquired == &default_rng)
    pthread_mutex_unlock(&default_lock);
}

void gs_manual_seed(uint64_t seed) {
  pthread_mutex_lock(&default_lock);
  gs_rng_seed(&default_rng, seed);
  default_seeded = true;
  pthread_mutex_unlock(&default_lock);
}

void gs_get_rng_state(gs_rng *out) {
  if (!out)
    return;
  gs_rng *rng = gs__rng_acquire(NULL); /* seeds it with the default seed if it was not yet */
  *out = *rng;
  gs__rng_release(NULL, rng);
}

void gs_set_rng_state(const gs_rng *state) {
  if (!state)
    return;
  pthread_mutex_lock(&default_lock);
  default_rng = *state;
  default_seeded = true;
  pthread_mutex_unlock(&default_lock);
}

/* ---- random tensors ----------------------------------------------------------------- */

typedef enum { DIST_UNIFORM, DIST_NORMAL, DIST_BERNOULLI } dist_kind;

static gs_tensor sample(gs_dtype dtype, const int64_t *shape, int ndim, dist_kind kind,
                        double a, double b, gs_rng *rng, const char *fn) {
  if (kind != DIST_BERNOULLI && !gs_dtype_is_floating(dtype)) {
    gs__error(GS_ERR_DTYPE, fn, "expected a floating dtype (f32 or f64), got %s",
              gs_dtype_name(dtype));
    return GS_NO_TENSOR;
  }
  if (kind == DIST_BERNOULLI && !(a >= 0.0 && a <= 1.0)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a probability in [0, 1], got %g", a);
    return GS_NO_TENSOR;
  }
  if (kind == DIST_UNIFORM && !(a <= b)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected low <= high, got low %g, high %g", a, b);
    return GS_NO_TENSOR;
  }
  if (kind == DIST_NORMAL && !(b >= 0.0)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected std >= 0, got %g", b);
    return GS_NO_TENSOR;
  }
  gs__tensor *t;
  gs_tensor h = gs__tensor_new(dtype, shape, ndim, fn, &t);
  if (!h.id)
    return h;
  char *p = gs__tensor_data(t);
  size_t es = gs_dtype_size(dtype);
  gs_rng *g = gs__rng_acquire(rng);
  for (int64_t i = 0; i < t->numel; i++) {
    double v;
    switch (kind) {
    case DIST_UNIFORM: v = a + (b - a) * gs_rng_uniform(g); break;
    case DIST_NORMAL: v = a + b * gs_rng_normal(g); break;
    default: v = gs_rng_uniform(g) < a ? 1.0 : 0.0; break;
    }
    /* Rounding to f32 can reach high itself; keep the interval half-open as promised. */
    if (kind == DIST_UNIFORM && dtype == GS_F32 && (float)v >= (float)b && a < b)
      v = nextafterf((float)b, (float)a);
    gs__store_f64(p + (size_t)i * es, dtype, v);
  }
  gs__rng_release(rng, g);
  return h;
}

gs_tensor gs_rand(gs_dtype dtype, const int64_t *shape, int ndim, gs_rng *rng) {
  return sample(dtype, shape, ndim, DIST_UNIFORM, 0.0, 1.0, rng, "rand");
}

gs_tensor gs_randn(gs_dtype dtype, const int64_t *shape, int ndim, gs_rng *rng) {
  return sample(dtype, shape, ndim, DIST_NORMAL, 0.0, 1.0, rng, "randn");
}

gs_tensor gs_uniform(gs_dtype dtype, const int64_t *shape, int ndim, double low, double high,
                     gs_rng *rng) {
  return sample(dtype, shape, ndim, DIST_UNIFORM, low, high, rng, "uniform");
}

gs_tensor gs_normal(gs_dtype dtype, const int64_t *shape, int ndim, double mean, double std,
                    gs_rng *rng) {
  return sample(dtype, shape, ndim, DIST_NORMAL, mean, std, rng, "normal");
}

gs_tensor gs_bernoulli_p(gs_dtype dtype, const int64_t *shape, int ndim, double p,
                         gs_rng *rng) {
  return sample(dtype, shape, ndim, DIST_BERNOULLI, p, 0.0, rng, "bernoulli_p");
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
  /* Rejection sampling: no modulo bias. */
  uint64_t limit = UINT64_MAX - UINT64_MAX % range;
  gs_rng *g = gs__rng_acquire(rng);
  for (int64_t i = 0; i < t->numel; i++) {
    uint64_t r;
    do
      r = gs_rng_next_u64(g);
    while (r >= limit);
    p[i] = (int64_t)((uint64_t)low + r % range);
  }
  gs__rng_release(rng, g);
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
                "expected probabilities in [0, 1], got %g at flat index %lld", pv[i],
                (long long)i);
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
    for (int64_t i = 0; i < t->numel; i++)
      gs__store_f64(o + (size_t)i * es, t->dtype, gs_rng_uniform(g) < pv[i] ? 1.0 : 0.0);
    gs__rng_release(rng, g);
  }
  gs__tensor_release(&probs_c);
  return h;
}
