/* small-gemm-avx512.c: small f32 products with AVX-512 (small-gemm.h says when and why). A
 * block of up to 4 rows of c times up to 64 columns (8 rows times up to 32) keeps its sums in
 * 16 registers; each l
 * reads one row of b (masked past n) and broadcasts one value of a per row. A b read
 * transposed (x @ W^T, a Linear layer's forward) is first transposed into rows on the stack,
 * 16 x 16 floats at a time in registers. */
#include <immintrin.h>

#include "ops-impl.h"
#include "small-gemm.h"

#define AVX512 __attribute__((target("avx512f,fma")))
/* The block's loops over its rows and vectors, unrolled so its sums stay in registers. */
#define UNROLL _Pragma("GCC unroll 16")

enum { ROWS = 4, VECS = 4, COLS = 16 * VECS };

bool gs__small_sgemm_fits(int64_t m, int64_t n, int64_t k) {
  return k > 0 && k <= GS__SMALL_GEMM_MAX_K && m > 0 && n > 0 &&
         m * n <= GS__SMALL_GEMM_MAX_WORK / k && gs__cpu_has_avx512f();
}

bool gs__small_sgemm_wins(int64_t m, int64_t n, int64_t k, bool b_trans) {
  return b_trans && m >= 8 && n >= 16 && gs__small_sgemm_fits(m, n, k);
}

/* rows x (16 * vecs) of c (both compile-time constants once inlined); mask: the last vector's
 * columns that exist. */
AVX512 static inline __attribute__((always_inline)) void
block(int rows, int vecs, __mmask16 mask, int64_t k, const float *a, int64_t ars, int64_t acs,
      const float *b, int64_t ldb, const float *add, int64_t ldadd, float *c, int64_t ldc) {
  __m512 acc[2 * ROWS][VECS];
  UNROLL for (int i = 0; i < rows; i++) UNROLL for (int v = 0; v < vecs; v++) acc[i][v] =
      _mm512_setzero_ps();
  for (int64_t l = 0; l < k; l++, b += ldb) {
    __m512 bv[VECS];
    UNROLL for (int v = 0; v < vecs; v++) bv[v] =
        v < vecs - 1 ? _mm512_loadu_ps(b + 16 * v) : _mm512_maskz_loadu_ps(mask, b + 16 * v);
    UNROLL for (int i = 0; i < rows; i++) {
      __m512 x = _mm512_set1_ps(a[i * ars + l * acs]);
      UNROLL for (int v = 0; v < vecs; v++) acc[i][v] = _mm512_fmadd_ps(x, bv[v], acc[i][v]);
    }
  }
  UNROLL for (int i = 0; i < rows; i++) UNROLL for (int v = 0; v < vecs; v++) {
    __mmask16 m = v < vecs - 1 ? (__mmask16)0xffff : mask;
    float *out = c + i * ldc + 16 * v;
    __m512 r = acc[i][v];
    if (add) /* the addend last, as sgemm's kernels add to c */
      r = _mm512_add_ps(_mm512_maskz_loadu_ps(m, add + i * ldadd + 16 * v), r);
    _mm512_mask_storeu_ps(out, m, r);
  }
}

/* One panel of up to 64 columns (vecs vectors, the last one masked), all m rows, in blocks
 * of ROWS rows; 8-row blocks where the panel is one or two vectors wide, so a narrow product
 * (10 classes) still has enough independent sums to keep the FMA units busy. */
#define BLOCK(r, v)                                                                                \
  block(r, v, mask, k, a + i * ars, ars, acs, b, ldb, add ? add + i * ldadd : NULL, ldadd,         \
        c + i * ldc, ldc)
AVX512 static void panel(int vecs, __mmask16 mask, int64_t m, int64_t k, const float *a,
                         int64_t ars, int64_t acs, const float *b, int64_t ldb, const float *add,
                         int64_t ldadd, float *c, int64_t ldc) {
  int rows = vecs <= 2 ? 2 * ROWS : ROWS;
  for (int64_t i = 0; i < m; i += rows) {
    int left = (int)(m - i < rows ? m - i : rows);
    switch (vecs * 16 + left) {
    case 16 + 1: BLOCK(1, 1); break;
    case 16 + 2: BLOCK(2, 1); break;
    case 16 + 3: BLOCK(3, 1); break;
    case 16 + 4: BLOCK(4, 1); break;
    case 16 + 5: BLOCK(5, 1); break;
    case 16 + 6: BLOCK(6, 1); break;
    case 16 + 7: BLOCK(7, 1); break;
    case 16 + 8: BLOCK(8, 1); break;
    case 32 + 1: BLOCK(1, 2); break;
    case 32 + 2: BLOCK(2, 2); break;
    case 32 + 3: BLOCK(3, 2); break;
    case 32 + 4: BLOCK(4, 2); break;
    case 32 + 5: BLOCK(5, 2); break;
    case 32 + 6: BLOCK(6, 2); break;
    case 32 + 7: BLOCK(7, 2); break;
    case 32 + 8: BLOCK(8, 2); break;
    case 48 + 1: BLOCK(1, 3); break;
    case 48 + 2: BLOCK(2, 3); break;
    case 48 + 3: BLOCK(3, 3); break;
    case 48 + 4: BLOCK(4, 3); break;
    case 64 + 1: BLOCK(1, 4); break;
    case 64 + 2: BLOCK(2, 4); break;
    case 64 + 3: BLOCK(3, 4); break;
    default: BLOCK(4, 4); break;
    }
  }
}

/* b [k, n] with rows ldb apart. */
AVX512 static void product(int64_t m, int64_t n, int64_t k, const float *a, int64_t ars,
                           int64_t acs, const float *b, int64_t ldb, const float *add,
                           int64_t ldadd, float *c, int64_t ldc) {
  for (int64_t j = 0; j < n; j += COLS) {
    int64_t cols = n - j < COLS ? n - j : COLS;
    __mmask16 mask = (__mmask16)(cols % 16 ? (1u << (cols % 16)) - 1 : 0xffff);
    panel((int)((cols + 15) / 16), mask, m, k, a, ars, acs, b + j, ldb, add ? add + j : NULL, ldadd,
          c + j, ldc);
  }
}

/* The 16 x 16 floats in r, transposed in registers (unpack within 128-bit lanes, then
 * shuffles of whole lanes). */
AVX512 static inline __attribute__((always_inline)) void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xee);
    r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xee);
  }
  for (int h = 0; h < 16; h += 8)
    for (int i = 0; i < 4; i++) {
      t[h + i] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0x88);
      t[h + i + 4] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0xdd);
    }
  for (int i = 0; i < 8; i++) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
  }
}

/* rows [k, n] (n floats apart) from b's element (l, j) at b[j * ldb + l], in 16 x 16 tiles
 * transposed in registers (zeros stand in past n and k and are not stored). */
AVX512 static void transpose_rows(int64_t n, int64_t k, const float *b, int64_t ldb, float *rows) {
  for (int64_t j = 0; j < n; j += 16) {
    int jn = (int)(n - j < 16 ? n - j : 16);
    __mmask16 jmask = (__mmask16)(jn < 16 ? (1u << jn) - 1 : 0xffff);
    for (int64_t l = 0; l < k; l += 16) {
      int ln = (int)(k - l < 16 ? k - l : 16);
      __mmask16 lmask = (__mmask16)(ln < 16 ? (1u << ln) - 1 : 0xffff);
      __m512 r[16];
      UNROLL for (int t = 0; t < 16; t++) r[t] =
          t < jn ? _mm512_maskz_loadu_ps(lmask, b + (j + t) * ldb + l) : _mm512_setzero_ps();
      transpose16(r);
      for (int u = 0; u < ln; u++)
        _mm512_mask_storeu_ps(rows + (l + u) * n + j, jmask, r[u]);
    }
  }
}

AVX512 void gs__small_sgemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                            bool a_trans, const float *b, int64_t ldb, bool b_trans,
                            const float *add, int64_t ldadd, float *c, int64_t ldc) {
  int64_t ars = a_trans ? 1 : lda, acs = a_trans ? lda : 1;
  if (!b_trans) {
    product(m, n, k, a, ars, acs, b, ldb, add, ldadd, c, ldc);
    return;
  }
  /* b's transposed copy goes in slices of columns (16 KB on the stack: a caller's thread may
   * have a small stack); k <= GS__SMALL_GEMM_MAX_K keeps a slice at least 16 columns wide. */
  enum { STACK_FLOATS = 4096 };
  _Static_assert(STACK_FLOATS / GS__SMALL_GEMM_MAX_K >= 16, "a slice is one vector at least");
  float rows[STACK_FLOATS];
  int64_t step = STACK_FLOATS / k / 16 * 16;
  for (int64_t j = 0; j < n; j += step) {
    int64_t cols = n - j < step ? n - j : step;
    transpose_rows(cols, k, b + j * ldb, ldb, rows);
    product(m, cols, k, a, ars, acs, rows, cols, add ? add + j : NULL, ldadd, c + j, ldc);
  }
}
