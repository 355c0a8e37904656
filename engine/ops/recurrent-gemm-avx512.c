/* recurrent-gemm-avx512.c: the recurrence's per-step product with AVX-512 (recurrent-gemm.h
 * says why and what it matches). B is packed in panels of 64 columns, k rows each (zero past
 * n); a block of up to 6 rows of a times one panel keeps 24 accumulators in registers, each
 * k reading the panel's row once and broadcasting one value of a per row. */
#include <immintrin.h>

#include "recurrent-gemm.h"

#define AVX512 __attribute__((target("avx512f,fma")))

enum { PANEL = 64, ROWS = 6 };

size_t gs__step_gemm_packed_size(int64_t k, int64_t n) {
  return (size_t)((n + PANEL - 1) / PANEL * PANEL * k);
}

void gs__step_gemm_pack_avx512(const float *b, int64_t k, int64_t n, bool transposed, int64_t ldb,
                               float *packed) {
  for (int64_t j0 = 0; j0 < n; j0 += PANEL)
    for (int64_t kk = 0; kk < k; kk++, packed += PANEL)
      for (int64_t j = 0; j < PANEL; j++) {
        int64_t col = j0 + j;
        packed[j] = col >= n ? 0.0f : transposed ? b[col * ldb + kk] : b[kk * ldb + col];
      }
}

/* rows (a compile-time constant once inlined) rows of c, one panel: cols of its 64 exist. */
AVX512 static inline __attribute__((always_inline)) void
block(int rows, int64_t k, const float *a, int64_t lda, const float *panel, const float *add,
      int64_t ldadd, float *c, int64_t ldc, int64_t cols) {
  __m512 acc[ROWS][4];
  for (int i = 0; i < rows; i++)
    for (int v = 0; v < 4; v++)
      acc[i][v] = _mm512_setzero_ps();
  for (int64_t kk = 0; kk < k; kk++, panel += PANEL) {
    __m512 b0 = _mm512_load_ps(panel), b1 = _mm512_load_ps(panel + 16),
           b2 = _mm512_load_ps(panel + 32), b3 = _mm512_load_ps(panel + 48);
    for (int i = 0; i < rows; i++) {
      __m512 x = _mm512_set1_ps(a[i * lda + kk]);
      acc[i][0] = _mm512_fmadd_ps(x, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(x, b1, acc[i][1]);
      acc[i][2] = _mm512_fmadd_ps(x, b2, acc[i][2]);
      acc[i][3] = _mm512_fmadd_ps(x, b3, acc[i][3]);
    }
  }
  for (int v = 0; v < 4 && cols > 16 * v; v++) {
    int64_t left = cols - 16 * v;
    __mmask16 m = left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
    for (int i = 0; i < rows; i++) {
      __m512 r = acc[i][v];
      if (add)
        r = _mm512_add_ps(_mm512_maskz_loadu_ps(m, add + i * ldadd + 16 * v), r);
      _mm512_mask_storeu_ps(c + i * ldc + 16 * v, m, r);
    }
  }
}

AVX512 void gs__step_gemm_avx512(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                                 const float *packed, const float *add, int64_t ldadd, float *c,
                                 int64_t ldc) {
  for (int64_t j0 = 0; j0 < n; j0 += PANEL, packed += PANEL * k) {
    int64_t cols = n - j0 < PANEL ? n - j0 : PANEL;
    for (int64_t i = 0; i < m; i += ROWS) {
      const float *ai = a + i * lda, *addi = add ? add + i * ldadd + j0 : NULL;
      float *ci = c + i * ldc + j0;
      /* one copy of the block per row count, each with its loops unrolled */
      switch (m - i < ROWS ? m - i : ROWS) {
      case 1: block(1, k, ai, lda, packed, addi, ldadd, ci, ldc, cols); break;
      case 2: block(2, k, ai, lda, packed, addi, ldadd, ci, ldc, cols); break;
      case 3: block(3, k, ai, lda, packed, addi, ldadd, ci, ldc, cols); break;
      case 4: block(4, k, ai, lda, packed, addi, ldadd, ci, ldc, cols); break;
      case 5: block(5, k, ai, lda, packed, addi, ldadd, ci, ldc, cols); break;
      default: block(ROWS, k, ai, lda, packed, addi, ldadd, ci, ldc, cols); break;
      }
    }
  }
}
