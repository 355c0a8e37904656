/* pool.c: 2-D and 3-D max and average pooling (torch.nn.functional.max_pool2d, avg_pool2d,
 * max_pool3d, avg_pool3d).
 *
 * One set of loops serves both: a 2-D pooling is the 3-D one of depth 1 (window depth 1, no
 * depth padding), and the 2x2 fast paths take only such planar geometries. Each of the N * C
 * planes (volumes) is pooled on its own, window by window, as PyTorch's CPU kernels
 * do, so the numbers match theirs: a max takes the first largest value of its window (the
 * last NaN in it, if any, as PyTorch's `val > max || isnan(val)`), remembered as a flat index into
 * its plane (PyTorch's `indices`); an average divides by the window's size clipped to the padded
 * image (count_include_pad, the default) or to the image itself. Max pooling's gradient goes to the
 * remembered index of each window (adding where windows share a maximum); average pooling's is
 * spread evenly over each window. A backward that creates a graph computes both with ops that
 * record (scatter_add, index_add), so they can be differentiated again.
 */
#include <math.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define POOL_X86 1
#endif

#include "ops-impl.h"

typedef struct pool_geom {
  int64_t planes, d, h, w;                                /* 2-D: d = 1 */
  int64_t kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw; /* 2-D: kd = sd = dd = 1, pd = 0 */
  int64_t od, oh, ow;
  bool exclude_pad;
} pool_geom;

/* Pooling options in three dims, depth first, as given (zeros not yet defaulted), with the
 * number of spatial dims (2: the depth entries are unused). */
typedef struct pool_args {
  int64_t kernel[3], stride[3], padding[3], dilation[3];
  bool ceil_mode, count_exclude_pad;
  int spatial;
} pool_args;

/* Positions per plane (volume) of the input and of the output. */
static int64_t pool_in_size(const pool_geom *g) { return g->d * g->h * g->w; }
static int64_t pool_out_count(const pool_geom *g) { return g->od * g->oh * g->ow; }

/* torch's pooling_output_shape: the last window must start inside the image or its left
 * padding. */
static int64_t pool_out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil,
                             bool ceil_mode) {
  int64_t span = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad)
    out--;
  return out;
}

static int64_t or_default(int64_t v, int64_t dflt) { return v == 0 ? dflt : v; }

static bool plan_pool(pool_geom *g, const gs__tensor *x, const pool_args *a, bool is_max,
                      const char *fn) {
  const int sp = a->spatial, first = 3 - sp;
  char sx[GS__SHAPE_STR], s1[GS__SHAPE_STR], s2[GS__SHAPE_STR], s3[GS__SHAPE_STR],
      s4[GS__SHAPE_STR];
  if (x->ndim != sp + 1 && x->ndim != sp + 2) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected a %d-D (unbatched) or %d-D (batched) input [N, C, %s], got %s", sp + 1,
              sp + 2, sp == 3 ? "D, H, W" : "H, W", gs__shape_str(sx, x->shape, x->ndim));
    return false;
  }
  if (!gs_dtype_is_floating(x->dtype)) {
    gs__error(GS_ERR_DTYPE, fn, "expected a floating input (f32 or f64), got %s",
              gs_dtype_name(x->dtype));
    return false;
  }
  /* zero entries after the first repeat it; a zero stride is the kernel, a zero dilation 1 */
  int64_t k[3] = {1, 1, 1}, st[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dil[3] = {1, 1, 1};
  for (int i = first; i < 3; i++) {
    k[i] = or_default(a->kernel[i], a->kernel[first]);
    st[i] = or_default(a->stride[i], or_default(a->stride[first], k[i]));
    dil[i] = or_default(a->dilation[i], or_default(a->dilation[first], 1));
    pad[i] = a->padding[i];
  }
  int64_t planes = 1;
  for (int i = 0; i < x->ndim - sp; i++)
    planes *= x->shape[i];
  const int64_t *in = x->shape + (x->ndim - sp);
  *g = (pool_geom){
      .planes = planes,
      .d = sp == 3 ? in[0] : 1,
      .h = in[sp - 2],
      .w = in[sp - 1],
      .kd = k[0],
      .kh = k[1],
      .kw = k[2],
      .sd = st[0],
      .sh = st[1],
      .sw = st[2],
      .pd = pad[0],
      .ph = pad[1],
      .pw = pad[2],
      .dd = dil[0],
      .dh = dil[1],
      .dw = dil[2],
      .exclude_pad = a->count_exclude_pad,
  };
  bool bad = false;
  for (int i = 0; i < 3; i++)
    bad |= k[i] <= 0 || st[i] <= 0 || dil[i] <= 0 || pad[i] < 0;
  if (bad) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected positive kernel, stride and dilation and non-negative padding, got "
              "kernel %s, stride %s, padding %s, dilation %s",
              gs__spatial_str(s1, k, sp, false), gs__spatial_str(s2, st, sp, false),
              gs__spatial_str(s3, pad, sp, false), gs__spatial_str(s4, dil, sp, false));
    return false;
  }
  if (!is_max && (dil[0] != 1 || dil[1] != 1 || dil[2] != 1)) {
    gs__error(GS_ERR_ARGUMENT, fn, "average pooling has no dilation, got %s",
              gs__spatial_str(s1, dil, sp, false));
    return false;
  }
  if (pad[0] > k[0] / 2 || pad[1] > k[1] / 2 || pad[2] > k[2] / 2) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "pad should be at most half of kernel size, but got pad %s and kernel size %s",
              gs__spatial_str(s1, pad, sp, false), gs__spatial_str(s2, k, sp, false));
    return false;
  }
  const int64_t size[3] = {g->d, g->h, g->w};
  int64_t out[3];
  for (int i = 0; i < 3; i++)
    out[i] = pool_out_size(size[i], k[i], pad[i], st[i], dil[i], a->ceil_mode);
  g->od = out[0], g->oh = out[1], g->ow = out[2];
  if (out[0] <= 0 || out[1] <= 0 || out[2] <= 0) {
    gs__error(GS_ERR_SHAPE, fn, "given input size %s, calculated output size %s is too small",
              gs__shape_str(sx, x->shape, x->ndim), gs__spatial_str(s1, out, sp, false));
    return false;
  }
  return true;
}

/* A pooling with no depth to walk: what the 2x2 fast paths require. */
static bool pool_is_planar(const pool_geom *g) { return g->d == 1 && g->kd == 1 && g->pd == 0; }

typedef float f32;
typedef double f64;

/* The CNN's usual pooling, 2x2 windows at stride 2 without padding or dilation, every window
 * inside the plane: the general loop's bounds and window walk per output cost five times the
 * comparisons (a quarter of bench-conv's step). Same scan and tests as the general loop: the
 * first maximum wins, and the last NaN (as PyTorch's kernel). */
static bool max_pool_is_2x2(const pool_geom *g) {
  return pool_is_planar(g) && g->kh == 2 && g->kw == 2 && g->sh == 2 && g->sw == 2 && g->ph == 0 &&
         g->pw == 0 && g->dh == 1 && g->dw == 1 && 2 * g->oh <= g->h && 2 * g->ow <= g->w;
}

/* v takes over the window's max (and i its index) when larger or NaN; as bit masks, not
 * branches: after relu the winner is a coin toss the branch predictor loses (half the pool's
 * time). U: T's bits as an unsigned integer. */
#define POOL_TAKE(T, U, max, best, v, i)                                                           \
  do {                                                                                             \
    int t_ = (v > max) | (v != v);                                                                 \
    U m_ = (U)0 - (U)t_, vb_, mb_;                                                                 \
    memcpy(&vb_, &v, sizeof vb_), memcpy(&mb_, &max, sizeof mb_);                                  \
    mb_ = (vb_ & m_) | (mb_ & ~m_);                                                                \
    memcpy(&max, &mb_, sizeof mb_);                                                                \
    best ^= (best ^ (i)) & -(int64_t)t_;                                                           \
  } while (0)

#if defined(__SSE2__)
/* Four f32 windows at once, two side by side at ta and two at tb (the top-left pixel of each
 * pair, the rows below w further; base_a, base_b: their flat positions in their planes): the
 * scalar scan's tests as lane masks, the winner's place in its window (0-3, scan order) as a
 * code per lane. */
static inline void max_pool_2x2_f32x4(const float *ta, const float *tb, int64_t w, int64_t base_a,
                                      int64_t base_b, float *y, int64_t *idx) {
  __m128 x0 = _mm_loadu_ps(ta), x1 = _mm_loadu_ps(tb);
  __m128 z0 = _mm_loadu_ps(ta + w), z1 = _mm_loadu_ps(tb + w);
  __m128 v[3] = {_mm_shuffle_ps(x0, x1, _MM_SHUFFLE(3, 1, 3, 1)),
                 _mm_shuffle_ps(z0, z1, _MM_SHUFFLE(2, 0, 2, 0)),
                 _mm_shuffle_ps(z0, z1, _MM_SHUFFLE(3, 1, 3, 1))};
  __m128 max = _mm_shuffle_ps(x0, x1, _MM_SHUFFLE(2, 0, 2, 0));
  __m128i code = _mm_setzero_si128();
  for (int k = 0; k < 3; k++) {
    __m128 t = _mm_or_ps(_mm_cmpgt_ps(v[k], max), _mm_cmpunord_ps(v[k], v[k]));
    max = _mm_or_ps(_mm_and_ps(t, v[k]), _mm_andnot_ps(t, max));
    __m128i ti = _mm_castps_si128(t);
    code = _mm_or_si128(_mm_and_si128(ti, _mm_set1_epi32(k + 1)), _mm_andnot_si128(ti, code));
  }
  _mm_storeu_ps(y, max);
  int32_t at[4];
  _mm_storeu_si128((__m128i *)at, code);
  for (int l = 0; l < 4; l++)
    idx[l] = (l < 2 ? base_a : base_b) + 2 * (l & 1) + (at[l] & 1) + (at[l] >> 1) * w;
}

/* Every window when rows hold an even number (the CNN's 4 and 2): their pairs in output order,
 * two pairs per call, wherever they are (the 4x4 planes' rows have one pair each). */
static void max_pool_2x2_pairs_f32(const pool_geom *g, const float *x, float *y, int64_t *idx) {
  const int64_t w = g->w, oh = g->oh, half = g->ow / 2, plane = g->h * g->w;
  const float *held = NULL;
  int64_t held_base = 0, p = 0, oy = 0, k = 0;
  for (int64_t q = 0, n = g->planes * oh * half; q < n; q++) {
    int64_t base = 2 * oy * w + 4 * k;
    const float *t = x + p * plane + base;
    if (++k == half && (k = 0, ++oy == oh))
      oy = 0, p++;
    if (!held) {
      held = t, held_base = base;
      continue;
    }
    max_pool_2x2_f32x4(held, t, w, held_base, base, y, idx);
    y += 4, idx += 4, held = NULL;
  }
  if (held) { /* an odd pair out: scanned twice, kept once */
    float yy[4];
    int64_t ii[4];
    max_pool_2x2_f32x4(held, held, w, held_base, held_base, yy, ii);
    memcpy(y, yy, sizeof(float) * 2), memcpy(idx, ii, sizeof(int64_t) * 2);
  }
}
#define MAX_POOL_2X2_PAIRS_f32(g, x, y, idx)                                                       \
  if ((g)->ow % 2 == 0) {                                                                          \
    max_pool_2x2_pairs_f32(g, x, y, idx);                                                          \
    return;                                                                                        \
  }
#else
#define MAX_POOL_2X2_PAIRS_f32(g, x, y, idx)
#endif
#define MAX_POOL_2X2_PAIRS_f64(g, x, y, idx)
#define MAX_POOL_2X2(T, U)                                                                         \
  __attribute__((noinline)) static void max_pool_2x2_##T(const pool_geom *g, const T *x, T *y,     \
                                                         int64_t *idx) {                           \
    MAX_POOL_2X2_PAIRS_##T(g, x, y, idx) const int64_t w = g->w, oh = g->oh, ow = g->ow,           \
                                                       plane = g->h * g->w;                        \
    for (int64_t p = 0; p < g->planes; p++, x += plane)                                            \
      for (int64_t oy = 0; oy < oh; oy++) {                                                        \
        const T *r0 = x + 2 * oy * w, *r1 = r0 + w;                                                \
        const int64_t base = 2 * oy * w;                                                           \
        for (int64_t ox = 0; ox < ow; ox++) {                                                      \
          int64_t c = 2 * ox, best = base + c;                                                     \
          T max = r0[c], v;                                                                        \
          v = r0[c + 1];                                                                           \
          POOL_TAKE(T, U, max, best, v, base + c + 1);                                             \
          v = r1[c];                                                                               \
          POOL_TAKE(T, U, max, best, v, base + w + c);                                             \
          v = r1[c + 1];                                                                           \
          POOL_TAKE(T, U, max, best, v, base + w + c + 1);                                         \
          *y++ = max;                                                                              \
          *idx++ = best;                                                                           \
        }                                                                                          \
      }                                                                                            \
  }
MAX_POOL_2X2(f32, uint32_t)
MAX_POOL_2X2(f64, uint64_t)

/* An average's window: where it starts unclipped (z, y, x: it may begin in the padding), the
 * part inside the input ([z0, z1) x [y0, y1) x [x0, x1)) and what it divides by: the window
 * clipped to the padded input (count_include_pad) or to the input itself. */
typedef struct pool_window {
  int64_t z, y, x, z0, z1, y0, y1, x0, x1, count;
} pool_window;

static pool_window avg_window(const pool_geom *g, int64_t oz, int64_t oy, int64_t ox) {
  pool_window v;
  v.z = oz * g->sd - g->pd, v.y = oy * g->sh - g->ph, v.x = ox * g->sw - g->pw;
  int64_t z1 = v.z + g->kd < g->d + g->pd ? v.z + g->kd : g->d + g->pd;
  int64_t y1 = v.y + g->kh < g->h + g->ph ? v.y + g->kh : g->h + g->ph;
  int64_t x1 = v.x + g->kw < g->w + g->pw ? v.x + g->kw : g->w + g->pw;
  int64_t padded = (z1 - v.z) * (y1 - v.y) * (x1 - v.x);
  v.z0 = v.z < 0 ? 0 : v.z, v.y0 = v.y < 0 ? 0 : v.y, v.x0 = v.x < 0 ? 0 : v.x;
  v.z1 = z1 > g->d ? g->d : z1, v.y1 = y1 > g->h ? g->h : y1, v.x1 = x1 > g->w ? g->w : x1;
  v.count = g->exclude_pad ? (v.z1 - v.z0) * (v.y1 - v.y0) * (v.x1 - v.x0) : padded;
  return v;
}

#define POOL_KERNELS(T)                                                                            \
  static void max_pool_##T(const pool_geom *g, const T *x, T *y, int64_t *idx) {                   \
    if (max_pool_is_2x2(g)) {                                                                      \
      max_pool_2x2_##T(g, x, y, idx);                                                              \
      return;                                                                                      \
    }                                                                                              \
    const int64_t hw = g->h * g->w;                                                                \
    for (int64_t p = 0; p < g->planes; p++) {                                                      \
      const T *vol = x + p * pool_in_size(g);                                                      \
      for (int64_t oz = 0; oz < g->od; oz++)                                                       \
        for (int64_t oy = 0; oy < g->oh; oy++)                                                     \
          for (int64_t ox = 0; ox < g->ow; ox++) {                                                 \
            int64_t z0 = oz * g->sd - g->pd, y0 = oy * g->sh - g->ph, x0 = ox * g->sw - g->pw;     \
            while (z0 < 0)                                                                         \
              z0 += g->dd;                                                                         \
            while (y0 < 0)                                                                         \
              y0 += g->dh;                                                                         \
            while (x0 < 0)                                                                         \
              x0 += g->dw;                                                                         \
            int64_t z1 = oz * g->sd - g->pd + (g->kd - 1) * g->dd + 1;                             \
            int64_t y1 = oy * g->sh - g->ph + (g->kh - 1) * g->dh + 1;                             \
            int64_t x1 = ox * g->sw - g->pw + (g->kw - 1) * g->dw + 1;                             \
            z1 = z1 > g->d ? g->d : z1, y1 = y1 > g->h ? g->h : y1, x1 = x1 > g->w ? g->w : x1;    \
            int64_t best = z0 * hw + y0 * g->w + x0;                                               \
            T max = -INFINITY;                                                                     \
            for (int64_t iz = z0; iz < z1; iz += g->dd)                                            \
              for (int64_t iy = y0; iy < y1; iy += g->dh)                                          \
                for (int64_t ix = x0; ix < x1; ix += g->dw) {                                      \
                  int64_t at = iz * hw + iy * g->w + ix;                                           \
                  T v = vol[at];                                                                   \
                  if (v > max || isnan(v)) {                                                       \
                    max = v;                                                                       \
                    best = at;                                                                     \
                  }                                                                                \
                }                                                                                  \
            *y++ = max;                                                                            \
            *idx++ = best;                                                                         \
          }                                                                                        \
    }                                                                                              \
  }                                                                                                \
  /* forward: y = window averages of x; backward: x += g spread over each window. */               \
  static void avg_pool_##T(const pool_geom *g, T *x, T *y, bool backward) {                        \
    const int64_t hw = g->h * g->w;                                                                \
    for (int64_t p = 0; p < g->planes; p++) {                                                      \
      T *vol = x + p * pool_in_size(g);                                                            \
      for (int64_t oz = 0; oz < g->od; oz++)                                                       \
        for (int64_t oy = 0; oy < g->oh; oy++)                                                     \
          for (int64_t ox = 0; ox < g->ow; ox++, y++) {                                            \
            pool_window win = avg_window(g, oz, oy, ox);                                           \
            if (backward) {                                                                        \
              T share = *y / (T)win.count;                                                         \
              for (int64_t iz = win.z0; iz < win.z1; iz++)                                         \
                for (int64_t iy = win.y0; iy < win.y1; iy++)                                       \
                  for (int64_t ix = win.x0; ix < win.x1; ix++)                                     \
                    vol[iz * hw + iy * g->w + ix] += share;                                        \
            } else {                                                                               \
              T sum = 0;                                                                           \
              for (int64_t iz = win.z0; iz < win.z1; iz++)                                         \
                for (int64_t iy = win.y0; iy < win.y1; iy++)                                       \
                  for (int64_t ix = win.x0; ix < win.x1; ix++)                                     \
                    sum += vol[iz * hw + iy * g->w + ix];                                          \
              *y = sum / (T)win.count;                                                             \
            }                                                                                      \
          }                                                                                        \
    }                                                                                              \
  }
POOL_KERNELS(f32)
POOL_KERNELS(f64)

/* The output's shape: x's with the last two (three) dims replaced. */
static void out_shape(const gs__tensor *x, const pool_geom *g, int spatial, int64_t *shape) {
  memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  if (spatial == 3)
    shape[x->ndim - 3] = g->od;
  shape[x->ndim - 2] = g->oh;
  shape[x->ndim - 1] = g->ow;
}

/* A node's ints: kernel, stride, padding, dilation and output size (each depth, height,
 * width) and exclude_pad; the planes and input sizes come from the input's metadata. */
static void store_geom(gs__node *n, const pool_geom *g) {
  int64_t ints[16] = {g->kd, g->kh, g->kw, g->sd, g->sh, g->sw, g->pd, g->ph,
                      g->pw, g->dd, g->dh, g->dw, g->od, g->oh, g->ow, g->exclude_pad};
  memcpy(n->ints, ints, sizeof ints);
}

static void load_geom(const gs__node *n, int spatial, pool_geom *g) {
  const int64_t *i = n->ints, *shape = n->inputs[0].shape;
  int ndim = n->inputs[0].ndim;
  int64_t planes = 1;
  for (int k = 0; k < ndim - spatial; k++)
    planes *= shape[k];
  *g = (pool_geom){planes,
                   spatial == 3 ? shape[ndim - 3] : 1,
                   shape[ndim - 2],
                   shape[ndim - 1],
                   i[0],
                   i[1],
                   i[2],
                   i[3],
                   i[4],
                   i[5],
                   i[6],
                   i[7],
                   i[8],
                   i[9],
                   i[10],
                   i[11],
                   i[12],
                   i[13],
                   i[14],
                   i[15] != 0};
}

/* ---- backward formulas ---------------------------------------------------------------- */

/* d max_pool(x) = g added at each window's argmax (saved: the indices) */
/* The 2x2 pool's backward when its windows tile the plane exactly (the CNN's): each window's
 * four pixels written at once, the gradient at the winner and zero elsewhere, instead of a
 * zeroed plane and a scatter. 0 + g, not g: the same bits as adding onto zero. The winner is
 * picked by masking v's bits (U: T's bits), not by a branch: the winners are as random as the
 * data, and the branches' mispredictions were most of this pass's time. */
#define MAX_UNPOOL_2X2(T, U)                                                                       \
  static inline T unpool_pick_##T(U bits, int64_t idx, int64_t at) {                               \
    U m = (U)0 - (U)(idx == at);                                                                   \
    U r = bits & m;                                                                                \
    T out;                                                                                         \
    memcpy(&out, &r, sizeof out);                                                                  \
    return out;                                                                                    \
  }                                                                                                \
  static void max_unpool_2x2_##T(const pool_geom *g, const T *gy, const int64_t *idx, T *dx) {     \
    const int64_t w = g->w, oh = g->oh, ow = g->ow, plane = g->h * g->w;                           \
    for (int64_t p = 0; p < g->planes; p++, dx += plane)                                           \
      for (int64_t oy = 0; oy < oh; oy++)                                                          \
        for (int64_t ox = 0; ox < ow; ox++, gy++, idx++) {                                         \
          int64_t at = 2 * oy * w + 2 * ox;                                                        \
          T v = (T)0 + *gy;                                                                        \
          U bits;                                                                                  \
          memcpy(&bits, &v, sizeof bits);                                                          \
          dx[at] = unpool_pick_##T(bits, *idx, at);                                                \
          dx[at + 1] = unpool_pick_##T(bits, *idx, at + 1);                                        \
          dx[at + w] = unpool_pick_##T(bits, *idx, at + w);                                        \
          dx[at + w + 1] = unpool_pick_##T(bits, *idx, at + w + 1);                                \
        }                                                                                          \
  }
MAX_UNPOOL_2X2(f32, uint32_t)
MAX_UNPOOL_2X2(f64, uint64_t)

#ifdef POOL_X86
/* The f32 unpool with AVX-512 for rows up to 16 wide (the CNN's 8 and 4): a pair of image rows
 * at a time, each pixel's window gradient and winning index brought beside it by one permute,
 * the winners kept by a compare mask, the rest zero; the same values as the loop above
 * (0 + g, +0 elsewhere). */
__attribute__((target("avx512f"))) static void
max_unpool_2x2_f32_avx512(const pool_geom *g, const f32 *gy, const int64_t *idx, f32 *dx) {
  const int64_t w = g->w, ow = g->ow;
  const __mmask16 wins = (__mmask16)((1u << (unsigned)ow) - 1u);
  const __mmask16 pixels = (__mmask16)((1u << (unsigned)w) - 1u);
  const __m512i pixel = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  const __m512i window = _mm512_srli_epi32(pixel, 1); /* pixel k lies in window k / 2 */
  const __m512 zero = _mm512_setzero_ps();
  for (int64_t p = 0; p < g->planes; p++)
    for (int64_t oy = 0; oy < g->oh; oy++, gy += ow, idx += ow, dx += 2 * w) {
      __m512 v = _mm512_add_ps(zero, _mm512_maskz_loadu_ps(wins, gy));
      __m512i at = _mm512_castsi256_si512(
          _mm512_cvtepi64_epi32(_mm512_maskz_loadu_epi64((__mmask8)wins, idx)));
      v = _mm512_permutexvar_ps(window, v);
      at = _mm512_permutexvar_epi32(window, at);
      const __m512i top = _mm512_add_epi32(pixel, _mm512_set1_epi32((int)(2 * oy * w)));
      const __m512i bottom = _mm512_add_epi32(top, _mm512_set1_epi32((int)w));
      _mm512_mask_storeu_ps(dx, pixels, _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(at, top), v));
      _mm512_mask_storeu_ps(dx + w, pixels,
                            _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(at, bottom), v));
    }
}
#endif

/* The 2x2 unpool of windows tiling each plane, in dt. */
static void max_unpool_2x2(gs_dtype dt, const pool_geom *g, const char *gy, const int64_t *idx,
                           char *dx) {
#ifdef POOL_X86
  if (dt == GS_F32 && g->w <= 16 && g->h * g->w <= INT32_MAX && gs__cpu_has_avx512f()) {
    max_unpool_2x2_f32_avx512(g, (const f32 *)gy, idx, (f32 *)dx);
    return;
  }
#endif
  if (dt == GS_F32)
    max_unpool_2x2_f32(g, (const f32 *)gy, idx, (f32 *)dx);
  else
    max_unpool_2x2_f64(g, (const f64 *)gy, idx, (f64 *)dx);
}

/* Max pooling's gradient with ops that record (double backward): each plane's g added at
 * its windows' saved argmax positions (scatter_add), so its own gradient gathers from them. */
static void max_pool_backward_recorded(gs__node *n, const pool_geom *g, gs_tensor hg,
                                       gs_tensor *grads) {
  int64_t per = pool_out_count(g), plane = pool_in_size(g);
  gs_tensor src = gs__formula_temp(gs_reshape(hg, (int64_t[]){g->planes, per}, 2));
  gs_tensor at = gs__formula_temp(gs_reshape(gs__saved(n, 0), (int64_t[]){g->planes, per}, 2));
  gs_tensor zeros = gs__formula_temp(gs_zeros(gs_dtype_of(hg), (int64_t[]){g->planes, plane}, 2));
  gs_tensor dx = gs__formula_temp(gs_scatter_add(zeros, 1, at, src));
  if (dx.id)
    grads[0] = gs__reduce_grad(n, 0, gs_reshape(dx, n->inputs[0].shape, n->inputs[0].ndim));
}

/* (spatial: 2 or 3, the node's kind) */
static void max_pool_backward(gs__node *n, int spatial, gs_tensor hg, gs_tensor *grads) {
  const char *fn = n->kind->name;
  pool_geom g;
  load_geom(n, spatial, &g);
  if (gs__formula_creates_graph()) {
    max_pool_backward_recorded(n, &g, hg, grads);
    return;
  }
  gs__tensor *gt = gs__lookup(hg, fn), *it = gt ? gs__lookup(gs__saved(n, 0), fn) : NULL;
  if (!it)
    return;
  gs__tensor cg, ci;
  if (!gs__as_contiguous(gt, gt->dtype, &cg, fn))
    return;
  if (!gs__as_contiguous(it, GS_I64, &ci, fn)) {
    gs__tensor_release(&cg);
    return;
  }
  if (max_pool_is_2x2(&g) && 2 * g.oh == g.h && 2 * g.ow == g.w) {
    gs__tensor *dx;
    gs_tensor hdx = gs__tensor_new(gt->dtype, n->inputs[0].shape, n->inputs[0].ndim, fn, &dx);
    if (hdx.id) {
      max_unpool_2x2(gt->dtype, &g, gs__tensor_data(&cg), (const int64_t *)gs__tensor_data(&ci),
                     gs__tensor_data(dx));
      grads[0] = gs__reduce_grad(n, 0, hdx);
    }
    gs__tensor_release(&cg);
    gs__tensor_release(&ci);
    return;
  }
  gs_tensor hdx = gs_zeros(gt->dtype, n->inputs[0].shape, n->inputs[0].ndim);
  gs__tensor *dx = hdx.id ? gs__lookup(hdx, fn) : NULL;
  if (dx) {
    const int64_t *idx = (const int64_t *)gs__tensor_data(&ci);
    int64_t per = pool_out_count(&g), plane = pool_in_size(&g);
    for (int64_t p = 0; p < g.planes; p++)
      for (int64_t o = 0; o < per; o++) {
        int64_t at = p * per + o;
        if (gt->dtype == GS_F32)
          ((f32 *)gs__tensor_data(dx))[p * plane + idx[at]] +=
              ((const f32 *)gs__tensor_data(&cg))[at];
        else
          ((f64 *)gs__tensor_data(dx))[p * plane + idx[at]] +=
              ((const f64 *)gs__tensor_data(&cg))[at];
      }
    grads[0] = gs__reduce_grad(n, 0, hdx);
  }
  gs__tensor_release(&cg);
  gs__tensor_release(&ci);
}
static void max_pool2d_backward(gs__node *n, gs_tensor hg, gs_tensor *grads) {
  max_pool_backward(n, 2, hg, grads);
}
static void max_pool3d_backward(gs__node *n, gs_tensor hg, gs_tensor *grads) {
  max_pool_backward(n, 3, hg, grads);
}
GS__BACKWARD_TWICE(MaxPool2dBackward, max_pool2d_backward);
GS__BACKWARD_TWICE(MaxPool3dBackward, max_pool3d_backward);

/* Average pooling's gradient with ops that record (double backward): every (window, kernel
 * offset) pair's share g / count added at its input position with index_add, the pairs that
 * fall on padding sent to one spare column past the plane and cut off. The positions and
 * shares depend only on the geometry (the kernel's own loop bounds), so they are constants. */
static void avg_pool_backward_recorded(gs__node *n, const pool_geom *g, gs_tensor hg,
                                       gs_tensor *grads) {
  const char *fn = n->kind->name;
  int64_t per = pool_out_count(g), taps = g->kd * g->kh * g->kw, plane = pool_in_size(g);
  gs__tensor *pos_t, *share_t;
  gs_tensor pos = gs__formula_temp(gs__tensor_new(GS_I64, (int64_t[]){per * taps}, 1, fn, &pos_t));
  gs_tensor share =
      pos.id ? gs__formula_temp(gs__tensor_new(GS_F64, (int64_t[]){per, taps}, 2, fn, &share_t))
             : GS_NO_TENSOR;
  if (!share.id)
    return;
  pos_t = gs__lookup(pos, fn); /* the second allocation may have moved the tensor table */
  int64_t *where = (int64_t *)gs__tensor_data(pos_t);
  f64 *part = (f64 *)gs__tensor_data(share_t);
  int64_t k = 0;
  for (int64_t oz = 0; oz < g->od; oz++)
    for (int64_t oy = 0; oy < g->oh; oy++)
      for (int64_t ox = 0; ox < g->ow; ox++) {
        pool_window v = avg_window(g, oz, oy, ox); /* the kernel's bounds and count */
        for (int64_t a = 0; a < g->kd; a++)
          for (int64_t i = 0; i < g->kh; i++)
            for (int64_t j = 0; j < g->kw; j++, k++) {
              int64_t z = v.z + a, y = v.y + i, x = v.x + j;
              bool inside = z >= v.z0 && z < v.z1 && y >= v.y0 && y < v.y1 && x >= v.x0 && x < v.x1;
              where[k] = inside ? (z * g->h + y) * g->w + x : plane;
              part[k] = inside ? 1.0 / (f64)v.count : 0.0;
            }
      }
  gs_dtype dt = gs_dtype_of(hg);
  gs_tensor shares = gs__formula_temp(gs_to_dtype(share, dt));
  gs_tensor gw = gs__formula_temp(gs_reshape(hg, (int64_t[]){g->planes, per, 1}, 3));
  gs_tensor spread = gs__formula_temp(gs_mul(gw, shares)); /* [planes, per, taps] */
  gs_tensor src = gs__formula_temp(gs_reshape(spread, (int64_t[]){g->planes, per * taps}, 2));
  gs_tensor zeros = gs__formula_temp(gs_zeros(dt, (int64_t[]){g->planes, plane + 1}, 2));
  gs_tensor sums = gs__formula_temp(gs_index_add(zeros, 1, pos, src, 1.0));
  gs_tensor dx = sums.id ? gs__formula_temp(gs_narrow(sums, 1, 0, plane)) : GS_NO_TENSOR;
  if (dx.id)
    grads[0] = gs__reduce_grad(n, 0, gs_reshape(dx, n->inputs[0].shape, n->inputs[0].ndim));
}

/* d avg_pool(x) = g / count spread over each window */
static void avg_pool_backward(gs__node *n, int spatial, gs_tensor hg, gs_tensor *grads) {
  const char *fn = n->kind->name;
  pool_geom g;
  load_geom(n, spatial, &g);
  if (gs__formula_creates_graph()) {
    avg_pool_backward_recorded(n, &g, hg, grads);
    return;
  }
  gs__tensor *gt = gs__lookup(hg, fn);
  gs__tensor cg;
  if (!gt || !gs__as_contiguous(gt, gt->dtype, &cg, fn))
    return;
  gs_tensor hdx = gs_zeros(gt->dtype, n->inputs[0].shape, n->inputs[0].ndim);
  gs__tensor *dx = hdx.id ? gs__lookup(hdx, fn) : NULL;
  if (dx) {
    if (gt->dtype == GS_F32)
      avg_pool_f32(&g, (f32 *)gs__tensor_data(dx), (f32 *)gs__tensor_data(&cg), true);
    else
      avg_pool_f64(&g, (f64 *)gs__tensor_data(dx), (f64 *)gs__tensor_data(&cg), true);
    grads[0] = gs__reduce_grad(n, 0, hdx);
  }
  gs__tensor_release(&cg);
}
static void avg_pool2d_backward(gs__node *n, gs_tensor hg, gs_tensor *grads) {
  avg_pool_backward(n, 2, hg, grads);
}
static void avg_pool3d_backward(gs__node *n, gs_tensor hg, gs_tensor *grads) {
  avg_pool_backward(n, 3, hg, grads);
}
GS__BACKWARD_TWICE(AvgPool2dBackward, avg_pool2d_backward);
GS__BACKWARD_TWICE(AvgPool3dBackward, avg_pool3d_backward);

/* ---- forward -------------------------------------------------------------------------- */

/* What both pools do first: x looked up, the window planned (g), the output's shape, and x's
 * values made contiguous in cx, which the caller releases. NULL after reporting an error. */
static gs__tensor *pool_input(gs_tensor hx, const pool_args *a, bool is_max, pool_geom *g,
                              int64_t shape[5], gs__tensor *cx, const char *fn) {
  gs__tensor *x = gs__lookup(hx, fn);
  if (!x || !plan_pool(g, x, a, is_max, fn))
    return NULL;
  out_shape(x, g, a->spatial, shape);
  return gs__as_contiguous(x, x->dtype, cx, fn) ? x : NULL;
}

static gs_tensor max_pool_nd(gs_tensor hx, const pool_args *a, gs_tensor *indices,
                             const gs__node_kind *kind, const char *fn) {
  if (indices)
    *indices = GS_NO_TENSOR;
  pool_geom g;
  int64_t shape[5];
  gs__tensor cx;
  gs__tensor *x = pool_input(hx, a, true, &g, shape, &cx, fn);
  if (!x)
    return GS_NO_TENSOR;
  gs__tensor *out, *idx;
  gs_tensor h = gs__tensor_new(x->dtype, shape, x->ndim, fn, &out);
  gs_tensor hi = h.id ? gs__tensor_new(GS_I64, shape, x->ndim, fn, &idx) : GS_NO_TENSOR;
  if (hi.id) {
    if (x->dtype == GS_F32)
      max_pool_f32(&g, (const f32 *)gs__tensor_data(&cx), (f32 *)gs__tensor_data(out),
                   (int64_t *)gs__tensor_data(idx));
    else
      max_pool_f64(&g, (const f64 *)gs__tensor_data(&cx), (f64 *)gs__tensor_data(out),
                   (int64_t *)gs__tensor_data(idx));
  }
  gs__tensor_release(&cx);
  if (!hi.id) {
    gs_dispose(h);
    return GS_NO_TENSOR;
  }
  out = gs__lookup(h, fn);
  gs__node *n = gs__record(kind, out, 1, (const gs__tensor *[]){x}, 1);
  if (n) {
    store_geom(n, &g);
    gs__save(n, 0, gs__lookup(hi, fn));
  }
  if (indices)
    *indices = hi;
  else
    gs_dispose(hi);
  return h;
}

static gs_tensor avg_pool_nd(gs_tensor hx, const pool_args *a, const gs__node_kind *kind,
                             const char *fn) {
  pool_geom g;
  int64_t shape[5];
  gs__tensor cx;
  gs__tensor *x = pool_input(hx, a, false, &g, shape, &cx, fn);
  if (!x)
    return GS_NO_TENSOR;
  gs__tensor *out;
  gs_tensor h = gs__tensor_new(x->dtype, shape, x->ndim, fn, &out);
  if (h.id) {
    if (x->dtype == GS_F32)
      avg_pool_f32(&g, (f32 *)gs__tensor_data(&cx), (f32 *)gs__tensor_data(out), false);
    else
      avg_pool_f64(&g, (f64 *)gs__tensor_data(&cx), (f64 *)gs__tensor_data(out), false);
    gs__node *n = gs__record(kind, out, 1, (const gs__tensor *[]){x}, 0);
    if (n)
      store_geom(n, &g);
  }
  gs__tensor_release(&cx);
  return h;
}

/* The options in three dims (a 2-D pool's depth entries unused); false after reporting NULL. */
static bool have_options(const void *opt, const char *fn) {
  if (!opt)
    gs__error(GS_ERR_ARGUMENT, fn, "expected options with a kernel size, got NULL");
  return opt != NULL;
}

static bool args_2d(const gs_pool2d_options *opt, pool_args *a, const char *fn) {
  if (!have_options(opt, fn))
    return false;
  *a = (pool_args){{0, opt->kernel[0], opt->kernel[1]},
                   {0, opt->stride[0], opt->stride[1]},
                   {0, opt->padding[0], opt->padding[1]},
                   {0, opt->dilation[0], opt->dilation[1]},
                   opt->ceil_mode,
                   opt->count_exclude_pad,
                   2};
  return true;
}

static bool args_3d(const gs_pool3d_options *opt, pool_args *a, const char *fn) {
  if (!have_options(opt, fn))
    return false;
  *a = (pool_args){
      .ceil_mode = opt->ceil_mode, .count_exclude_pad = opt->count_exclude_pad, .spatial = 3};
  memcpy(a->kernel, opt->kernel, sizeof a->kernel);
  memcpy(a->stride, opt->stride, sizeof a->stride);
  memcpy(a->padding, opt->padding, sizeof a->padding);
  memcpy(a->dilation, opt->dilation, sizeof a->dilation);
  return true;
}

gs_tensor gs_max_pool2d(gs_tensor hx, const gs_pool2d_options *opt, gs_tensor *indices) {
  pool_args a;
  if (indices)
    *indices = GS_NO_TENSOR;
  return args_2d(opt, &a, "max_pool2d")
             ? max_pool_nd(hx, &a, indices, &MaxPool2dBackward, "max_pool2d")
             : GS_NO_TENSOR;
}

gs_tensor gs_max_pool3d(gs_tensor hx, const gs_pool3d_options *opt, gs_tensor *indices) {
  pool_args a;
  if (indices)
    *indices = GS_NO_TENSOR;
  return args_3d(opt, &a, "max_pool3d")
             ? max_pool_nd(hx, &a, indices, &MaxPool3dBackward, "max_pool3d")
             : GS_NO_TENSOR;
}

gs_tensor gs_avg_pool2d(gs_tensor hx, const gs_pool2d_options *opt) {
  pool_args a;
  return args_2d(opt, &a, "avg_pool2d") ? avg_pool_nd(hx, &a, &AvgPool2dBackward, "avg_pool2d")
                                        : GS_NO_TENSOR;
}

gs_tensor gs_avg_pool3d(gs_tensor hx, const gs_pool3d_options *opt) {
  pool_args a;
  return args_3d(opt, &a, "avg_pool3d") ? avg_pool_nd(hx, &a, &AvgPool3dBackward, "avg_pool3d")
                                        : GS_NO_TENSOR;
}
