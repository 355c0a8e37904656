/* recurrent-rows-avx512.c: the fused recurrence's f32 gate math with AVX-512 (see
 * recurrent-rows.h for why it matches the portable loop bit for bit). recurrent.c calls these
 * when gs__cpu_has_avx512f(): a plain CPU test, never target_clones (its ifunc resolver
 * crashed ThreadSanitizer at load).
 *
 * Why: expf and the divisions of the sigmoids and tanh, one unit at a time, were a third of
 * a padded LSTM training step (five transcendental functions per hidden unit and step). */
#include <immintrin.h>
#include <math.h>

#include "recurrent-rows.h"

#define AVX512 __attribute__((target("avx512f,fma")))

/* glibc's expf (sysdeps/ieee754/flt-32/e_expf.c, 2.27 on): 2^(k/32) from a table times a
 * cubic in r, in double. The constants are its __exp2f_data: 32/ln 2, the rounding shift
 * 0x1.8p52, the scaled polynomial, and T[i] = bits of 2^(i/32) minus i << 47. */
static const uint64_t exp_table[32] __attribute__((aligned(64))) = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
    0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
    0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
    0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
    0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
    0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
};
enum {
  EXP_INV_LN2_N = 0,
  EXP_SHIFT,
  EXP_C0,
  EXP_C1,
  EXP_C2,
};
static const uint64_t exp_constants[] = {0x40471547652b82fe, 0x4338000000000000, 0x3ebc6af84b912394,
                                         0x3f2ebfce50fac4f3, 0x3f962e42ff0c52d6};

AVX512 static inline __m512d constant(int which) {
  return _mm512_castsi512_pd(_mm512_set1_epi64((long long)exp_constants[which]));
}

/* expf of 8 floats widened to double, glibc's steps with its FMAs. */
AVX512 static inline __m256 exp8(__m256 x) {
  __m512d xd = _mm512_cvtps_pd(x), inv = constant(EXP_INV_LN2_N), shift = constant(EXP_SHIFT);
  __m512d kd = _mm512_fmadd_pd(inv, xd, shift);
  __m512i ki = _mm512_castpd_si512(kd);
  kd = _mm512_sub_pd(kd, shift);
  __m512d r = _mm512_fmsub_pd(inv, xd, kd);
  const __m512i *tab = (const __m512i *)exp_table;
  __m512i low = _mm512_permutex2var_epi64(tab[0], ki, tab[1]);
  __m512i high = _mm512_permutex2var_epi64(tab[2], ki, tab[3]);
  __m512i t = _mm512_mask_blend_epi64(_mm512_test_epi64_mask(ki, _mm512_set1_epi64(16)), low, high);
  __m512d s = _mm512_castsi512_pd(_mm512_add_epi64(t, _mm512_slli_epi64(ki, 47)));
  __m512d z = _mm512_fmadd_pd(constant(EXP_C0), r, constant(EXP_C1));
  __m512d r2 = _mm512_mul_pd(r, r);
  __m512d y = _mm512_fmadd_pd(r, constant(EXP_C2), _mm512_set1_pd(1.0));
  y = _mm512_fmadd_pd(z, r2, y);
  return _mm512_cvtpd_ps(_mm512_mul_pd(y, s));
}

/* expf of 16 floats; the lanes glibc treats apart (|x| >= 88 by its top bits, NaN, inf) go
 * through expf itself. */
AVX512 static inline __m512 exp16(__m512 x) {
  __m512d halves = _mm512_castps_pd(x);
  __m256 lo = exp8(_mm512_castps512_ps256(x));
  __m256 hi = exp8(_mm256_castpd_ps(_mm512_extractf64x4_pd(halves, 1)));
  __m512 y = _mm512_castpd_ps(
      _mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)), _mm256_castps_pd(hi), 1));
  __m512i top =
      _mm512_and_si512(_mm512_srli_epi32(_mm512_castps_si512(x), 20), _mm512_set1_epi32(0x7ff));
  __mmask16 apart = _mm512_cmpgt_epu32_mask(top, _mm512_set1_epi32(0x42a));
  if (__builtin_expect(apart != 0, 0)) {
    float xs[16], ys[16];
    _mm512_storeu_ps(xs, x);
    _mm512_storeu_ps(ys, y);
    for (int i = 0; i < 16; i++)
      if (apart & (1u << i))
        ys[i] = expf(xs[i]);
    y = _mm512_loadu_ps(ys);
  }
  return y;
}

AVX512 static inline __m512 one(void) { return _mm512_set1_ps(1.0f); }

/* 1 / (1 + expf(-x)), recurrent-kernel.h's sigm. */
AVX512 static inline __m512 sigm16(__m512 x) {
  __m512 neg = _mm512_castsi512_ps(
      _mm512_xor_si512(_mm512_castps_si512(x), _mm512_set1_epi32((int)0x80000000u)));
  return _mm512_div_ps(one(), _mm512_add_ps(one(), exp16(neg)));
}

/* recurrent.c's tanh_f32: its Taylor series below |x| = 0.4, 1 - 2 / (e^2|x| + 1) above. */
AVX512 static inline __m512 tanh16(__m512 x) {
  __m512i sign = _mm512_set1_epi32((int)0x80000000u), bits = _mm512_castps_si512(x);
  __m512 a = _mm512_castsi512_ps(_mm512_andnot_si512(sign, bits));
  __m512 x2 = _mm512_mul_ps(x, x);
  __m512 odd = _mm512_set1_ps(21844.0f / 6081075.0f);
  odd = _mm512_add_ps(_mm512_set1_ps(-1382.0f / 155925.0f), _mm512_mul_ps(x2, odd));
  odd = _mm512_add_ps(_mm512_set1_ps(62.0f / 2835.0f), _mm512_mul_ps(x2, odd));
  odd = _mm512_add_ps(_mm512_set1_ps(-17.0f / 315.0f), _mm512_mul_ps(x2, odd));
  odd = _mm512_add_ps(_mm512_set1_ps(2.0f / 15.0f), _mm512_mul_ps(x2, odd));
  odd = _mm512_add_ps(_mm512_set1_ps(-1.0f / 3.0f), _mm512_mul_ps(x2, odd));
  __m512 small = _mm512_add_ps(x, _mm512_mul_ps(_mm512_mul_ps(x, x2), odd));
  __m512 e = exp16(_mm512_mul_ps(_mm512_set1_ps(2.0f), a));
  __m512 big = _mm512_sub_ps(one(), _mm512_div_ps(_mm512_set1_ps(2.0f), _mm512_add_ps(e, one())));
  big = _mm512_castsi512_ps(_mm512_or_si512(_mm512_andnot_si512(sign, _mm512_castps_si512(big)),
                                            _mm512_and_si512(sign, bits)));
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, _mm512_set1_ps(0.4f), _CMP_LT_OQ), big, small);
}

/* The lanes of units k.. that exist. */
AVX512 static inline __mmask16 lanes(int64_t k, int64_t H) {
  return H - k >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (H - k)) - 1);
}
#define LOAD(p) _mm512_maskz_loadu_ps(m, (p))
#define STORE(p, v) _mm512_mask_storeu_ps((p), m, (v))

AVX512 void gs__lstm_forward_row_avx512(const float *g, float *w, float *c, float *h, float *o,
                                        int64_t H) {
  for (int64_t k = 0; k < H; k += 16) {
    __mmask16 m = lanes(k, H);
    __m512 i = sigm16(LOAD(g + k)), f = sigm16(LOAD(g + H + k)), gg = tanh16(LOAD(g + 2 * H + k)),
           og = sigm16(LOAD(g + 3 * H + k)), cp = LOAD(c + k);
    __m512 cn = _mm512_add_ps(_mm512_mul_ps(f, cp), _mm512_mul_ps(i, gg));
    __m512 tc = tanh16(cn), hn = _mm512_mul_ps(og, tc);
    STORE(w + k, i), STORE(w + H + k, f), STORE(w + 2 * H + k, gg), STORE(w + 3 * H + k, og);
    STORE(w + 4 * H + k, tc), STORE(w + 5 * H + k, cp);
    STORE(c + k, cn), STORE(h + k, hn), STORE(o + k, hn);
  }
}

AVX512 void gs__gru_forward_row_avx512(const float *x, const float *g, const float *hp, float *w,
                                       float *h, float *o, int64_t H) {
  for (int64_t k = 0; k < H; k += 16) {
    __mmask16 m = lanes(k, H);
    __m512 r = sigm16(_mm512_add_ps(LOAD(x + k), LOAD(g + k)));
    __m512 z = sigm16(_mm512_add_ps(LOAD(x + H + k), LOAD(g + H + k)));
    __m512 hgn = LOAD(g + 2 * H + k);
    __m512 nn = tanh16(_mm512_add_ps(LOAD(x + 2 * H + k), _mm512_mul_ps(r, hgn)));
    __m512 hn = _mm512_add_ps(nn, _mm512_mul_ps(z, _mm512_sub_ps(LOAD(hp + k), nn)));
    STORE(w + k, r), STORE(w + H + k, z), STORE(w + 2 * H + k, nn), STORE(w + 3 * H + k, hgn);
    STORE(h + k, hn), STORE(o + k, hn);
  }
}

AVX512 void gs__rnn_tanh_forward_row_avx512(const float *g, float *w, float *h, float *o,
                                            int64_t H) {
  for (int64_t k = 0; k < H; k += 16) {
    __mmask16 m = lanes(k, H);
    __m512 hn = tanh16(LOAD(g + k));
    STORE(w + k, hn), STORE(h + k, hn), STORE(o + k, hn);
  }
}

AVX512 void gs__lstm_backward_row_avx512(const float *w, const float *go, const float *dh,
                                         float *dc, float *dx, int64_t H) {
  for (int64_t k = 0; k < H; k += 16) {
    __mmask16 m = lanes(k, H);
    __m512 i = LOAD(w + k), f = LOAD(w + H + k), gg = LOAD(w + 2 * H + k), og = LOAD(w + 3 * H + k),
           tc = LOAD(w + 4 * H + k), cp = LOAD(w + 5 * H + k);
    __m512 d = _mm512_add_ps(LOAD(go + k), LOAD(dh + k));
    __m512 dcell =
        _mm512_add_ps(LOAD(dc + k), _mm512_mul_ps(_mm512_mul_ps(d, og),
                                                  _mm512_sub_ps(one(), _mm512_mul_ps(tc, tc))));
    STORE(dx + k,
          _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(dcell, gg), i), _mm512_sub_ps(one(), i)));
    STORE(dx + H + k,
          _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(dcell, cp), f), _mm512_sub_ps(one(), f)));
    STORE(dx + 2 * H + k,
          _mm512_mul_ps(_mm512_mul_ps(dcell, i), _mm512_sub_ps(one(), _mm512_mul_ps(gg, gg))));
    STORE(dx + 3 * H + k,
          _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(d, tc), og), _mm512_sub_ps(one(), og)));
    STORE(dc + k, _mm512_mul_ps(dcell, f));
  }
}

AVX512 void gs__gru_backward_row_avx512(const float *w, const float *hp, const float *go, float *dh,
                                        float *dx, float *dhg, int64_t H) {
  for (int64_t k = 0; k < H; k += 16) {
    __mmask16 m = lanes(k, H);
    __m512 r = LOAD(w + k), z = LOAD(w + H + k), nn = LOAD(w + 2 * H + k),
           hgn = LOAD(w + 3 * H + k);
    __m512 d = _mm512_add_ps(LOAD(go + k), LOAD(dh + k));
    __m512 dn = _mm512_mul_ps(_mm512_mul_ps(d, _mm512_sub_ps(one(), z)),
                              _mm512_sub_ps(one(), _mm512_mul_ps(nn, nn)));
    __m512 dr = _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(dn, hgn), r), _mm512_sub_ps(one(), r));
    __m512 dz = _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(d, _mm512_sub_ps(LOAD(hp + k), nn)), z),
                              _mm512_sub_ps(one(), z));
    STORE(dx + k, dr), STORE(dhg + k, dr);
    STORE(dx + H + k, dz), STORE(dhg + H + k, dz);
    STORE(dx + 2 * H + k, dn), STORE(dhg + 2 * H + k, _mm512_mul_ps(dn, r));
    STORE(dh + k, _mm512_mul_ps(d, z));
  }
}
