/* kernels.c: the typed inner loops of the elementwise ops.
 *
 * Each loop has a contiguous path (no stride arithmetic: the compiler vectorises it), a path
 * for a broadcast scalar operand, and a general strided path. No pointer is restrict: in-place
 * forms pass the destination as an operand too, and exact aliasing is well defined only
 * without it (the compiler's runtime overlap check keeps the vector loop).
 */
#include <math.h>

#include "ops-impl.h"
#include "relu-avx512.h"

typedef float f32;
typedef double f64;
typedef int64_t i64;
typedef int32_t i32;
typedef uint8_t u8;
typedef int8_t i8;
typedef int16_t i16;
typedef bool b8;

/* ---- binary ------------------------------------------------------------------------- */

/* SETUP runs once per call: a loop whose EXPR needs a parameter reads it from ctx there. */
#define BINARY_LOOP_WITH(NAME, T, TO, SETUP, EXPR)                                           \
  static void NAME(char **p, const int64_t *s, int64_t n, void *ctx) {                      \
    SETUP;                                                                                   \
    const int64_t so = (int64_t)sizeof(TO), si = (int64_t)sizeof(T);                        \
    if (s[0] == so && s[1] == si && s[2] == si) {                                            \
      TO *o = (TO *)p[0];                                                                    \
      const T *x = (const T *)p[1], *y = (const T *)p[2];                                    \
      for (int64_t i = 0; i < n; i++) {                                                      \
        T a = x[i], b = y[i];                                                                \
        o[i] = (EXPR);                                                                       \
      }                                                                                      \
    } else if (s[0] == so && s[1] == si && s[2] == 0) {                                      \
      TO *o = (TO *)p[0];                                                                    \
      const T *x = (const T *)p[1];                                                          \
      const T b = *(const T *)p[2];                                                          \
      for (int64_t i = 0; i < n; i++) {                                                      \
        T a = x[i];                                                                          \
        o[i] = (EXPR);                                                                       \
      }                                                                                      \
    } else if (s[0] == so && s[1] == 0 && s[2] == si) {                                      \
      TO *o = (TO *)p[0];                                                                    \
      const T a = *(const T *)p[1];                                                          \
      const T *y = (const T *)p[2];                                                 \
      for (int64_t i = 0; i < n; i++) {                                                      \
        T b = y[i];                                                                          \
        o[i] = (EXPR);                                                                       \
      }                                                                                      \
    } else {                                                                                 \
      char *o = p[0];                                                                        \
      const char *x = p[1], *y = p[2];                                                       \
      for (int64_t i = 0; i < n; i++, o += s[0], x += s[1], y += s[2]) {                    \
        T a = *(const T *)x, b = *(const T *)y;                                              \
        *(TO *)o = (EXPR);                                                                   \
      }                                                                                      \
    }                                                                                        \
  }

#define BINARY_LOOP(NAME, T, TO, EXPR) BINARY_LOOP_WITH(NAME, T, TO, (void)ctx, EXPR)

/* NaN-propagating max/min, as torch.maximum/minimum. */
#define FMAX(a, b) ((a) != (a) || (a) > (b) ? (a) : (b))
#define FMIN(a, b) ((a) != (a) || (a) < (b) ? (a) : (b))
#define IMAX(a, b) ((a) > (b) ? (a) : (b))
#define IMIN(a, b) ((a) < (b) ? (a) : (b))

/* Integer power by squaring; exponents are checked non-negative before the loop runs.
 * Wrapping multiplication, as PyTorch's integer pow overflows. */
static inline int64_t ipow(int64_t base, int64_t exp) {
  uint64_t result = 1, b = (uint64_t)base;
  while (exp > 0) {
    if (exp & 1)
      result *= b;
    b *= b;
    exp >>= 1;
  }
  return (int64_t)result;
}

/* Wrapping integer arithmetic: signed overflow is undefined in C but defined in PyTorch. */
#define WADD(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define WSUB(a, b) ((int64_t)((uint64_t)(a) - (uint64_t)(b)))
#define WMUL(a, b) ((int64_t)((uint64_t)(a) * (uint64_t)(b)))
/* The same in 32 bits for i32 (whose values the 64-bit forms would not wrap). */
#define WADD32(a, b) ((int32_t)((uint32_t)(a) + (uint32_t)(b)))
#define WSUB32(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)))
#define WMUL32(a, b) ((int32_t)((uint32_t)(a) * (uint32_t)(b)))

/* The six comparisons of two T operands, into bools. */
#define COMPARE_LOOPS(T)                                                                           \
  BINARY_LOOP(eq_##T, T, b8, a == b)                                                               \
  BINARY_LOOP(ne_##T, T, b8, a != b)                                                               \
  BINARY_LOOP(lt_##T, T, b8, a < b)                                                                \
  BINARY_LOOP(le_##T, T, b8, a <= b)                                                               \
  BINARY_LOOP(gt_##T, T, b8, a > b)                                                                \
  BINARY_LOOP(ge_##T, T, b8, a >= b)

#define FLOAT_BINARY_LOOPS(T, POW)                                                                 \
  BINARY_LOOP(add_##T, T, T, a + b)                                                                \
  BINARY_LOOP(sub_##T, T, T, a - b)                                                                \
  BINARY_LOOP(mul_##T, T, T, a *b)                                                                 \
  BINARY_LOOP(div_##T, T, T, a / b)                                                                \
  BINARY_LOOP(pow_##T, T, T, POW(a, b))                                                            \
  BINARY_LOOP(maximum_##T, T, T, FMAX(a, b))                                                       \
  BINARY_LOOP(minimum_##T, T, T, FMIN(a, b))                                                       \
  COMPARE_LOOPS(T)

FLOAT_BINARY_LOOPS(f32, powf)
FLOAT_BINARY_LOOPS(f64, pow)

/* Python's floor division and modulo (the remainder takes the divisor's sign), as torch's
 * // and %. Integer divisors are checked non-zero before the loop runs; -1 is spelled out,
 * as INT64_MIN / -1 traps. */
static inline int64_t ifloordiv(int64_t a, int64_t b) {
  if (b == -1)
    return WSUB(0, a);
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t iremainder(int64_t a, int64_t b) {
  if (b == -1)
    return 0;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
#define FREMAINDER(T, SUF)                                                                   \
  static inline T fremainder_##T(T a, T b) {                                                 \
    T r = fmod##SUF(a, b);                                                                   \
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;                                     \
  }
FREMAINDER(f32, f)
FREMAINDER(f64, )
BINARY_LOOP(floor_div_f32, f32, f32, floorf(a / b))
BINARY_LOOP(floor_div_f64, f64, f64, floor(a / b))
BINARY_LOOP(floor_div_i64, i64, i64, ifloordiv(a, b))
BINARY_LOOP(remainder_f32, f32, f32, fremainder_f32(a, b))
BINARY_LOOP(remainder_f64, f64, f64, fremainder_f64(a, b))
BINARY_LOOP(remainder_i64, i64, i64, iremainder(a, b))
BINARY_LOOP(bitand_i64, i64, i64, a & b)
BINARY_LOOP(bitor_i64, i64, i64, a | b)
BINARY_LOOP(bitxor_i64, i64, i64, a ^ b)
/* i32 // and % in 64 bits cannot overflow; INT32_MIN // -1 then wraps as torch's does. */
BINARY_LOOP(floor_div_i32, i32, i32, (int32_t)(uint32_t)(uint64_t)ifloordiv(a, b))
BINARY_LOOP(remainder_i32, i32, i32, (int32_t)iremainder(a, b))
BINARY_LOOP(bitand_i32, i32, i32, a & b)
BINARY_LOOP(bitor_i32, i32, i32, a | b)
BINARY_LOOP(bitxor_i32, i32, i32, a ^ b)
/* C's fmod: the remainder takes the dividend's sign (torch.fmod), unlike remainder above.
 * Integer divisors are checked non-zero first; -1 is spelled out, as INT64_MIN % -1 traps. */
static inline int64_t ifmod(int64_t a, int64_t b) { return b == -1 ? 0 : a % b; }
BINARY_LOOP(fmod_f32, f32, f32, fmodf(a, b))
BINARY_LOOP(fmod_f64, f64, f64, fmod(a, b))
BINARY_LOOP(fmod_i64, i64, i64, ifmod(a, b))
BINARY_LOOP(fmod_i32, i32, i32, (int32_t)ifmod(a, b))
BINARY_LOOP(atan2_f32, f32, f32, atan2f(a, b))
BINARY_LOOP(atan2_f64, f64, f64, atan2(a, b))
/* torch.logical_and/or/xor: any dtype, non-zero is true (NaN too), bool results. */
#define LOGICAL_LOOPS(T)                                                                           \
  BINARY_LOOP(logical_and_##T, T, b8, a != 0 && b != 0)                                            \
  BINARY_LOOP(logical_or_##T, T, b8, a != 0 || b != 0)                                             \
  BINARY_LOOP(logical_xor_##T, T, b8, (a != 0) != (b != 0))
LOGICAL_LOOPS(f32)
LOGICAL_LOOPS(f64)
LOGICAL_LOOPS(i64)
LOGICAL_LOOPS(i32)
LOGICAL_LOOPS(b8)
BINARY_LOOP(bitand_b8, b8, b8, a && b)
BINARY_LOOP(bitor_b8, b8, b8, a || b)
BINARY_LOOP(bitxor_b8, b8, b8, a != b)

/* Integer arithmetic wraps at T's width: ADD, SUB, MUL and POW are the wrapping forms. */
#define INT_BINARY_LOOPS(T, ADD, SUB, MUL, POW)                                                    \
  BINARY_LOOP(add_##T, T, T, ADD(a, b))                                                            \
  BINARY_LOOP(sub_##T, T, T, SUB(a, b))                                                            \
  BINARY_LOOP(mul_##T, T, T, MUL(a, b))                                                            \
  BINARY_LOOP(pow_##T, T, T, POW(a, b))                                                            \
  BINARY_LOOP(maximum_##T, T, T, IMAX(a, b))                                                       \
  BINARY_LOOP(minimum_##T, T, T, IMIN(a, b))                                                       \
  COMPARE_LOOPS(T)

/* ipow's low 32 bits are the 32-bit wrapped power. */
#define IPOW32(a, b) ((int32_t)(uint32_t)(uint64_t)ipow(a, b))
INT_BINARY_LOOPS(i64, WADD, WSUB, WMUL, ipow)
INT_BINARY_LOOPS(i32, WADD32, WSUB32, WMUL32, IPOW32)

/* u8, i8 and i16 compute in 64 bits (no overflow there, INT8_MIN // -1 included) and keep
 * T's low bits, through the unsigned UT where narrowing is defined: 200 + 100 is u8 44,
 * -128 // -1 is i8 -128, as torch's. */
#define SMALL_INT_LOOPS(T, UT)                                                                     \
  static inline T wrap_##T(uint64_t v) { return (T)(UT)v; }                                        \
  static inline T wadd_##T(T a, T b) { return wrap_##T((uint64_t)a + (uint64_t)b); }               \
  static inline T wsub_##T(T a, T b) { return wrap_##T((uint64_t)a - (uint64_t)b); }               \
  static inline T wmul_##T(T a, T b) { return wrap_##T((uint64_t)a * (uint64_t)b); }               \
  static inline T wpow_##T(T a, T b) { return wrap_##T((uint64_t)ipow(a, b)); }                    \
  INT_BINARY_LOOPS(T, wadd_##T, wsub_##T, wmul_##T, wpow_##T)                                      \
  BINARY_LOOP(floor_div_##T, T, T, wrap_##T((uint64_t)ifloordiv(a, b)))                            \
  BINARY_LOOP(remainder_##T, T, T, wrap_##T((uint64_t)iremainder(a, b)))                           \
  BINARY_LOOP(bitand_##T, T, T, (T)(a & b))                                                        \
  BINARY_LOOP(bitor_##T, T, T, (T)(a | b))                                                         \
  BINARY_LOOP(bitxor_##T, T, T, (T)(a ^ b))                                                        \
  BINARY_LOOP(fmod_##T, T, T, wrap_##T((uint64_t)ifmod(a, b)))                                     \
  LOGICAL_LOOPS(T)

SMALL_INT_LOOPS(u8, uint8_t)
SMALL_INT_LOOPS(i8, uint8_t)
SMALL_INT_LOOPS(i16, uint16_t)

/* bool arithmetic as PyTorch: + is or, * is and, max is or, min is and. */
BINARY_LOOP(add_b8, b8, b8, a || b)
BINARY_LOOP(mul_b8, b8, b8, a && b)
BINARY_LOOP(maximum_b8, b8, b8, a || b)
BINARY_LOOP(minimum_b8, b8, b8, a && b)
COMPARE_LOOPS(b8)

/* Division of integers is true division, so it always runs in a floating dtype. */
static const gs__loop_fn binary_loops[GS__BINOP_COUNT][GS_DTYPE_COUNT] = {
    [GS__ADD] = {add_f32, add_f64, add_i64, add_b8, add_i32, add_u8, add_i8, add_i16},
    [GS__SUB] = {sub_f32, sub_f64, sub_i64, NULL, sub_i32, sub_u8, sub_i8, sub_i16},
    [GS__MUL] = {mul_f32, mul_f64, mul_i64, mul_b8, mul_i32, mul_u8, mul_i8, mul_i16},
    [GS__DIV] = {div_f32, div_f64, NULL, NULL, NULL, NULL, NULL, NULL},
    [GS__POW] = {pow_f32, pow_f64, pow_i64, NULL, pow_i32, pow_u8, pow_i8, pow_i16},
    [GS__MAXIMUM] = {maximum_f32, maximum_f64, maximum_i64, maximum_b8, maximum_i32, maximum_u8,
                     maximum_i8, maximum_i16},
    [GS__MINIMUM] = {minimum_f32, minimum_f64, minimum_i64, minimum_b8, minimum_i32, minimum_u8,
                     minimum_i8, minimum_i16},
    [GS__FLOOR_DIV] = {floor_div_f32, floor_div_f64, floor_div_i64, NULL, floor_div_i32,
                       floor_div_u8, floor_div_i8, floor_div_i16},
    [GS__REMAINDER] = {remainder_f32, remainder_f64, remainder_i64, NULL, remainder_i32,
                       remainder_u8, remainder_i8, remainder_i16},
    [GS__BITAND] = {NULL, NULL, bitand_i64, bitand_b8, bitand_i32, bitand_u8, bitand_i8,
                    bitand_i16},
    [GS__BITOR] = {NULL, NULL, bitor_i64, bitor_b8, bitor_i32, bitor_u8, bitor_i8, bitor_i16},
    [GS__BITXOR] = {NULL, NULL, bitxor_i64, bitxor_b8, bitxor_i32, bitxor_u8, bitxor_i8,
                    bitxor_i16},
    [GS__EQ] = {eq_f32, eq_f64, eq_i64, eq_b8, eq_i32, eq_u8, eq_i8, eq_i16},
    [GS__NE] = {ne_f32, ne_f64, ne_i64, ne_b8, ne_i32, ne_u8, ne_i8, ne_i16},
    [GS__LT] = {lt_f32, lt_f64, lt_i64, lt_b8, lt_i32, lt_u8, lt_i8, lt_i16},
    [GS__LE] = {le_f32, le_f64, le_i64, le_b8, le_i32, le_u8, le_i8, le_i16},
    [GS__GT] = {gt_f32, gt_f64, gt_i64, gt_b8, gt_i32, gt_u8, gt_i8, gt_i16},
    [GS__GE] = {ge_f32, ge_f64, ge_i64, ge_b8, ge_i32, ge_u8, ge_i8, ge_i16},
    [GS__ATAN2] = {atan2_f32, atan2_f64, NULL, NULL, NULL, NULL, NULL, NULL},
    [GS__FMOD] = {fmod_f32, fmod_f64, fmod_i64, NULL, fmod_i32, fmod_u8, fmod_i8, fmod_i16},
    [GS__LOGICAL_AND] = {logical_and_f32, logical_and_f64, logical_and_i64, logical_and_b8,
                         logical_and_i32, logical_and_u8, logical_and_i8, logical_and_i16},
    [GS__LOGICAL_OR] = {logical_or_f32, logical_or_f64, logical_or_i64, logical_or_b8,
                        logical_or_i32, logical_or_u8, logical_or_i8, logical_or_i16},
    [GS__LOGICAL_XOR] = {logical_xor_f32, logical_xor_f64, logical_xor_i64, logical_xor_b8,
                         logical_xor_i32, logical_xor_u8, logical_xor_i8, logical_xor_i16},
};

gs__loop_fn gs__binary_loop(gs__binop op, gs_dtype dtype) { return binary_loops[op][dtype]; }

const char *gs__binop_name(gs__binop op) {
  static const char *const names[GS__BINOP_COUNT] = {
      "add",     "sub",          "mul",         "div",         "pow",         "maximum",
      "minimum", "floor_divide", "remainder",   "bitwise_and", "bitwise_or",  "bitwise_xor",
      "atan2",   "fmod",         "eq",          "ne",          "lt",          "le",
      "gt",      "ge",           "logical_and", "logical_or",  "logical_xor",
  };
  return names[op];
}

/* ---- unary -------------------------------------------------------------------------- */

#define UNARY_LOOP(NAME, T, EXPR)                                                            \
  static void NAME(char **p, const int64_t *s, int64_t n, void *ctx) {                      \
    const gs__unary_params *prm = ctx;                                                       \
    (void)prm;                                                                               \
    const int64_t st = (int64_t)sizeof(T);                                                   \
    if (s[0] == st && s[1] == st) {                                                          \
      T *o = (T *)p[0]; /* may alias x exactly (in-place forms) */                           \
      const T *x = (const T *)p[1];                                                          \
      for (int64_t i = 0; i < n; i++) {                                                      \
        T a = x[i];                                                                          \
        o[i] = (EXPR);                                                                       \
      }                                                                                      \
    } else {                                                                                 \
      char *o = p[0];                                                                        \
      const char *x = p[1];                                                                  \
      for (int64_t i = 0; i < n; i++, o += s[0], x += s[1]) {                               \
        T a = *(const T *)x;                                                                 \
        *(T *)o = (EXPR);                                                                    \
      }                                                                                      \
    }                                                                                        \
  }

#define SQRT1_2 0.70710678118654752440
#define INV_SQRT_2PI 0.39894228040143267794

#define FLOAT_UNARY_LOOPS(T, SUF)                                                                  \
  UNARY_LOOP(neg_##T, T, -a)                                                                       \
  UNARY_LOOP(abs_##T, T, fabs##SUF(a))                                                             \
  UNARY_LOOP(exp_##T, T, exp##SUF(a))                                                              \
  UNARY_LOOP(log_##T, T, log##SUF(a))                                                              \
  UNARY_LOOP(sqrt_##T, T, sqrt##SUF(a))                                                            \
  UNARY_LOOP(rsqrt_##T, T, (T)1 / sqrt##SUF(a))                                                    \
  UNARY_LOOP(tanh_##T, T, tanh##SUF(a))                                                            \
  UNARY_LOOP(sigmoid_##T, T, (T)1 / ((T)1 + exp##SUF(-a)))                                         \
  UNARY_LOOP(relu_##T, T, a > 0 ? a : (a != a ? a : (T)0))                                         \
  UNARY_LOOP(leaky_relu_##T, T, a > 0 ? a : a * (T)prm->slope)                                     \
  UNARY_LOOP(gelu_##T, T, (T)0.5 * a * ((T)1 + erf##SUF(a * (T)SQRT1_2)))                          \
  UNARY_LOOP(gelu_tanh_##T, T, gelu_tanh_of_##T(a))                                                \
  UNARY_LOOP(gelu_tanh_grad_##T, T, gelu_tanh_slope_of_##T(a))                                     \
  UNARY_LOOP(clamp_##T, T, FMIN(FMAX(a, (T)prm->min), (T)prm->max))                                \
  UNARY_LOOP(sin_##T, T, sin##SUF(a))                                                              \
  UNARY_LOOP(cos_##T, T, cos##SUF(a))                                                              \
  UNARY_LOOP(tan_##T, T, tan##SUF(a))                                                              \
  UNARY_LOOP(floor_##T, T, floor##SUF(a))                                                          \
  UNARY_LOOP(ceil_##T, T, ceil##SUF(a))                                                            \
  UNARY_LOOP(round_##T, T, nearbyint##SUF(a)) /* half to even, as torch.round */                   \
  UNARY_LOOP(round_decimals_##T, T, scaled_round_##T(a, prm->decimals))                            \
  UNARY_LOOP(trunc_##T, T, trunc##SUF(a))                                                          \
  UNARY_LOOP(frac_##T, T, a - trunc##SUF(a))                                                       \
  UNARY_LOOP(sign_##T, T, (T)((a > 0) - (a < 0))) /* NaN gives 0, as torch 1.13 on the CPU */      \
  UNARY_LOOP(reciprocal_##T, T, (T)1 / a)                                                          \
  UNARY_LOOP(square_##T, T, a *a)                                                                  \
  UNARY_LOOP(log1p_##T, T, log1p##SUF(a))                                                          \
  UNARY_LOOP(expm1_##T, T, expm1##SUF(a))                                                          \
  UNARY_LOOP(log2_##T, T, log2##SUF(a))                                                            \
  UNARY_LOOP(log10_##T, T, log10##SUF(a))                                                          \
  UNARY_LOOP(asin_##T, T, asin##SUF(a))                                                            \
  UNARY_LOOP(acos_##T, T, acos##SUF(a))                                                            \
  UNARY_LOOP(atan_##T, T, atan##SUF(a))                                                            \
  UNARY_LOOP(sinh_##T, T, sinh##SUF(a))                                                            \
  UNARY_LOOP(cosh_##T, T, cosh##SUF(a))                                                            \
  UNARY_LOOP(erf_##T, T, erf##SUF(a))                                                              \
  UNARY_LOOP(asinh_##T, T, asinh##SUF(a))                                                          \
  UNARY_LOOP(acosh_##T, T, acosh##SUF(a))                                                          \
  UNARY_LOOP(atanh_##T, T, atanh##SUF(a))                                                          \
  UNARY_LOOP(erfc_##T, T, erfc##SUF(a))                                                            \
  UNARY_LOOP(erfinv_##T, T, (T)gs__erfinv(a))                                                      \
  UNARY_LOOP(exp2_##T, T, exp2##SUF(a))                                                            \
  UNARY_LOOP(lgamma_##T, T, (T)gs__lgamma(a))                                                      \
  UNARY_LOOP(digamma_##T, T, (T)gs__digamma(a))                                                    \
  UNARY_LOOP(polygamma_##T, T, (T)gs__polygamma(prm->decimals, a))                                 \
  UNARY_LOOP(i0_##T, T, (T)gs__i0(a))                                                              \
  UNARY_LOOP(i0e_##T, T, (T)gs__i0e(a))                                                            \
  UNARY_LOOP(i1_##T, T, (T)gs__i1(a))                                                              \
  UNARY_LOOP(i1e_##T, T, (T)gs__i1e(a))                                                            \
  UNARY_LOOP(erfcx_##T, T, (T)gs__erfcx(a))                                                        \
  UNARY_LOOP(gelu_grad_##T, T,                                                                     \
             (T)0.5 * ((T)1 + erf##SUF(a * (T)SQRT1_2)) +                                          \
                 a * exp##SUF((T)-0.5 * a * a) * (T)INV_SQRT_2PI)

/* torch.round(decimals=d) as torch computes it: scale by 10^|d| in T, round half to even,
 * scale back (dividing by 10^-d for negative d, so round(1250, -2) is 1200). */
#define ROUND_DECIMALS(T, SUF)                                                                     \
  static inline T scaled_round_##T(T a, int d) {                                                   \
    T ten_pow = (T)pow(10.0, d < 0 ? -d : d);                                                      \
    return d < 0 ? nearbyint##SUF(a / ten_pow) * ten_pow : nearbyint##SUF(a * ten_pow) / ten_pow;  \
  }
ROUND_DECIMALS(f32, f)
ROUND_DECIMALS(f64, )

/* gelu's tanh form (approximate='tanh'), as torch's kernels: 0.5 x (1 + tanh(k (x + c x^3)))
 * with k = sqrt(2 / pi), c = 0.044715, and its derivative
 * 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2), t the tanh. */
#define GELU_TANH_K 0.79788456080286535588
#define GELU_TANH_C 0.044715
#define GELU_TANH(T, SUF)                                                                          \
  static inline T gelu_tanh_of_##T(T a) {                                                          \
    T inner = (T)GELU_TANH_K * (a + (T)GELU_TANH_C * a * a * a);                                   \
    return (T)0.5 * a * ((T)1 + tanh##SUF(inner));                                                 \
  }                                                                                                \
  static inline T gelu_tanh_slope_of_##T(T a) {                                                    \
    T t = tanh##SUF((T)GELU_TANH_K * (a + (T)GELU_TANH_C * a * a * a));                            \
    T inner_slope = (T)GELU_TANH_K * ((T)1 + (T)(3 * GELU_TANH_C) * a * a);                        \
    return (T)0.5 * ((T)1 + t) + (T)0.5 * a * ((T)1 - t * t) * inner_slope;                        \
  }
GELU_TANH(f32, f)
GELU_TANH(f64, )

FLOAT_UNARY_LOOPS(f32, f)
FLOAT_UNARY_LOOPS(f64, )

/* The activations and their derivatives, as torch 1.13 computes them, edges included: elu's
 * negative branch takes x <= 0 (so its slope at 0 is alpha * scale), softplus is linear where
 * beta * x > threshold, and hardtanh, hardsigmoid and hardswish have torch's slopes at their
 * kinks (hardtanh and hardsigmoid 0 at both ends, hardswish x/3 + 1/2 on [-3, 3], as torch's
 * scalar and CUDA kernels: its CPU vector path gives 1 at 3), and hardsigmoid's slope is
 * torch's float 1/6 in both dtypes.
 * prm->arg holds the two parameters (elu: alpha, scale; softplus: beta, threshold;
 * hardtanh: min, max). */
#define ACTIVATION_FNS(T, SUF)                                                                     \
  static inline T sigmoid_fn_##T(T a) { return (T)1 / ((T)1 + exp##SUF(-a)); }                     \
  static inline T silu_grad_fn_##T(T a) {                                                          \
    T s = sigmoid_fn_##T(a);                                                                       \
    return s * ((T)1 + a * ((T)1 - s));                                                            \
  }                                                                                                \
  static inline T softplus_fn_##T(T a, T beta, T threshold) {                                      \
    return a * beta > threshold ? a : log1p##SUF(exp##SUF(a * beta)) / beta;                       \
  }                                                                                                \
  static inline T softplus_grad_fn_##T(T a, T beta, T threshold) {                                 \
    T z = exp##SUF(a * beta);                                                                      \
    return a * beta > threshold ? (T)1 : z / (z + (T)1);                                           \
  }                                                                                                \
  static inline T logsigmoid_fn_##T(T a) {                                                         \
    return (a < 0 ? a : (T)0) - log1p##SUF(exp##SUF(-fabs##SUF(a)));                               \
  }                                                                                                \
  static inline T logsigmoid_grad_fn_##T(T a) {                                                    \
    T z = exp##SUF(-fabs##SUF(a));                                                                 \
    return a < 0 ? (T)1 - z / ((T)1 + z) : z / ((T)1 + z);                                         \
  }                                                                                                \
  static inline T hardtanh_fn_##T(T a, T lo, T hi) { /* NaN passes through */                      \
    return a < lo ? lo : a > hi ? hi : a;                                                          \
  }                                                                                                \
  static inline T mish_grad_fn_##T(T a) {                                                          \
    T tsp = tanh##SUF(log1p##SUF(exp##SUF(a)));                                                    \
    return tsp + a * sigmoid_fn_##T(a) * ((T)1 - tsp * tsp);                                       \
  }                                                                                                \
  UNARY_LOOP(silu_##T, T, sigmoid_fn_##T(a) * a)                                                   \
  UNARY_LOOP(silu_grad_##T, T, silu_grad_fn_##T(a))                                                \
  UNARY_LOOP(elu_##T, T,                                                                           \
             a <= 0 ? (T)(prm->arg[0] * prm->arg[1]) * expm1##SUF(a) : a * (T)prm->arg[1])         \
  UNARY_LOOP(elu_grad_##T, T,                                                                      \
             a <= 0 ? (T)(prm->arg[0] * prm->arg[1]) * exp##SUF(a) : (T)prm->arg[1])               \
  UNARY_LOOP(softplus_##T, T, softplus_fn_##T(a, (T)prm->arg[0], (T)prm->arg[1]))                  \
  UNARY_LOOP(softplus_grad_##T, T, softplus_grad_fn_##T(a, (T)prm->arg[0], (T)prm->arg[1]))        \
  UNARY_LOOP(hardtanh_##T, T, hardtanh_fn_##T(a, (T)prm->arg[0], (T)prm->arg[1]))                  \
  UNARY_LOOP(hardtanh_grad_##T, T, a <= (T)prm->arg[0] || a >= (T)prm->arg[1] ? (T)0 : (T)1)       \
  UNARY_LOOP(hardsigmoid_##T, T, a <= -3 ? (T)0 : a >= 3 ? (T)1 : (a + (T)3) / (T)6)               \
  UNARY_LOOP(hardsigmoid_grad_##T, T, a > -3 && a < 3 ? (T)(1.0f / 6.0f) : (T)0)                   \
  UNARY_LOOP(hardswish_##T, T, a <= -3 ? (T)0 : a >= 3 ? a : a * (a + (T)3) / (T)6)                \
  UNARY_LOOP(hardswish_grad_##T, T, a < -3 ? (T)0 : a <= 3 ? a / (T)3 + (T)0.5 : (T)1)             \
  UNARY_LOOP(logsigmoid_##T, T, logsigmoid_fn_##T(a))                                              \
  UNARY_LOOP(logsigmoid_grad_##T, T, logsigmoid_grad_fn_##T(a))                                    \
  UNARY_LOOP(mish_##T, T, tanh##SUF(log1p##SUF(exp##SUF(a))) * a)                                  \
  UNARY_LOOP(mish_grad_##T, T, mish_grad_fn_##T(a))

ACTIVATION_FNS(f32, f)
ACTIVATION_FNS(f64, )

/* Integer clamp bounds arrive already rounded inward (ceil of min, floor of max). */
static inline int64_t clamp_bound(double v) {
  return v <= -9.2e18 ? INT64_MIN : v >= 9.2e18 ? INT64_MAX : (int64_t)v;
}

UNARY_LOOP(neg_i64, i64, WSUB(0, a))
UNARY_LOOP(abs_i64, i64, a < 0 ? WSUB(0, a) : a)
UNARY_LOOP(relu_i64, i64, a > 0 ? a : 0)
UNARY_LOOP(floor_i64, i64, a) /* also ceil, round and trunc of integers: unchanged */
UNARY_LOOP(sign_i64, i64, (a > 0) - (a < 0))
UNARY_LOOP(square_i64, i64, WMUL(a, a))
UNARY_LOOP(bitwise_not_i64, i64, ~a)
UNARY_LOOP(bitwise_not_b8, b8, !a)
UNARY_LOOP(clamp_i64, i64, IMIN(IMAX(a, clamp_bound(prm->min)), clamp_bound(prm->max)))

static inline int32_t clamp_bound32(double v) {
  return v <= INT32_MIN ? INT32_MIN : v >= INT32_MAX ? INT32_MAX : (int32_t)v;
}
UNARY_LOOP(neg_i32, i32, WSUB32(0, a))
UNARY_LOOP(abs_i32, i32, a < 0 ? WSUB32(0, a) : a)
UNARY_LOOP(relu_i32, i32, a > 0 ? a : 0)
UNARY_LOOP(floor_i32, i32, a)
UNARY_LOOP(sign_i32, i32, (a > 0) - (a < 0))
UNARY_LOOP(square_i32, i32, WMUL32(a, a))
UNARY_LOOP(sign_b8, b8, a)
UNARY_LOOP(bitwise_not_i32, i32, ~a)
UNARY_LOOP(clamp_i32, i32, IMIN(IMAX(a, clamp_bound32(prm->min)), clamp_bound32(prm->max)))

/* u8, i8 and i16: negation wraps (u8 -1 is 255, i8 -(-128) is -128, as torch's); u8's abs
 * and relu are the identity; clamp bounds saturate at T's range (torch refuses bounds that
 * do not fit; here they clamp to what T holds). */
static inline double clamp_bound_small(double v, double lo, double hi) {
  return v <= lo ? lo : v >= hi ? hi : v;
}
#define SMALL_INT_UNARY_LOOPS(T, LO, HI, ABS, SIGN)                                                      \
  UNARY_LOOP(neg_##T, T, wsub_##T(0, a))                                                           \
  UNARY_LOOP(abs_##T, T, ABS)                                                                      \
  UNARY_LOOP(relu_##T, T, a > 0 ? a : 0)                                                           \
  UNARY_LOOP(floor_##T, T, a)                                                                      \
  UNARY_LOOP(bitwise_not_##T, T, (T)~a)                                                            \
  UNARY_LOOP(sign_##T, T, SIGN)                                                                    \
  UNARY_LOOP(square_##T, T, wmul_##T(a, a))                                                        \
  UNARY_LOOP(clamp_##T, T,                                                                         \
             IMIN(IMAX(a, (T)clamp_bound_small(prm->min, LO, HI)),                                 \
                  (T)clamp_bound_small(prm->max, LO, HI)))
SMALL_INT_UNARY_LOOPS(u8, 0, UINT8_MAX, a, a > 0)
SMALL_INT_UNARY_LOOPS(i8, INT8_MIN, INT8_MAX, a < 0 ? wsub_i8(0, a) : a, (a > 0) - (a < 0))
SMALL_INT_UNARY_LOOPS(i16, INT16_MIN, INT16_MAX, a < 0 ? wsub_i16(0, a) : a, (a > 0) - (a < 0))

/* Whether a contiguous pass may take a vector copy that reads each element before writing
 * it: out is x itself or does not overlap it (the portable loop, with no restrict, runs
 * element by element through any other overlap). */
static bool same_or_apart(const void *out, const void *x, int64_t bytes) {
  const char *o = out, *a = x;
  return o == a || o + bytes <= a || a + bytes <= o;
}

/* relu of f32: the AVX-512 copy (relu-avx512.h) for a contiguous run where the CPU has it. */
static void relu_f32_any(char **p, const int64_t *s, int64_t n, void *ctx) {
  if (s[0] == 4 && s[1] == 4 && gs__cpu_has_avx512f() && same_or_apart(p[0], p[1], n * 4))
    gs__relu_f32_avx512((float *)p[0], (const float *)p[1], n);
  else
    relu_f32(p, s, n, ctx);
}

/* A row of an op with floating loops only (NULL: a dtype the op promotes first or refuses). */
#define FLOAT_ONLY(OP, NAME) [OP] = {NAME##_f32, NAME##_f64, NULL, NULL, NULL, NULL, NULL, NULL}
static const gs__loop_fn unary_loops[GS__UNOP_COUNT][GS_DTYPE_COUNT] = {
    [GS__NEG] = {neg_f32, neg_f64, neg_i64, NULL, neg_i32, neg_u8, neg_i8, neg_i16},
    [GS__ABS] = {abs_f32, abs_f64, abs_i64, NULL, abs_i32, abs_u8, abs_i8, abs_i16},
    FLOAT_ONLY(GS__EXP, exp),
    FLOAT_ONLY(GS__LOG, log),
    FLOAT_ONLY(GS__SQRT, sqrt),
    FLOAT_ONLY(GS__RSQRT, rsqrt),
    FLOAT_ONLY(GS__TANH, tanh),
    FLOAT_ONLY(GS__SIGMOID, sigmoid),
    [GS__RELU] = {relu_f32_any, relu_f64, relu_i64, NULL, relu_i32, relu_u8, relu_i8, relu_i16},
    FLOAT_ONLY(GS__LEAKY_RELU, leaky_relu),
    FLOAT_ONLY(GS__GELU, gelu),
    [GS__CLAMP] = {clamp_f32, clamp_f64, clamp_i64, NULL, clamp_i32, clamp_u8, clamp_i8, clamp_i16},
    FLOAT_ONLY(GS__SIN, sin),
    FLOAT_ONLY(GS__COS, cos),
    FLOAT_ONLY(GS__TAN, tan),
    [GS__FLOOR] = {floor_f32, floor_f64, floor_i64, NULL, floor_i32, floor_u8, floor_i8, floor_i16},
    [GS__BITWISE_NOT] = {NULL, NULL, bitwise_not_i64, bitwise_not_b8, bitwise_not_i32,
                         bitwise_not_u8, bitwise_not_i8, bitwise_not_i16},
    FLOAT_ONLY(GS__GELU_GRAD, gelu_grad),
    FLOAT_ONLY(GS__GELU_TANH, gelu_tanh),
    FLOAT_ONLY(GS__GELU_TANH_GRAD, gelu_tanh_grad),
    [GS__CEIL] = {ceil_f32, ceil_f64, floor_i64, NULL, floor_i32, floor_u8, floor_i8, floor_i16},
    [GS__ROUND] = {round_f32, round_f64, floor_i64, NULL, floor_i32, floor_u8, floor_i8, floor_i16},
    FLOAT_ONLY(GS__ROUND_DECIMALS, round_decimals),
    [GS__TRUNC] = {trunc_f32, trunc_f64, floor_i64, NULL, floor_i32, floor_u8, floor_i8, floor_i16},
    FLOAT_ONLY(GS__FRAC, frac),
    [GS__SIGN] = {sign_f32, sign_f64, sign_i64, sign_b8, sign_i32, sign_u8, sign_i8, sign_i16},
    FLOAT_ONLY(GS__RECIPROCAL, reciprocal),
    [GS__SQUARE] = {square_f32, square_f64, square_i64, NULL, square_i32, square_u8, square_i8,
                    square_i16},
    FLOAT_ONLY(GS__LOG1P, log1p),
    FLOAT_ONLY(GS__EXPM1, expm1),
    FLOAT_ONLY(GS__LOG2, log2),
    FLOAT_ONLY(GS__LOG10, log10),
    FLOAT_ONLY(GS__ASIN, asin),
    FLOAT_ONLY(GS__ACOS, acos),
    FLOAT_ONLY(GS__ATAN, atan),
    FLOAT_ONLY(GS__SINH, sinh),
    FLOAT_ONLY(GS__COSH, cosh),
    FLOAT_ONLY(GS__ERF, erf),
    FLOAT_ONLY(GS__ASINH, asinh),
    FLOAT_ONLY(GS__ACOSH, acosh),
    FLOAT_ONLY(GS__ATANH, atanh),
    FLOAT_ONLY(GS__ERFC, erfc),
    FLOAT_ONLY(GS__ERFINV, erfinv),
    FLOAT_ONLY(GS__EXP2, exp2),
    FLOAT_ONLY(GS__LGAMMA, lgamma),
    FLOAT_ONLY(GS__DIGAMMA, digamma),
    FLOAT_ONLY(GS__POLYGAMMA, polygamma),
    FLOAT_ONLY(GS__I0, i0),
    FLOAT_ONLY(GS__I0E, i0e),
    FLOAT_ONLY(GS__I1, i1),
    FLOAT_ONLY(GS__I1E, i1e),
    FLOAT_ONLY(GS__ERFCX, erfcx),
    FLOAT_ONLY(GS__SILU, silu),
    FLOAT_ONLY(GS__SILU_GRAD, silu_grad),
    FLOAT_ONLY(GS__ELU, elu),
    FLOAT_ONLY(GS__ELU_GRAD, elu_grad),
    FLOAT_ONLY(GS__SOFTPLUS, softplus),
    FLOAT_ONLY(GS__SOFTPLUS_GRAD, softplus_grad),
    FLOAT_ONLY(GS__HARDTANH, hardtanh),
    FLOAT_ONLY(GS__HARDTANH_GRAD, hardtanh_grad),
    FLOAT_ONLY(GS__HARDSIGMOID, hardsigmoid),
    FLOAT_ONLY(GS__HARDSIGMOID_GRAD, hardsigmoid_grad),
    FLOAT_ONLY(GS__HARDSWISH, hardswish),
    FLOAT_ONLY(GS__HARDSWISH_GRAD, hardswish_grad),
    FLOAT_ONLY(GS__LOGSIGMOID, logsigmoid),
    FLOAT_ONLY(GS__LOGSIGMOID_GRAD, logsigmoid_grad),
    FLOAT_ONLY(GS__MISH, mish),
    FLOAT_ONLY(GS__MISH_GRAD, mish_grad),
#undef FLOAT_ONLY
};

gs__loop_fn gs__unary_loop(gs__unop op, gs_dtype dtype) { return unary_loops[op][dtype]; }

/* ---- add_scaled_: t += alpha * b ----------------------------------------------------------- */

/* Operands (out, a, b) of one dtype, ctx the alpha in that dtype: out = a + alpha * b in one
 * pass (the optimizers' updates), rounded exactly as a + (alpha * b) computed in two. */
BINARY_LOOP_WITH(add_scaled_f32, f32, f32, const f32 alpha = *(const f32 *)ctx, a + alpha * b)
BINARY_LOOP_WITH(add_scaled_f64, f64, f64, const f64 alpha = *(const f64 *)ctx, a + alpha * b)
BINARY_LOOP_WITH(add_scaled_i64, i64, i64, const i64 alpha = *(const i64 *)ctx,
                 WADD(a, WMUL(alpha, b)))
BINARY_LOOP_WITH(add_scaled_i32, i32, i32, const i32 alpha = *(const i32 *)ctx,
                 WADD32(a, WMUL32(alpha, b)))
BINARY_LOOP_WITH(add_scaled_u8, u8, u8, const u8 alpha = *(const u8 *)ctx,
                 wadd_u8(a, wmul_u8(alpha, b)))
BINARY_LOOP_WITH(add_scaled_i8, i8, i8, const i8 alpha = *(const i8 *)ctx,
                 wadd_i8(a, wmul_i8(alpha, b)))
BINARY_LOOP_WITH(add_scaled_i16, i16, i16, const i16 alpha = *(const i16 *)ctx,
                 wadd_i16(a, wmul_i16(alpha, b)))

gs__loop_fn gs__add_scaled_loop(gs_dtype dtype) {
  static const gs__loop_fn loops[GS_DTYPE_COUNT] = {add_scaled_f32, add_scaled_f64, add_scaled_i64,
                                                    NULL,           add_scaled_i32, add_scaled_u8,
                                                    add_scaled_i8,  add_scaled_i16};
  return loops[dtype];
}

/* ---- relu's gradient --------------------------------------------------------------------- */

/* Operands (out, g, y): out = y <= 0 ? 0 : g, PyTorch's threshold_backward on relu's output
 * y. One pass, where g * (y > 0) took a comparison, a bool-to-float copy and a product. */
#define RELU_GRAD_LOOP(T)                                                                    \
  static void relu_grad_##T(char **p, const int64_t *s, int64_t n, void *ctx) {             \
    (void)ctx;                                                                               \
    const int64_t st = (int64_t)sizeof(T);                                                   \
    if (s[0] == st && s[1] == st && s[2] == st) {                                            \
      T *o = (T *)p[0];                                                                      \
      const T *g = (const T *)p[1], *y = (const T *)p[2];                                    \
      for (int64_t i = 0; i < n; i++) { /* both loads unconditional: a vector select */     \
        T gi = g[i], yi = y[i];                                                              \
        o[i] = yi <= 0 ? (T)0 : gi;                                                          \
      }                                                                                      \
    } else {                                                                                 \
      char *o = p[0];                                                                        \
      const char *g = p[1], *y = p[2];                                                       \
      for (int64_t i = 0; i < n; i++, o += s[0], g += s[1], y += s[2])                      \
        *(T *)o = *(const T *)y <= 0 ? (T)0 : *(const T *)g;                                 \
    }                                                                                        \
  }

RELU_GRAD_LOOP(f32)
RELU_GRAD_LOOP(f64)

/* relu's gradient in f32: the AVX-512 copy for contiguous runs, as relu_f32_any. */
static void relu_grad_f32_any(char **p, const int64_t *s, int64_t n, void *ctx) {
  if (s[0] == 4 && s[1] == 4 && s[2] == 4 && gs__cpu_has_avx512f() &&
      same_or_apart(p[0], p[1], n * 4) && same_or_apart(p[0], p[2], n * 4))
    gs__relu_grad_f32_avx512((float *)p[0], (const float *)p[1], (const float *)p[2], n);
  else
    relu_grad_f32(p, s, n, ctx);
}

gs__loop_fn gs__relu_grad_loop(gs_dtype dtype) {
  return dtype == GS_F32 ? relu_grad_f32_any : dtype == GS_F64 ? relu_grad_f64 : NULL;
}

/* ---- where ---------------------------------------------------------------------------- */

#define WHERE_LOOP(T)                                                                        \
  static void where_##T(char **p, const int64_t *s, int64_t n, void *ctx) {                 \
    (void)ctx;                                                                               \
    char *o = p[0];                                                                          \
    const char *c = p[1], *x = p[2], *y = p[3];                                              \
    for (int64_t i = 0; i < n; i++, o += s[0], c += s[1], x += s[2], y += s[3])             \
      *(T *)o = *(const b8 *)c ? *(const T *)x : *(const T *)y;                              \
  }

WHERE_LOOP(f32)
WHERE_LOOP(f64)
WHERE_LOOP(i64)
WHERE_LOOP(b8)
WHERE_LOOP(i32)
WHERE_LOOP(u8)
WHERE_LOOP(i8)
WHERE_LOOP(i16)

gs__loop_fn gs__where_loop(gs_dtype dtype) {
  static const gs__loop_fn loops[GS_DTYPE_COUNT] = {where_f32, where_f64, where_i64, where_b8,
                                                    where_i32, where_u8,  where_i8,  where_i16};
  return loops[dtype];
}
