/* random-normal.c: torch 1.13's normal_ for 16 values or more (normal_fill): every value
 * first gets a uniform, then each block of 16 becomes 8 Box-Muller pairs (value j pairs with
 * j + 8); when the count is not a multiple of 16 the last 16 values get fresh uniforms and are
 * transformed again. On a CPU with AVX2 torch transforms f32 blocks with Cephes-style
 * polynomial log and sincos (avx_mathfun.h) rather than libm, so those are rebuilt here lane by
 * lane, with the fused multiply-adds GCC makes of them; f64 and CPUs without AVX2 use libm. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core-impl.h"

static float bits_to_float(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}

static uint32_t float_to_bits(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}

/* Natural log for x in (0, 1]: mantissa in [0.5, 1), a degree-8 polynomial in m - 1, the
 * exponent added back in two parts (Cephes logf). */
static float poly_log(float x) {
  if (x < 0x1p-126f)
    x = 0x1p-126f; /* denormals are cut off, as the vector code does */
  uint32_t bits = float_to_bits(x);
  float e = (float)((int32_t)(bits >> 23) - 0x7f) + 1.0f;
  float m = bits_to_float((bits & ~0x7f800000u) | float_to_bits(0.5f));
  if (m < 0.707106781186547524f) {
    e -= 1.0f;
    m = (m - 1.0f) + m;
  } else {
    m = m - 1.0f;
  }
  float z = m * m;
  static const float p[9] = {7.0376836292e-2f,  -1.1514610310e-1f, 1.1676998740e-1f,
                             -1.2420140846e-1f, 1.4249322787e-1f,  -1.6668057665e-1f,
                             2.0000714765e-1f,  -2.4999993993e-1f, 3.3333331174e-1f};
  float y = p[0];
  for (int i = 1; i < 9; i++)
    y = fmaf(y, m, p[i]);
  y = y * m;
  y = fmaf(y, z, e * -2.12194440e-4f);
  y = fmaf(z, -0.5f, y);
  m = m + y;
  return fmaf(e, 0.693359375f, m);
}

/* Sine and cosine of x >= 0 together: reduce by multiples of pi/4 in three parts, then the
 * Cephes polynomials for sine and cosine on [-pi/4, pi/4], swapped and signed by octant. */
static void poly_sincos(float x, float *s, float *c) {
  float sign_sin = x < 0 ? -1.0f : 1.0f;
  x = fabsf(x);
  int32_t j = (int32_t)(x * 1.27323954473516f);
  j = (j + 1) & ~1;
  float y = (float)j;
  if (j & 4)
    sign_sin = -sign_sin;
  bool use_sine_poly = (j & 2) == 0; /* for the sine; the cosine takes the other one */
  float sign_cos = ((j - 2) & 4) ? 1.0f : -1.0f;
  x = fmaf(y, -0.78515625f, x);
  x = fmaf(y, -2.4187564849853515625e-4f, x);
  x = fmaf(y, -3.77489497744594108e-8f, x);
  float z = x * x;
  float yc = 2.443315711809948e-5f;
  yc = fmaf(yc, z, -1.388731625493765e-3f);
  yc = fmaf(yc, z, 4.166664568298827e-2f);
  yc = yc * z;
  yc = fmaf(yc, z, -(z * 0.5f));
  yc = yc + 1.0f;
  float ys = -1.9515295891e-4f;
  ys = fmaf(ys, z, 8.3321608736e-3f);
  ys = fmaf(ys, z, -1.6666654611e-1f);
  ys = ys * z;
  ys = fmaf(ys, x, x);
  float sv = use_sine_poly ? ys : yc, cv = use_sine_poly ? yc : ys;
  *s = sign_sin < 0 ? -sv : sv;
  *c = sign_cos < 0 ? -cv : cv;
}

/* One block of 16 uniforms in d becomes 16 normals, as torch's AVX2 kernel does it. */
static void fill16_f32_avx2(float *d, float mean, float std) {
  for (int j = 0; j < 8; j++) {
    float u1 = 1.0f - d[j], u2 = d[j + 8];
    float radius = sqrtf(-2.0f * poly_log(u1));
    float theta = (float)(2.0 * M_PI) * u2;
    float sv, cv;
    poly_sincos(theta, &sv, &cv);
    d[j] = fmaf(radius * cv, std, mean);
    d[j + 8] = fmaf(radius * sv, std, mean);
  }
}

/* The same block with libm, as torch's portable kernel (f32 on CPUs without AVX2). */
static void fill16_f32_libm(float *d, float mean, float std) {
  for (int j = 0; j < 8; j++) {
    float u1 = 1.0f - d[j], u2 = d[j + 8];
    float radius = sqrtf(-2.0f * logf(u1));
    float theta = (float)(2.0 * M_PI * (double)u2);
    d[j] = radius * cosf(theta) * std + mean;
    d[j + 8] = radius * sinf(theta) * std + mean;
  }
}

static void fill16_f64(double *d, double mean, double std) {
  for (int j = 0; j < 8; j++) {
    double u1 = 1.0 - d[j], u2 = d[j + 8];
    double radius = sqrt(-2.0 * log(u1));
    double theta = 2.0 * M_PI * u2;
    d[j] = fma(radius * cos(theta), std, mean);
    d[j + 8] = fma(radius * sin(theta), std, mean);
  }
}

/* torch picks its AVX2 kernels on a CPU that has AVX2 (and FMA, which its build enables). */
static bool cpu_has_avx2(void) {
#if defined(__x86_64__) || defined(__i386__)
  static int has = -1;
  if (has < 0)
    has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

static float uniform01_f32(gs_rng *g) {
  return (float)(gs_rng_next_u32(g) & 0xffffffu) * 0x1.0p-24f;
}

void gs__normal_fill_f32(gs_rng *g, float *d, int64_t n, float mean, float std) {
  void (*fill16)(float *, float, float) = cpu_has_avx2() ? fill16_f32_avx2 : fill16_f32_libm;
  for (int64_t i = 0; i < n; i++)
    d[i] = uniform01_f32(g);
  for (int64_t i = 0; i + 16 <= n; i += 16)
    fill16(d + i, mean, std);
  if (n % 16) {
    float *tail = d + n - 16;
    for (int i = 0; i < 16; i++)
      tail[i] = uniform01_f32(g);
    fill16(tail, mean, std);
  }
}

void gs__normal_fill_f64(gs_rng *g, double *d, int64_t n, double mean, double std) {
  for (int64_t i = 0; i < n; i++)
    d[i] = gs_rng_uniform(g);
  for (int64_t i = 0; i + 16 <= n; i += 16)
    fill16_f64(d + i, mean, std);
  if (n % 16) {
    double *tail = d + n - 16;
    for (int i = 0; i < 16; i++)
      tail[i] = gs_rng_uniform(g);
    fill16_f64(tail, mean, std);
  }
}
