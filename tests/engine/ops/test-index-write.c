/* test-index-write.c: scatter (both forms, every reduce), index_add, index_fill, take,
 * take_along_dim, prod, cumprod, median, cummax/cummin, unique, cross and trace from C, against
 * plain reference loops over every layout test_make produces, for floating and integer dtypes;
 * and their errors, which name what was expected and leave nothing allocated. */
#include "test-util.h"

static const gs_dtype dtypes[] = {GS_F32, GS_F64, GS_I64, GS_I32};

static gs_tensor i64_tensor(const int64_t *shape, int ndim, const int64_t *v) {
  return gs_from_data(GS_I64, shape, ndim, v);
}

/* scatter of src and of one value, and reduce add/multiply, against a loop over the index. */
static void test_scatter_against_loops(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 5);
  const int64_t st[2] = {3, 4}, si[2] = {2, 4};
  const int64_t rows[8] = {0, 1, 2, 0, 2, 0, 1, 1}; /* no position twice in a column */
  for (size_t di = 0; di < G_N_ELEMENTS(dtypes); di++)
    for (int lt = 0; lt < LAYOUT_COUNT; lt++)
      for (int mode = GS_SCATTER_REPLACE; mode <= GS_SCATTER_MULTIPLY; mode++) {
        gs_dtype dtype = dtypes[di];
        test_set_context("scatter %s %s mode %d", gs_dtype_name(dtype), test_layout_name(lt), mode);
        gs_tensor t = test_make(dtype, st, 2, lt, -5, 5, &rng);
        gs_tensor src = test_make(dtype, si, 2, (lt + 1) % LAYOUT_COUNT, -5, 5, &rng);
        gs_tensor index = i64_tensor(si, 2, rows);
        gs_tensor out = gs_scatter(t, 0, index, src, (gs_scatter_reduce)mode);
        gs_tensor vout = gs_scatter_value(t, 0, index, 2.0, (gs_scatter_reduce)mode);
        double *vt = test_values(t), *vs = test_values(src);
        double expected[12], expected_v[12];
        memcpy(expected, vt, sizeof expected), memcpy(expected_v, vt, sizeof expected_v);
        for (int i = 0; i < 8; i++) {
          int at = (int)rows[i] * 4 + i % 4;
          double s = vs[i];
          expected[at] = mode == GS_SCATTER_REPLACE ? s
                         : mode == GS_SCATTER_ADD   ? expected[at] + s
                                                    : expected[at] * s;
          expected_v[at] = mode == GS_SCATTER_REPLACE ? 2.0
                           : mode == GS_SCATTER_ADD   ? expected_v[at] + 2.0
                                                      : expected_v[at] * 2.0;
        }
        g_assert_cmpint(gs_dtype_of(out), ==, dtype);
        test_assert_values(out, st, 2, expected, 1e-6, 1e-6);
        test_assert_values(vout, st, 2, expected_v, 1e-6, 1e-6);
        g_free(vt), g_free(vs);
        DISPOSE_ALL(t, src, index, out, vout);
      }
}

/* index_add with alpha (i64 and i32 index, a repeated one), index_fill, take with negative
 * positions, take_along_dim with broadcasting. */
static void test_index_ops_against_loops(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 6);
  const int64_t st[2] = {3, 4}, ss[2] = {3, 3}, three = 3;
  const int64_t picks[3] = {2, 0, 2};
  const int32_t picks32[3] = {2, 0, 2};
  for (size_t di = 0; di < G_N_ELEMENTS(dtypes); di++)
    for (int lt = 0; lt < LAYOUT_COUNT; lt++) {
      gs_dtype dtype = dtypes[di];
      test_set_context("index ops %s %s", gs_dtype_name(dtype), test_layout_name(lt));
      gs_tensor t = test_make(dtype, st, 2, lt, -5, 5, &rng);
      gs_tensor src = test_make(dtype, ss, 2, LAYOUT_TRANSPOSED, -5, 5, &rng);
      gs_tensor index = i64_tensor(&three, 1, picks);
      gs_tensor index32 = gs_from_data(GS_I32, &three, 1, picks32);
      gs_tensor added = gs_index_add(t, 1, index, src, 2.0);
      gs_tensor added32 = gs_index_add(t, 1, index32, src, 2.0);
      gs_tensor filled = gs_index_fill(t, 1, index, -3.0);
      double *vt = test_values(t), *vs = test_values(src);
      double add[12], fill[12];
      memcpy(add, vt, sizeof add), memcpy(fill, vt, sizeof fill);
      for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++) {
          add[r * 4 + picks[k]] += 2.0 * vs[r * 3 + k];
          fill[r * 4 + picks[k]] = -3.0;
        }
      test_assert_values(added, st, 2, add, 1e-5, 1e-6);
      test_assert_values(added32, st, 2, add, 1e-5, 1e-6);
      test_assert_values(filled, st, 2, fill, 0, 0);

      const int64_t ts[2] = {2, 2}, tv[4] = {11, -1, 0, -12};
      gs_tensor positions = i64_tensor(ts, 2, tv);
      gs_tensor taken = gs_take(t, positions);
      double took[4] = {vt[11], vt[11], vt[0], vt[0]};
      test_assert_values(taken, ts, 2, took, 0, 0);

      const int64_t is[2] = {1, 2}, iv[2] = {3, 1};
      gs_tensor along_index = i64_tensor(is, 2, iv);
      gs_tensor along = gs_take_along_dim(t, along_index, 1, true);
      const int64_t as[2] = {3, 2};
      double picked[6];
      for (int r = 0; r < 3; r++)
        picked[r * 2] = vt[r * 4 + 3], picked[r * 2 + 1] = vt[r * 4 + 1];
      test_assert_values(along, as, 2, picked, 0, 0);
      g_free(vt), g_free(vs);
      DISPOSE_ALL(t, src, index, index32, added, added32, filled, positions, taken, along_index,
                  along);
    }
}

/* prod (all, a dim, keepdim) and cumprod: floating keeps its dtype, integers give i64. */
static void test_products_against_loops(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 7);
  const int64_t st[2] = {3, 4};
  for (size_t di = 0; di < G_N_ELEMENTS(dtypes); di++)
    for (int lt = 0; lt < LAYOUT_COUNT; lt++) {
      gs_dtype dtype = dtypes[di];
      test_set_context("products %s %s", gs_dtype_name(dtype), test_layout_name(lt));
      gs_tensor t = test_make(dtype, st, 2, lt, -3, 3, &rng);
      gs_tensor all = gs_prod_all(t), rows = gs_prod(t, 1, false), cols = gs_prod(t, 0, true);
      gs_tensor running = gs_cumprod(t, 1);
      gs_dtype want = dtype == GS_I32 ? GS_I64 : dtype;
      g_assert_cmpint(gs_dtype_of(all), ==, want);
      g_assert_cmpint(gs_dtype_of(running), ==, want);
      double *v = test_values(t);
      double p = 1, row[3] = {1, 1, 1}, col[4] = {1, 1, 1, 1}, run[12];
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++) {
          p *= v[r * 4 + c], row[r] *= v[r * 4 + c], col[c] *= v[r * 4 + c];
          run[r * 4 + c] = row[r];
        }
      test_assert_values(all, NULL, 0, &p, 1e-4, 1e-5);
      test_assert_values(rows, (int64_t[]){3}, 1, row, 1e-5, 1e-5);
      test_assert_values(cols, (int64_t[]){1, 4}, 2, col, 1e-5, 1e-5);
      test_assert_values(running, st, 2, run, 1e-5, 1e-5);
      g_free(v);
      DISPOSE_ALL(t, all, rows, cols, running);
    }
}

/* median (lower, NaN first), cummax/cummin (ties take the later index), unique. */
static void test_order_picks(void) {
  const int64_t s[2] = {2, 4};
  const double v[8] = {3, 1, 4, 2, 5, NAN, 0, 5};
  gs_tensor t = gs_from_data(GS_F64, s, 2, v);
  gs_tensor values = GS_NO_TENSOR, indices = GS_NO_TENSOR;
  g_assert_true(gs_median(t, 1, false, &values, &indices));
  test_assert_values(values, (int64_t[]){2}, 1, (double[]){2, NAN}, 0, 0);
  test_assert_values(indices, (int64_t[]){2}, 1, (double[]){3, 1}, 0, 0);
  gs_tensor head = gs_narrow(t, 0, 0, 1), m = gs_median_all(head);
  test_assert_values(m, NULL, 0, (double[]){2}, 0, 0);
  DISPOSE_ALL(values, indices, head, m);

  const int64_t n5 = 5;
  const int64_t w[5] = {1, 3, 3, 2, 5};
  gs_tensor ints = i64_tensor(&n5, 1, w);
  g_assert_true(gs_cummax(ints, 0, &values, &indices));
  test_assert_values(values, &n5, 1, (double[]){1, 3, 3, 3, 5}, 0, 0);
  test_assert_values(indices, &n5, 1, (double[]){0, 1, 2, 2, 4}, 0, 0);
  g_assert_cmpint(gs_dtype_of(values), ==, GS_I64);
  DISPOSE_ALL(values, indices);
  g_assert_true(gs_cummin(ints, 0, NULL, &indices));
  test_assert_values(indices, &n5, 1, (double[]){0, 0, 0, 0, 0}, 0, 0);
  gs_dispose(indices);

  gs_tensor inverse = GS_NO_TENSOR, counts = GS_NO_TENSOR;
  g_assert_true(gs_unique(ints, &values, &inverse, &counts));
  test_assert_values(values, (int64_t[]){4}, 1, (double[]){1, 2, 3, 5}, 0, 0);
  test_assert_values(inverse, &n5, 1, (double[]){0, 2, 2, 1, 3}, 0, 0);
  test_assert_values(counts, (int64_t[]){4}, 1, (double[]){1, 1, 2, 1}, 0, 0);
  DISPOSE_ALL(values, inverse, counts, ints, t);
}

/* unique along a dim: rows sorted lexicographically (a later dim only breaks ties), along dim
 * 1 the columns; unique_consecutive keeps the order and only merges neighbours. */
static void test_unique_slices(void) {
  const int64_t s[2] = {4, 3};
  gs_tensor m = gs_from_data(GS_F64, s, 2, (double[]){2, 1, 9, 1, 7, 0, 2, 1, 9, 1, 5, 3});
  gs_tensor values = GS_NO_TENSOR, inverse = GS_NO_TENSOR, counts = GS_NO_TENSOR;
  g_assert_true(gs_unique_dim(m, 0, &values, &inverse, &counts));
  test_assert_values(values, (int64_t[]){3, 3}, 2, (double[]){1, 5, 3, 1, 7, 0, 2, 1, 9}, 0, 0);
  test_assert_values(inverse, (int64_t[]){4}, 1, (double[]){2, 1, 2, 0}, 0, 0);
  test_assert_values(counts, (int64_t[]){3}, 1, (double[]){1, 1, 2}, 0, 0);
  DISPOSE_ALL(values, inverse, counts);
  gs_tensor cols = gs_from_data(GS_I64, (int64_t[]){2, 4}, 2, (int64_t[]){3, 1, 3, 1, 0, 2, 0, 2});
  g_assert_true(gs_unique_dim(cols, -1, &values, &inverse, NULL));
  test_assert_values(values, (int64_t[]){2, 2}, 2, (double[]){1, 3, 2, 0}, 0, 0);
  test_assert_values(inverse, (int64_t[]){4}, 1, (double[]){1, 0, 1, 0}, 0, 0);
  DISPOSE_ALL(values, inverse);
  gs_tensor runs = gs_from_data(GS_I64, (int64_t[]){2, 3}, 2, (int64_t[]){1, 1, 2, 2, 2, 1});
  g_assert_true(gs_unique_consecutive(runs, NULL, &values, &inverse, &counts));
  test_assert_values(values, (int64_t[]){3}, 1, (double[]){1, 2, 1}, 0, 0);
  test_assert_values(inverse, (int64_t[]){2, 3}, 2, (double[]){0, 0, 1, 1, 1, 2}, 0, 0);
  test_assert_values(counts, (int64_t[]){3}, 1, (double[]){2, 3, 1}, 0, 0);
  DISPOSE_ALL(values, inverse, counts);
  int dim0 = 0;
  gs_tensor pairs = gs_from_data(GS_F32, (int64_t[]){3, 2}, 2, (float[]){1, 2, 1, 2, 3, 4});
  g_assert_true(gs_unique_consecutive(pairs, &dim0, &values, NULL, &counts));
  test_assert_values(values, (int64_t[]){2, 2}, 2, (double[]){1, 2, 3, 4}, 0, 0);
  test_assert_values(counts, (int64_t[]){2}, 1, (double[]){2, 1}, 0, 0);
  DISPOSE_ALL(values, counts, pairs);
  EXPECT_ERROR(gs_unique_dim(m, 2, &values, NULL, NULL), "unique");
  DISPOSE_ALL(m, cols, runs);
}

static void test_cross_and_trace(void) {
  const int64_t s[2] = {2, 3}, b1[2] = {1, 3};
  gs_tensor a = gs_from_data(GS_F64, s, 2, (double[]){1, 0, 0, 1, 2, 3});
  gs_tensor b = gs_from_data(GS_F64, b1, 2, (double[]){0, 1, 0});
  gs_tensor c = gs_cross(a, b, 1);
  test_assert_values(c, s, 2, (double[]){0, 0, 1, -3, 0, 1}, 0, 0);
  gs_tensor m = gs_from_data(GS_I64, s, 2, (int64_t[]){1, 2, 3, 4, 5, 6});
  gs_tensor mt = gs_t(m), tr = gs_trace(mt);
  g_assert_cmpint(gs_dtype_of(tr), ==, GS_I64);
  test_assert_values(tr, NULL, 0, (double[]){1 + 5}, 0, 0);
  DISPOSE_ALL(a, b, c, m, mt, tr);
}

static void test_errors(void) {
  const int64_t s[2] = {3, 4}, is[2] = {1, 2}, one = 1;
  gs_tensor t = gs_zeros(GS_F32, s, 2);
  gs_tensor bad = i64_tensor(is, 2, (int64_t[]){0, 5});
  EXPECT_ERROR(gs_scatter_value(t, 0, bad, 1.0, GS_SCATTER_REPLACE),
               "scatter: index[0, 1] = 5 is out of range for dim 0 of size 3 (expected 0 to 2)");
  gs_tensor row = i64_tensor(&one, 1, (int64_t[]){3});
  gs_tensor src = gs_ones(GS_F32, (int64_t[]){1, 4}, 2);
  EXPECT_ERROR(gs_index_add(t, 0, row, src, 1.0),
               "index_add: index 3 is out of range for dim 0 of size 3 (expected 0 to 2)");
  gs_tensor wide = gs_ones(GS_F32, (int64_t[]){1, 3}, 2);
  gs_tensor zero = i64_tensor(&one, 1, (int64_t[]){0});
  EXPECT_ERROR(gs_index_add(t, 0, zero, wide, 1.0),
               "index_add: expected source of shape [1, 4] (the input's, with the index's "
               "length 1 along dim 0), got [1, 3]");
  gs_tensor far = i64_tensor(&one, 1, (int64_t[]){-13});
  EXPECT_ERROR(gs_take(t, far),
               "take: index -13 is out of range for a tensor of 12 elements (expected -12 to 11)");
  EXPECT_ERROR(gs_cross(t, t, 1), "cross: expected size 3 along dim 1 of both operands, got 4 "
                                  "and 4");
  gs_tensor v = gs_zeros(GS_F32, &one, 1);
  EXPECT_ERROR(gs_trace(v), "trace: expected a 2-D matrix, got 1-D");
  gs_tensor learnable = gs_ones(GS_F32, s, 2);
  gs_set_requires_grad(learnable, true);
  gs_tensor corner = i64_tensor((int64_t[]){1, 1}, 2, (int64_t[]){0});
  EXPECT_ERROR(gs_scatter_value(learnable, 0, corner, 2.0, GS_SCATTER_MULTIPLY),
               "scatter: reduce='multiply' has no gradient");
  gs_tensor flags = gs_zeros(GS_BOOL, s, 2);
  EXPECT_ERROR(gs_prod(flags, 2, false), "prod: expected a dimension in [-2, 1]");
  gs_tensor empty_rows = gs_zeros(GS_F32, (int64_t[]){3, 0}, 2);
  EXPECT_ERROR(gs_median(empty_rows, 1, false, NULL, NULL),
               "median: expected a non-empty dim 1 to take the median of, got size 0");
  DISPOSE_ALL(t, bad, row, src, wide, zero, far, v, learnable, corner, flags, empty_rows);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  test_add_leak_checked("/index-write/scatter", test_scatter_against_loops);
  test_add_leak_checked("/index-write/index-add-fill-take", test_index_ops_against_loops);
  test_add_leak_checked("/index-write/products", test_products_against_loops);
  test_add_leak_checked("/index-write/order-picks", test_order_picks);
  test_add_leak_checked("/index-write/unique-slices", test_unique_slices);
  test_add_leak_checked("/index-write/cross-trace", test_cross_and_trace);
  test_add_leak_checked("/index-write/errors", test_errors);
  return g_test_run();
}
