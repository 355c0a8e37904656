/* test-elementwise.c: the out-of-place elementwise ops against plain loops over every operand
 * layout (contiguous, transposed, sliced, broadcast) and dtype, PyTorch's broadcasting and
 * type promotion, NaN and integer-overflow behaviour, and the errors bad operands give. */
#include "test-util.h"

typedef gs_tensor (*binary_fn)(gs_tensor, gs_tensor);
typedef double (*binary_ref)(double, double);

static double ref_add(double a, double b) { return a + b; }
static double ref_sub(double a, double b) { return a - b; }
static double ref_mul(double a, double b) { return a * b; }
static double ref_div(double a, double b) { return a / b; }
static double ref_pow(double a, double b) { return pow(a, b); }
static double ref_max(double a, double b) { return a > b ? a : b; }
static double ref_min(double a, double b) { return a < b ? a : b; }
static double ref_eq(double a, double b) { return a == b; }
static double ref_ne(double a, double b) { return a != b; }
static double ref_lt(double a, double b) { return a < b; }
static double ref_le(double a, double b) { return a <= b; }
static double ref_gt(double a, double b) { return a > b; }
static double ref_ge(double a, double b) { return a >= b; }

typedef struct binary_case {
  const char *name;
  binary_fn fn;
  binary_ref ref;
  double lo_b, hi_b; /* b's range (a's is [-4, 4)); keeps div and pow well defined */
  bool comparison;
} binary_case;

static const binary_case binary_cases[] = {
    {"add", gs_add, ref_add, -4, 4, false},     {"sub", gs_sub, ref_sub, -4, 4, false},
    {"mul", gs_mul, ref_mul, -4, 4, false},     {"div", gs_div, ref_div, 1, 4, false},
    {"pow", gs_pow, ref_pow, 0, 3, false},      {"maximum", gs_maximum, ref_max, -4, 4, false},
    {"minimum", gs_minimum, ref_min, -4, 4, false}, {"eq", gs_eq, ref_eq, -4, 4, true},
    {"ne", gs_ne, ref_ne, -4, 4, true},         {"lt", gs_lt, ref_lt, -4, 4, true},
    {"le", gs_le, ref_le, -4, 4, true},         {"gt", gs_gt, ref_gt, -4, 4, true},
    {"ge", gs_ge, ref_ge, -4, 4, true},
};

/* a op b computed by broadcasting the operands' values in plain loops. */
static double *reference_binary(binary_ref ref, gs_tensor a, gs_tensor b, const int64_t *out,
                                int nout, gs_dtype compute) {
  int64_t sa[GS_MAX_DIMS], sb[GS_MAX_DIMS], index[GS_MAX_DIMS];
  int na = gs_shape(a, sa), nb = gs_shape(b, sb);
  double *va = test_values(a), *vb = test_values(b);
  int64_t n = test_numel(out, nout);
  double *expected = g_new(double, n);
  for (int64_t i = 0; i < n; i++) {
    test_unravel(i, out, nout, index);
    double x = va[test_ravel_broadcast(index, nout, sa, na)];
    double y = vb[test_ravel_broadcast(index, nout, sb, nb)];
    if (compute == GS_F32) /* operands are f32 values; the op's f32 result rounds once */
      expected[i] = (float)ref(x, y);
    else
      expected[i] = ref(x, y);
  }
  g_free(va), g_free(vb);
  return expected;
}

typedef struct shape_pair {
  int64_t a[3], b[3];
  int na, nb;
  int64_t out[3];
  int nout;
} shape_pair;

static const shape_pair shape_pairs[] = {
    {{2, 3, 4}, {2, 3, 4}, 3, 3, {2, 3, 4}, 3}, /* same shape */
    {{2, 3, 4}, {3, 1}, 3, 2, {2, 3, 4}, 3},    /* trailing broadcast */
    {{3, 1}, {2, 1, 5}, 2, 3, {2, 3, 5}, 3},    /* both sides broadcast */
    {{4, 5}, {0}, 2, 0, {4, 5}, 2},             /* 0-dim operand */
};

static void test_binary_ops_all_layouts(void) {
  const gs_dtype dtypes[] = {GS_F32, GS_F64, GS_I64};
  gs_rng rng;
  gs_rng_seed(&rng, 7);
  for (size_t c = 0; c < G_N_ELEMENTS(binary_cases); c++) {
    const binary_case *bc = &binary_cases[c];
    for (size_t d = 0; d < G_N_ELEMENTS(dtypes); d++) {
      gs_dtype dt = dtypes[d];
      gs_dtype compute = bc->fn == gs_div && dt == GS_I64 ? GS_F32 : dt;
      gs_dtype result = bc->comparison ? GS_BOOL : compute;
      for (size_t s = 0; s < G_N_ELEMENTS(shape_pairs); s++) {
        const shape_pair *sp = &shape_pairs[s];
        for (int la = 0; la < LAYOUT_COUNT; la++) {
          for (int lb = 0; lb < LAYOUT_COUNT; lb++) {
            if (sp->nb == 0 && lb != LAYOUT_CONTIGUOUS)
              continue;
            g_test_message("%s %s shapes #%zu layouts %s, %s", bc->name, gs_dtype_name(dt), s,
                           test_layout_name(la), test_layout_name(lb));
            gs_tensor a = test_make(dt, sp->a, sp->na, la, -4, 4, &rng);
            gs_tensor b = test_make(dt, sp->b, sp->nb, lb, bc->lo_b, bc->hi_b, &rng);
            gs_tensor out = bc->fn(a, b);
            g_assert_cmpint(gs_dtype_of(out), ==, result);
            double *expected = reference_binary(bc->ref, a, b, sp->out, sp->nout, compute);
            double tol = compute == GS_F32 ? 1e-6 : compute == GS_F64 ? 1e-12 : 0;
            test_assert_values(out, sp->out, sp->nout, expected, tol, tol);
            g_free(expected);
            gs_dispose(a), gs_dispose(b), gs_dispose(out);
          }
        }
      }
    }
  }
}

typedef gs_tensor (*unary_fn)(gs_tensor);
static gs_tensor leaky_relu_01(gs_tensor t) { return gs_leaky_relu(t, 0.1); }
static gs_tensor clamp_half(gs_tensor t) { return gs_clamp(t, -0.5, 0.5); }
static double ref_neg(double x) { return -x; }
static double ref_relu(double x) { return x > 0 ? x : 0; }
static double ref_leaky(double x) { return x > 0 ? x : 0.1 * x; }
static double ref_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double ref_rsqrt(double x) { return 1 / sqrt(x); }
static double ref_gelu(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }
static double ref_clamp(double x) { return x < -0.5 ? -0.5 : x > 0.5 ? 0.5 : x; }

static const struct {
  const char *name;
  unary_fn fn;
  double (*ref)(double);
  double lo, hi;
} unary_cases[] = {
    {"neg", gs_neg, ref_neg, -3, 3},          {"abs", gs_abs, fabs, -3, 3},
    {"exp", gs_exp, exp, -3, 3},              {"log", gs_log, log, 0.1, 3},
    {"sqrt", gs_sqrt, sqrt, 0, 3},            {"rsqrt", gs_rsqrt, ref_rsqrt, 0.1, 3},
    {"tanh", gs_tanh, tanh, -3, 3},           {"sigmoid", gs_sigmoid, ref_sigmoid, -3, 3},
    {"relu", gs_relu, ref_relu, -3, 3},       {"leaky_relu", leaky_relu_01, ref_leaky, -3, 3},
    {"gelu", gs_gelu, ref_gelu, -3, 3},       {"clamp", clamp_half, ref_clamp, -1, 1},
};

static void test_unary_ops_all_layouts(void) {
  const int64_t shape[] = {3, 5};
  gs_rng rng;
  gs_rng_seed(&rng, 11);
  for (size_t c = 0; c < G_N_ELEMENTS(unary_cases); c++) {
    for (int dt = GS_F32; dt <= GS_F64; dt++) {
      for (int layout = 0; layout < LAYOUT_COUNT; layout++) {
        g_test_message("%s %s %s", unary_cases[c].name, gs_dtype_name(dt),
                       test_layout_name(layout));
        gs_tensor t = test_make(dt, shape, 2, layout, unary_cases[c].lo, unary_cases[c].hi,
                                &rng);
        gs_tensor out = unary_cases[c].fn(t);
        g_assert_cmpint(gs_dtype_of(out), ==, dt);
        double *in = test_values(t), expected[15];
        for (int i = 0; i < 15; i++)
          expected[i] = unary_cases[c].ref(in[i]);
        double tol = dt == GS_F32 ? 2e-6 : 1e-12;
        test_assert_values(out, shape, 2, expected, tol, tol);
        g_free(in);
        gs_dispose(t), gs_dispose(out);
      }
    }
  }
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

static void test_type_promotion(void) {
  gs_tensor f32 = gs_ones(GS_F32, (int64_t[]){2}, 1), f64 = gs_ones(GS_F64, (int64_t[]){2}, 1);
  gs_tensor i64 = gs_ones(GS_I64, (int64_t[]){2}, 1), b = gs_ones(GS_BOOL, (int64_t[]){2}, 1);
  gs_tensor f64_0d = gs_scalar(GS_F64, 2), i64_0d = gs_scalar(GS_I64, 2);
  struct {
    gs_tensor x, y;
    gs_dtype expected;
  } cases[] = {
      {f32, f64, GS_F64}, {i64, f32, GS_F32}, {b, i64, GS_I64},    {b, b, GS_BOOL},
      {f32, f64_0d, GS_F32}, /* a 0-dim operand of the same category does not widen */
      {i64, f64_0d, GS_F64}, /* ... but a higher category decides */
      {b, i64_0d, GS_I64},   {f64_0d, i64_0d, GS_F64},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    gs_tensor r = gs_mul(cases[i].x, cases[i].y);
    g_assert_cmpint(gs_dtype_of(r), ==, cases[i].expected);
    gs_dispose(r);
  }
  gs_tensor s1 = gs_add_scalar(i64, 0.5), s2 = gs_add_scalar(f64, 0.5);
  gs_tensor s3 = gs_add_scalar(b, 1), d = gs_div(i64, i64), bb = gs_add(b, b);
  g_assert_cmpint(gs_dtype_of(s1), ==, GS_F32);
  test_assert_values(s1, (int64_t[]){2}, 1, (double[]){1.5, 1.5}, 0, 0);
  g_assert_cmpint(gs_dtype_of(s2), ==, GS_F64);
  g_assert_cmpint(gs_dtype_of(s3), ==, GS_F32);
  g_assert_cmpint(gs_dtype_of(d), ==, GS_F32); /* true division */
  test_assert_values(bb, (int64_t[]){2}, 1, (double[]){1, 1}, 0, 0); /* bool + is or */
  gs_tensor r = gs_rsub_scalar(f32, 5);
  test_assert_values(r, (int64_t[]){2}, 1, (double[]){4, 4}, 0, 0);
  gs_tensor handles[] = {f32, f64, i64, b, f64_0d, i64_0d, s1, s2, s3, d, bb, r};
  for (size_t i = 0; i < G_N_ELEMENTS(handles); i++)
    gs_dispose(handles[i]);
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
  gs_tensor handles[] = {x, y, mx, mn, r, big, one, wrapped};
  for (size_t i = 0; i < G_N_ELEMENTS(handles); i++)
    gs_dispose(handles[i]);
}

static void test_where(void) {
  gs_tensor cond = gs_from_data(GS_BOOL, (int64_t[]){2, 1}, 2, (bool[]){true, false});
  gs_tensor a = gs_arange(0, 3, 1, GS_I64);
  gs_tensor b = gs_scalar(GS_F32, -1);
  gs_tensor w = gs_where(cond, a, b); /* [2,1], [3], [] -> [2, 3], promoted to f32 */
  g_assert_cmpint(gs_dtype_of(w), ==, GS_F32);
  test_assert_values(w, (int64_t[]){2, 3}, 2, (double[]){0, 1, 2, -1, -1, -1}, 0, 0);
  EXPECT_ERROR(gs_where(a, a, b), "expected a bool condition, got i64");
  gs_dispose(cond), gs_dispose(a), gs_dispose(b), gs_dispose(w);
}

static void test_operand_errors(void) {
  gs_tensor a = gs_ones(GS_F32, (int64_t[]){2, 3}, 2), b = gs_ones(GS_F32, (int64_t[]){4}, 1);
  uint64_t live = gs_live_tensor_count();
  EXPECT_ERROR(gs_add(a, b), "add: shapes [2, 3] and [4] cannot be broadcast together "
                             "(dim 1: 3 vs 4)");
  g_assert_cmpint(gs_last_error_code(), ==, GS_ERR_SHAPE);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live); /* a failed call creates nothing */
  gs_tensor bools = gs_ones(GS_BOOL, (int64_t[]){2}, 1);
  EXPECT_ERROR(gs_sub(bools, bools), "bool tensors are not supported");
  gs_tensor ints = gs_ones(GS_I64, (int64_t[]){2}, 1);
  gs_tensor negs = gs_full(GS_I64, (int64_t[]){2}, 1, -1);
  EXPECT_ERROR(gs_pow(ints, negs), "negative integer powers");
  EXPECT_ERROR(gs_clamp(a, 1, 0), "expected min <= max");
  EXPECT_ERROR(gs_mul(a, GS_NO_TENSOR), "empty handle");
  g_assert_cmpuint(gs_live_tensor_count(), ==, live + 3);
  gs_dispose(a), gs_dispose(b), gs_dispose(bools), gs_dispose(ints), gs_dispose(negs);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/elementwise/binary-ops-all-layouts", test_binary_ops_all_layouts);
  g_test_add_func("/elementwise/unary-ops-all-layouts", test_unary_ops_all_layouts);
  g_test_add_func("/elementwise/integer-unary-ops", test_integer_unary_ops);
  g_test_add_func("/elementwise/type-promotion", test_type_promotion);
  g_test_add_func("/elementwise/nan-and-integer-overflow", test_nan_and_integer_overflow);
  g_test_add_func("/elementwise/where", test_where);
  g_test_add_func("/elementwise/operand-errors", test_operand_errors);
  return g_test_run();
}
