/* conv-direct.c: 3x3 convolutions of unit stride on small images (the digits CNN's 8x8 and
 * 4x4 layers) computed straight from padded copies of the planes, without im2col's columns.
 *
 * im2col lays out nine copies of the input (one per tap) for a BLAS product; on images this
 * small, building and reading those columns (and folding them back for the input's gradient)
 * cost as much as the products. Here a padded copy of each plane is read in place:
 *
 * - forward: out[o][y][x] = sum over c, i, j of w[o][c][i][j] * pad[c][y + i][x + j];
 * - the input's gradient is the same loop run on the output's gradient padded by 2 - p, with
 *   the weight's taps reversed and its two channel dims swapped (a stride-1 transposed
 *   convolution is a convolution);
 * - the weight's gradient: dw[o][c][i][j] = sum over n, y, x of g[n][o][y][x] *
 *   pad[n][c][y + i][x + j].
 *
 * With AVX-512 (chosen by a plain CPU check, never target_clones: its ifunc resolver crashed
 * ThreadSanitizer at load) a vector holds up to 16 output positions, whole rows of one plane
 * (16 / width rows); a tap's vector is one permute of two loads of the padded rows, and each
 * tap feeds 16 output channels' accumulators. f64 takes plain loops over the same padded
 * planes, packed weights and reversed taps (for small problems only: they are scalar), which
 * is what the float64 gradchecks exercise.
 *
 * Without AVX-512 but with AVX2+FMA (AMD EPYC CI machines), a vector holds 8 output
 * positions: two rows up to 4 wide, or 8 columns of a wider row; a tap's vector is two
 * unaligned 4-lane loads of the padded rows; the forward takes two vectors per weight
 * broadcast over 4 output channels. Without either, f32 goes through im2col+sgemm (conv.c).
 * GS_CPU_FEATURES=avx2 / none (cpu-features.c) forces the lower paths on an AVX-512
 * machine.
 */
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CONV_DIRECT_X86 1
#endif

#include "conv-impl.h"

/* Output channels per packed weight block, and output positions per vector. */
#define LANES 16
/* Elements a padded copy reads past its last plane (two vectors from the last row). */
#define SLACK 32
/* Multiply-adds per pass up to which f64 takes the direct path's plain loops (a gradcheck's
 * sizes, and up to a digits layer of a few samples); beyond, dgemm is faster. */
#define DIRECT_F64_MACS ((int64_t)1 << 20)
/* Elements of padded planes a weight-gradient block may use (4 M: 16 MB in f32). */
#define DIRECT_PAD_BUDGET ((int64_t)1 << 22)

/* One direct pass's sizes: ci padded input planes of hp x wp each, co output planes of
 * oh x ow. */
typedef struct direct_pass {
  int64_t ci, co, hp, wp, oh, ow;
} direct_pass;

bool gs__conv_direct_fits(gs_dtype dt, const conv_geom *g) {
  if (!conv_is_planar(g) || g->kh != 3 || g->kw != 3 || g->sh != 1 || g->sw != 1 || g->dh != 1 ||
      g->dw != 1 || g->groups != 1 || g->ph != g->pw || g->ph > 1 || g->ow > LANES || g->w > LANES)
    return false;
  if (dt == GS_F64) /* scalar loops: kept to small problems, where BLAS's setup dominates */
    return g->n * g->l <= DIRECT_F64_MACS && g->o * g->c <= DIRECT_F64_MACS &&
           g->n * g->l * g->o * g->c * 9 <= DIRECT_F64_MACS; /* each factor checked: no overflow */
  return dt == GS_F32 && gs__cpu_level_get() >= GS__CPU_AVX2;
}

/* ---- layouts both dtypes share -------------------------------------------------------- */

/* pad: np planes of (h + 2q) x (w + 2q) whose border is zero already (the buffer was zeroed
 * once; only interiors are written); src: np planes of h x w. */
#define DIRECT_LAYOUTS(T)                                                                          \
  static void pad_planes_##T(const T *src, int64_t np, int64_t h, int64_t w, int64_t q, T *pad) {  \
    const int64_t wp = w + 2 * q, plane = (h + 2 * q) * wp;                                        \
    if (q == 0) { /* no border: the planes as they are */                                          \
      memcpy(pad, src, sizeof(T) * (size_t)(np * plane));                                          \
      return;                                                                                      \
    }                                                                                              \
    for (int64_t p = 0; p < np; p++) { /* rows of 4 and 8 (the digits') copied inline */           \
      T *d = pad + p * plane + q * wp + q;                                                         \
      const T *s = src + p * h * w;                                                                \
      if (w == 4)                                                                                  \
        for (int64_t y = 0; y < h; y++, d += wp, s += 4)                                           \
          memcpy(d, s, 4 * sizeof(T));                                                             \
      else if (w == 8)                                                                             \
        for (int64_t y = 0; y < h; y++, d += wp, s += 8)                                           \
          memcpy(d, s, 8 * sizeof(T));                                                             \
      else                                                                                         \
        for (int64_t y = 0; y < h; y++, d += wp, s += w)                                           \
          memcpy(d, s, sizeof(T) * (size_t)w);                                                     \
    }                                                                                              \
  }                                                                                                \
  /* packed [co / LANES blocks][ci][9 taps][LANES], zero past co, from w [O][C][3][3]: the         \
   * forward's (co = O, ci = C) or, reversed, the input gradient's (co = C, ci = O, tap t read     \
   * from 8 - t). */                                                                               \
  static void pack_weights_##T(const T *w, int64_t O, int64_t C, bool reversed, T *packed) {       \
    const int64_t co = reversed ? C : O, ci = reversed ? O : C;                                    \
    for (int64_t b = 0; b * LANES < co; b++)                                                       \
      for (int64_t c = 0; c < ci; c++)                                                             \
        for (int t = 0; t < 9; t++)                                                                \
          for (int k = 0; k < LANES; k++) {                                                        \
            int64_t o = b * LANES + k;                                                             \
            T v = (T)0;                                                                            \
            if (o < co)                                                                            \
              v = reversed ? w[(c * C + o) * 9 + (8 - t)] : w[(o * C + c) * 9 + t];                \
            packed[((b * ci + c) * 9 + t) * LANES + k] = v;                                        \
          }                                                                                        \
  }
DIRECT_LAYOUTS(float)
DIRECT_LAYOUTS(double)

static int64_t weight_blocks(int64_t co) { return (co + LANES - 1) / LANES; }

/* ---- plain loops (f64) ------------------------------------------------------------------ */

/* out [co][oh * ow] of one sample from its padded planes pad, plus bias when not NULL. */
static void direct_sample_f64(const direct_pass *d, const double *pad, const double *packed,
                              const double *bias, double *out) {
  const int64_t plane = d->hp * d->wp;
  for (int64_t o = 0; o < d->co; o++) {
    const double *wb = packed + (o / LANES) * d->ci * 9 * LANES + o % LANES;
    for (int64_t y = 0; y < d->oh; y++)
      for (int64_t x = 0; x < d->ow; x++) {
        double s = 0.0;
        for (int64_t c = 0; c < d->ci; c++)
          for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
              s += wb[(c * 9 + i * 3 + j) * LANES] * pad[c * plane + (y + i) * d->wp + x + j];
        out[(o * d->oh + y) * d->ow + x] = bias ? s + bias[o] : s;
      }
  }
}

/* dw [co][ci][9] += the weight's gradient over nb samples: pad their padded inputs, gy their
 * output gradients [nb][co][oh * ow]. */
static void direct_dw_f64(const direct_pass *d, int64_t nb, const double *pad, const double *gy,
                          double *dw) {
  const int64_t plane = d->hp * d->wp, l = d->oh * d->ow;
  for (int64_t o = 0; o < d->co; o++)
    for (int64_t c = 0; c < d->ci; c++)
      for (int t = 0; t < 9; t++) {
        double s = 0.0;
        for (int64_t n = 0; n < nb; n++) {
          const double *g = gy + (n * d->co + o) * l, *p = pad + (n * d->ci + c) * plane;
          for (int64_t y = 0; y < d->oh; y++)
            for (int64_t x = 0; x < d->ow; x++)
              s += g[y * d->ow + x] * p[(y + t / 3) * d->wp + x + t % 3];
        }
        dw[(o * d->ci + c) * 9 + t] += s;
      }
}

/* ---- AVX-512 (f32) ---------------------------------------------------------------------- */

#ifdef CONV_DIRECT_X86
#define K4(X) X(0) X(1) X(2) X(3)
#define K8(X) K4(X) X(4) X(5) X(6) X(7)
#define K16(X) K8(X) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)

/* Rows of output per vector: as many whole rows as 16 lanes hold, fewer when a tap's inputs
 * for them ((rows - 1) * wp + ow + 2 elements from the first) would not fit in two loads. */
static int64_t rows_per_vector(const direct_pass *d) {
  int64_t r = LANES / d->ow;
  while (r > 1 && (r - 1) * d->wp + d->ow + 2 > 2 * LANES)
    r--;
  return r;
}

/* idx[j]: for lane (row r, column x) of a vector, where its input for tap column j lies in
 * the two loads starting at the vector's first row: r * wp + x + j. */
__attribute__((target("avx512f"))) static void tap_indices(const direct_pass *d, int64_t rows,
                                                           __m512i idx[3]) {
  for (int j = 0; j < 3; j++) {
    int32_t v[LANES] = {0};
    for (int64_t lane = 0; lane < rows * d->ow; lane++)
      v[lane] = (int32_t)((lane / d->ow) * d->wp + lane % d->ow + j);
    idx[j] = _mm512_loadu_si512(v);
  }
}

/* The lanes of a vector that hold output positions when it starts at row y0. */
static inline __attribute__((always_inline)) __mmask16 lanes_at(const direct_pass *d, int64_t rows,
                                                                int64_t y0) {
  int64_t r = d->oh - y0 < rows ? d->oh - y0 : rows;
  return (__mmask16)((1u << (unsigned)(r * d->ow)) - 1u);
}

__attribute__((target("avx512f"))) static void direct_sample_avx512(const direct_pass *d,
                                                                    const float *pad,
                                                                    const float *packed,
                                                                    const float *bias, float *out) {
  const int64_t rows = rows_per_vector(d), plane = d->hp * d->wp, l = d->oh * d->ow;
  __m512i idx[3];
  tap_indices(d, rows, idx);
  for (int64_t y0 = 0; y0 < d->oh; y0 += rows) {
    const __mmask16 m = lanes_at(d, rows, y0);
    for (int64_t b = 0; b * LANES < d->co; b++) {
#define ZERO(k) __m512 acc##k = _mm512_setzero_ps();
      K16(ZERO)
#undef ZERO
      const float *wv = packed + b * d->ci * 9 * LANES;
      for (int64_t c = 0; c < d->ci; c++)
        for (int i = 0; i < 3; i++) {
          const float *row = pad + c * plane + (y0 + i) * d->wp;
          const __m512 lo = _mm512_loadu_ps(row), hi = _mm512_loadu_ps(row + LANES);
          for (int j = 0; j < 3; j++, wv += LANES) {
            const __m512 s = _mm512_permutex2var_ps(lo, idx[j], hi);
#define FMA(k) acc##k = _mm512_fmadd_ps(s, _mm512_set1_ps(wv[k]), acc##k);
            K16(FMA)
#undef FMA
          }
        }
#define STORE(k)                                                                                   \
  if (b * LANES + k < d->co) {                                                                     \
    __m512 v = bias ? _mm512_add_ps(acc##k, _mm512_set1_ps(bias[b * LANES + k])) : acc##k;         \
    _mm512_mask_storeu_ps(out + (b * LANES + k) * l + y0 * d->ow, m, v);                           \
  }
      K16(STORE)
#undef STORE
    }
  }
}

/* dw [co][ci][9] += the weight's gradient over nb samples, eight output channels and one
 * kernel row at a time: 24 accumulators, each a lane-wise sum over every sample's vectors,
 * added up at the end. The output channels are the outer loop so that their gradients (8
 * planes of every sample) stay in L1 while each input channel's padded planes stream past.
 * Lanes holding no position are zero in both factors. */
__attribute__((target("avx512f"))) static void
direct_dw_avx512(const direct_pass *d, int64_t nb, const float *pad, const float *gy, float *dw) {
  const int64_t rows = rows_per_vector(d), plane = d->hp * d->wp, l = d->oh * d->ow;
  __m512i idx[3];
  tap_indices(d, rows, idx);
  for (int64_t o0 = 0; o0 < d->co; o0 += 8) {
    const int64_t ko = d->co - o0 < 8 ? d->co - o0 : 8;
    for (int64_t c = 0; c < d->ci; c++)
      for (int i = 0; i < 3; i++) {
#define ZERO(k)                                                                                    \
  __m512 a##k##0 = _mm512_setzero_ps(), a##k##1 = _mm512_setzero_ps(),                             \
         a##k##2 = _mm512_setzero_ps();
        K8(ZERO)
#undef ZERO
        for (int64_t n = 0; n < nb; n++) {
          const float *p = pad + (n * d->ci + c) * plane + i * d->wp;
          const float *g = gy + (n * d->co + o0) * l;
          for (int64_t y0 = 0; y0 < d->oh; y0 += rows, p += rows * d->wp, g += rows * d->ow) {
            const __mmask16 m = lanes_at(d, rows, y0);
            const __m512 lo = _mm512_loadu_ps(p), hi = _mm512_loadu_ps(p + LANES);
            const __m512 s0 = _mm512_maskz_permutex2var_ps(m, lo, idx[0], hi);
            const __m512 s1 = _mm512_maskz_permutex2var_ps(m, lo, idx[1], hi);
            const __m512 s2 = _mm512_maskz_permutex2var_ps(m, lo, idx[2], hi);
#define FMA(k)                                                                                     \
  if (k < ko) {                                                                                    \
    const __m512 gk = _mm512_maskz_loadu_ps(m, g + k * l);                                         \
    a##k##0 = _mm512_fmadd_ps(gk, s0, a##k##0);                                                    \
    a##k##1 = _mm512_fmadd_ps(gk, s1, a##k##1);                                                    \
    a##k##2 = _mm512_fmadd_ps(gk, s2, a##k##2);                                                    \
  }
            K8(FMA)
#undef FMA
          }
        }
#define SUM(k)                                                                                     \
  if (k < ko) {                                                                                    \
    float *t = dw + ((o0 + k) * d->ci + c) * 9 + i * 3;                                            \
    t[0] += _mm512_reduce_add_ps(a##k##0);                                                         \
    t[1] += _mm512_reduce_add_ps(a##k##1);                                                         \
    t[2] += _mm512_reduce_add_ps(a##k##2);                                                         \
  }
        K8(SUM)
#undef SUM
      }
  }
}

/* The sum of a vector's 8 lanes. */
__attribute__((target("avx2,fma"))) static inline float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

/* ---- AVX2 + FMA (f32, CPUs without AVX-512) -------------------------------------------- */

/* A vector of 8 output positions as two halves of 4 lanes, each a run of one row: rows up to
 * 4 wide put two rows in a vector (one per half), wider rows fill 8 columns of one row. in:
 * each half's first element in a padded plane (tap (0, 0)); out: in an output plane; mask:
 * the lanes holding a position (all bits set). A half with no position points at the first
 * half, so no address leaves the planes. */
typedef struct seg8 {
  int64_t in[2], out[2];
  __m256i mask;
} seg8;

/* Vectors per output plane. */
static int64_t vectors_per_plane(const direct_pass *d) {
  return d->ow <= 4 ? (d->oh + 1) / 2 : d->oh * ((d->ow + 7) / 8);
}

__attribute__((target("avx2,fma"))) static inline __attribute__((always_inline)) seg8
seg_at(const direct_pass *d, int64_t v) {
  seg8 s;
  int64_t n[2];
  if (d->ow <= 4) { /* rows 2v and 2v + 1 */
    const int64_t y = 2 * v;
    n[0] = d->ow, n[1] = y + 1 < d->oh ? d->ow : 0;
    s.in[0] = y * d->wp, s.out[0] = y * d->ow;
    s.in[1] = s.in[0] + d->wp, s.out[1] = s.out[0] + d->ow;
  } else { /* columns x0 .. x0 + 7 of row y */
    const int64_t per = (d->ow + 7) / 8, y = v / per, x0 = (v % per) * 8, left = d->ow - x0;
    n[0] = left < 4 ? left : 4, n[1] = left <= 4 ? 0 : left < 8 ? left - 4 : 4;
    s.in[0] = y * d->wp + x0, s.out[0] = y * d->ow + x0;
    s.in[1] = s.in[0] + 4, s.out[1] = s.out[0] + 4;
  }
  if (n[1] == 0)
    s.in[1] = s.in[0], s.out[1] = s.out[0];
  s.mask = _mm256_cmpgt_epi32(_mm256_setr_epi32((int)n[0], (int)n[0], (int)n[0], (int)n[0],
                                                (int)n[1], (int)n[1], (int)n[1], (int)n[1]),
                              _mm256_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3));
  return s;
}

/* The two halves at p + in[0] and p + in[1] as one vector (all 8 lanes read: the padded
 * planes' SLACK covers the last). */
__attribute__((target("avx2,fma"))) static inline __attribute__((always_inline)) __m256
load_halves(const float *p, const seg8 *s) {
  return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(p + s->in[0])),
                              _mm_loadu_ps(p + s->in[1]), 1);
}

/* The lanes of s from an unpadded plane p (positions outside s read nothing, give zero). */
__attribute__((target("avx2,fma"))) static inline __attribute__((always_inline)) __m256
load_positions(const float *p, const seg8 *s) {
  return _mm256_insertf128_ps(
      _mm256_castps128_ps256(_mm_maskload_ps(p + s->out[0], _mm256_castsi256_si128(s->mask))),
      _mm_maskload_ps(p + s->out[1], _mm256_extracti128_si256(s->mask, 1)), 1);
}

/* v's lanes of s into an unpadded plane p. */
__attribute__((target("avx2,fma"))) static inline __attribute__((always_inline)) void
store_positions(float *p, const seg8 *s, __m256 v) {
  _mm_maskstore_ps(p + s->out[0], _mm256_castsi256_si128(s->mask), _mm256_castps256_ps128(v));
  _mm_maskstore_ps(p + s->out[1], _mm256_extracti128_si256(s->mask, 1),
                   _mm256_extractf128_ps(v, 1));
}

/* Two vectors (a and b) at a time, four output channels: each weight broadcast feeds two
 * multiply-adds, in 8 accumulators (with 8 output channels a vector, the broadcasts were half
 * the loads and the accumulators spilled). */
__attribute__((target("avx2,fma"))) static void direct_sample_avx2(const direct_pass *d,
                                                                   const float *pad,
                                                                   const float *packed,
                                                                   const float *bias, float *out) {
  const int64_t plane = d->hp * d->wp, l = d->oh * d->ow, nv = vectors_per_plane(d);
  for (int64_t v = 0; v < nv; v += 2) {
    const bool two = v + 1 < nv; /* else b repeats a, and is not stored */
    const seg8 sa = seg_at(d, v), sb = two ? seg_at(d, v + 1) : sa;
    for (int64_t o0 = 0; o0 < d->co; o0 += 4) {
#define ZERO(k) __m256 a##k = _mm256_setzero_ps(), b##k = _mm256_setzero_ps();
      K4(ZERO)
#undef ZERO
      const float *wv = packed + (o0 / LANES) * d->ci * 9 * LANES + o0 % LANES;
      for (int64_t c = 0; c < d->ci; c++)
        for (int i = 0; i < 3; i++) {
          const float *row = pad + c * plane + i * d->wp;
          for (int j = 0; j < 3; j++, wv += LANES) {
            const __m256 ta = load_halves(row + j, &sa), tb = load_halves(row + j, &sb);
#define FMA(k)                                                                                     \
  {                                                                                                \
    const __m256 w = _mm256_broadcast_ss(wv + k);                                                  \
    a##k = _mm256_fmadd_ps(ta, w, a##k);                                                           \
    b##k = _mm256_fmadd_ps(tb, w, b##k);                                                           \
  }
            K4(FMA)
#undef FMA
          }
        }
#define STORE(k)                                                                                   \
  if (o0 + k < d->co) {                                                                            \
    const __m256 bk = bias ? _mm256_set1_ps(bias[o0 + k]) : _mm256_setzero_ps();                   \
    float *po = out + (o0 + k) * l;                                                                \
    store_positions(po, &sa, _mm256_add_ps(a##k, bk));                                             \
    if (two)                                                                                       \
      store_positions(po, &sb, _mm256_add_ps(b##k, bk));                                           \
  }
      K4(STORE)
#undef STORE
    }
  }
}

/* dw [co][ci][9] += the weight's gradient over nb samples, four output channels and one
 * kernel row at a time (12 accumulators, the three taps' vectors and a gradient's: the 16
 * registers), as the AVX-512 loop. Lanes holding no position are zero in both factors. */
__attribute__((target("avx2,fma"))) static void
direct_dw_avx2(const direct_pass *d, int64_t nb, const float *pad, const float *gy, float *dw) {
  const int64_t plane = d->hp * d->wp, l = d->oh * d->ow, nv = vectors_per_plane(d);
  for (int64_t o0 = 0; o0 < d->co; o0 += 4) {
    const int64_t ko = d->co - o0 < 4 ? d->co - o0 : 4;
    for (int64_t c = 0; c < d->ci; c++)
      for (int i = 0; i < 3; i++) {
#define ZERO(k)                                                                                    \
  __m256 a##k##0 = _mm256_setzero_ps(), a##k##1 = _mm256_setzero_ps(),                             \
         a##k##2 = _mm256_setzero_ps();
        K4(ZERO)
#undef ZERO
        for (int64_t n = 0; n < nb; n++) {
          const float *p = pad + (n * d->ci + c) * plane + i * d->wp;
          const float *g = gy + (n * d->co + o0) * l;
          for (int64_t v = 0; v < nv; v++) {
            const seg8 s = seg_at(d, v);
            const __m256 m = _mm256_castsi256_ps(s.mask);
            const __m256 s0 = _mm256_and_ps(load_halves(p, &s), m);
            const __m256 s1 = _mm256_and_ps(load_halves(p + 1, &s), m);
            const __m256 s2 = _mm256_and_ps(load_halves(p + 2, &s), m);
#define FMA(k)                                                                                     \
  if (k < ko) {                                                                                    \
    const __m256 gk = load_positions(g + k * l, &s);                                               \
    a##k##0 = _mm256_fmadd_ps(gk, s0, a##k##0);                                                    \
    a##k##1 = _mm256_fmadd_ps(gk, s1, a##k##1);                                                    \
    a##k##2 = _mm256_fmadd_ps(gk, s2, a##k##2);                                                    \
  }
            K4(FMA)
#undef FMA
          }
        }
#define SUM(k)                                                                                     \
  if (k < ko) {                                                                                    \
    float *t = dw + ((o0 + k) * d->ci + c) * 9 + i * 3;                                            \
    t[0] += hsum8(a##k##0);                                                                        \
    t[1] += hsum8(a##k##1);                                                                        \
    t[2] += hsum8(a##k##2);                                                                        \
  }
        K4(SUM)
#undef SUM
      }
  }
}
#endif

/* ---- the passes -------------------------------------------------------------------------- */

static void direct_sample(gs_dtype dt, const direct_pass *d, const char *pad, const char *packed,
                          const char *bias, char *out) {
#ifdef CONV_DIRECT_X86
  if (dt == GS_F32) {
    (gs__cpu_has_avx512f() ? direct_sample_avx512 : direct_sample_avx2)(
        d, (const float *)pad, (const float *)packed, (const float *)bias, (float *)out);
    return;
  }
#endif
  direct_sample_f64(d, (const double *)pad, (const double *)packed, (const double *)bias,
                    (double *)out);
}

static void direct_dw(gs_dtype dt, const direct_pass *d, int64_t nb, const char *pad,
                      const char *gy, char *dw) {
#ifdef CONV_DIRECT_X86
  if (dt == GS_F32) {
    (gs__cpu_has_avx512f() ? direct_dw_avx512 : direct_dw_avx2)(d, nb, (const float *)pad,
                                                                (const float *)gy, (float *)dw);
    return;
  }
#endif
  direct_dw_f64(d, nb, (const double *)pad, (const double *)gy, (double *)dw);
}

static void pad_planes(gs_dtype dt, const char *src, int64_t np, int64_t h, int64_t w, int64_t q,
                       char *pad) {
  if (dt == GS_F32)
    pad_planes_float((const float *)src, np, h, w, q, (float *)pad);
  else
    pad_planes_double((const double *)src, np, h, w, q, (double *)pad);
}

static void pack_weights(gs_dtype dt, const char *w, int64_t O, int64_t C, bool reversed,
                         char *packed) {
  if (dt == GS_F32)
    pack_weights_float((const float *)w, O, C, reversed, (float *)packed);
  else
    pack_weights_double((const double *)w, O, C, reversed, (double *)packed);
}

/* One zeroed scratch of count elements of dt (an unregistered storage); false after
 * reporting. */
static bool zeroed_scratch(gs__tensor *t, gs_dtype dt, int64_t count, const char *fn) {
  if (!gs__tensor_init(t, dt, (int64_t[]){count > 0 ? count : 1}, 1, fn))
    return false;
  memset(gs__tensor_data(t), 0, (size_t)count * gs__elsize(dt));
  return true;
}

/* Each sample's out = conv of its padded planes (src's np planes of h x w, padded by q). */
static bool run_samples(gs_dtype dt, const direct_pass *d, int64_t n, const char *src, int64_t h,
                        int64_t w, int64_t q, const char *wgt, int64_t O, int64_t C, bool reversed,
                        const char *bias, char *out, const char *fn) {
  int64_t npacked = weight_blocks(d->co) * d->ci * 9 * LANES, npad = d->ci * d->hp * d->wp;
  gs__tensor sc;
  if (!zeroed_scratch(&sc, dt, npacked + npad + SLACK, fn))
    return false;
  size_t es = gs__elsize(dt);
  char *packed = gs__tensor_data(&sc), *pad = packed + (size_t)npacked * es;
  pack_weights(dt, wgt, O, C, reversed, packed);
  for (int64_t s = 0; s < n; s++) {
    pad_planes(dt, src + (size_t)(s * d->ci * h * w) * es, d->ci, h, w, q, pad);
    direct_sample(dt, d, pad, packed, bias, out + (size_t)(s * d->co * d->oh * d->ow) * es);
  }
  gs__tensor_release(&sc);
  return true;
}

bool gs__conv_direct_forward(gs_dtype dt, const conv_geom *g, const char *x, const char *w,
                             const char *bias, char *out, const char *fn) {
  const direct_pass d = {g->c, g->o, g->h + 2 * g->ph, g->w + 2 * g->pw, g->oh, g->ow};
  return run_samples(dt, &d, g->n, x, g->h, g->w, g->ph, w, g->o, g->c, false, bias, out, fn);
}

bool gs__conv_direct_backward(gs_dtype dt, const conv_geom *g, const char *x, const char *w,
                              const char *gy, char *dx, char *dw, double *db, const char *fn) {
  const int64_t l = g->l;
  size_t es = gs__elsize(dt);
  if (db) /* planes in sample order, as conv.c's shuffle sums them: the same bits */
    for (int64_t s = 0; s < g->n; s++)
      for (int64_t o = 0; o < g->o; o++) {
        const char *p = gy + (size_t)((s * g->o + o) * l) * es;
        db[o] += dt == GS_F32 ? conv_plane_sum_float((const float *)p, l)
                              : conv_plane_sum_double((const double *)p, l);
      }
  if (dw) {
    const direct_pass d = {g->c, g->o, g->h + 2 * g->ph, g->w + 2 * g->pw, g->oh, g->ow};
    int64_t per = d.ci * d.hp * d.wp, nb = DIRECT_PAD_BUDGET / (per > 0 ? per : 1);
    nb = nb < 1 ? 1 : nb > g->n ? g->n : nb;
    gs__tensor sc;
    if (!zeroed_scratch(&sc, dt, nb * per + SLACK, fn))
      return false;
    char *pad = gs__tensor_data(&sc);
    memset(dw, 0, (size_t)(g->o * g->c * 9) * es);
    for (int64_t n0 = 0; n0 < g->n; n0 += nb) {
      int64_t m = g->n - n0 < nb ? g->n - n0 : nb;
      pad_planes(dt, x + (size_t)(n0 * g->c * g->h * g->w) * es, m * g->c, g->h, g->w, g->ph, pad);
      direct_dw(dt, &d, m, pad, gy + (size_t)(n0 * g->o * l) * es, dw);
    }
    gs__tensor_release(&sc);
  }
  if (dx) { /* the output's gradient padded by 2 - p, convolved with w's taps reversed */
    const int64_t q = 2 - g->ph;
    const direct_pass d = {g->o, g->c, g->oh + 2 * q, g->ow + 2 * q, g->h, g->w};
    if (!run_samples(dt, &d, g->n, gy, g->oh, g->ow, q, w, g->o, g->c, true, NULL, dx, fn))
      return false;
  }
  return true;
}
