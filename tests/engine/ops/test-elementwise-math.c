/* test-elementwise-math.c: the rounding, logarithm, trigonometric and other math ops torch
 * programs call (ceil ... erf, fmod, atan2, the logical ops, lerp, pow_) against torch 1.13's
 * own values, captured as constants: edge cases included (round half to even, signed zeros,
 * fmod's dividend sign, atan2's quadrants, infinities and NaN passing through), and their
 * dtype rules. The inputs and expected values were printed by torch 1.13 (tolist() of
 * torch.<op> on float64 and float32 tensors of the inputs below). */
#include "test-util.h"

typedef struct {
  const char *name;
  gs_tensor (*op)(gs_tensor);
  int n;
  double in[13], f64[13], f32[13];
} unary_row;

/* clang-format off */
static const unary_row unary_rows[] = {
    {"ceil", gs_ceil, 13,
     {-2.5, -1.5, -0.5, -0.0, 0.3, 0.5, 1.5, 2.5, 3.75, -7.25, NAN, INFINITY, -INFINITY},
     {-2.0, -1.0, -0.0, -0.0, 1.0, 1.0, 2.0, 3.0, 4.0, -7.0, NAN, INFINITY, -INFINITY},
     {-2.0, -1.0, -0.0, -0.0, 1.0, 1.0, 2.0, 3.0, 4.0, -7.0, NAN, INFINITY, -INFINITY}},
    {"round", gs_round, 13,
     {-2.5, -1.5, -0.5, -0.0, 0.3, 0.5, 1.5, 2.5, 3.75, -7.25, NAN, INFINITY, -INFINITY},
     {-2.0, -2.0, -0.0, -0.0, 0.0, 0.0, 2.0, 2.0, 4.0, -7.0, NAN, INFINITY, -INFINITY},
     {-2.0, -2.0, -0.0, -0.0, 0.0, 0.0, 2.0, 2.0, 4.0, -7.0, NAN, INFINITY, -INFINITY}},
    {"trunc", gs_trunc, 13,
     {-2.5, -1.5, -0.5, -0.0, 0.3, 0.5, 1.5, 2.5, 3.75, -7.25, NAN, INFINITY, -INFINITY},
     {-2.0, -1.0, -0.0, -0.0, 0.0, 0.0, 1.0, 2.0, 3.0, -7.0, NAN, INFINITY, -INFINITY},
     {-2.0, -1.0, -0.0, -0.0, 0.0, 0.0, 1.0, 2.0, 3.0, -7.0, NAN, INFINITY, -INFINITY}},
    {"frac", gs_frac, 11,
     {-2.5, -1.5, -0.5, -0.0, 0.3, 0.5, 1.5, 2.5, 3.75, -7.25, NAN},
     {-0.5, -0.5, -0.5, 0.0, 0.3, 0.5, 0.5, 0.5, 0.75, -0.25, NAN},
     {-0.5, -0.5, -0.5, 0.0, 0.30000001192092896, 0.5, 0.5, 0.5, 0.75, -0.25, NAN}},
    {"sign", gs_sign, 13,
     {-2.5, -1.5, -0.5, -0.0, 0.3, 0.5, 1.5, 2.5, 3.75, -7.25, NAN, INFINITY, -INFINITY},
     {-1.0, -1.0, -1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, -1.0, 0.0, 1.0, -1.0},
     {-1.0, -1.0, -1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, -1.0, 0.0, 1.0, -1.0}},
    {"reciprocal", gs_reciprocal, 8,
     {-4.0, -0.5, 0.0, -0.0, 0.25, 3.0, INFINITY, NAN},
     {-0.25, -2.0, INFINITY, -INFINITY, 4.0, 0.3333333333333333, 0.0, NAN},
     {-0.25, -2.0, INFINITY, -INFINITY, 4.0, 0.3333333432674408, 0.0, NAN}},
    {"square", gs_square, 6,
     {-3.0, -0.5, 0.0, 1.5, 1e+200, NAN},
     {9.0, 0.25, 0.0, 2.25, INFINITY, NAN},
     {9.0, 0.25, 0.0, 2.25, INFINITY, NAN}},
    {"log1p", gs_log1p, 9,
     {-1.0, -0.5, 0.0, 1e-10, 0.25, 1.0, 10.0, INFINITY, NAN},
     {-INFINITY, -0.6931471805599453, 0.0, 9.999999999500001e-11, 0.22314355131420976, 0.6931471805599453, 2.3978952727983707, INFINITY, NAN},
     {-INFINITY, -0.6931471824645996, 0.0, 1.000000013351432e-10, 0.2231435477733612, 0.6931471824645996, 2.397895336151123, INFINITY, NAN}},
    {"expm1", gs_expm1, 8,
     {-INFINITY, -1.0, -1e-10, 0.0, 1e-10, 0.5, 3.0, NAN},
     {-1.0, -0.6321205588285577, -9.999999999500001e-11, 0.0, 1.00000000005e-10, 0.6487212707001282, 19.085536923187668, NAN},
     {-1.0, -0.6321205496788025, -1.000000013351432e-10, 0.0, 1.000000013351432e-10, 0.6487212777137756, 19.08553695678711, NAN}},
    {"log2", gs_log2, 9,
     {0.0, 0.125, 1.0, 2.0, 100.0, 0.001, INFINITY, -1.0, NAN},
     {-INFINITY, -3.0, 0.0, 1.0, 6.643856189774724, -9.965784284662087, INFINITY, NAN, NAN},
     {-INFINITY, -3.0, 0.0, 1.0, 6.643856048583984, -9.965784072875977, INFINITY, NAN, NAN}},
    {"log10", gs_log10, 9,
     {0.0, 0.125, 1.0, 2.0, 100.0, 0.001, INFINITY, -1.0, NAN},
     {-INFINITY, -0.9030899869919435, 0.0, 0.3010299956639812, 2.0, -3.0, INFINITY, NAN, NAN},
     {-INFINITY, -0.9030900001525879, 0.0, 0.3010300099849701, 2.0, -3.0, INFINITY, NAN, NAN}},
    {"asin", gs_asin, 9,
     {-1.0, -0.75, -0.2, 0.0, 0.4, 0.9, 1.0, 1.5, NAN},
     {-1.5707963267948966, -0.848062078981481, -0.2013579207903308, 0.0, 0.41151684606748806, 1.1197695149986342, 1.5707963267948966, NAN, NAN},
     {-1.5707963705062866, -0.8480620980262756, -0.20135793089866638, 0.0, 0.41151684522628784, 1.1197694540023804, 1.5707963705062866, NAN, NAN}},
    {"acos", gs_acos, 9,
     {-1.0, -0.75, -0.2, 0.0, 0.4, 0.9, 1.0, 1.5, NAN},
     {3.141592653589793, 2.4188584057763776, 1.7721542475852274, 1.5707963267948966, 1.1592794807274085, 0.45102681179626236, 0.0, NAN, NAN},
     {3.1415927410125732, 2.418858289718628, 1.7721542119979858, 1.5707963705062866, 1.159279465675354, 0.4510268568992615, 0.0, NAN, NAN}},
    {"atan", gs_atan, 8,
     {-3.0, -1.0, -0.0, 0.5, 2.0, INFINITY, -INFINITY, NAN},
     {-1.2490457723982544, -0.7853981633974483, -0.0, 0.4636476090008061, 1.1071487177940904, 1.5707963267948966, -1.5707963267948966, NAN},
     {-1.249045729637146, -0.7853981256484985, -0.0, 0.46364760398864746, 1.1071487665176392, 1.5707963705062866, -1.5707963705062866, NAN}},
    {"sinh", gs_sinh, 8,
     {-3.0, -1.0, -0.0, 0.5, 2.0, INFINITY, -INFINITY, NAN},
     {-10.017874927409903, -1.1752011936438014, -0.0, 0.5210953054937474, 3.6268604078470186, INFINITY, -INFINITY, NAN},
     {-10.017874717712402, -1.175201177597046, -0.0, 0.5210952758789062, 3.6268603801727295, INFINITY, -INFINITY, NAN}},
    {"cosh", gs_cosh, 8,
     {-3.0, -1.0, -0.0, 0.5, 2.0, INFINITY, -INFINITY, NAN},
     {10.067661995777765, 1.5430806348152437, 1.0, 1.1276259652063807, 3.7621956910836314, INFINITY, INFINITY, NAN},
     {10.067662239074707, 1.5430805683135986, 1.0, 1.1276259422302246, 3.7621958255767822, INFINITY, INFINITY, NAN}},
    {"erf", gs_erf, 10,
     {-INFINITY, -2.0, -0.5, 0.0, 0.1, 0.5, 1.0, 3.0, INFINITY, NAN},
     {-1.0, -0.9953222650189527, -0.5204998778130465, 0.0, 0.1124629160182849, 0.5204998778130465, 0.8427007929497149, 0.9999779095030014, 1.0, NAN},
     {-1.0, -0.9953222870826721, -0.5204998850822449, 0.0, 0.11246291548013687, 0.5204998850822449, 0.8427007794380188, 0.9999778866767883, 1.0, NAN}},
};
/* clang-format on */

/* Values and signed zeros: -0 where torch gives -0 (round(-0.5), ceil(-0.5), ...). */
static void assert_values_and_zero_signs(gs_tensor r, int n, const double *expected, double tol) {
  test_assert_values(r, (int64_t[]){n}, 1, expected, tol, tol);
  double *got = test_values(r);
  for (int i = 0; i < n; i++)
    if (expected[i] == 0) {
      if (signbit(got[i]) != signbit(expected[i]))
        g_printerr("value %d: got %g, expected %g\n", i, got[i], expected[i]);
      g_assert_true(signbit(got[i]) == signbit(expected[i]));
    }
  g_free(got);
}

static void test_unary_against_torch(void) {
  for (size_t k = 0; k < G_N_ELEMENTS(unary_rows); k++) {
    const unary_row *c = &unary_rows[k];
    for (int d = GS_F32; d <= GS_F64; d++) {
      test_set_context("%s %s", c->name, gs_dtype_name((gs_dtype)d));
      gs_tensor t64 = gs_from_data(GS_F64, (int64_t[]){c->n}, 1, c->in);
      gs_tensor t = gs_to_dtype(t64, (gs_dtype)d);
      gs_tensor r = c->op(t);
      g_assert_cmpint(gs_dtype_of(r), ==, d);
      /* f32: torch's f32 results, to a few ulps (libm's float functions differ in the last) */
      assert_values_and_zero_signs(r, c->n, d == GS_F64 ? c->f64 : c->f32,
                                   d == GS_F64 ? 1e-15 : 4e-7);
      gs_dispose(r), gs_dispose(t), gs_dispose(t64);
    }
  }
}

/* Integers: ceil, round, trunc and sign keep them (sign: -1, 0, 1), square stays integral,
 * the math ops compute in f32 (torch's default dtype); bool: sign keeps it. */
static void test_integer_inputs(void) {
  gs_tensor i = gs_from_data(GS_I64, (int64_t[]){4}, 1, (int64_t[]){-3, 0, 2, 5});
  gs_tensor (*const keep[])(gs_tensor) = {gs_ceil, gs_round, gs_trunc};
  for (size_t k = 0; k < G_N_ELEMENTS(keep); k++) {
    gs_tensor r = keep[k](i);
    g_assert_cmpint(gs_dtype_of(r), ==, GS_I64);
    test_assert_values(r, (int64_t[]){4}, 1, (double[]){-3, 0, 2, 5}, 0, 0);
    gs_dispose(r);
  }
  gs_tensor s = gs_sign(i), sq = gs_square(i), rec = gs_reciprocal(i), l1 = gs_log1p(i);
  g_assert_cmpint(gs_dtype_of(s), ==, GS_I64);
  test_assert_values(s, (int64_t[]){4}, 1, (double[]){-1, 0, 1, 1}, 0, 0);
  g_assert_cmpint(gs_dtype_of(sq), ==, GS_I64);
  test_assert_values(sq, (int64_t[]){4}, 1, (double[]){9, 0, 4, 25}, 0, 0);
  g_assert_cmpint(gs_dtype_of(rec), ==, GS_F32);
  test_assert_values(rec, (int64_t[]){4}, 1, (double[]){-1.0f / 3, INFINITY, 0.5, 0.2f}, 0, 0);
  g_assert_cmpint(gs_dtype_of(l1), ==, GS_F32);
  test_assert_values(l1, (int64_t[]){4}, 1, (double[]){NAN, 0, log1pf(2), log1pf(5)}, 0, 0);
  gs_tensor i32 = gs_to_dtype(i, GS_I32), s32 = gs_sign(i32), sq32 = gs_square(i32);
  g_assert_cmpint(gs_dtype_of(s32), ==, GS_I32);
  test_assert_values(s32, (int64_t[]){4}, 1, (double[]){-1, 0, 1, 1}, 0, 0);
  test_assert_values(sq32, (int64_t[]){4}, 1, (double[]){9, 0, 4, 25}, 0, 0);
  gs_tensor b = gs_gt_scalar(i, 0), sb = gs_sign(b);
  g_assert_cmpint(gs_dtype_of(sb), ==, GS_BOOL);
  test_assert_values(sb, (int64_t[]){4}, 1, (double[]){0, 0, 1, 1}, 0, 0);
  EXPECT_ERROR(gs_frac(b), "frac: bool tensors are not supported");
  EXPECT_ERROR(gs_frac(i), "frac: i64 tensors are not supported");
  EXPECT_ERROR(gs_round_decimals(i, 1), "round_decimals: i64 tensors are not supported");
  gs_dispose(s), gs_dispose(sq), gs_dispose(rec), gs_dispose(l1), gs_dispose(i32);
  gs_dispose(s32), gs_dispose(sq32), gs_dispose(b), gs_dispose(sb), gs_dispose(i);
}

static void check_round_decimals(int decimals, int n, const double *in, const double *f64,
                                 const double *f32) {
  for (int d = GS_F32; d <= GS_F64; d++) {
    test_set_context("round decimals=%d %s", decimals, gs_dtype_name((gs_dtype)d));
    gs_tensor t64 = gs_from_data(GS_F64, (int64_t[]){n}, 1, in);
    gs_tensor t = gs_to_dtype(t64, (gs_dtype)d), r = gs_round_decimals(t, decimals);
    assert_values_and_zero_signs(r, n, d == GS_F64 ? f64 : f32, 0);
    gs_dispose(r), gs_dispose(t), gs_dispose(t64);
  }
}

static void test_round_decimals(void) {
  check_round_decimals(
      2, 6, (double[]){1.2345, -2.675, 1234.5, 0.125, -0.005, NAN},
      (double[]){1.23, -2.68, 1234.5, 0.12, -0.0, NAN},
      (double[]){1.2300000190734863, -2.680000066757202, 1234.5, 0.11999999731779099, -0.0, NAN});
  check_round_decimals(-2, 5, (double[]){1234.5, 1250.0, -1350.0, 49.9, NAN},
                       (double[]){1200.0, 1200.0, -1400.0, 0.0, NAN},
                       (double[]){1200.0, 1200.0, -1400.0, 0.0, NAN});
  check_round_decimals(1, 4, (double[]){0.25, 0.35, -0.05, 2.0}, (double[]){0.2, 0.4, -0.0, 2.0},
                       (double[]){0.20000000298023224, 0.4000000059604645, -0.0, 2.0});
  gs_tensor t = gs_from_data(GS_F64, (int64_t[]){2}, 1, (double[]){2.5, -0.5});
  gs_tensor r = gs_round_decimals(t, 0); /* plain round */
  assert_values_and_zero_signs(r, 2, (double[]){2, -0.0}, 0);
  EXPECT_ERROR(gs_round_decimals(t, 400), "expected decimals in [-308, 308], got 400");
  gs_dispose(r), gs_dispose(t);
}

/* fmod keeps the dividend's sign (fmod(-7, 3) = -1); atan2's quadrants and zeros. */
static const double bin_a[12] = {-7.0, 7.0,  -7.0, 7.0, -7.5,     5.5,
                                 0.0,  -0.0, 1.0,  NAN, INFINITY, 3.0};
static const double bin_b[12] = {3.0,  -3.0, -3.0, 3.0, 2.0, -1.5,
                                 -1.0, 1.0,  0.0,  1.0, 2.0, INFINITY};
static const double fmod_f64[12] = {-1.0, 1.0, -1.0, 1.0, -1.5, 1.0, 0.0, -0.0, NAN, NAN, NAN, 3.0};
static const double fmod_f32[12] = {-1.0, 1.0, -1.0, 1.0, -1.5, 1.0, 0.0, -0.0, NAN, NAN, NAN, 3.0};
static const double atan2_f64[12] = {-1.1659045405098132, 1.97568811307998,
                                     -1.97568811307998,   1.1659045405098132,
                                     -1.3101939350475555, 1.837048375945822,
                                     3.141592653589793,   -0.0,
                                     1.5707963267948966,  NAN,
                                     1.5707963267948966,  0.0};
static const double atan2_f32[12] = {-1.1659045219421387, 1.975688099861145,
                                     -1.975688099861145,  1.1659045219421387,
                                     -1.3101938962936401, 1.8370484113693237,
                                     3.1415927410125732,  -0.0,
                                     1.5707963705062866,  NAN,
                                     1.5707963705062866,  0.0};

static void check_binary(gs_tensor (*op)(gs_tensor, gs_tensor), const char *name, const double *f64,
                         const double *f32) {
  for (int d = GS_F32; d <= GS_F64; d++) {
    test_set_context("%s %s", name, gs_dtype_name((gs_dtype)d));
    gs_tensor a64 = gs_from_data(GS_F64, (int64_t[]){12}, 1, bin_a);
    gs_tensor b64 = gs_from_data(GS_F64, (int64_t[]){12}, 1, bin_b);
    gs_tensor a = gs_to_dtype(a64, (gs_dtype)d), b = gs_to_dtype(b64, (gs_dtype)d);
    gs_tensor r = op(a, b);
    g_assert_cmpint(gs_dtype_of(r), ==, d);
    assert_values_and_zero_signs(r, 12, d == GS_F64 ? f64 : f32, d == GS_F64 ? 1e-15 : 2e-7);
    gs_dispose(r), gs_dispose(a), gs_dispose(b), gs_dispose(a64), gs_dispose(b64);
  }
}

static void test_fmod_and_atan2(void) {
  check_binary(gs_fmod, "fmod", fmod_f64, fmod_f32);
  check_binary(gs_atan2, "atan2", atan2_f64, atan2_f32);
  /* Integers: fmod stays integral (torch: [-1, 1, -1, 0, -1]), atan2 computes in f32. */
  gs_tensor a = gs_from_data(GS_I64, (int64_t[]){5}, 1, (int64_t[]){-7, 7, -7, 5, -9});
  gs_tensor b = gs_from_data(GS_I64, (int64_t[]){5}, 1, (int64_t[]){3, -3, -3, -1, 4});
  gs_tensor r = gs_fmod(a, b), at = gs_atan2(a, b);
  g_assert_cmpint(gs_dtype_of(r), ==, GS_I64);
  test_assert_values(r, (int64_t[]){5}, 1, (double[]){-1, 1, -1, 0, -1}, 0, 0);
  g_assert_cmpint(gs_dtype_of(at), ==, GS_F32);
  gs_tensor zero = gs_zeros_like(b);
  EXPECT_ERROR(gs_fmod(a, zero), "fmod: integer division by zero (divisor 0)");
  /* atan2(0, -1) = pi, atan2(-0, -1) = -pi, atan2(1, 0) = pi/2 (torch's float64 values) */
  gs_tensor y = gs_from_data(GS_F64, (int64_t[]){8}, 1,
                             (double[]){0.0, 0.0, -0.0, 1.0, -1.0, 0.0, 3.0, -2.0});
  gs_tensor x = gs_from_data(GS_F64, (int64_t[]){8}, 1,
                             (double[]){-1.0, 1.0, -1.0, 0.0, 0.0, 0.0, -4.0, -2.0});
  gs_tensor q = gs_atan2(y, x);
  test_assert_values(q, (int64_t[]){8}, 1,
                     (double[]){3.141592653589793, 0.0, -3.141592653589793, 1.5707963267948966,
                                -1.5707963267948966, 0.0, 2.498091544796509, -2.356194490192345},
                     1e-15, 1e-15);
  gs_dispose(a), gs_dispose(b), gs_dispose(r), gs_dispose(at), gs_dispose(zero);
  gs_dispose(y), gs_dispose(x), gs_dispose(q);
}

/* logical_and/or/xor: any dtypes, mixed too, non-zero and NaN true, bool results. */
static void test_logical_ops(void) {
  gs_tensor a = gs_from_data(GS_I64, (int64_t[]){4}, 1, (int64_t[]){0, 2, 0, -1});
  gs_tensor b = gs_from_data(GS_F32, (int64_t[]){4}, 1, (float[]){0.0f, 0.5f, NAN, 0.0f});
  gs_tensor r_and = gs_logical_and(a, b), r_or = gs_logical_or(a, b), r_xor = gs_logical_xor(a, b);
  g_assert_cmpint(gs_dtype_of(r_and), ==, GS_BOOL);
  test_assert_values(r_and, (int64_t[]){4}, 1, (double[]){0, 1, 0, 0}, 0, 0);
  test_assert_values(r_or, (int64_t[]){4}, 1, (double[]){0, 1, 1, 1}, 0, 0);
  test_assert_values(r_xor, (int64_t[]){4}, 1, (double[]){0, 0, 1, 1}, 0, 0);
  gs_tensor bools = gs_gt_scalar(a, 0),
            row = gs_from_data(GS_I32, (int64_t[]){1}, 1, (int32_t[]){3});
  gs_tensor r = gs_logical_xor(bools, row); /* broadcast [4] and [1] */
  test_assert_values(r, (int64_t[]){4}, 1, (double[]){1, 0, 1, 1}, 0, 0);
  gs_tensor x = gs_ones(GS_F64, (int64_t[]){2}, 1);
  gs_set_requires_grad(x, true);
  gs_tensor rg = gs_logical_and(x, x);
  g_assert_false(gs_requires_grad(rg)); /* no gradient: bool */
  gs_dispose(a), gs_dispose(b), gs_dispose(r_and), gs_dispose(r_or), gs_dispose(r_xor);
  gs_dispose(bools), gs_dispose(row), gs_dispose(r), gs_dispose(x), gs_dispose(rg);
}

/* lerp(1, 3, w) = 1 + 2w; torch: lerp([1], [3], [0.25]) = [1.5]. */
static void test_lerp(void) {
  gs_tensor s = gs_from_data(GS_F64, (int64_t[]){2}, 1, (double[]){1, -2});
  gs_tensor e = gs_from_data(GS_F64, (int64_t[]){2}, 1, (double[]){3, 2});
  gs_tensor w = gs_from_data(GS_F64, (int64_t[]){2, 1}, 2, (double[]){0.25, 0.75});
  gs_tensor r = gs_lerp(s, e, w), rs = gs_lerp_scalar(s, e, 0.5);
  test_assert_values(r, (int64_t[]){2, 2}, 2, (double[]){1.5, -1, 2.5, 1}, 0, 0);
  test_assert_values(rs, (int64_t[]){2}, 1, (double[]){2, 0}, 0, 0);
  gs_tensor i = gs_to_dtype(s, GS_I64), f = gs_to_dtype(e, GS_F32);
  EXPECT_ERROR(gs_lerp_scalar(i, i, 0.5), "expected start and end of one floating dtype, got i64");
  EXPECT_ERROR(gs_lerp(s, f, w), "expected start and end of one floating dtype, got f64 and f32");
  EXPECT_ERROR(gs_lerp(f, f, w), "expected a weight of start's dtype f32, got f64");
  gs_dispose(s), gs_dispose(e), gs_dispose(w), gs_dispose(r), gs_dispose(rs), gs_dispose(i);
  gs_dispose(f);
}

/* pow_ writes t ^ b through t, keeping t's dtype; integers refuse negative exponents. */
static void test_pow_inplace(void) {
  gs_tensor t = gs_from_data(GS_F64, (int64_t[]){3}, 1, (double[]){2, 9, -2});
  gs_tensor e = gs_from_data(GS_F64, (int64_t[]){3}, 1, (double[]){3, 0.5, 2});
  gs_pow_(t, e);
  test_assert_values(t, (int64_t[]){3}, 1, (double[]){8, 3, 4}, 0, 0);
  gs_tensor i = gs_from_data(GS_I64, (int64_t[]){2}, 1, (int64_t[]){3, -2});
  gs_tensor ie = gs_from_data(GS_I64, (int64_t[]){1}, 1, (int64_t[]){3});
  gs_pow_(i, ie);
  test_assert_values(i, (int64_t[]){2}, 1, (double[]){27, -8}, 0, 0);
  gs_tensor neg = gs_neg(ie);
  EXPECT_ERROR(gs_pow_(i, neg), "pow_: integers to negative integer powers are not allowed");
  EXPECT_ERROR(gs_pow_(i, e), "pow_");
  gs_dispose(t), gs_dispose(e), gs_dispose(i), gs_dispose(ie), gs_dispose(neg);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/elementwise-math/unary-against-torch", test_unary_against_torch);
  g_test_add_func("/elementwise-math/integer-inputs", test_integer_inputs);
  g_test_add_func("/elementwise-math/round-decimals", test_round_decimals);
  g_test_add_func("/elementwise-math/fmod-and-atan2", test_fmod_and_atan2);
  g_test_add_func("/elementwise-math/logical-ops", test_logical_ops);
  g_test_add_func("/elementwise-math/lerp", test_lerp);
  g_test_add_func("/elementwise-math/pow-inplace", test_pow_inplace);
  return g_test_run();
}
