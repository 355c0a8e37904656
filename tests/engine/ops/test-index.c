/* test-index.c: index_select, gather, scatter_add and embedding against plain reference
 * loops, for every dtype and every layout test_make produces (of the data and of the index);
 * empty indices and dims; bounds errors that name the index, its value and the valid range
 * and leave nothing allocated; the other error messages. */
#include "test-util.h"

static const gs_dtype all_dtypes[] = {GS_F32, GS_F64, GS_I64, GS_BOOL};
static const gs_dtype addable_dtypes[] = {GS_F32, GS_F64, GS_I64};

static gs_tensor make_data(gs_dtype dtype, const int64_t *shape, int ndim, test_layout layout,
                           gs_rng *rng) {
  return test_make(dtype, shape, ndim, layout, dtype == GS_I64 ? -50 : -1,
                   dtype == GS_I64 ? 50 : 1, rng);
}

/* Indices in [0, size), stored in the given layout. */
static gs_tensor make_index(const int64_t *shape, int ndim, int64_t size, test_layout layout,
                            gs_rng *rng) {
  return test_make(GS_I64, shape, ndim, layout, 0, (double)size, rng);
}

static int64_t ravel(const int64_t *pos, const int64_t *shape, int ndim) {
  return test_ravel_broadcast(pos, ndim, shape, ndim);
}

static void dispose_all(gs_tensor *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    gs_dispose(list[i]);
}

static void check_index_select(gs_dtype dtype, test_layout lt, test_layout li, int dim,
                               int64_t len, gs_rng *rng) {
  int64_t st[3] = {3, 4, 5}, si[1] = {len};
  int d = dim < 0 ? dim + 3 : dim;
  gs_tensor t = make_data(dtype, st, 3, lt, rng);
  gs_tensor index = make_index(si, 1, st[d], li, rng);
  gs_tensor out = gs_index_select(t, dim, index);
  double *vt = test_values(t), *vi = test_values(index);
  int64_t so[3] = {3, 4, 5};
  so[d] = len;
  int64_t n = test_numel(so, 3);
  double *expected = g_new(double, n + 1);
  for (int64_t i = 0; i < n; i++) {
    int64_t pos[3];
    test_unravel(i, so, 3, pos);
    pos[d] = (int64_t)vi[pos[d]];
    expected[i] = vt[ravel(pos, st, 3)];
  }
  g_assert_cmpint(gs_dtype_of(out), ==, dtype);
  test_assert_values(out, so, 3, expected, 0, 0);
  g_free(vt);
  g_free(vi);
  g_free(expected);
  gs_tensor list[] = {t, index, out};
  dispose_all(list, G_N_ELEMENTS(list));
}

static void test_index_select(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 11);
  static const int dims[] = {0, 1, 2, -1};
  for (size_t di = 0; di < G_N_ELEMENTS(all_dtypes); di++)
    for (int lt = 0; lt < LAYOUT_COUNT; lt++)
      for (int li = 0; li < LAYOUT_COUNT; li++)
        for (size_t k = 0; k < G_N_ELEMENTS(dims); k++) {
          check_index_select(all_dtypes[di], lt, li, dims[k], 7, &rng);
          check_index_select(all_dtypes[di], lt, li, dims[k], 0, &rng); /* empty index */
        }

  /* A 0-D index selects one entry and keeps the dim (size 1), as PyTorch does. */
  int64_t s[2] = {3, 2}, v[6] = {1, 2, 3, 4, 5, 6};
  gs_tensor t = gs_from_data(GS_I64, s, 2, v);
  gs_tensor i0 = gs_scalar(GS_I64, 2);
  gs_tensor out = gs_index_select(t, 0, i0);
  int64_t so[2] = {1, 2};
  double expected[2] = {5, 6};
  test_assert_values(out, so, 2, expected, 0, 0);
  gs_tensor list[] = {t, i0, out};
  dispose_all(list, G_N_ELEMENTS(list));
}

static void check_gather(gs_dtype dtype, test_layout lt, test_layout li, int dim, gs_rng *rng) {
  int64_t st[3] = {3, 4, 5}, si[3] = {2, 3, 4};
  int d = dim < 0 ? dim + 3 : dim;
  si[d] = 6; /* along dim the index may be longer than the input */
  gs_tensor t = make_data(dtype, st, 3, lt, rng);
  gs_tensor index = make_index(si, 3, st[d], li, rng);
  gs_tensor out = gs_gather(t, dim, index);
  double *vt = test_values(t), *vi = test_values(index);
  int64_t n = test_numel(si, 3);
  double expected[2 * 3 * 4 * 6];
  for (int64_t i = 0; i < n; i++) {
    int64_t pos[3];
    test_unravel(i, si, 3, pos);
    pos[d] = (int64_t)vi[i];
    expected[i] = vt[ravel(pos, st, 3)];
  }
  g_assert_cmpint(gs_dtype_of(out), ==, dtype);
  test_assert_values(out, si, 3, expected, 0, 0);
  g_free(vt);
  g_free(vi);
  gs_tensor list[] = {t, index, out};
  dispose_all(list, G_N_ELEMENTS(list));
}

static void test_gather(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 12);
  static const int dims[] = {0, 1, 2, -1};
  for (size_t di = 0; di < G_N_ELEMENTS(all_dtypes); di++)
    for (int lt = 0; lt < LAYOUT_COUNT; lt++)
      for (int li = 0; li < LAYOUT_COUNT; li++)
        for (size_t k = 0; k < G_N_ELEMENTS(dims); k++)
          check_gather(all_dtypes[di], lt, li, dims[k], &rng);

  /* 0-D input and index: the index must be 0. */
  gs_tensor t = gs_scalar(GS_F64, 2.5), i0 = gs_scalar(GS_I64, 0);
  gs_tensor out = gs_gather(t, 0, i0);
  double expected = 2.5;
  test_assert_values(out, NULL, 0, &expected, 0, 0);
  gs_dispose(out);

  /* An empty index gives an empty result. */
  int64_t s23[2] = {2, 3}, s03[2] = {0, 3};
  gs_tensor t2 = gs_ones(GS_F32, s23, 2), empty = gs_zeros(GS_I64, s03, 2);
  out = gs_gather(t2, 0, empty);
  test_assert_values(out, s03, 2, NULL, 0, 0);
  gs_tensor list[] = {t, i0, out, t2, empty};
  dispose_all(list, G_N_ELEMENTS(list));
}

static void check_scatter_add(gs_dtype dtype, test_layout lt, test_layout li, test_layout ls,
                              int dim, gs_rng *rng) {
  int64_t st[3] = {3, 4, 5}, si[3] = {2, 3, 4}, ss[3] = {2, 4, 4};
  int d = dim < 0 ? dim + 3 : dim;
  si[d] = 6; /* more entries than the dim has: indices repeat, so sums accumulate */
  ss[d] = 7; /* src may be larger than the index in every dim */
  gs_tensor t = make_data(dtype, st, 3, lt, rng);
  gs_tensor index = make_index(si, 3, st[d], li, rng);
  gs_tensor src = make_data(dtype, ss, 3, ls, rng);
  int64_t version = gs_version(t);
  gs_tensor out = gs_scatter_add(t, dim, index, src);
  g_assert_cmpint(gs_version(t), ==, version); /* out of place: t is only read */
  g_assert_cmpuint(gs_storage_id(out), !=, gs_storage_id(t));
  double *vt = test_values(t), *vi = test_values(index), *vs = test_values(src);
  int64_t n = test_numel(si, 3);
  for (int64_t i = 0; i < n; i++) {
    int64_t pos[3];
    test_unravel(i, si, 3, pos);
    double add = vs[ravel(pos, ss, 3)];
    pos[d] = (int64_t)vi[i];
    vt[ravel(pos, st, 3)] += add;
  }
  g_assert_cmpint(gs_dtype_of(out), ==, dtype);
  test_assert_values(out, st, 3, vt, dtype == GS_I64 ? 0 : 1e-5, 0);
  g_free(vt);
  g_free(vi);
  g_free(vs);
  gs_tensor list[] = {t, index, src, out};
  dispose_all(list, G_N_ELEMENTS(list));
}

static void test_scatter_add(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 13);
  static const int dims[] = {0, 1, 2, -1};
  for (size_t di = 0; di < G_N_ELEMENTS(addable_dtypes); di++)
    for (int lt = 0; lt < LAYOUT_COUNT; lt++)
      for (int li = 0; li < LAYOUT_COUNT; li++)
        for (size_t k = 0; k < G_N_ELEMENTS(dims); k++)
          check_scatter_add(addable_dtypes[di], lt, li, (lt + li) % LAYOUT_COUNT, dims[k], &rng);

  /* 0-D: the single element gets src added. */
  gs_tensor t = gs_scalar(GS_I64, 5), i0 = gs_scalar(GS_I64, 0), s0 = gs_scalar(GS_I64, 4);
  gs_tensor out = gs_scatter_add(t, 0, i0, s0);
  double expected = 9;
  test_assert_values(out, NULL, 0, &expected, 0, 0);
  gs_dispose(out);

  /* An empty index returns t's values unchanged. */
  int64_t s23[2] = {2, 3}, s03[2] = {0, 3};
  double v23[6] = {1, 2, 3, 4, 5, 6};
  gs_tensor t2 = gs_from_data(GS_F64, s23, 2, v23), empty = gs_zeros(GS_I64, s03, 2);
  out = gs_scatter_add(t2, 1, empty, t2);
  test_assert_values(out, s23, 2, v23, 0, 0);
  gs_tensor list[] = {t, i0, s0, out, t2, empty};
  dispose_all(list, G_N_ELEMENTS(list));
}

/* i64 sums wrap on overflow, as PyTorch's do, rather than being undefined. */
static void test_scatter_add_i64_wraps(void) {
  int64_t one[1] = {1}, two[1] = {2}, tv[1] = {INT64_MAX}, iv[2] = {0, 0}, sv[2] = {1, 1};
  gs_tensor t = gs_from_data(GS_I64, one, 1, tv), index = gs_from_data(GS_I64, two, 1, iv);
  gs_tensor src = gs_from_data(GS_I64, two, 1, sv);
  gs_tensor out = gs_scatter_add(t, 0, index, src);
  int64_t got;
  gs_copy_to(out, &got, sizeof got);
  g_assert_cmpint(got, ==, INT64_MIN + 1);
  gs_tensor list[] = {t, index, src, out};
  dispose_all(list, G_N_ELEMENTS(list));
}

static void check_embedding(gs_dtype dtype, test_layout lw, test_layout li, const int64_t *si,
                            int ni, gs_rng *rng) {
  int64_t sw[2] = {10, 4};
  gs_tensor weight = make_data(dtype, sw, 2, lw, rng);
  gs_tensor index = make_index(si, ni, 10, li, rng);
  gs_tensor out = gs_embedding(weight, index);
  double *vw = test_values(weight), *vi = test_values(index);
  int64_t so[GS_MAX_DIMS];
  memcpy(so, si, sizeof(int64_t) * (size_t)ni);
  so[ni] = 4;
  int64_t n = test_numel(si, ni);
  double *expected = g_new(double, n * 4 + 1);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < 4; j++)
      expected[i * 4 + j] = vw[(int64_t)vi[i] * 4 + j];
  g_assert_cmpint(gs_dtype_of(out), ==, dtype);
  test_assert_values(out, so, ni + 1, expected, 0, 0);
  g_free(vw);
  g_free(vi);
  g_free(expected);
  gs_tensor list[] = {weight, index, out};
  dispose_all(list, G_N_ELEMENTS(list));
}

static void test_embedding(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 14);
  static const struct {
    int n;
    int64_t s[3];
  } shapes[] = {{0, {0}}, {1, {6}}, {2, {2, 3}}, {3, {2, 1, 3}}, {1, {0}}, {2, {3, 0}}};
  for (size_t di = 0; di < G_N_ELEMENTS(all_dtypes); di++)
    for (int lw = 0; lw < LAYOUT_COUNT; lw++)
      for (int li = 0; li < LAYOUT_COUNT; li++)
        for (size_t k = 0; k < G_N_ELEMENTS(shapes); k++)
          check_embedding(all_dtypes[di], lw, li, shapes[k].s, shapes[k].n, &rng);
}

/* Runs a call expected to fail a bounds check: one error with the given text, and neither a
 * tensor nor a buffer left behind. */
#define EXPECT_BOUNDS_ERROR(call, text)                                                      \
  do {                                                                                       \
    gs_memory_stats before_, after_;                                                         \
    uint64_t live_ = gs_live_tensor_count();                                                 \
    gs_memory_get_stats(&before_);                                                           \
    gs_tensor r_ = GS_NO_TENSOR;                                                             \
    EXPECT_ERROR(r_ = (call), text);                                                         \
    gs_memory_get_stats(&after_);                                                            \
    g_assert_true(gs_tensor_is_none(r_));                                                    \
    g_assert_cmpuint(after_.allocations, ==, before_.allocations);                           \
    g_assert_cmpuint(gs_live_tensor_count(), ==, live_);                                     \
  } while (0)

static gs_tensor i64_tensor(const int64_t *shape, int ndim, const int64_t *values) {
  return gs_from_data(GS_I64, shape, ndim, values);
}

static void test_bounds_errors(void) {
  int64_t s34[2] = {3, 4}, s3[1] = {3}, s23[2] = {2, 3}, s30[2] = {3, 0}, s104[2] = {10, 4};
  gs_tensor t = gs_zeros(GS_F32, s34, 2), empty_cols = gs_zeros(GS_F32, s30, 2);
  gs_tensor weight = gs_zeros(GS_F32, s104, 2);
  int64_t too_big[3] = {0, 2, 3}, negative[3] = {0, -1, 1}, zero[1] = {0};
  gs_tensor big = i64_tensor(s3, 1, too_big), neg = i64_tensor(s3, 1, negative);
  gs_tensor z = i64_tensor((int64_t[]){1}, 1, zero);

  EXPECT_BOUNDS_ERROR(gs_index_select(t, 0, big),
                      "index_select: index[2] = 3 is out of range for dim 0 of size 3 "
                      "(expected 0 to 2)");
  EXPECT_BOUNDS_ERROR(gs_index_select(t, -1, neg),
                      "index_select: index[1] = -1 is out of range for dim 1 of size 4 "
                      "(expected 0 to 3)");
  EXPECT_BOUNDS_ERROR(gs_index_select(empty_cols, 1, z),
                      "index_select: index[0] = 0 is out of range for dim 1 of size 0 (it is "
                      "empty, so no index is valid)");

  /* Positions are the index's logical ones, whatever its strides: the bad value sits at
   * [1, 1] of the transposed view. */
  int64_t g[6] = {0, 1, 2, 0, 9, 0};
  gs_tensor stored = i64_tensor(s23, 2, g);
  gs_tensor gt = gs_t(stored);
  EXPECT_BOUNDS_ERROR(gs_gather(t, 1, gt),
                      "gather: index[1, 1] = 9 is out of range for dim 1 of size 4 "
                      "(expected 0 to 3)");
  int64_t gn[6] = {0, 1, 2, 0, 1, -2};
  gs_tensor gneg = i64_tensor(s23, 2, gn);
  EXPECT_BOUNDS_ERROR(gs_gather(t, 0, gneg),
                      "gather: index[1, 2] = -2 is out of range for dim 0 of size 3 "
                      "(expected 0 to 2)");
  gs_tensor src = gs_ones(GS_F32, s23, 2), srct = gs_t(src);
  EXPECT_BOUNDS_ERROR(gs_scatter_add(t, 1, gt, srct),
                      "scatter_add: index[1, 1] = 9 is out of range for dim 1 of size 4 "
                      "(expected 0 to 3)");
  int64_t e[6] = {0, 9, 10, 1, 2, 3};
  gs_tensor eidx = i64_tensor(s23, 2, e);
  EXPECT_BOUNDS_ERROR(gs_embedding(weight, eidx),
                      "embedding: index[0, 2] = 10 is out of range for a weight of 10 rows "
                      "(expected 0 to 9)");
  EXPECT_BOUNDS_ERROR(gs_embedding(weight, neg),
                      "embedding: index[1] = -1 is out of range for a weight of 10 rows");
  gs_tensor scalar_bad = gs_scalar(GS_I64, 1), scalar_t = gs_scalar(GS_F32, 1);
  EXPECT_BOUNDS_ERROR(gs_gather(scalar_t, 0, scalar_bad),
                      "gather: index = 1 is out of range for dim 0 of size 1 (expected 0 to 0)");

  gs_tensor list[] = {t, empty_cols, weight, big, neg, z, stored, gt, gneg, src, srct, eidx,
                      scalar_bad, scalar_t};
  dispose_all(list, G_N_ELEMENTS(list));
}

static void test_argument_errors(void) {
  int64_t s34[2] = {3, 4}, s3[1] = {3}, s23[2] = {2, 3}, s25[2] = {2, 5}, s13[2] = {1, 3};
  gs_tensor t = gs_zeros(GS_F32, s34, 2), t64 = gs_zeros(GS_F64, s34, 2);
  gs_tensor tb = gs_zeros(GS_BOOL, s34, 2), v = gs_zeros(GS_F32, s3, 1);
  gs_tensor fidx = gs_zeros(GS_F32, s3, 1), idx1 = gs_zeros(GS_I64, s3, 1);
  gs_tensor idx2 = gs_zeros(GS_I64, s23, 2), idx25 = gs_zeros(GS_I64, s25, 2);
  gs_tensor src13 = gs_zeros(GS_F32, s13, 2), src23_64 = gs_zeros(GS_F64, s23, 2);
  gs_tensor scalar = gs_scalar(GS_F32, 1);
  uint64_t live = gs_live_tensor_count();
  gs_tensor r;

  EXPECT_ERROR(r = gs_index_select(t, 0, fidx),
               "index_select: expected an i64 or i32 index, got f32");
  EXPECT_ERROR(r = gs_index_select(t, 0, idx2), "index_select: expected a 1-D index, got 2-D");
  EXPECT_ERROR(r = gs_index_select(t, 2, idx1),
               "index_select: expected a dimension in [-2, 1] for a 2-D tensor, got 2");
  EXPECT_ERROR(r = gs_index_select(scalar, 0, idx1),
               "index_select: expected a tensor of at least 1 dimension, got 0-D");
  EXPECT_ERROR(r = gs_gather(t, 0, fidx), "gather: expected an i64 index, got f32");
  EXPECT_ERROR(r = gs_gather(t, 0, idx1), "gather: expected an index of the input's 2 dims, got 1-D");
  EXPECT_ERROR(r = gs_gather(t, 0, idx25),
               "gather: expected index.size(d) <= input.size(d) for every dim but 0, got index "
               "of shape [2, 5] and input of shape [3, 4] (dim 1: 5 > 4)");
  EXPECT_ERROR(r = gs_gather(t, -3, idx2),
               "gather: expected a dimension in [-2, 1] for a 2-D tensor, got -3");
  EXPECT_ERROR(r = gs_scatter_add(t, 0, idx2, src13),
               "scatter_add: expected index.size(d) <= src.size(d) for every dim, got index of "
               "shape [2, 3] and src of shape [1, 3] (dim 0: 2 > 1)");
  EXPECT_ERROR(r = gs_scatter_add(t, 0, idx25, idx25),
               "scatter_add: expected src of the input's dtype f32, got i64");
  EXPECT_ERROR(r = gs_scatter_add(t, 0, idx2, src23_64),
               "scatter_add: expected src of the input's dtype f32, got f64");
  EXPECT_ERROR(r = gs_scatter_add(t64, 1, idx25, src23_64),
               "scatter_add: expected index.size(d) <= src.size(d) for every dim, got index of "
               "shape [2, 5] and src of shape [2, 3] (dim 1: 5 > 3)");
  EXPECT_ERROR(r = gs_scatter_add(tb, 0, idx2, tb),
               "scatter_add: expected an f32, f64 or integer tensor, got bool");
  EXPECT_ERROR(r = gs_scatter_add(t, 0, fidx, t), "scatter_add: expected an i64 index, got f32");
  EXPECT_ERROR(r = gs_scatter_add(t, 0, idx1, t), "scatter_add: expected an index of the input's 2 dims, got 1-D");
  EXPECT_ERROR(r = gs_scatter_add(t, 0, idx2, v), "scatter_add: expected src of the input's 2 dims, got 1-D");
  EXPECT_ERROR(r = gs_embedding(v, idx1), "embedding: expected a 2-D weight [rows, embedding_dim], got 1-D");
  EXPECT_ERROR(r = gs_embedding(t, fidx), "embedding: expected an i64 or i32 index, got f32");
  int64_t s8[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  gs_tensor idx8 = gs_zeros(GS_I64, s8, 8);
  EXPECT_ERROR(r = gs_embedding(t, idx8), "embedding: expected an index of at most 7 dims, got 8-D");
  gs_dispose(idx8);
  EXPECT_ERROR(r = gs_embedding(t, GS_NO_TENSOR), "embedding: expected a tensor, got the empty handle");
  g_assert_true(gs_tensor_is_none(r));
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);

  gs_tensor list[] = {t, t64, tb, v, fidx, idx1, idx2, idx25, src13, src23_64, scalar};
  dispose_all(list, G_N_ELEMENTS(list));
}

/* PyTorch 1.13's rule for i32 indexes: index_select and embedding take them (and embedding's
 * gradient adds up as with i64), gather and scatter_add refuse them; scatter_add into an i32
 * tensor wraps at 32 bits. */
static void test_i32_indexes(void) {
  gs_tensor t = gs_arange(10, 15, 1, GS_F32);
  gs_tensor idx = gs_from_data(GS_I32, (int64_t[]){3}, 1, (int32_t[]){4, 0, 4});
  gs_tensor sel = gs_index_select(t, 0, idx);
  test_assert_values(sel, (int64_t[]){3}, 1, (double[]){14, 10, 14}, 0, 0);
  gs_tensor bad = gs_from_data(GS_I32, (int64_t[]){1}, 1, (int32_t[]){5});
  gs_tensor r = GS_NO_TENSOR;
  EXPECT_ERROR(r = gs_index_select(t, 0, bad), "index[0] = 5 is out of range for dim 0 of size 5");
  EXPECT_ERROR(r = gs_gather(t, 0, idx), "gather: expected an i64 index, got i32");
  EXPECT_ERROR(r = gs_scatter_add(t, 0, idx, t), "scatter_add: expected an i64 index, got i32");
  g_assert_true(gs_tensor_is_none(r));

  gs_tensor w2 = gs_from_data(GS_F64, (int64_t[]){3, 2}, 2, (double[]){0, 1, 2, 3, 4, 5});
  gs_set_requires_grad(w2, true);
  gs_tensor rows = gs_from_data(GS_I32, (int64_t[]){2, 2}, 2, (int32_t[]){2, 0, 2, 2});
  gs_tensor e = gs_embedding(w2, rows), s = gs_sum(e, NULL, 0, false);
  test_assert_values(e, (int64_t[]){2, 2, 2}, 3, (double[]){4, 5, 0, 1, 4, 5, 4, 5}, 0, 0);
  gs_backward(s);
  test_assert_values(gs_grad(w2), (int64_t[]){3, 2}, 2, (double[]){1, 1, 0, 0, 3, 3}, 0, 0);

  gs_tensor acc = gs_full(GS_I32, (int64_t[]){2}, 1, INT32_MAX);
  gs_tensor at = gs_from_data(GS_I64, (int64_t[]){2}, 1, (int64_t[]){1, 1});
  gs_tensor one = gs_ones(GS_I32, (int64_t[]){2}, 1), sum = gs_scatter_add(acc, 0, at, one);
  g_assert_cmpint(gs_dtype_of(sum), ==, GS_I32);
  test_assert_values(sum, (int64_t[]){2}, 1, (double[]){INT32_MAX, INT32_MAX + 2.0 - 4294967296.0},
                     0, 0);
  gs_tensor list[] = {t, idx, sel, bad, w2, rows, e, s, acc, at, one, sum};
  dispose_all(list, G_N_ELEMENTS(list));
}

/* u8, i8 and i16 tensors are gathered, selected and scatter-added into (wrapping at their
 * width); they are not indexes (PyTorch 1.13 takes i64, and i32 for index_select). */
static void test_small_int_values(void) {
  gs_tensor s = gs_from_data(GS_I16, (int64_t[]){2, 3}, 2, (int16_t[]){-5, 300, 7, 1, 2, -32768});
  gs_tensor idx = gs_from_data(GS_I64, (int64_t[]){2, 1}, 2, (int64_t[]){2, 1});
  gs_tensor g = gs_gather(s, 1, idx);
  g_assert_cmpint(gs_dtype_of(g), ==, GS_I16);
  test_assert_values(g, (int64_t[]){2, 1}, 2, (double[]){7, 2}, 0, 0);
  gs_tensor rows = gs_from_data(GS_I32, (int64_t[]){2}, 1, (int32_t[]){1, 1});
  gs_tensor sel = gs_index_select(s, 0, rows);
  test_assert_values(sel, (int64_t[]){2, 3}, 2, (double[]){1, 2, -32768, 1, 2, -32768}, 0, 0);
  gs_tensor u = gs_full(GS_U8, (int64_t[]){2}, 1, 250);
  gs_tensor at = gs_from_data(GS_I64, (int64_t[]){2}, 1, (int64_t[]){0, 0});
  gs_tensor add = gs_full(GS_U8, (int64_t[]){2}, 1, 4), sum = gs_scatter_add(u, 0, at, add);
  g_assert_cmpint(gs_dtype_of(sum), ==, GS_U8);
  test_assert_values(sum, (int64_t[]){2}, 1, (double[]){2, 250}, 0, 0); /* 258 wraps to 2 */
  gs_tensor byte_idx = gs_from_data(GS_U8, (int64_t[]){1}, 1, (uint8_t[]){0}), r = GS_NO_TENSOR;
  EXPECT_ERROR(r = gs_index_select(s, 0, byte_idx),
               "index_select: expected an i64 or i32 index, got u8");
  EXPECT_ERROR(r = gs_gather(s, 0, byte_idx), "gather: expected an i64 index, got u8");
  g_assert_true(gs_tensor_is_none(r));
  gs_tensor list[] = {s, idx, g, rows, sel, u, at, add, sum, byte_idx};
  dispose_all(list, G_N_ELEMENTS(list));
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  test_add_leak_checked("/index/i32-indexes", test_i32_indexes);
  test_add_leak_checked("/index/small-int-values", test_small_int_values);
  test_add_leak_checked("/index/index-select", test_index_select);
  test_add_leak_checked("/index/gather", test_gather);
  test_add_leak_checked("/index/scatter-add", test_scatter_add);
  test_add_leak_checked("/index/scatter-add-i64-wraps", test_scatter_add_i64_wraps);
  test_add_leak_checked("/index/embedding", test_embedding);
  test_add_leak_checked("/index/bounds-errors", test_bounds_errors);
  g_test_add_func("/index/argument-errors", test_argument_errors);
  return g_test_run();
}
