/* relu-avx512.c: relu and relu's gradient over contiguous f32 arrays with AVX-512 (see
 * relu-avx512.h for why the bits are the portable loops'). kernels.c calls these when
 * gs__cpu_has_avx512f(): a plain CPU test, never target_clones (its ifunc resolver crashed
 * ThreadSanitizer at load). The last n % 16 elements go through masked loads and stores, so
 * nothing past the arrays is touched. */
#include <immintrin.h>

#include "relu-avx512.h"

#define AVX512 __attribute__((target("avx512f")))

/* Lanes kept: x > 0 (ordered, so false for NaN) or x unordered with itself (NaN). */
AVX512 static inline __m512 relu16(__m512 x) {
  __mmask16 keep = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ) |
                   _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  return _mm512_maskz_mov_ps(keep, x);
}

AVX512 void gs__relu_f32_avx512(float *out, const float *x, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(out + i, relu16(_mm512_loadu_ps(x + i)));
  if (i < n) {
    __mmask16 tail = (__mmask16)((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(out + i, tail, relu16(_mm512_maskz_loadu_ps(tail, x + i)));
  }
}

/* Lanes kept: not (y <= 0), true for NaN (_CMP_NLE_UQ), as "y <= 0 ? 0 : g" keeps g there. */
AVX512 static inline __m512 relu_grad16(__m512 g, __m512 y) {
  return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(y, _mm512_setzero_ps(), _CMP_NLE_UQ), g);
}

AVX512 void gs__relu_grad_f32_avx512(float *out, const float *g, const float *y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(out + i, relu_grad16(_mm512_loadu_ps(g + i), _mm512_loadu_ps(y + i)));
  if (i < n) {
    __mmask16 tail = (__mmask16)((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(
        out + i, tail,
        relu_grad16(_mm512_maskz_loadu_ps(tail, g + i), _mm512_maskz_loadu_ps(tail, y + i)));
  }
}
