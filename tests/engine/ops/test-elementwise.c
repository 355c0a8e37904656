/* test-elementwise.c: every elementwise op against a plain reference loop, for each dtype it
 * supports, on contiguous, transposed, sliced and broadcast operands; PyTorch's promotion
 * rules; and the errors for what is not supported. */
#include "test-util.h"

enum {
  F32 = 1 << GS_F32,
  F64 = 1 << GS_F64,
  I64 = 1 << GS_I64,
  BOOL = 1 << GS_BOOL,
  I32 = 1 << GS_I32,
  U8 = 1 << GS_U8,
  I8 = 1 << GS_I8,
  I16 = 1 << GS_I16,
  SMALL = U8 | I8 | I16
};

/* ---- references --------------------------------------------------------------------- */

static double r_add(double a, double b) { return a + b; }
static double r_sub(double a, double b) { return a - b; }
static double r_mul(double a, double b) { return a * b; }
static double r_div(double a, double b) { return a / b; }
static double r_pow(double a, double b) { return pow(a, b); }
static double r_max(double a, double b) { return isnan(a) || a > b ? a : b; }
static double r_min(double a, double b) { return isnan(a) || a < b ? a : b; }
static double r_eq(double a, double b) { return a == b; }
static double r_ne(double a, double b) { return a != b; }
static double r_lt(double a, double b) { return a < b; }
static double r_le(double a, double b) { return a <= b; }
static double r_gt(double a, double b) { return a > b; }
static double r_ge(double a, double b) { return a >= b; }
/* bool arithmetic: + is or, * is and. */
static double r_or(double a, double b) { return (a != 0) || (b != 0); }
static double r_and(double a, double b) { return (a != 0) && (b != 0); }

typedef struct {
  const char *name;
  gs_tensor (*op)(gs_tensor, gs_tensor);
  gs_tensor (*op_scalar)(gs_tensor, double);
  double (*ref)(double, double);
  unsigned dtypes;
  bool comparison;
  double a_lo, a_hi, b_lo, b_hi;
} binary_case;

static const binary_case binary_cases[] = {
    {"add", gs_add, gs_add_scalar, r_add, F32 | F64 | I64 | I32 | SMALL | BOOL, false, -5, 5, -5,
     5},
    {"sub", gs_sub, gs_sub_scalar, r_sub, F32 | F64 | I64 | I32 | SMALL, false, -5, 5, -5, 5},
    {"mul", gs_mul, gs_mul_scalar, r_mul, F32 | F64 | I64 | I32 | SMALL | BOOL, false, -5, 5, -5,
     5},
    {"div", gs_div, gs_div_scalar, r_div, F32 | F64 | I64 | I32 | SMALL, false, -5, 5, 1, 4},
    {"pow", gs_pow, gs_pow_scalar, r_pow, F32 | F64 | I64 | I32 | SMALL, false, 0.5, 3, 0, 3},
    {"maximum", gs_maximum, gs_maximum_scalar, r_max, F32 | F64 | I64 | I32 | SMALL | BOOL, false,
     -5, 5, -5, 5},
    {"minimum", gs_minimum, gs_minimum_scalar, r_min, F32 | F64 | I64 | I32 | SMALL | BOOL, false,
     -5, 5, -5, 5},
    {"eq", gs_eq, gs_eq_scalar, r_eq, F32 | F64 | I64 | I32 | SMALL | BOOL, true, -2, 2, -2, 2},
    {"ne", gs_ne, gs_ne_scalar, r_ne, F32 | F64 | I64 | I32 | SMALL | BOOL, true, -2, 2, -2, 2},
    {"lt", gs_lt, gs_lt_scalar, r_lt, F32 | F64 | I64 | I32 | SMALL | BOOL, true, -2, 2, -2, 2},
    {"le", gs_le, gs_le_scalar, r_le, F32 | F64 | I64 | I32 | SMALL | BOOL, true, -2, 2, -2, 2},
    {"gt", gs_gt, gs_gt_scalar, r_gt, F32 | F64 | I64 | I32 | SMALL | BOOL, true, -2, 2, -2, 2},
    {"ge", gs_ge, gs_ge_scalar, r_ge, F32 | F64 | I64 | I32 | SMALL | BOOL, true, -2, 2, -2, 2},
};

/* r wrapped into the u8, i8 or i16 range, as their arithmetic does (r is an exact integer). */
static double wrap_to(gs_dtype dtype, double r) {
  double span = dtype == GS_I16 ? 65536 : 256, lo = dtype == GS_U8 ? 0 : -span / 2;
  double w = fmod(r - lo, span);
  return (w < 0 ? w + span : w) + lo;
}

static double reference(const binary_case *c, gs_dtype dtype, double a, double b) {
  if (dtype == GS_BOOL && c->ref == r_add)
    return r_or(a, b);
  if (dtype == GS_BOOL && (c->ref == r_mul || c->ref == r_min))
    return r_and(a, b);
  if (dtype == GS_BOOL && c->ref == r_max)
    return r_or(a, b);
  double r = c->ref(a, b);
  if (dtype == GS_F32 && !c->comparison)
    r = (float)r;
  if (!c->comparison && c->ref != r_div && gs_dtype_size(dtype) < 4 && dtype != GS_BOOL)
    r = wrap_to(dtype, r); /* u8 operands of -5 are 251: their sums wrap */
  return r;
}

static double tolerance(gs_dtype result) { return result == GS_F32 ? 2e-6 : result == GS_F64 ? 1e-14 : 0; }

/* a [3, 4, 5] op b for b of shape [4, 5] and [3, 1, 5]: plain and broadcast operands. */
static void check_binary_case(const binary_case *c, gs_dtype dtype, test_layout la,
                              test_layout lb, const int64_t *b_shape, int b_ndim, gs_rng *rng) {
  int64_t a_shape[3] = {3, 4, 5};
  test_set_context("%s %s, a %s, b %s of %d dims", c->name, gs_dtype_name(dtype),
                   test_layout_name(la), test_layout_name(lb), b_ndim);
  gs_tensor a = test_make(dtype, a_shape, 3, la, c->a_lo, c->a_hi, rng);
  gs_tensor b = test_make(dtype, b_shape, b_ndim, lb, c->b_lo, c->b_hi, rng);
  double *va = test_values(a), *vb = test_values(b);
  double expected[60];
  for (int64_t i = 0; i < 60; i++) {
    int64_t idx[3];
    test_unravel(i, a_shape, 3, idx);
    expected[i] = reference(c, dtype, va[i], vb[test_ravel_broadcast(idx, 3, b_shape, b_ndim)]);
  }
  gs_tensor r = c->op(a, b);
  gs_dtype want = c->comparison ? GS_BOOL
                  : (c->ref == r_div && !gs_dtype_is_floating(dtype)) ? GS_F32
                                                                      : dtype;
  if (gs_dtype_of(r) != want)
    g_error("%s on %s: result dtype %s, expected %s", c->name, gs_dtype_name(dtype),
            gs_dtype_name(gs_dtype_of(r)), gs_dtype_name(want));
  test_assert_values(r, a_shape, 3, expected, tolerance(want), tolerance(want));
  /* Operands are never changed. */
  double *va2 = test_values(a);
  g_assert_cmpmem(va, 60 * sizeof(double), va2, 60 * sizeof(double));
  g_free(va), g_free(va2), g_free(vb);
  gs_dispose(r), gs_dispose(a), gs_dispose(b);
}

static void test_binary_ops(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 11);
  uint64_t live = gs_live_tensor_count();
  const int64_t shape_plain[2] = {4, 5}, shape_bcast[3] = {3, 1, 5};
  for (size_t k = 0; k < G_N_ELEMENTS(binary_cases); k++) {
    const binary_case *c = &binary_cases[k];
    for (int d = 0; d < GS_DTYPE_COUNT; d++) {
      if (!(c->dtypes & (1u << d)))
        continue;
      for (int la = 0; la < LAYOUT_COUNT; la++) {
        for (int lb = 0; lb < LAYOUT_COUNT; lb++) {
          check_binary_case(c, (gs_dtype)d, la, lb, shape_plain, 2, &rng);
          check_binary_case(c, (gs_dtype)d, la, lb, shape_bcast, 3, &rng);
        }
      }
    }
  }
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
}

static void test_scalar_forms(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 12);
  int64_t shape[2] = {6, 7};
  for (size_t k = 0; k < G_N_ELEMENTS(binary_cases); k++) {
    const binary_case *c = &binary_cases[k];
    for (int d = GS_F32; d <= GS_F64; d++) {
      for (int l = 0; l < LAYOUT_COUNT; l++) {
        gs_tensor a = test_make((gs_dtype)d, shape, 2, l, c->a_lo, c->a_hi, &rng);
        double s = c->comparison ? 0.0 : 1.5;
        gs_tensor r = c->op_scalar(a, s);
        double *va = test_values(a);
        double expected[42];
        for (int i = 0; i < 42; i++)
          expected[i] = reference(c, (gs_dtype)d, va[i], s);
        test_assert_values(r, shape, 2, expected, tolerance((gs_dtype)d), tolerance((gs_dtype)d));
        g_free(va);
        gs_dispose(r), gs_dispose(a);
      }
    }
  }
  /* s - a */
  gs_tensor a = gs_arange(0, 3, 1, GS_F32);
  gs_tensor r = gs_rsub_scalar(a, 10);
  double expected[3] = {10, 9, 8};
  test_assert_values(r, (int64_t[]){3}, 1, expected, 0, 0);
  gs_dispose(r), gs_dispose(a);
}

/* ---- promotion ---------------------------------------------------------------------- */

static gs_dtype result_dtype(gs_tensor (*op)(gs_tensor, gs_tensor), gs_dtype a, int a_ndim,
                             gs_dtype b, int b_ndim) {
  int64_t shape[1] = {2};
  gs_tensor ta = gs_ones(a, shape, a_ndim), tb = gs_ones(b, shape, b_ndim);
  gs_tensor r = op(ta, tb);
  gs_dtype d = gs_dtype_of(r);
  gs_dispose(r), gs_dispose(ta), gs_dispose(tb);
  return d;
}

static gs_dtype scalar_result_dtype(gs_tensor (*op)(gs_tensor, double), gs_dtype a) {
  gs_tensor t = gs_ones(a, (int64_t[]){2}, 1);
  gs_tensor r = op(t, 2.0);
  gs_dtype d = gs_dtype_of(r);
  gs_dispose(r), gs_dispose(t);
  return d;
}

static void test_type_promotion(void) {
  /* Dimensioned operands: the larger type. */
  g_assert_cmpint(result_dtype(gs_add, GS_F32, 1, GS_F64, 1), ==, GS_F64);
  g_assert_cmpint(result_dtype(gs_add, GS_I64, 1, GS_F32, 1), ==, GS_F32);
  g_assert_cmpint(result_dtype(gs_add, GS_BOOL, 1, GS_I64, 1), ==, GS_I64);
  /* A 0-dim operand of the same category does not widen: f32[2] + f64 scalar tensor = f32. */
  g_assert_cmpint(result_dtype(gs_add, GS_F32, 1, GS_F64, 0), ==, GS_F32);
  g_assert_cmpint(result_dtype(gs_mul, GS_F64, 0, GS_F32, 1), ==, GS_F32);
  /* ... but one of a higher category does: i64[2] + f64 scalar tensor = f64. */
  g_assert_cmpint(result_dtype(gs_add, GS_I64, 1, GS_F64, 0), ==, GS_F64);
  /* Two 0-dim operands promote normally. */
  g_assert_cmpint(result_dtype(gs_add, GS_F32, 0, GS_F64, 0), ==, GS_F64);
  /* True division of integers. */
  g_assert_cmpint(result_dtype(gs_div, GS_I64, 1, GS_I64, 1), ==, GS_F32);
  g_assert_cmpint(result_dtype(gs_lt, GS_I64, 1, GS_F64, 1), ==, GS_BOOL);
  /* A double scalar is a floating operand of the default dtype. */
  g_assert_cmpint(scalar_result_dtype(gs_add_scalar, GS_F64), ==, GS_F64);
  g_assert_cmpint(scalar_result_dtype(gs_add_scalar, GS_F32), ==, GS_F32);
  g_assert_cmpint(scalar_result_dtype(gs_add_scalar, GS_I64), ==, GS_F32);
  g_assert_cmpint(scalar_result_dtype(gs_mul_scalar, GS_BOOL), ==, GS_F32);
  g_assert_cmpint(gs_promote_types(GS_BOOL, GS_F32), ==, GS_F32);
  /* i32 sits between bool and i64, as torch.int32. */
  g_assert_cmpint(result_dtype(gs_add, GS_I32, 1, GS_I64, 1), ==, GS_I64);
  g_assert_cmpint(result_dtype(gs_mul, GS_I32, 1, GS_F32, 1), ==, GS_F32);
  g_assert_cmpint(result_dtype(gs_add, GS_I32, 1, GS_BOOL, 1), ==, GS_I32);
  g_assert_cmpint(result_dtype(gs_add, GS_I32, 1, GS_I64, 0), ==, GS_I32); /* a Python int */
  g_assert_cmpint(result_dtype(gs_add, GS_I32, 0, GS_I64, 1), ==, GS_I64);
  g_assert_cmpint(result_dtype(gs_add, GS_I32, 1, GS_F64, 0), ==, GS_F64);
  g_assert_cmpint(result_dtype(gs_div, GS_I32, 1, GS_I32, 1), ==, GS_F32);
  g_assert_cmpint(result_dtype(gs_floor_divide, GS_I32, 1, GS_I32, 1), ==, GS_I32);
  g_assert_cmpint(scalar_result_dtype(gs_add_scalar, GS_I32), ==, GS_F32);

  /* Mixed dtypes compute in the promoted type: 1/3 in f64, not f32. */
  gs_tensor a = gs_full(GS_F64, (int64_t[]){1}, 1, 1.0), b = gs_full(GS_F32, (int64_t[]){1}, 1, 3.0);
  gs_tensor r = gs_div(a, b);
  g_assert_cmpfloat(gs_item(r), ==, 1.0 / 3.0);
  gs_dispose(a), gs_dispose(b), gs_dispose(r);
}

/* ---- unary -------------------------------------------------------------------------- */

static double r_neg(double x) { return -x; }
static double r_abs(double x) { return fabs(x); }
static double r_rsqrt(double x) { return 1 / sqrt(x); }
static double r_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double r_relu(double x) { return x > 0 ? x : 0; }
static double r_leaky(double x) { return x > 0 ? x : 0.1 * x; }
static double r_gelu(double x) { return 0.5 * x * (1 + erf(x / sqrt(2))); }
/* torch's approximate='tanh' */
static double r_gelu_tanh(double x) {
  return 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
}
static double r_clamp(double x) { return x < -0.5 ? -0.5 : x > 0.7 ? 0.7 : x; }
static gs_tensor op_leaky(gs_tensor t) { return gs_leaky_relu(t, 0.1); }
static gs_tensor op_clamp(gs_tensor t) { return gs_clamp(t, -0.5, 0.7); }

typedef struct {
  const char *name;
  gs_tensor (*op)(gs_tensor);
  double (*ref)(double);
  bool keeps_integers;
  double lo, hi;
} unary_case;

static const unary_case unary_cases[] = {
    {"neg", gs_neg, r_neg, true, -3, 3},
    {"abs", gs_abs, r_abs, true, -3, 3},
    {"exp", gs_exp, exp, false, -3, 3},
    {"log", gs_log, log, false, 0.1, 5},
    {"sqrt", gs_sqrt, sqrt, false, 0, 5},
    {"rsqrt", gs_rsqrt, r_rsqrt, false, 0.1, 5},
    {"tanh", gs_tanh, tanh, false, -3, 3},
    {"sigmoid", gs_sigmoid, r_sigmoid, false, -8, 8},
    {"relu", gs_relu, r_relu, true, -3, 3},
    {"leaky_relu", op_leaky, r_leaky, false, -3, 3},
    {"gelu", gs_gelu, r_gelu, false, -4, 4},
    {"clamp", op_clamp, r_clamp, true, -2, 2},
    {"gelu_tanh", gs_gelu_tanh, r_gelu_tanh, false, -4, 4},
};

static void test_unary_ops(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 13);
  uint64_t live = gs_live_tensor_count();
  int64_t shape[3] = {2, 3, 4};
  for (size_t k = 0; k < G_N_ELEMENTS(unary_cases); k++) {
    const unary_case *c = &unary_cases[k];
    for (int d = GS_F32; d <= GS_I64; d++) {
      if (d == GS_I64 && c->ref == r_leaky)
        continue; /* leaky_relu is floating-only, checked below */
      for (int l = 0; l < LAYOUT_COUNT; l++) {
        test_set_context("%s %s %s", c->name, gs_dtype_name((gs_dtype)d), test_layout_name(l));
        gs_tensor t = test_make((gs_dtype)d, shape, 3, l, c->lo, c->hi, &rng);
        gs_tensor r = c->op(t);
        gs_dtype want = d != GS_I64 || c->keeps_integers ? (gs_dtype)d : GS_F32;
        g_assert_cmpint(gs_dtype_of(r), ==, want);
        double *v = test_values(t), expected[24];
        for (int i = 0; i < 24; i++) {
          expected[i] = c->ref(v[i]);
          if (want == GS_F32)
            expected[i] = (float)c->ref((float)v[i]);
          if (want == GS_I64 && c->ref == r_clamp)
            expected[i] = v[i] < 0 ? 0 : v[i] > 0 ? 0 : v[i]; /* bounds round inward to [0, 0] */
        }
        double tol = want == GS_F32 ? 3e-6 : want == GS_F64 ? 1e-14 : 0;
        test_assert_values(r, shape, 3, expected, tol, tol);
        g_free(v);
        gs_dispose(r), gs_dispose(t);
      }
    }
  }
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);

  /* NaN stays NaN through relu, clamp and maximum, as in PyTorch. */
  double special[3] = {NAN, INFINITY, -INFINITY};
  gs_tensor s = gs_from_data(GS_F64, (int64_t[]){3}, 1, special);
  gs_tensor relu = gs_relu(s), cl = gs_clamp(s, -1, 1), sg = gs_sigmoid(s);
  double e_relu[3] = {NAN, INFINITY, 0}, e_cl[3] = {NAN, 1, -1}, e_sg[3] = {NAN, 1, 0};
  test_assert_values(relu, (int64_t[]){3}, 1, e_relu, 0, 0);
  test_assert_values(cl, (int64_t[]){3}, 1, e_cl, 0, 0);
  test_assert_values(sg, (int64_t[]){3}, 1, e_sg, 0, 0);
  gs_dispose(s), gs_dispose(relu), gs_dispose(cl), gs_dispose(sg);
}

static void test_where(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 14);
  for (int l = 0; l < LAYOUT_COUNT; l++) {
    gs_tensor cond = test_make(GS_BOOL, (int64_t[]){3, 4}, 2, l, 0, 1, &rng);
    gs_tensor a = test_make(GS_F32, (int64_t[]){4}, 1, LAYOUT_CONTIGUOUS, -5, 5, &rng);
    gs_tensor b = test_make(GS_F64, (int64_t[]){3, 1}, 2, LAYOUT_CONTIGUOUS, -5, 5, &rng);
    gs_tensor r = gs_where(cond, a, b);
    g_assert_cmpint(gs_dtype_of(r), ==, GS_F64);
    double *vc = test_values(cond), *va = test_values(a), *vb = test_values(b), expected[12];
    for (int i = 0; i < 12; i++)
      expected[i] = vc[i] != 0 ? (double)(float)va[i % 4] : vb[i / 4];
    test_assert_values(r, (int64_t[]){3, 4}, 2, expected, 0, 0);
    g_free(vc), g_free(va), g_free(vb);
    gs_dispose(cond), gs_dispose(a), gs_dispose(b), gs_dispose(r);
  }
  gs_tensor f = gs_ones(GS_F32, (int64_t[]){2}, 1);
  EXPECT_ERROR(gs_where(f, f, f), "where: expected a bool condition, got f32");
  gs_tensor c3 = gs_ones(GS_BOOL, (int64_t[]){3}, 1);
  EXPECT_ERROR(gs_where(c3, f, f), "where: shapes [3] and [2] cannot be broadcast together");
  gs_dispose(f), gs_dispose(c3);
}

static void test_errors(void) {
  gs_tensor b = gs_ones(GS_BOOL, (int64_t[]){2}, 1);
  gs_tensor i = gs_full(GS_I64, (int64_t[]){2}, 1, 2);
  gs_tensor neg = gs_full(GS_I64, (int64_t[]){2}, 1, -1);
  EXPECT_ERROR(gs_sub(b, b), "sub: bool tensors are not supported");
  EXPECT_ERROR(gs_neg(b), "neg: bool tensors are not supported");
  EXPECT_ERROR(gs_pow(i, neg), "pow: integers to negative integer powers are not allowed (exponent -1)");
  gs_tensor a = gs_zeros(GS_F32, (int64_t[]){2, 3}, 2), c = gs_zeros(GS_F32, (int64_t[]){4, 3}, 2);
  EXPECT_ERROR(gs_mul(a, c), "mul: shapes [2, 3] and [4, 3] cannot be broadcast together (dim 0: 2 vs 4)");
  /* i64 pow with non-negative exponents is exact. */
  gs_tensor p = gs_pow(i, i);
  g_assert_cmpfloat(gs_get(p, (int64_t[]){0}), ==, 4);
  gs_dispose(b), gs_dispose(i), gs_dispose(neg), gs_dispose(a), gs_dispose(c), gs_dispose(p);
}

static void test_empty_and_zero_dim(void) {
  gs_tensor e = gs_zeros(GS_F32, (int64_t[]){0, 3}, 2), row = gs_ones(GS_F32, (int64_t[]){3}, 1);
  gs_tensor r = gs_add(e, row);
  g_assert_cmpint(gs_size(r, 0), ==, 0);
  g_assert_cmpint(gs_size(r, 1), ==, 3);
  gs_tensor s1 = gs_scalar(GS_F64, 2), s2 = gs_scalar(GS_F64, 5);
  gs_tensor s = gs_mul(s1, s2);
  g_assert_cmpint(gs_ndim(s), ==, 0);
  g_assert_cmpfloat(gs_item(s), ==, 10);
  gs_dispose(e), gs_dispose(row), gs_dispose(r), gs_dispose(s1), gs_dispose(s2), gs_dispose(s);
}

/* Larger than any inner-loop unrolling, on a transposed output order, to cover long runs. */
static void test_large_transposed_add(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 15);
  int64_t shape[2] = {300, 257};
  gs_tensor a = test_make(GS_F32, shape, 2, LAYOUT_TRANSPOSED, -1, 1, &rng);
  gs_tensor b = test_make(GS_F32, shape, 2, LAYOUT_SLICED, -1, 1, &rng);
  gs_tensor r = gs_add(a, b);
  double *va = test_values(a), *vb = test_values(b);
  double *expected = g_new(double, 300 * 257);
  for (int i = 0; i < 300 * 257; i++)
    expected[i] = (float)(va[i] + vb[i]);
  test_assert_values(r, shape, 2, expected, 0, 0);
  g_free(va), g_free(vb), g_free(expected);
  gs_dispose(a), gs_dispose(b), gs_dispose(r);
}

static void test_integer_unary_ops(void) {
  gs_tensor i = gs_from_data(GS_I64, (int64_t[]){4}, 1, (int64_t[]){-3, 0, 2, 5});
  gs_tensor n = gs_neg(i), a = gs_abs(i), r = gs_relu(i), c = gs_clamp(i, -1.5, 2.5);
  g_assert_cmpint(gs_dtype_of(n), ==, GS_I64);
  test_assert_values(n, (int64_t[]){4}, 1, (double[]){3, 0, -2, -5}, 0, 0);
  test_assert_values(a, (int64_t[]){4}, 1, (double[]){3, 0, 2, 5}, 0, 0);
  test_assert_values(r, (int64_t[]){4}, 1, (double[]){0, 0, 2, 5}, 0, 0);
  test_assert_values(c, (int64_t[]){4}, 1, (double[]){-1, 0, 2, 2}, 0, 0); /* bounds inward */
  gs_tensor e = gs_exp(i); /* math on integers computes in f32, as torch.exp */
  g_assert_cmpint(gs_dtype_of(e), ==, GS_F32);
  gs_tensor bools = gs_gt_scalar(i, 0);
  EXPECT_ERROR(gs_neg(bools), "bool tensors are not supported");
  gs_dispose(i), gs_dispose(n), gs_dispose(a), gs_dispose(r), gs_dispose(c), gs_dispose(e);
  gs_dispose(bools);
}

static void test_nan_and_integer_overflow(void) {
  gs_tensor x = gs_from_data(GS_F32, (int64_t[]){3}, 1, (float[]){NAN, 1, 2});
  gs_tensor y = gs_from_data(GS_F32, (int64_t[]){3}, 1, (float[]){0, NAN, 1});
  gs_tensor mx = gs_maximum(x, y), mn = gs_minimum(x, y), r = gs_relu(x);
  test_assert_values(mx, (int64_t[]){3}, 1, (double[]){NAN, NAN, 2}, 0, 0);
  test_assert_values(mn, (int64_t[]){3}, 1, (double[]){NAN, NAN, 1}, 0, 0);
  test_assert_values(r, (int64_t[]){3}, 1, (double[]){NAN, 1, 2}, 0, 0);
  /* Integer arithmetic wraps, as PyTorch's does (and without undefined behaviour here). */
  gs_tensor big = gs_from_data(GS_I64, (int64_t[]){1}, 1, (int64_t[]){INT64_MAX});
  gs_tensor one = gs_ones(GS_I64, (int64_t[]){1}, 1);
  gs_tensor wrapped = gs_add(big, one);
  int64_t w;
  gs_copy_to(wrapped, &w, sizeof w);
  g_assert_cmpint(w, ==, INT64_MIN);
  DISPOSE_ALL(x, y, mx, mn, r, big, one, wrapped);
}

/* i32 wraps in 32 bits (not in the 64 its values would fit): +, *, -, pow, and INT32_MIN // -1,
 * as torch.int32 on CPU; // and % take the divisor's sign; ~ and integer unary ops keep i32. */
static void test_i32_wraps_in_32_bits(void) {
  gs_tensor a = gs_from_data(GS_I32, (int64_t[]){3}, 1, (int32_t[]){INT32_MAX, INT32_MIN, -7});
  gs_tensor b = gs_from_data(GS_I32, (int64_t[]){3}, 1, (int32_t[]){1, -1, 2});
  gs_tensor sum = gs_add(a, b), prod = gs_mul(a, a), fdiv = gs_floor_divide(a, b);
  gs_tensor mod = gs_remainder(a, b), neg = gs_neg(a), inv = gs_bitwise_not(a);
  gs_tensor base = gs_from_data(GS_I32, (int64_t[]){3}, 1, (int32_t[]){65536, -3, 46341});
  gs_tensor two = gs_full(GS_I32, (int64_t[]){3}, 1, 2), sq = gs_pow(base, two);
  gs_tensor cl = gs_clamp(a, -10.5, 1e12);
  g_assert_cmpint(gs_dtype_of(sum), ==, GS_I32);
  const int64_t n3[1] = {3};
  const double lo = INT32_MIN, hi = INT32_MAX; /* every i32 is exact as a double */
  test_assert_values(sum, n3, 1, (double[]){lo, hi, -5}, 0, 0);
  test_assert_values(prod, n3, 1, (double[]){1, 0, 49}, 0, 0);
  test_assert_values(fdiv, n3, 1, (double[]){hi, lo, -4}, 0, 0); /* INT32_MIN // -1 wraps */
  test_assert_values(mod, n3, 1, (double[]){0, 0, 1}, 0, 0);
  test_assert_values(neg, n3, 1, (double[]){-hi, lo, 7}, 0, 0);
  test_assert_values(inv, n3, 1, (double[]){lo, hi, 6}, 0, 0);
  test_assert_values(cl, n3, 1, (double[]){hi, -10, -7}, 0, 0);
  test_assert_values(sq, n3, 1, (double[]){0, 9, -2147479015}, 0, 0); /* 46341^2 - 2^32 */
  EXPECT_ERROR(gs_pow(b, b), "pow: integers to negative integer powers are not allowed");
  gs_tensor zero = gs_zeros(GS_I32, (int64_t[]){3}, 1);
  EXPECT_ERROR(gs_floor_divide(a, zero), "floor_divide: integer division by zero");
  /* A 0-dim i64 divisor does not widen an i32 tensor: -2^63 becomes 0 in i32, and is refused
   * as such (the check reads the divisor as the loop will, not as given). */
  gs_tensor low = gs_scalar(GS_I64, -9223372036854775808.0);
  EXPECT_ERROR(gs_remainder(a, low), "remainder: integer division by zero (divisor 0)");
  gs_tensor e = gs_exp(b), d = gs_div(a, b); /* math and true division compute in f32 */
  g_assert_cmpint(gs_dtype_of(e), ==, GS_F32);
  g_assert_cmpint(gs_dtype_of(d), ==, GS_F32);
  /* In place: an i32 tensor takes i64 operands (same category), not fractions. */
  gs_tensor wide = gs_ones(GS_I64, (int64_t[]){3}, 1);
  gs_add_(b, wide);
  test_assert_values(b, (int64_t[]){3}, 1, (double[]){2, 0, 3}, 0, 0);
  EXPECT_ERROR(gs_add_scalar_(b, 0.5), "cannot be written in place into a tensor of dtype i32");
  DISPOSE_ALL(a, b, sum, prod, fdiv, mod, neg, inv, base, two, sq, cl, zero, low, e, d, wide);
}

/* torch.promote_types(a, b) in PyTorch 1.13, printed by torch for every pair and pasted here
 * (rows and columns in gs_dtype order: f32 f64 i64 bool i32 u8 i8 i16). */
static const char *const torch_promotions[GS_DTYPE_COUNT][GS_DTYPE_COUNT] = {
    {"f32", "f64", "f32", "f32", "f32", "f32", "f32", "f32"},
    {"f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64"},
    {"f32", "f64", "i64", "i64", "i64", "i64", "i64", "i64"},
    {"f32", "f64", "i64", "bool", "i32", "u8", "i8", "i16"},
    {"f32", "f64", "i64", "i32", "i32", "i32", "i32", "i32"},
    {"f32", "f64", "i64", "u8", "i32", "u8", "i16", "i16"},
    {"f32", "f64", "i64", "i8", "i32", "i16", "i8", "i16"},
    {"f32", "f64", "i64", "i16", "i32", "i16", "i16", "i16"},
};

/* Every pair of dtypes promotes as torch's; u8 with i8 widens to i16, which holds both. The
 * tensor ops follow it, comparisons give bool, and a double scalar makes integers f32. */
static void test_small_int_promotion(void) {
  for (int a = 0; a < GS_DTYPE_COUNT; a++)
    for (int b = 0; b < GS_DTYPE_COUNT; b++) {
      test_set_context("promote %s, %s", gs_dtype_name(a), gs_dtype_name(b));
      g_assert_cmpstr(gs_dtype_name(gs_promote_types(a, b)), ==, torch_promotions[a][b]);
    }
  g_assert_cmpint(result_dtype(gs_add, GS_U8, 1, GS_I8, 1), ==, GS_I16);
  g_assert_cmpint(result_dtype(gs_mul, GS_I8, 1, GS_U8, 1), ==, GS_I16);
  g_assert_cmpint(result_dtype(gs_sub, GS_U8, 1, GS_I16, 1), ==, GS_I16);
  g_assert_cmpint(result_dtype(gs_add, GS_U8, 1, GS_BOOL, 1), ==, GS_U8);
  g_assert_cmpint(result_dtype(gs_add, GS_I16, 1, GS_I32, 1), ==, GS_I32);
  g_assert_cmpint(result_dtype(gs_add, GS_U8, 1, GS_I64, 0), ==, GS_U8); /* a Python int */
  g_assert_cmpint(result_dtype(gs_add, GS_I8, 1, GS_F64, 0), ==, GS_F64);
  g_assert_cmpint(result_dtype(gs_lt, GS_U8, 1, GS_I8, 1), ==, GS_BOOL);
  g_assert_cmpint(result_dtype(gs_div, GS_U8, 1, GS_U8, 1), ==, GS_F32);
  g_assert_cmpint(result_dtype(gs_floor_divide, GS_I16, 1, GS_I8, 1), ==, GS_I16);
  g_assert_cmpint(scalar_result_dtype(gs_add_scalar, GS_U8), ==, GS_F32);
  g_assert_cmpint(scalar_result_dtype(gs_mul_scalar, GS_I16), ==, GS_F32);
  g_assert_true(gs_dtype_is_integer(GS_U8) && gs_dtype_is_integer(GS_I8) &&
                gs_dtype_is_integer(GS_I16) && !gs_dtype_is_integer(GS_BOOL));
  /* u8 200 compared with i8 -1 in i16: 200 > -1 (not 200 > 255 as u8 would read it). */
  gs_tensor u = gs_from_data(GS_U8, (int64_t[]){2}, 1, (uint8_t[]){200, 0});
  gs_tensor i = gs_from_data(GS_I8, (int64_t[]){2}, 1, (int8_t[]){-1, -1});
  gs_tensor gt = gs_gt(u, i), sum = gs_add(u, i);
  test_assert_values(gt, (int64_t[]){2}, 1, (double[]){1, 1}, 0, 0);
  test_assert_values(sum, (int64_t[]){2}, 1, (double[]){199, -1}, 0, 0);
  DISPOSE_ALL(u, i, gt, sum);
}

/* u8, i8 and i16 wrap at their own width, as torch's: u8 200 + 100 is 44 and 0 - 1 is 255;
 * i8 -128 // -1 is -128 (no SIGFPE), abs(-128) is -128; i16 pow wraps; // and % take the
 * divisor's sign; division by zero is refused, also for a divisor that becomes 0 when an
 * i64 0-dim tensor is read as the tensor's dtype (256 is u8 0). */
static void test_small_ints_wrap(void) {
  const int64_t n3[1] = {3};
  gs_tensor u = gs_from_data(GS_U8, n3, 1, (uint8_t[]){200, 0, 255});
  gs_tensor u2 = gs_from_data(GS_U8, n3, 1, (uint8_t[]){100, 1, 7});
  gs_tensor usum = gs_add(u, u2), udiff = gs_sub(u2, u), uprod = gs_mul(u, u2);
  gs_tensor uneg = gs_neg(u2), unot = gs_bitwise_not(u), uabs = gs_abs(u);
  gs_tensor ufd = gs_floor_divide(u, u2), urem = gs_remainder(u, u2);
  g_assert_cmpint(gs_dtype_of(usum), ==, GS_U8);
  test_assert_values(usum, n3, 1, (double[]){44, 1, 6}, 0, 0);
  test_assert_values(udiff, n3, 1, (double[]){156, 1, 8}, 0, 0);
  test_assert_values(uprod, n3, 1, (double[]){32, 0, 249}, 0, 0);
  test_assert_values(uneg, n3, 1, (double[]){156, 255, 249}, 0, 0);
  test_assert_values(unot, n3, 1, (double[]){55, 255, 0}, 0, 0);
  test_assert_values(uabs, n3, 1, (double[]){200, 0, 255}, 0, 0);
  test_assert_values(ufd, n3, 1, (double[]){2, 0, 36}, 0, 0);
  test_assert_values(urem, n3, 1, (double[]){0, 0, 3}, 0, 0);

  gs_tensor c = gs_from_data(GS_I8, n3, 1, (int8_t[]){-128, 127, -7});
  gs_tensor m1 = gs_from_data(GS_I8, n3, 1, (int8_t[]){-1, -1, 2});
  gs_tensor cfd = gs_floor_divide(c, m1), crem = gs_remainder(c, m1), cabs = gs_abs(c);
  gs_tensor csum = gs_add(c, c), cneg = gs_neg(c);
  gs_tensor ccl = gs_clamp(c, -1000, 100.5);
  test_assert_values(cfd, n3, 1, (double[]){-128, -127, -4}, 0, 0); /* -128 // -1 wraps */
  test_assert_values(crem, n3, 1, (double[]){0, 0, 1}, 0, 0);
  test_assert_values(cabs, n3, 1, (double[]){-128, 127, 7}, 0, 0);
  test_assert_values(csum, n3, 1, (double[]){0, -2, -14}, 0, 0);
  test_assert_values(cneg, n3, 1, (double[]){-128, -127, 7}, 0, 0);
  test_assert_values(ccl, n3, 1, (double[]){-128, 100, -7}, 0, 0); /* bounds saturate */

  gs_tensor s = gs_from_data(GS_I16, n3, 1, (int16_t[]){INT16_MIN, 182, -3});
  gs_tensor two = gs_full(GS_I16, n3, 1, 2), sq = gs_pow(s, two);
  gs_tensor sm1 = gs_full(GS_I16, n3, 1, -1), sfd = gs_floor_divide(s, sm1);
  test_assert_values(sq, n3, 1, (double[]){0, 33124 - 65536, 9}, 0, 0);
  test_assert_values(sfd, n3, 1, (double[]){INT16_MIN, -182, 3}, 0, 0);
  EXPECT_ERROR(gs_pow(c, m1), "pow: integers to negative integer powers are not allowed");
  gs_tensor zero = gs_zeros(GS_U8, n3, 1);
  EXPECT_ERROR(gs_floor_divide(u, zero), "floor_divide: integer division by zero");
  gs_tensor czero = gs_zeros(GS_I8, n3, 1);
  EXPECT_ERROR(gs_remainder(c, czero), "remainder: integer division by zero");
  gs_tensor wide = gs_scalar(GS_I64, 256); /* 0 once read as u8 */
  EXPECT_ERROR(gs_floor_divide(u, wide), "floor_divide: integer division by zero (divisor 0)");
  gs_tensor e = gs_exp(u), d = gs_div(c, m1), h = gs_add_scalar(u, 1.5);
  g_assert_cmpint(gs_dtype_of(e), ==, GS_F32);
  test_assert_values(d, n3, 1, (double[]){128, -127, -3.5}, 0, 0);
  test_assert_values(h, n3, 1, (double[]){201.5, 1.5, 256.5}, 0, 0);
  /* Casts narrow by keeping the low bits, floats through i32 as torch on x86. */
  gs_tensor f = gs_from_data(GS_F64, (int64_t[]){5}, 1, (double[]){300, -1, 255.9, 3e9, 40000});
  gs_tensor fu = gs_to_dtype(f, GS_U8), fc = gs_to_dtype(f, GS_I8), fs = gs_to_dtype(f, GS_I16);
  test_assert_values(fu, (int64_t[]){5}, 1, (double[]){44, 255, 255, 0, 64}, 0, 0);
  test_assert_values(fc, (int64_t[]){5}, 1, (double[]){44, -1, -1, 0, 64}, 0, 0);
  test_assert_values(fs, (int64_t[]){5}, 1, (double[]){300, -1, 255, 0, -25536}, 0, 0);
  /* Sums and cumsum give i64 (no wrap), max keeps the dtype, argmax is i64. */
  gs_tensor total = gs_sum(u, NULL, 0, false), mx = gs_max(c, NULL, 0, false),
            am = gs_argmax(c, 0, false);
  gs_tensor cs = gs_cumsum(u, 0);
  g_assert_cmpint(gs_dtype_of(total), ==, GS_I64);
  g_assert_cmpfloat(gs_item(total), ==, 455);
  g_assert_cmpint(gs_dtype_of(mx), ==, GS_I8);
  g_assert_cmpfloat(gs_item(mx), ==, 127);
  g_assert_cmpint(gs_dtype_of(am), ==, GS_I64);
  g_assert_cmpint(gs_dtype_of(cs), ==, GS_I64);
  test_assert_values(cs, n3, 1, (double[]){200, 200, 455}, 0, 0);
  DISPOSE_ALL(u, u2, usum, udiff, uprod, uneg, unot, uabs, ufd, urem, c, m1, cfd, crem, cabs);
  DISPOSE_ALL(csum, cneg, ccl, s, two, sq, sfd, zero, wide, e, d, h, f, fu, fc, fs);
  DISPOSE_ALL(total, mx, am, cs, sm1, czero);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/elementwise/binary-ops", test_binary_ops);
  g_test_add_func("/elementwise/scalar-forms", test_scalar_forms);
  g_test_add_func("/elementwise/type-promotion", test_type_promotion);
  g_test_add_func("/elementwise/unary-ops", test_unary_ops);
  g_test_add_func("/elementwise/integer-unary-ops", test_integer_unary_ops);
  g_test_add_func("/elementwise/nan-and-integer-overflow", test_nan_and_integer_overflow);
  g_test_add_func("/elementwise/i32-wraps-in-32-bits", test_i32_wraps_in_32_bits);
  g_test_add_func("/elementwise/small-int-promotion", test_small_int_promotion);
  g_test_add_func("/elementwise/small-ints-wrap", test_small_ints_wrap);
  g_test_add_func("/elementwise/where", test_where);
  g_test_add_func("/elementwise/errors", test_errors);
  g_test_add_func("/elementwise/empty-and-zero-dim", test_empty_and_zero_dim);
  g_test_add_func("/elementwise/large-transposed-add", test_large_transposed_add);
  return g_test_run();
}
