/* test-join.c: cat and stack against plain reference loops for every dtype, layout and dim,
 * with PyTorch's dtype promotion and legacy empty tensors; split and chunk pieces that are
 * views (shared storage, writes seen both ways) with torch's sizing; the return convention
 * and every error message. */
#include "test-util.h"

static const gs_dtype all_dtypes[] = {GS_F32, GS_F64, GS_I64, GS_BOOL};

static gs_tensor make_data(gs_dtype dtype, const int64_t *shape, int ndim, test_layout layout,
                           gs_rng *rng) {
  return test_make(dtype, shape, ndim, layout, dtype == GS_I64 ? -50 : -1,
                   dtype == GS_I64 ? 50 : 1, rng);
}

static void dispose_all(const gs_tensor *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    gs_dispose(list[i]);
}

static int64_t ravel(const int64_t *pos, const int64_t *shape, int ndim) {
  return test_ravel_broadcast(pos, ndim, shape, ndim);
}

/* ---- cat ---------------------------------------------------------------------------- */

static void check_cat(gs_dtype dtype, test_layout first_layout, int dim, gs_rng *rng) {
  enum { N = 3 };
  static const int64_t along[N] = {2, 0, 3}; /* an empty piece in the middle */
  int d = dim < 0 ? dim + 3 : dim;
  gs_tensor parts[N];
  double *values[N];
  int64_t shapes[N][3];
  for (int i = 0; i < N; i++) {
    int64_t *s = shapes[i];
    s[0] = 3, s[1] = 4, s[2] = 5;
    s[d] = along[i];
    parts[i] = make_data(dtype, s, 3, (first_layout + i) % LAYOUT_COUNT, rng);
    values[i] = test_values(parts[i]);
  }
  gs_tensor out = gs_cat(parts, N, dim);
  int64_t so[3] = {3, 4, 5};
  so[d] = 5;
  double expected[5 * 4 * 5];
  for (int64_t i = 0; i < test_numel(so, 3); i++) {
    int64_t pos[3];
    test_unravel(i, so, 3, pos);
    int part = 0;
    while (pos[d] >= along[part])
      pos[d] -= along[part++];
    expected[i] = values[part][ravel(pos, shapes[part], 3)];
  }
  g_assert_cmpint(gs_dtype_of(out), ==, dtype);
  test_assert_values(out, so, 3, expected, 0, 0);
  for (int i = 0; i < N; i++)
    g_free(values[i]);
  dispose_all(parts, N);
  gs_dispose(out);
}

static void test_cat_values(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 21);
  static const int dims[] = {0, 1, 2, -1, -3};
  for (size_t di = 0; di < G_N_ELEMENTS(all_dtypes); di++)
    for (int layout = 0; layout < LAYOUT_COUNT; layout++)
      for (size_t k = 0; k < G_N_ELEMENTS(dims); k++)
        check_cat(all_dtypes[di], layout, dims[k], &rng);

  /* One tensor: a copy, not a view. */
  int64_t s[2] = {2, 3};
  gs_tensor t = gs_ones(GS_F32, s, 2);
  gs_tensor out = gs_cat(&t, 1, 0);
  g_assert_cmpuint(gs_storage_id(out), !=, gs_storage_id(t));
  double ones[6] = {1, 1, 1, 1, 1, 1};
  test_assert_values(out, s, 2, ones, 0, 0);
  gs_dispose(t);
  gs_dispose(out);
}

/* The result's dtype is the promotion of all inputs', as torch.cat. */
static void test_cat_promotes(void) {
  static const struct {
    gs_dtype a, b, result;
  } cases[] = {
      {GS_F32, GS_I64, GS_F32}, {GS_BOOL, GS_I64, GS_I64}, {GS_F32, GS_F64, GS_F64},
      {GS_BOOL, GS_BOOL, GS_BOOL}, {GS_I64, GS_F64, GS_F64}, {GS_BOOL, GS_F32, GS_F32},
  };
  int64_t s[1] = {2};
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    gs_tensor parts[2] = {gs_full(cases[i].a, s, 1, 1), gs_full(cases[i].b, s, 1, 0)};
    gs_tensor out = gs_cat(parts, 2, 0);
    gs_tensor stacked = gs_stack(parts, 2, 0);
    g_assert_cmpint(gs_dtype_of(out), ==, cases[i].result);
    g_assert_cmpint(gs_dtype_of(stacked), ==, cases[i].result);
    int64_t so[1] = {4}, ss[2] = {2, 2};
    double expected[4] = {1, 1, 0, 0};
    test_assert_values(out, so, 1, expected, 0, 0);
    test_assert_values(stacked, ss, 2, expected, 0, 0);
    dispose_all(parts, 2);
    gs_dispose(out);
    gs_dispose(stacked);
  }
}

/* PyTorch's legacy rule: 1-D tensors of size 0 are skipped whatever the others' shapes. */
static void test_cat_skips_legacy_empty(void) {
  int64_t s0[1] = {0}, s23[2] = {2, 3};
  double v[6] = {1, 2, 3, 4, 5, 6};
  float vf[6] = {1, 2, 3, 4, 5, 6};
  gs_tensor empty = gs_zeros(GS_F64, s0, 1), m = gs_from_data(GS_F32, s23, 2, vf);
  gs_tensor parts[3] = {empty, m, empty};
  gs_tensor out = gs_cat(parts, 3, 1);
  test_assert_values(out, s23, 2, v, 0, 0);
  g_assert_cmpint(gs_dtype_of(out), ==, GS_F64); /* skipped for shapes, not for dtypes */
  gs_dispose(out);

  /* Only empty tensors: an empty result. */
  gs_tensor empties[2] = {empty, empty};
  out = gs_cat(empties, 2, 0);
  test_assert_values(out, s0, 1, NULL, 0, 0);
  DISPOSE_ALL(out, empty, m);
}

/* ---- stack -------------------------------------------------------------------------- */

static void check_stack(gs_dtype dtype, test_layout first_layout, int dim, gs_rng *rng) {
  enum { N = 3 };
  int64_t s[3] = {3, 4, 5};
  int d = dim < 0 ? dim + 4 : dim;
  gs_tensor parts[N];
  double *values[N];
  for (int i = 0; i < N; i++) {
    parts[i] = make_data(dtype, s, 3, (first_layout + i) % LAYOUT_COUNT, rng);
    values[i] = test_values(parts[i]);
  }
  gs_tensor out = gs_stack(parts, N, dim);
  int64_t so[4];
  for (int e = 0, k = 0; e < 4; e++)
    so[e] = e == d ? N : s[k++];
  double expected[N * 3 * 4 * 5];
  for (int64_t i = 0; i < test_numel(so, 4); i++) {
    int64_t pos[4], inner[3];
    test_unravel(i, so, 4, pos);
    for (int e = 0, k = 0; e < 4; e++)
      if (e != d)
        inner[k++] = pos[e];
    expected[i] = values[pos[d]][ravel(inner, s, 3)];
  }
  g_assert_cmpint(gs_dtype_of(out), ==, dtype);
  test_assert_values(out, so, 4, expected, 0, 0);
  for (int i = 0; i < N; i++)
    g_free(values[i]);
  dispose_all(parts, N);
  gs_dispose(out);
}

static void test_stack_values(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 22);
  static const int dims[] = {0, 1, 2, 3, -1, -4};
  for (size_t di = 0; di < G_N_ELEMENTS(all_dtypes); di++)
    for (int layout = 0; layout < LAYOUT_COUNT; layout++)
      for (size_t k = 0; k < G_N_ELEMENTS(dims); k++)
        check_stack(all_dtypes[di], layout, dims[k], &rng);

  /* 0-D tensors stack into a vector. */
  gs_tensor scalars[3] = {gs_scalar(GS_I64, 4), gs_scalar(GS_I64, 5), gs_scalar(GS_I64, 6)};
  gs_tensor out = gs_stack(scalars, 3, 0);
  int64_t s3[1] = {3};
  double expected[3] = {4, 5, 6};
  test_assert_values(out, s3, 1, expected, 0, 0);
  gs_dispose(out);

  /* Empty tensors stack into an empty result of the right shape. */
  int64_t s0[2] = {2, 0};
  gs_tensor empties[2] = {gs_zeros(GS_F32, s0, 2), gs_zeros(GS_F32, s0, 2)};
  out = gs_stack(empties, 2, 1);
  int64_t so[3] = {2, 2, 0};
  test_assert_values(out, so, 3, NULL, 0, 0);
  gs_dispose(out);
  dispose_all(scalars, 3);
  dispose_all(empties, 2);
}

static void test_join_errors(void) {
  int64_t s23[2] = {2, 3}, s24[2] = {2, 4}, s33[2] = {3, 3}, s3[1] = {3}, s234[3] = {2, 3, 4};
  gs_tensor a = gs_ones(GS_F32, s23, 2), b = gs_ones(GS_F32, s24, 2), c = gs_ones(GS_F32, s33, 2);
  gs_tensor v = gs_ones(GS_F32, s3, 1), scalar = gs_scalar(GS_F32, 1);
  gs_tensor t3 = gs_ones(GS_F32, s234, 3), gone = gs_ones(GS_F32, s23, 2);
  gs_dispose(gone);
  uint64_t live = gs_live_tensor_count();
  gs_tensor r;

  EXPECT_ERROR(r = gs_cat(NULL, 2, 0), "cat: expected a non-empty list of tensors, got 2 tensors (NULL)");
  EXPECT_ERROR(r = gs_cat(&a, 0, 0), "cat: expected a non-empty list of tensors, got 0 tensors");
  EXPECT_ERROR(r = gs_cat((gs_tensor[]){a, b}, 2, 0),
               "cat: expected shapes that match except in dim 0, got [2, 3] (tensor 0) and "
               "[2, 4] (tensor 1)");
  EXPECT_ERROR(r = gs_cat((gs_tensor[]){a, c}, 2, 1),
               "cat: expected shapes that match except in dim 1, got [2, 3] (tensor 0) and "
               "[3, 3] (tensor 1)");
  EXPECT_ERROR(r = gs_cat((gs_tensor[]){a, t3}, 2, 0),
               "cat: expected shapes that match except in dim 0, got [2, 3] (tensor 0) and "
               "[2, 3, 4] (tensor 1)");
  EXPECT_ERROR(r = gs_cat((gs_tensor[]){a, scalar}, 2, 0),
               "cat: a 0-D tensor (tensor 1) cannot be concatenated");
  EXPECT_ERROR(r = gs_cat((gs_tensor[]){a, a}, 2, 2),
               "cat: expected a dimension in [-2, 1] for a 2-D tensor, got 2");
  EXPECT_ERROR(r = gs_cat((gs_tensor[]){a, gone}, 2, 0), "cat: tensor");
  EXPECT_ERROR(r = gs_stack(NULL, 0, 0), "stack: expected a non-empty list of tensors, got 0 tensors (NULL)");
  EXPECT_ERROR(r = gs_stack((gs_tensor[]){a, b}, 2, 0),
               "stack: expected tensors of one shape, got [2, 3] (tensor 0) and [2, 4] (tensor 1)");
  EXPECT_ERROR(r = gs_stack((gs_tensor[]){a, v, a}, 3, 0),
               "stack: expected tensors of one shape, got [2, 3] (tensor 0) and [3] (tensor 1)");
  EXPECT_ERROR(r = gs_stack((gs_tensor[]){a, a}, 2, 3),
               "stack: expected a dimension in [-3, 2] for a 3-D tensor, got 3");
  EXPECT_ERROR(r = gs_stack((gs_tensor[]){gone}, 1, 0), "stack: tensor");
  EXPECT_ERROR(r = gs_stack((gs_tensor[]){a, gone}, 2, 0), "stack: tensor");

  /* A joined size past 64 bits (stride-0 expands: no memory behind them). */
  int64_t big[1] = {((int64_t)1 << 60) - 1};
  gs_tensor one = gs_ones(GS_F32, (int64_t[]){1}, 1);
  gs_tensor wide = gs_expand(one, big, 1);
  gs_tensor many[9] = {wide, wide, wide, wide, wide, wide, wide, wide, wide};
  EXPECT_ERROR(r = gs_cat(many, 9, 0), "cat: the joined size of dim 0 does not fit in 64 bits");
  gs_dispose(wide);
  gs_dispose(one);
  g_assert_true(gs_tensor_is_none(r));

  int64_t s8[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  gs_tensor full_rank = gs_ones(GS_F32, s8, 8);
  EXPECT_ERROR(r = gs_stack(&full_rank, 1, 0), "stack: expected tensors of at most 7 dims, got 8-D");
  gs_dispose(full_rank);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
  gs_tensor list[] = {a, b, c, v, scalar, t3};
  dispose_all(list, G_N_ELEMENTS(list));
}

/* ---- split and chunk ---------------------------------------------------------------- */

/* piece is t's elements [start, start + len) along d, as a view of t's storage. */
static void assert_piece(gs_tensor piece, gs_tensor t, int d, int64_t start, int64_t len) {
  int64_t st[GS_MAX_DIMS], so[GS_MAX_DIMS];
  int nd = gs_shape(t, st);
  memcpy(so, st, sizeof so);
  so[d] = len;
  g_assert_cmpuint(gs_storage_id(piece), ==, gs_storage_id(t));
  g_assert_cmpint(gs_dtype_of(piece), ==, gs_dtype_of(t));
  double *vt = test_values(t);
  int64_t n = test_numel(so, nd);
  double *expected = g_new(double, n + 1);
  for (int64_t i = 0; i < n; i++) {
    int64_t pos[GS_MAX_DIMS];
    test_unravel(i, so, nd, pos);
    pos[d] += start;
    expected[i] = vt[ravel(pos, st, nd)];
  }
  test_assert_values(piece, so, nd, expected, 0, 0);
  g_free(vt);
  g_free(expected);
}

/* Cuts t (split when split_size > 0, else chunk into chunks) and checks the pieces' sizes. */
static void check_cut(gs_tensor t, int dim, int64_t split_size, int chunks,
                      const int64_t *sizes, int count) {
  int d = dim < 0 ? dim + gs_ndim(t) : dim;
  gs_tensor pieces[16];
  uint64_t live = gs_live_tensor_count();
  int asked = split_size > 0 ? gs_split(t, split_size, dim, NULL, 0)
                             : gs_chunk(t, chunks, dim, NULL, 0);
  g_assert_cmpint(asked, ==, count);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live); /* asking creates nothing */
  int got = split_size > 0 ? gs_split(t, split_size, dim, pieces, 16)
                           : gs_chunk(t, chunks, dim, pieces, 16);
  g_assert_cmpint(got, ==, count);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live + (uint64_t)count);
  int64_t start = 0;
  for (int i = 0; i < count; i++) {
    assert_piece(pieces[i], t, d, start, sizes[i]);
    start += sizes[i];
  }
  dispose_all(pieces, (size_t)count);
}

static void test_split_and_chunk_sizes(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 23);
  int64_t s[2] = {7, 6};
  for (size_t di = 0; di < G_N_ELEMENTS(all_dtypes); di++)
    for (int layout = 0; layout < LAYOUT_COUNT; layout++) {
      gs_tensor t = make_data(all_dtypes[di], s, 2, layout, &rng);
      check_cut(t, 0, 3, 0, (int64_t[]){3, 3, 1}, 3);
      check_cut(t, -1, 2, 0, (int64_t[]){2, 2, 2}, 3);
      check_cut(t, 1, 6, 0, (int64_t[]){6}, 1);
      check_cut(t, 0, 100, 0, (int64_t[]){7}, 1);
      /* torch.chunk: ceil(size / chunks) each, the last fewer, maybe fewer than asked. */
      check_cut(t, 0, 0, 3, (int64_t[]){3, 3, 1}, 3);
      check_cut(t, 1, 0, 4, (int64_t[]){2, 2, 2}, 3);
      check_cut(t, 1, 0, 5, (int64_t[]){2, 2, 2}, 3);
      check_cut(t, 0, 0, 7, (int64_t[]){1, 1, 1, 1, 1, 1, 1}, 7);
      check_cut(t, 0, 0, 10, (int64_t[]){1, 1, 1, 1, 1, 1, 1}, 7);
      check_cut(t, 0, 0, 1, (int64_t[]){7}, 1);
      gs_dispose(t);
    }

  /* An empty dim: split gives one empty piece (also for split_size 0), chunk gives chunks. */
  int64_t s0[2] = {0, 3};
  gs_tensor empty = gs_zeros(GS_F32, s0, 2);
  check_cut(empty, 0, 4, 0, (int64_t[]){0}, 1);
  gs_tensor piece;
  g_assert_cmpint(gs_split(empty, 0, 0, &piece, 1), ==, 1);
  assert_piece(piece, empty, 0, 0, 0);
  gs_dispose(piece);
  check_cut(empty, 0, 0, 3, (int64_t[]){0, 0, 0}, 3);
  gs_dispose(empty);
}

/* Pieces are views: writes through a piece show in the input and the other way round. */
static void test_split_pieces_share_storage(void) {
  gs_tensor flat = gs_arange(0, 28, 1, GS_F32);
  gs_tensor base = gs_view(flat, (int64_t[]){7, 4}, 2);
  gs_tensor pieces[3];
  g_assert_cmpint(gs_split(base, 3, 0, pieces, 3), ==, 3);
  for (int i = 0; i < 3; i++) {
    g_assert_cmpuint(gs_storage_id(pieces[i]), ==, gs_storage_id(base));
    g_assert_cmpint(gs_storage_offset(pieces[i]), ==, i * 3 * 4);
  }
  int64_t version = gs_version(base);
  gs_fill_(pieces[1], -1);
  g_assert_cmpint(gs_version(base), >, version);
  for (int64_t r = 0; r < 7; r++)
    for (int64_t c = 0; c < 4; c++)
      g_assert_cmpfloat(gs_get(base, (int64_t[]){r, c}), ==, r >= 3 && r < 6 ? -1 : r * 4 + c);
  gs_fill_(base, 5);
  g_assert_cmpfloat(gs_get(pieces[2], (int64_t[]){0, 3}), ==, 5);

  /* Chunks of a transposed view are views too, with its strides. */
  gs_tensor bt = gs_t(base);
  gs_tensor chunks[2];
  g_assert_cmpint(gs_chunk(bt, 2, 1, chunks, 2), ==, 2);
  g_assert_cmpint(gs_stride(chunks[1], 1), ==, 4);
  g_assert_cmpint(gs_storage_offset(chunks[1]), ==, 4 * 4);
  gs_fill_(chunks[1], 9);
  g_assert_cmpfloat(gs_get(base, (int64_t[]){4, 2}), ==, 9);
  g_assert_cmpfloat(gs_get(base, (int64_t[]){3, 2}), ==, 5);

  gs_tensor list[] = {flat, base, pieces[0], pieces[1], pieces[2], bt, chunks[0], chunks[1]};
  dispose_all(list, G_N_ELEMENTS(list));
}

static void test_split_errors(void) {
  int64_t s[2] = {7, 4};
  gs_tensor t = gs_zeros(GS_F32, s, 2), scalar = gs_scalar(GS_F32, 1);
  gs_tensor out[4] = {GS_NO_TENSOR, GS_NO_TENSOR, GS_NO_TENSOR, GS_NO_TENSOR};
  uint64_t live = gs_live_tensor_count();
  int n = 0;

  /* Too little room: nothing is created, and the message says how many pieces there are. */
  EXPECT_ERROR(n = gs_split(t, 2, 0, out, 3),
               "split: there would be 4 pieces, but the output array has room for 3");
  g_assert_cmpint(n, ==, -1);
  for (int i = 0; i < 4; i++)
    g_assert_true(gs_tensor_is_none(out[i]));
  EXPECT_ERROR(n = gs_chunk(t, 7, 0, out, 4),
               "chunk: there would be 7 pieces, but the output array has room for 4");
  EXPECT_ERROR(n = gs_split(t, 2, 0, out, 0),
               "split: there would be 4 pieces, but the output array has room for 0");
  EXPECT_ERROR(n = gs_split(t, 2, 0, NULL, 4),
               "split: expected an output array and its length (or NULL and 0 to ask for the "
               "count), got NULL and 4");
  EXPECT_ERROR(n = gs_chunk(t, 2, 0, out, -1),
               "chunk: expected an output array and its length (or NULL and 0 to ask for the "
               "count), got an array and -1");
  EXPECT_ERROR(n = gs_split(t, 0, 0, out, 4),
               "split: expected a split_size > 0 (or 0 for an empty dim), got 0 for dim 0 of "
               "size 7");
  EXPECT_ERROR(n = gs_split(t, -2, 1, out, 4),
               "split: expected a split_size > 0 (or 0 for an empty dim), got -2 for dim 1 of "
               "size 4");
  EXPECT_ERROR(n = gs_chunk(t, 0, 0, out, 4), "chunk: expected chunks > 0, got 0");
  EXPECT_ERROR(n = gs_chunk(t, -1, 0, NULL, 0), "chunk: expected chunks > 0, got -1");
  EXPECT_ERROR(n = gs_split(t, 2, 2, out, 4),
               "split: expected a dimension in [-2, 1] for a 2-D tensor, got 2");
  EXPECT_ERROR(n = gs_chunk(scalar, 1, 0, out, 4),
               "chunk: expected a tensor of at least 1 dimension, got 0-D");
  gs_tensor one = gs_ones(GS_F32, (int64_t[]){1}, 1);
  gs_tensor huge = gs_expand(one, (int64_t[]){(int64_t)1 << 32}, 1);
  EXPECT_ERROR(n = gs_split(huge, 1, 0, NULL, 0),
               "split: there would be 4294967296 pieces, more than an int counts");
  gs_dispose(huge);
  gs_dispose(one);
  EXPECT_ERROR(n = gs_split(GS_NO_TENSOR, 1, 0, out, 4),
               "split: expected a tensor, got the empty handle");
  g_assert_cmpint(n, ==, -1);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
  gs_dispose(t);
  gs_dispose(scalar);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  test_add_leak_checked("/join/cat-values", test_cat_values);
  test_add_leak_checked("/join/cat-promotes", test_cat_promotes);
  test_add_leak_checked("/join/cat-skips-legacy-empty", test_cat_skips_legacy_empty);
  test_add_leak_checked("/join/stack-values", test_stack_values);
  g_test_add_func("/join/errors", test_join_errors);
  test_add_leak_checked("/split/sizes", test_split_and_chunk_sizes);
  test_add_leak_checked("/split/pieces-share-storage", test_split_pieces_share_storage);
  g_test_add_func("/split/errors", test_split_errors);
  return g_test_run();
}
