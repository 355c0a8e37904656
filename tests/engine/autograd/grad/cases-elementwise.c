/* cases-elementwise.c: gradcheck cases for the elementwise ops and their in-place forms, on
 * broadcast shapes and transposed and sliced inputs. */
#include "grad-case.h"

#define BINARY(NAME, CALL)                                                                   \
  static gs_tensor NAME(const gs_tensor *in, int n, void *u) {                               \
    (void)n, (void)u;                                                                        \
    return CALL;                                                                             \
  }

BINARY(f_add, gs_add(in[0], in[1]))
BINARY(f_sub, gs_sub(in[0], in[1]))
BINARY(f_mul, gs_mul(in[0], in[1]))
BINARY(f_div, gs_div(in[0], in[1]))
BINARY(f_pow, gs_pow(in[0], in[1]))
BINARY(f_maximum, gs_maximum(in[0], in[1]))
BINARY(f_minimum, gs_minimum(in[0], in[1]))
BINARY(f_add_scalar, gs_add_scalar(in[0], 1.5))
BINARY(f_sub_scalar, gs_sub_scalar(in[0], 1.5))
BINARY(f_rsub_scalar, gs_rsub_scalar(in[0], 1.5))
BINARY(f_mul_scalar, gs_mul_scalar(in[0], -2.5))
BINARY(f_div_scalar, gs_div_scalar(in[0], 4.0))
BINARY(f_pow_scalar, gs_pow_scalar(in[0], 2.5))
BINARY(f_pow_scalar_zero, gs_pow_scalar(in[0], 0.0))
BINARY(f_maximum_scalar, gs_maximum_scalar(in[0], 0.3))
BINARY(f_minimum_scalar, gs_minimum_scalar(in[0], 0.3))
BINARY(f_neg, gs_neg(in[0]))
BINARY(f_abs, gs_abs(in[0]))
BINARY(f_exp, gs_exp(in[0]))
BINARY(f_log, gs_log(in[0]))
BINARY(f_sqrt, gs_sqrt(in[0]))
BINARY(f_rsqrt, gs_rsqrt(in[0]))
BINARY(f_tanh, gs_tanh(in[0]))
BINARY(f_sigmoid, gs_sigmoid(in[0]))
BINARY(f_relu, gs_relu(in[0]))
BINARY(f_leaky_relu, gs_leaky_relu(in[0], 0.1))
BINARY(f_gelu, gs_gelu(in[0]))
BINARY(f_gelu_tanh, gs_gelu_tanh(in[0]))
BINARY(f_clamp, gs_clamp(in[0], -0.8, 0.9))
BINARY(f_sin, gs_sin(in[0]))
BINARY(f_cos, gs_cos(in[0]))
BINARY(f_tan, gs_tan(in[0]))
BINARY(f_fmod, gs_fmod(in[0], in[1]))
BINARY(f_atan2, gs_atan2(in[0], in[1]))
BINARY(f_lerp, gs_lerp(in[0], in[1], in[2]))
BINARY(f_lerp_scalar, gs_lerp_scalar(in[0], in[1], 0.3))
BINARY(f_frac, gs_frac(in[0]))
BINARY(f_reciprocal, gs_reciprocal(in[0]))
BINARY(f_square, gs_square(in[0]))
BINARY(f_log1p, gs_log1p(in[0]))
BINARY(f_expm1, gs_expm1(in[0]))
BINARY(f_log2, gs_log2(in[0]))
BINARY(f_log10, gs_log10(in[0]))
BINARY(f_asin, gs_asin(in[0]))
BINARY(f_acos, gs_acos(in[0]))
BINARY(f_atan, gs_atan(in[0]))
BINARY(f_sinh, gs_sinh(in[0]))
BINARY(f_cosh, gs_cosh(in[0]))
BINARY(f_erf, gs_erf(in[0]))
BINARY(f_asinh, gs_asinh(in[0]))
BINARY(f_acosh, gs_acosh(in[0]))
BINARY(f_atanh, gs_atanh(in[0]))
BINARY(f_erfc, gs_erfc(in[0]))
BINARY(f_erfinv, gs_erfinv(in[0]))
BINARY(f_exp2, gs_exp2(in[0]))
BINARY(f_lgamma, gs_lgamma(in[0]))
BINARY(f_digamma, gs_digamma(in[0]))
BINARY(f_polygamma2, gs_polygamma(2, in[0]))
BINARY(f_i0, gs_i0(in[0]))
BINARY(f_i0e, gs_i0e(in[0]))
BINARY(f_i1, gs_i1(in[0]))
BINARY(f_i1e, gs_i1e(in[0]))
BINARY(f_erfcx, gs_erfcx(in[0]))
BINARY(f_prelu, gs_prelu(in[0], in[1]))

/* masked_fill: where the (constant) mask row is true the value replaces x, so those
 * positions get no gradient. */
static gs_tensor f_masked_fill(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  gs_tensor mask = gs__keep(gs_gt_scalar(in[1], 0.0));
  return gs_masked_fill(in[0], mask, -3.5);
}

static gs_tensor f_where(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  gs_tensor cond = gs_gt_scalar(in[0], 0.0);
  gs_tensor r = gs_where(cond, in[1], in[2]);
  gs_dispose(cond);
  return r;
}

/* In-place forms act on a non-leaf copy of input 0 (in-place writes into leaves that require
 * grad are refused), so the gradient flows to input 0 through the rewritten history. */
#define INPLACE(NAME, STMT)                                                                  \
  static gs_tensor NAME(const gs_tensor *in, int n, void *u) {                               \
    (void)n, (void)u;                                                                        \
    gs_tensor y = gs_mul_scalar(in[0], 1.0);                                                 \
    STMT;                                                                                    \
    return y;                                                                                \
  }

INPLACE(f_add_, gs_add_(y, in[1]))
INPLACE(f_sub_, gs_sub_(y, in[1]))
INPLACE(f_mul_, gs_mul_(y, in[1]))
INPLACE(f_div_, gs_div_(y, in[1]))
INPLACE(f_pow_, gs_pow_(y, in[1]))
INPLACE(f_add_scaled_, gs_add_scaled_(y, in[1], -1.5))
INPLACE(f_add_scalar_, gs_add_scalar_(y, 2.0))
INPLACE(f_mul_scalar_, gs_mul_scalar_(y, 3.0))
INPLACE(f_clamp_, gs_clamp_(y, -0.8, 0.9))
INPLACE(f_fill_, gs_fill_(y, 2.0))
INPLACE(f_zero_, gs_zero_(y))
INPLACE(f_copy_, gs_copy_(y, in[1]))
INPLACE(f_neg_, gs_neg_(y))
INPLACE(f_abs_, gs_abs_(y))
INPLACE(f_exp_, gs_exp_(y))
INPLACE(f_log_, gs_log_(y))
INPLACE(f_sqrt_, gs_sqrt_(y))
INPLACE(f_rsqrt_, gs_rsqrt_(y))
INPLACE(f_tanh_, gs_tanh_(y))
INPLACE(f_sigmoid_, gs_sigmoid_(y))
INPLACE(f_relu_, gs_relu_(y))
INPLACE(f_sin_, gs_sin_(y))
INPLACE(f_cos_, gs_cos_(y))
INPLACE(f_tan_, gs_tan_(y))
INPLACE(f_frac_, gs_frac_(y))
INPLACE(f_reciprocal_, gs_reciprocal_(y))
INPLACE(f_square_, gs_square_(y))
INPLACE(f_log1p_, gs_log1p_(y))
INPLACE(f_expm1_, gs_expm1_(y))
INPLACE(f_log2_, gs_log2_(y))
INPLACE(f_log10_, gs_log10_(y))
INPLACE(f_asin_, gs_asin_(y))
INPLACE(f_acos_, gs_acos_(y))
INPLACE(f_atan_, gs_atan_(y))
INPLACE(f_sinh_, gs_sinh_(y))
INPLACE(f_cosh_, gs_cosh_(y))
INPLACE(f_erf_, gs_erf_(y))
INPLACE(f_lgamma_, gs_lgamma_(y))
/* Through a transposed view of the copy: the write is recorded on the view and its base. */
static gs_tensor f_sin_view_(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  gs_tensor y = gs_mul_scalar(in[0], 1.0), v = gs_t(y);
  gs_sin_(v);
  gs_dispose(v);
  return y;
}

/* Inputs away from the edges of a formula's domain: (-0.9, 0.9) for asin and acos (whose
 * slopes blow up at +-1); frac's input avoids integers, where it jumps. */
#define GI_UNIT(LAYOUT)                                                                            \
  { .ndim = 2, .shape = {3, 4}, .layout = LAYOUT, .lo = -0.9, .hi = 0.9 }
#define GI_FRAC                                                                                    \
  { .ndim = 2, .shape = {3, 4}, .layout = LAYOUT_SLICED, .lo = 0.1, .hi = 0.9 }
/* fmod jumps where a / b crosses an integer, so the operands stay in ranges where trunc(a / b)
 * is constant: b in [2.5, 3) with a in [0.5, 2) (0) or in [-4.9, -3.2) (-1). */
#define GI_FMOD_A                                                                                  \
  { .ndim = 2, .shape = {3, 4}, .layout = LAYOUT_TRANSPOSED, .lo = 0.5, .hi = 2 }
#define GI_FMOD_B                                                                                  \
  { .ndim = 1, .shape = {4}, .layout = LAYOUT_CONTIGUOUS, .lo = 2.5, .hi = 3 }
#define COND {.ndim = 2, .shape = {3, 4}, .layout = LAYOUT_CONTIGUOUS, .lo = -1, .hi = 1, .no_grad = true, .dtype = GS_F64}

const grad_case grad_cases_elementwise[] = {
    {"AddBackward", "broadcast [3, 4] + [4]", f_add, 2, {GI(2, 3, 4), GI(1, 4)}},
    {"AddBackward", "transposed + sliced", f_add, 2, {GI_T(2, 3, 4), GI_S(2, 3, 4)}},
    {"SubBackward", "broadcast [2, 1, 3] - [4, 1]", f_sub, 2, {GI(3, 2, 1, 3), GI(2, 4, 1)}},
    {"MulBackward", "broadcast [3, 4] * [3, 1]", f_mul, 2, {GI_T(2, 3, 4), GI(2, 3, 1)}},
    {"MulBackward", "0-dim * [5]", f_mul, 2, {GI(0, 0), GI_S(1, 5)}},
    {"DivBackward", "broadcast [3, 4] / [4]", f_div, 2, {GI_S(2, 3, 4), GI_POS(1, 4)}},
    {"PowBackward", "positive base, broadcast exponent", f_pow, 2, {GI_POS(2, 3, 4), GI(1, 4)}},
    {"MaximumBackward", "broadcast", f_maximum, 2, {GI_T(2, 3, 4), GI(1, 4)}},
    {"MinimumBackward", "broadcast", f_minimum, 2, {GI(2, 3, 4), GI_S(2, 3, 4)}},
    {"AddScalarBackward", "a + 1.5", f_add_scalar, 1, {GI_T(2, 3, 4)}},
    {"SubScalarBackward", "a - 1.5", f_sub_scalar, 1, {GI_S(2, 3, 4)}},
    {"RsubScalarBackward", "1.5 - a", f_rsub_scalar, 1, {GI_T(2, 3, 4)}},
    {"MulScalarBackward", "a * -2.5", f_mul_scalar, 1, {GI_S(2, 3, 4)}},
    {"DivScalarBackward", "a / 4", f_div_scalar, 1, {GI_T(2, 3, 4)}},
    {"PowScalarBackward", "a ^ 2.5", f_pow_scalar, 1, {GI_POS(2, 3, 4)}},
    {"PowScalarBackward", "a ^ 0", f_pow_scalar_zero, 1, {GI(2, 3, 4)}},
    {"MaximumScalarBackward", "max(a, 0.3)", f_maximum_scalar, 1, {GI_T(2, 3, 4)}},
    {"MinimumScalarBackward", "min(a, 0.3)", f_minimum_scalar, 1, {GI_S(2, 3, 4)}},
    {"NegBackward", "transposed", f_neg, 1, {GI_T(2, 3, 4)}},
    {"AbsBackward", "sliced", f_abs, 1, {GI_S(2, 3, 4)}},
    {"ExpBackward", "transposed", f_exp, 1, {GI_T(2, 3, 4)}},
    {"LogBackward", "positive", f_log, 1, {GI_POS(2, 3, 4)}},
    {"SqrtBackward", "positive", f_sqrt, 1, {GI_POS(2, 3, 4)}},
    {"RsqrtBackward", "positive", f_rsqrt, 1, {GI_POS(2, 3, 4)}},
    {"TanhBackward", "sliced", f_tanh, 1, {GI_S(2, 3, 4)}},
    {"SinBackward", "transposed", f_sin, 1, {GI_T(2, 3, 4)}},
    {"CosBackward", "sliced", f_cos, 1, {GI_S(2, 3, 4)}},
    {"TanBackward",
     "transposed, within (-1, 1)",
     f_tan,
     1,
     {{.ndim = 2, .shape = {3, 4}, .layout = LAYOUT_TRANSPOSED, .lo = -1, .hi = 1}}},
    {"MaskedFillBackward",
     "masked_fill with a broadcast mask row",
     f_masked_fill,
     2,
     {GI_T(2, 3, 4),
      {.ndim = 1,
       .shape = {4},
       .layout = LAYOUT_CONTIGUOUS,
       .lo = -1,
       .hi = 1,
       .no_grad = true,
       .dtype = GS_F64}}},
    {"PreluBackward", "one weight per channel", f_prelu, 2, {GI_T(3, 2, 3, 4), GI(1, 3)}},
    {"PreluBackward", "one shared weight", f_prelu, 2, {GI_S(2, 3, 4), GI(1, 1)}},
    {"PreluBackward", "of [2, 3] by channel", f_prelu, 2, {GI(2, 2, 3), GI(1, 3)}},
    {"SigmoidBackward", "transposed", f_sigmoid, 1, {GI_T(2, 3, 4)}},
    {"ReluBackward", "sliced", f_relu, 1, {GI_S(2, 3, 4)}},
    {"LeakyReluBackward", "transposed", f_leaky_relu, 1, {GI_T(2, 3, 4)}},
    {"GeluBackward", "sliced", f_gelu, 1, {GI_S(2, 3, 4)}},
    {"GeluBackward", "tanh form, transposed", f_gelu_tanh, 1, {GI_T(2, 3, 4)}},
    {"ClampBackward", "[-0.8, 0.9]", f_clamp, 1, {GI_T(2, 3, 4)}},
    {"WhereBackward", "broadcast branches", f_where, 3, {COND, GI_T(2, 3, 4), GI(1, 4)}},
    {"FmodBackward", "broadcast divisor, quotient 0", f_fmod, 2, {GI_FMOD_A, GI_FMOD_B}},
    {"FmodBackward",
     "negative dividend, quotient -1",
     f_fmod,
     2,
     {{.ndim = 2, .shape = {3, 4}, .layout = LAYOUT_SLICED, .lo = -4.9, .hi = -3.2}, GI_FMOD_B}},
    {"Atan2Backward", "broadcast [3, 4] and [4]", f_atan2, 2, {GI_T(2, 3, 4), GI_POS(1, 4)}},
    {"Atan2Backward",
     "negative x (the left half plane)",
     f_atan2,
     2,
     {GI_S(2, 3, 4),
      {.ndim = 2, .shape = {3, 4}, .layout = LAYOUT_CONTIGUOUS, .lo = -2, .hi = -0.5}}},
    {"AddBackward",
     "lerp: tensor weight, broadcast",
     f_lerp,
     3,
     {GI_T(2, 3, 4), GI(1, 4), GI_S(2, 3, 4)}},
    {"AddBackward", "lerp_scalar: weight 0.3", f_lerp_scalar, 2, {GI_S(2, 3, 4), GI(2, 3, 4)}},
    {"FracBackward", "sliced, away from integers", f_frac, 1, {GI_FRAC}},
    {"ReciprocalBackward", "positive", f_reciprocal, 1, {GI_POS(2, 3, 4)}},
    {"SquareBackward", "transposed", f_square, 1, {GI_T(2, 3, 4)}},
    {"Log1pBackward",
     "above -1",
     f_log1p,
     1,
     {{.ndim = 2, .shape = {3, 4}, .layout = LAYOUT_TRANSPOSED, .lo = -0.5, .hi = 2}}},
    {"Expm1Backward", "sliced", f_expm1, 1, {GI_S(2, 3, 4)}},
    {"Log2Backward", "positive", f_log2, 1, {GI_POS(2, 3, 4)}},
    {"Log10Backward", "positive", f_log10, 1, {GI_POS(2, 3, 4)}},
    {"AsinBackward", "within (-0.9, 0.9), transposed", f_asin, 1, {GI_UNIT(LAYOUT_TRANSPOSED)}},
    {"AcosBackward", "within (-0.9, 0.9), sliced", f_acos, 1, {GI_UNIT(LAYOUT_SLICED)}},
    {"AtanBackward", "transposed", f_atan, 1, {GI_T(2, 3, 4)}},
    {"SinhBackward", "sliced", f_sinh, 1, {GI_S(2, 3, 4)}},
    {"CoshBackward", "transposed", f_cosh, 1, {GI_T(2, 3, 4)}},
    {"ErfBackward", "sliced", f_erf, 1, {GI_S(2, 3, 4)}},
    {"AsinhBackward", "transposed", f_asinh, 1, {GI_T(2, 3, 4)}},
    {"AcoshBackward",
     "above 1",
     f_acosh,
     1,
     {{.ndim = 2, .shape = {3, 4}, .layout = LAYOUT_SLICED, .lo = 1.2, .hi = 3}}},
    {"AtanhBackward", "within (-0.9, 0.9), sliced", f_atanh, 1, {GI_UNIT(LAYOUT_SLICED)}},
    {"ErfcBackward", "transposed", f_erfc, 1, {GI_T(2, 3, 4)}},
    {"I0Backward", "transposed", f_i0, 1, {GI_T(2, 3, 4)}},
    {"SpecialI0EBackward", "sliced", f_i0e, 1, {GI_S(2, 3, 4)}},
    {"SpecialI1Backward", "transposed", f_i1, 1, {GI_T(2, 3, 4)}},
    {"SpecialI1EBackward", "sliced", f_i1e, 1, {GI_S(2, 3, 4)}},
    {"SpecialI1Backward",
     "large, in the asymptotic range",
     f_i1,
     1,
     {{.ndim = 1, .shape = {4}, .layout = LAYOUT_CONTIGUOUS, .lo = 31, .hi = 40}}},
    {"SpecialI0EBackward",
     "large and negative, in the asymptotic range",
     f_i0e,
     1,
     {{.ndim = 1, .shape = {4}, .layout = LAYOUT_CONTIGUOUS, .lo = -40, .hi = -31}}},
    {"SpecialErfcxBackward", "transposed", f_erfcx, 1, {GI_T(2, 3, 4)}},
    {"SpecialErfcxBackward",
     "large, in the asymptotic range",
     f_erfcx,
     1,
     {{.ndim = 1, .shape = {4}, .layout = LAYOUT_CONTIGUOUS, .lo = 26.5, .hi = 40}}},
    {"ErfinvBackward", "within (-0.9, 0.9), transposed", f_erfinv, 1, {GI_UNIT(LAYOUT_TRANSPOSED)}},
    {"Exp2Backward", "sliced", f_exp2, 1, {GI_S(2, 3, 4)}},
    {"LgammaBackward",
     "positive, sliced",
     f_lgamma,
     1,
     {{.ndim = 2, .shape = {3, 4}, .layout = LAYOUT_SLICED, .lo = 0.3, .hi = 4}}},
    {"LgammaBackward",
     "negative, between the poles",
     f_lgamma,
     1,
     {{.ndim = 1, .shape = {5}, .layout = LAYOUT_CONTIGUOUS, .lo = -2.8, .hi = -2.2}}},
    {"DigammaBackward",
     "positive and negative, transposed",
     f_digamma,
     1,
     {{.ndim = 2, .shape = {3, 4}, .layout = LAYOUT_TRANSPOSED, .lo = 0.4, .hi = 12}}},
    {"DigammaBackward",
     "between the poles",
     f_digamma,
     1,
     {{.ndim = 1, .shape = {5}, .layout = LAYOUT_CONTIGUOUS, .lo = -1.8, .hi = -1.2}}},
    {"PolygammaBackward",
     "order 2, positive",
     f_polygamma2,
     1,
     {{.ndim = 2, .shape = {3, 4}, .layout = LAYOUT_SLICED, .lo = 0.5, .hi = 15}}},
    {"PolygammaBackward",
     "order 2, between the poles",
     f_polygamma2,
     1,
     {{.ndim = 1, .shape = {5}, .layout = LAYOUT_CONTIGUOUS, .lo = -0.8, .hi = -0.2}}},
    {"LgammaBackward",
     "in place: lgamma_",
     f_lgamma_,
     1,
     {{.ndim = 2, .shape = {3, 4}, .layout = LAYOUT_CONTIGUOUS, .lo = 0.5, .hi = 3}}},
    {"AddBackward", "in place: add_ broadcast", f_add_, 2, {GI_T(2, 3, 4), GI(1, 4)}},
    {"SubBackward", "in place: sub_", f_sub_, 2, {GI(2, 3, 4), GI_S(2, 3, 4)}},
    {"MulBackward", "in place: mul_ saves the old value", f_mul_, 2, {GI_S(2, 3, 4), GI(2, 3, 1)}},
    {"DivBackward", "in place: div_", f_div_, 2, {GI_T(2, 3, 4), GI_POS(1, 4)}},
    {"PowBackward",
     "in place: pow_ saves the old value and the new",
     f_pow_,
     2,
     {GI_POS(2, 3, 4), GI(1, 4)}},
    {"AddScaledBackward",
     "in place: add_scaled_ broadcast, alpha -1.5",
     f_add_scaled_,
     2,
     {GI_T(2, 3, 4), GI_S(1, 4)}},
    {"AddScalarBackward", "in place: add_scalar_", f_add_scalar_, 1, {GI(2, 3, 4)}},
    {"MulScalarBackward", "in place: mul_scalar_", f_mul_scalar_, 1, {GI_T(2, 3, 4)}},
    {"ClampBackward", "in place: clamp_", f_clamp_, 1, {GI_S(2, 3, 4)}},
    {"FillBackward", "in place: fill_", f_fill_, 1, {GI(2, 3, 4)}},
    {"FillBackward", "in place: zero_", f_zero_, 1, {GI_T(2, 3, 4)}},
    {"CopyBackward", "in place: copy_ broadcast", f_copy_, 2, {GI(2, 3, 4), GI_S(1, 4)}},
    {"NegBackward", "in place: neg_", f_neg_, 1, {GI_T(2, 3, 4)}},
    {"AbsBackward", "in place: abs_", f_abs_, 1, {GI_S(2, 3, 4)}},
    {"ExpBackward", "in place: exp_", f_exp_, 1, {GI_T(2, 3, 4)}},
    {"LogBackward", "in place: log_", f_log_, 1, {GI_POS(2, 3, 4)}},
    {"SqrtBackward", "in place: sqrt_", f_sqrt_, 1, {GI_POS(2, 3, 4)}},
    {"RsqrtBackward", "in place: rsqrt_", f_rsqrt_, 1, {GI_POS(2, 3, 4)}},
    {"TanhBackward", "in place: tanh_", f_tanh_, 1, {GI_S(2, 3, 4)}},
    {"SigmoidBackward", "in place: sigmoid_", f_sigmoid_, 1, {GI_T(2, 3, 4)}},
    {"ReluBackward", "in place: relu_", f_relu_, 1, {GI_S(2, 3, 4)}},
    {"SinBackward", "in place: sin_", f_sin_, 1, {GI_T(2, 3, 4)}},
    {"CosBackward", "in place: cos_", f_cos_, 1, {GI_S(2, 3, 4)}},
    {"TanBackward", "in place: tan_", f_tan_, 1, {GI_UNIT(LAYOUT_TRANSPOSED)}},
    {"FracBackward", "in place: frac_", f_frac_, 1, {GI_FRAC}},
    {"ReciprocalBackward", "in place: reciprocal_", f_reciprocal_, 1, {GI_POS(2, 3, 4)}},
    {"SquareBackward", "in place: square_", f_square_, 1, {GI_T(2, 3, 4)}},
    {"Log1pBackward", "in place: log1p_", f_log1p_, 1, {GI_POS(2, 3, 4)}},
    {"Expm1Backward", "in place: expm1_", f_expm1_, 1, {GI_S(2, 3, 4)}},
    {"Log2Backward", "in place: log2_", f_log2_, 1, {GI_POS(2, 3, 4)}},
    {"Log10Backward", "in place: log10_", f_log10_, 1, {GI_POS(2, 3, 4)}},
    {"AsinBackward", "in place: asin_", f_asin_, 1, {GI_UNIT(LAYOUT_TRANSPOSED)}},
    {"AcosBackward", "in place: acos_", f_acos_, 1, {GI_UNIT(LAYOUT_SLICED)}},
    {"AtanBackward", "in place: atan_", f_atan_, 1, {GI_T(2, 3, 4)}},
    {"SinhBackward", "in place: sinh_", f_sinh_, 1, {GI_S(2, 3, 4)}},
    {"CoshBackward", "in place: cosh_", f_cosh_, 1, {GI_T(2, 3, 4)}},
    {"ErfBackward", "in place: erf_", f_erf_, 1, {GI_S(2, 3, 4)}},
    {"CopySlices", "in place: sin_ through a transposed view", f_sin_view_, 1, {GI(2, 3, 4)}},
};
const int grad_cases_elementwise_count = G_N_ELEMENTS(grad_cases_elementwise);
