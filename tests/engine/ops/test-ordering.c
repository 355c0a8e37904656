/* test-ordering.c: the values and errors of the ops PyTorch programs call beyond the basics:
 * cumsum, sort/argsort/topk (stable, NaN largest), Python's // and % on integers and floats
 * (signs as Python's), bitwise ops, masked_select, index_put, one_hot, repeat and norm.
 * Their gradients are checked in grad/cases-ordering.c. */
#include <math.h>

#include "test-util.h"

static gs_tensor f64(const double *v, const int64_t *shape, int nd) {
  return gs_from_data(GS_F64, shape, nd, v);
}
static gs_tensor i64(const int64_t *v, const int64_t *shape, int nd) {
  return gs_from_data(GS_I64, shape, nd, v);
}

static void test_cumsum(void) {
  gs_tensor t = f64((double[]){1, 2, 3, 4, 5, 6}, (int64_t[]){2, 3}, 2);
  gs_tensor a = gs_cumsum(t, 1), b = gs_cumsum(t, 0);
  test_assert_values(a, (int64_t[]){2, 3}, 2, (double[]){1, 3, 6, 4, 9, 15}, 0, 0);
  test_assert_values(b, (int64_t[]){2, 3}, 2, (double[]){1, 2, 3, 5, 7, 9}, 0, 0);
  gs_tensor flags = gs_from_data(GS_BOOL, (int64_t[]){3}, 1, (bool[]){true, false, true});
  gs_tensor c = gs_cumsum(flags, 0);
  g_assert_cmpint(gs_dtype_of(c), ==, GS_I64);
  test_assert_values(c, (int64_t[]){3}, 1, (double[]){1, 1, 2}, 0, 0);
  EXPECT_ERROR(gs_cumsum(t, 2), "cumsum: expected a dimension in [-2, 1]");
  gs_dispose(t), gs_dispose(a), gs_dispose(b), gs_dispose(flags), gs_dispose(c);
}

static void test_sort_is_stable_with_nan_largest(void) {
  gs_tensor t = f64((double[]){3, NAN, 1, 3, -2}, (int64_t[]){5}, 1);
  gs_tensor v, i;
  g_assert_true(gs_sort(t, 0, false, &v, &i));
  test_assert_values(v, (int64_t[]){5}, 1, (double[]){-2, 1, 3, 3, NAN}, 0, 0);
  test_assert_values(i, (int64_t[]){5}, 1, (double[]){4, 2, 0, 3, 1}, 0, 0);
  gs_dispose(v), gs_dispose(i);
  g_assert_true(gs_sort(t, -1, true, &v, &i));
  test_assert_values(v, (int64_t[]){5}, 1, (double[]){NAN, 3, 3, 1, -2}, 0, 0);
  test_assert_values(i, (int64_t[]){5}, 1, (double[]){1, 0, 3, 2, 4}, 0, 0);
  gs_dispose(v), gs_dispose(i);
  gs_tensor order = gs_argsort(t, 0, false);
  test_assert_values(order, (int64_t[]){5}, 1, (double[]){4, 2, 0, 3, 1}, 0, 0);
  gs_dispose(order), gs_dispose(t);
}

static void test_topk_along_rows(void) {
  gs_tensor t = f64((double[]){5, 1, 4, 2, 8, 0}, (int64_t[]){2, 3}, 2);
  gs_tensor v, i;
  g_assert_true(gs_topk(t, 2, 1, true, &v, &i));
  test_assert_values(v, (int64_t[]){2, 2}, 2, (double[]){5, 4, 8, 2}, 0, 0);
  test_assert_values(i, (int64_t[]){2, 2}, 2, (double[]){0, 2, 1, 0}, 0, 0);
  gs_dispose(v), gs_dispose(i);
  g_assert_true(gs_topk(t, 1, 0, false, &v, NULL));
  test_assert_values(v, (int64_t[]){1, 3}, 2, (double[]){2, 1, 0}, 0, 0);
  gs_dispose(v);
  EXPECT_ERROR(gs_topk(t, 4, 1, true, &v, &i), "topk: expected k in [0, 3]");
  gs_tensor flags = gs_zeros(GS_BOOL, (int64_t[]){3}, 1);
  EXPECT_ERROR(gs_sort(flags, 0, false, &v, &i), "sort: expected an f32, f64 or integer tensor");
  gs_dispose(flags), gs_dispose(t);
}

static void test_floor_divide_and_remainder_as_python(void) {
  const int64_t n[] = {7, -7, 7, -7}, d[] = {2, 2, -2, -2};
  gs_tensor a = i64(n, (int64_t[]){4}, 1), b = i64(d, (int64_t[]){4}, 1);
  gs_tensor q = gs_floor_divide(a, b), r = gs_remainder(a, b);
  g_assert_cmpint(gs_dtype_of(q), ==, GS_I64);
  test_assert_values(q, (int64_t[]){4}, 1, (double[]){3, -4, -4, 3}, 0, 0);
  test_assert_values(r, (int64_t[]){4}, 1, (double[]){1, 1, -1, -1}, 0, 0);
  gs_tensor fa = gs_to_dtype(a, GS_F64), fb = gs_to_dtype(b, GS_F64);
  gs_tensor fq = gs_floor_divide(fa, fb), fr = gs_remainder(fa, fb);
  test_assert_values(fq, (int64_t[]){4}, 1, (double[]){3, -4, -4, 3}, 0, 0);
  test_assert_values(fr, (int64_t[]){4}, 1, (double[]){1, 1, -1, -1}, 0, 0);
  gs_tensor zero = gs_zeros(GS_I64, (int64_t[]){4}, 1);
  EXPECT_ERROR(gs_floor_divide(a, zero), "floor_divide: integer division by zero (divisor 0)");
  EXPECT_ERROR(gs_remainder(a, zero), "remainder: integer division by zero (divisor 0)");
  /* INT64_MIN // -1 wraps instead of trapping */
  gs_tensor lo = i64((int64_t[]){INT64_MIN}, (int64_t[]){1}, 1);
  gs_tensor m1 = i64((int64_t[]){-1}, (int64_t[]){1}, 1);
  gs_tensor w = gs_floor_divide(lo, m1), wr = gs_remainder(lo, m1);
  test_assert_values(wr, (int64_t[]){1}, 1, (double[]){0}, 0, 0);
  gs_tensor list[] = {a, b, q, r, fa, fb, fq, fr, zero, lo, m1, w, wr};
  for (size_t k = 0; k < G_N_ELEMENTS(list); k++)
    gs_dispose(list[k]);
}

static void test_bitwise(void) {
  gs_tensor a = i64((int64_t[]){12, 10}, (int64_t[]){2}, 1);
  gs_tensor b = i64((int64_t[]){10, 3}, (int64_t[]){2}, 1);
  gs_tensor x = gs_bitwise_and(a, b), y = gs_bitwise_or(a, b), z = gs_bitwise_xor(a, b);
  gs_tensor nt = gs_bitwise_not(a);
  test_assert_values(x, (int64_t[]){2}, 1, (double[]){8, 2}, 0, 0);
  test_assert_values(y, (int64_t[]){2}, 1, (double[]){14, 11}, 0, 0);
  test_assert_values(z, (int64_t[]){2}, 1, (double[]){6, 9}, 0, 0);
  test_assert_values(nt, (int64_t[]){2}, 1, (double[]){-13, -11}, 0, 0);
  gs_tensor p = gs_from_data(GS_BOOL, (int64_t[]){2}, 1, (bool[]){true, false});
  gs_tensor np_ = gs_bitwise_not(p), pa = gs_bitwise_and(p, np_), po = gs_bitwise_or(p, np_);
  g_assert_cmpint(gs_dtype_of(np_), ==, GS_BOOL);
  test_assert_values(np_, (int64_t[]){2}, 1, (double[]){0, 1}, 0, 0);
  test_assert_values(pa, (int64_t[]){2}, 1, (double[]){0, 0}, 0, 0);
  test_assert_values(po, (int64_t[]){2}, 1, (double[]){1, 1}, 0, 0);
  gs_tensor f = gs_ones(GS_F32, (int64_t[]){2}, 1);
  EXPECT_ERROR(gs_bitwise_and(f, f), "bitwise_and: f32 tensors are not supported");
  EXPECT_ERROR(gs_bitwise_not(f), "bitwise_not: f32 tensors are not supported");
  gs_tensor list[] = {a, b, x, y, z, nt, p, np_, pa, po, f};
  for (size_t k = 0; k < G_N_ELEMENTS(list); k++)
    gs_dispose(list[k]);
}

static void test_masked_select_and_index_put(void) {
  gs_tensor t = f64((double[]){1, 2, 3, 4, 5, 6}, (int64_t[]){2, 3}, 2);
  gs_tensor mask = gs_from_data(GS_BOOL, (int64_t[]){3}, 1, (bool[]){true, false, true});
  gs_tensor s = gs_masked_select(t, mask); /* the row mask broadcasts over both rows */
  test_assert_values(s, (int64_t[]){4}, 1, (double[]){1, 3, 4, 6}, 0, 0);
  gs_tensor rows = i64((int64_t[]){1}, (int64_t[]){1}, 1);
  gs_tensor v = f64((double[]){9, 8, 7}, (int64_t[]){3}, 1);
  gs_tensor put = gs_index_put(t, rows, v, false), acc = gs_index_put(t, rows, v, true);
  test_assert_values(put, (int64_t[]){2, 3}, 2, (double[]){1, 2, 3, 9, 8, 7}, 0, 0);
  test_assert_values(acc, (int64_t[]){2, 3}, 2, (double[]){1, 2, 3, 13, 13, 13}, 0, 0);
  gs_tensor bad = i64((int64_t[]){2}, (int64_t[]){1}, 1);
  gs_tensor dummy;
  EXPECT_ERROR(dummy = gs_index_put(t, bad, v, false), "index[0] = 2 is out of range");
  (void)dummy;
  gs_tensor wide = f64((double[]){1, 2}, (int64_t[]){2}, 1);
  EXPECT_ERROR(gs_index_put(t, rows, wide, false),
               "index_put: values of shape [2] cannot be broadcast");
  EXPECT_ERROR(gs_masked_select(t, rows), "masked_select: expected a bool mask, got i64");
  gs_tensor list[] = {t, mask, s, rows, v, put, acc, bad, wide};
  for (size_t k = 0; k < G_N_ELEMENTS(list); k++)
    gs_dispose(list[k]);
}

static void test_one_hot_repeat_norm(void) {
  gs_tensor idx = i64((int64_t[]){2, 0}, (int64_t[]){2}, 1);
  gs_tensor oh = gs_one_hot(idx, -1), oh4 = gs_one_hot(idx, 4);
  test_assert_values(oh, (int64_t[]){2, 3}, 2, (double[]){0, 0, 1, 1, 0, 0}, 0, 0);
  test_assert_values(oh4, (int64_t[]){2, 4}, 2, (double[]){0, 0, 1, 0, 1, 0, 0, 0}, 0, 0);
  EXPECT_ERROR(gs_one_hot(idx, 2), "one_hot: class values must be in [0, 2), got 2");
  gs_tensor t = f64((double[]){1, 2}, (int64_t[]){2}, 1);
  gs_tensor r = gs_repeat(t, (int64_t[]){2, 2}, 2);
  test_assert_values(r, (int64_t[]){2, 4}, 2, (double[]){1, 2, 1, 2, 1, 2, 1, 2}, 0, 0);
  gs_tensor same = gs_repeat(t, (int64_t[]){1}, 1);
  g_assert_true(gs_storage_id(same) != gs_storage_id(t) || gs_is_copy_on_write(same));
  EXPECT_ERROR(gs_repeat(t, (int64_t[]){2}, 0), "repeat: expected at least as many repeats");
  /* Repeats that overflow the result are refused (the Python fuzz crashed on 2^62). */
  EXPECT_ERROR(gs_repeat(t, (int64_t[]){INT64_C(1) << 62}, 1),
               "repeat: expected repeats whose result fits in memory, got 4611686018427387904");
  EXPECT_ERROR(gs_repeat(t, (int64_t[]){INT64_C(1) << 31}, 1), "repeat: expected repeats whose");
  /* An empty result is an empty tensor of the result's shape, made without 2^30 copies. */
  gs_tensor empty = gs_repeat(t, (int64_t[]){0, INT64_C(1) << 30}, 2);
  g_assert_cmpint(gs_ndim(empty), ==, 2);
  g_assert_cmpint(gs_size(empty, 0), ==, 0);
  g_assert_cmpint(gs_size(empty, 1), ==, INT64_C(2) << 30);
  gs_dispose(empty);
  gs_tensor v = f64((double[]){3, -4}, (int64_t[]){2}, 1);
  gs_tensor n2 = gs_norm(v, 2, NULL, 0, false), n1 = gs_norm(v, 1, NULL, 0, false);
  gs_tensor ni = gs_norm(v, INFINITY, NULL, 0, false), n3 = gs_norm(v, 3, NULL, 0, false);
  test_assert_values(n2, NULL, 0, (double[]){5}, 1e-12, 0);
  test_assert_values(n1, NULL, 0, (double[]){7}, 1e-12, 0);
  test_assert_values(ni, NULL, 0, (double[]){4}, 1e-12, 0);
  test_assert_values(n3, NULL, 0, (double[]){cbrt(91.0)}, 1e-12, 0);
  DISPOSE_ALL(idx, oh, oh4, t, r, same, v, n2, n1, ni, n3);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/ordering/cumsum", test_cumsum);
  g_test_add_func("/ordering/sort-is-stable-with-nan-largest",
                  test_sort_is_stable_with_nan_largest);
  g_test_add_func("/ordering/topk-along-rows", test_topk_along_rows);
  g_test_add_func("/ordering/floor-divide-and-remainder-as-python",
                  test_floor_divide_and_remainder_as_python);
  g_test_add_func("/ordering/bitwise", test_bitwise);
  g_test_add_func("/ordering/masked-select-and-index-put", test_masked_select_and_index_put);
  g_test_add_func("/ordering/one-hot-repeat-norm", test_one_hot_repeat_norm);
  return g_test_run();
}
