/* test-views.c: views share their base's storage and see its writes; each view op's shape,
 * strides and offset (PyTorch's); view refuses what only reshape can do; and the errors bad
 * dims, sizes and indices give. */
#include "test-util.h"

/* [[0 1 2 3] [4 5 6 7] [8 9 10 11]] as f32. */
static gs_tensor make_3x4(void) {
  gs_tensor r = gs_arange(0, 12, 1, GS_F32);
  gs_tensor m = gs_view(r, (int64_t[]){3, 4}, 2);
  gs_dispose(r);
  return m;
}

static void assert_geometry(gs_tensor t, int ndim, const int64_t *shape,
                            const int64_t *strides, int64_t offset) {
  int64_t sh[GS_MAX_DIMS], st[GS_MAX_DIMS];
  g_assert_cmpint(gs_shape(t, sh), ==, ndim);
  g_assert_cmpint(gs_strides(t, st), ==, ndim);
  for (int i = 0; i < ndim; i++) {
    g_assert_cmpint(sh[i], ==, shape[i]);
    g_assert_cmpint(st[i], ==, strides[i]);
  }
  g_assert_cmpint(gs_storage_offset(t), ==, offset);
}

static void test_view_shares_storage_and_writes(void) {
  gs_tensor m = make_3x4();
  gs_tensor v = gs_view(m, (int64_t[]){2, -1}, 2);
  assert_geometry(v, 2, (int64_t[]){2, 6}, (int64_t[]){6, 1}, 0);
  g_assert_cmpuint(gs_storage_id(v), ==, gs_storage_id(m));
  gs_fill_(v, 1);
  g_assert_cmpfloat(gs_get(m, (int64_t[]){2, 3}), ==, 1);
  gs_dispose(m); /* the view keeps the storage alive */
  g_assert_cmpfloat(gs_get(v, (int64_t[]){0, 0}), ==, 1);
  gs_dispose(v);
}

static void test_transpose_permute_t(void) {
  gs_tensor m = make_3x4();
  gs_tensor tr = gs_transpose(m, 0, -1);
  assert_geometry(tr, 2, (int64_t[]){4, 3}, (int64_t[]){1, 4}, 0);
  g_assert_false(gs_is_contiguous(tr));
  g_assert_cmpfloat(gs_get(tr, (int64_t[]){3, 1}), ==, 7);
  gs_tensor t2 = gs_t(m);
  assert_geometry(t2, 2, (int64_t[]){4, 3}, (int64_t[]){1, 4}, 0);
  gs_tensor cube = gs_view(m, (int64_t[]){2, 3, 2}, 3);
  gs_tensor p = gs_permute(cube, (int[]){2, 0, 1}, 3);
  assert_geometry(p, 3, (int64_t[]){2, 2, 3}, (int64_t[]){1, 6, 2}, 0);
  EXPECT_ERROR(gs_permute(cube, (int[]){0, 0, 1}, 3), "appears twice");
  EXPECT_ERROR(gs_permute(cube, (int[]){0, 1}, 2), "expected 3 dims");
  EXPECT_ERROR(gs_t(cube), "at most 2 dimensions");
  EXPECT_ERROR(gs_transpose(m, 0, 2), "expected a dimension in [-2, 1] for a 2-D tensor, got 2");
  g_assert_cmpint(gs_last_error_code(), ==, GS_ERR_DIM);
  gs_dispose(m), gs_dispose(tr), gs_dispose(t2), gs_dispose(cube), gs_dispose(p);
}

static void test_slice_select_narrow(void) {
  gs_tensor m = make_3x4();
  gs_tensor s = gs_slice(m, 1, 1, 100, 2); /* m[:, 1::2], end clamped */
  assert_geometry(s, 2, (int64_t[]){3, 2}, (int64_t[]){4, 2}, 1);
  test_assert_values(s, (int64_t[]){3, 2}, 2, (double[]){1, 3, 5, 7, 9, 11}, 0, 0);
  gs_tensor neg = gs_slice(m, 0, -2, INT64_MAX, 1); /* m[-2:] */
  assert_geometry(neg, 2, (int64_t[]){2, 4}, (int64_t[]){4, 1}, 4);
  gs_tensor none = gs_slice(m, 0, 2, 1, 1);
  g_assert_cmpint(gs_numel(none), ==, 0);
  gs_tensor row = gs_select(m, 0, -1);
  assert_geometry(row, 1, (int64_t[]){4}, (int64_t[]){1}, 8);
  gs_tensor n = gs_narrow(m, 1, 1, 2);
  assert_geometry(n, 2, (int64_t[]){3, 2}, (int64_t[]){4, 1}, 1);
  EXPECT_ERROR(gs_slice(m, 0, 0, 2, 0), "positive step");
  EXPECT_ERROR(gs_select(m, 0, 3), "index 3 is out of range for dim 0 of size 3");
  EXPECT_ERROR(gs_narrow(m, 1, 3, 2), "do not fit");
  gs_tensor sc = gs_scalar(GS_F32, 1);
  EXPECT_ERROR(gs_select(sc, 0, 0), "0-D");
  gs_dispose(m), gs_dispose(s), gs_dispose(neg), gs_dispose(none), gs_dispose(row);
  gs_dispose(n), gs_dispose(sc);
}

static void test_expand_squeeze_unsqueeze_flatten(void) {
  gs_tensor col = gs_arange(0, 3, 1, GS_F32);
  gs_tensor col31 = gs_unsqueeze(col, 1);
  assert_geometry(col31, 2, (int64_t[]){3, 1}, (int64_t[]){1, 1}, 0);
  gs_tensor e = gs_expand(col31, (int64_t[]){2, 3, -1}, 3);
  assert_geometry(e, 3, (int64_t[]){2, 3, 1}, (int64_t[]){0, 1, 1}, 0);
  gs_tensor e2 = gs_expand(col31, (int64_t[]){3, 5}, 2);
  assert_geometry(e2, 2, (int64_t[]){3, 5}, (int64_t[]){1, 0}, 0);
  g_assert_cmpfloat(gs_get(e2, (int64_t[]){2, 4}), ==, 2);
  EXPECT_ERROR(gs_expand(col31, (int64_t[]){4, 1}, 2), "cannot expand shape [3, 1] to [4, 1]");
  gs_tensor sq = gs_squeeze(col31, 1);
  assert_geometry(sq, 1, (int64_t[]){3}, (int64_t[]){1}, 0);
  gs_tensor same = gs_squeeze(col31, 0); /* size 3: unchanged */
  g_assert_cmpint(gs_ndim(same), ==, 2);
  gs_tensor ones = gs_zeros(GS_F32, (int64_t[]){1, 3, 1}, 3);
  gs_tensor all = gs_squeeze_all(ones);
  assert_geometry(all, 1, (int64_t[]){3}, (int64_t[]){1}, 0);
  gs_tensor m = make_3x4();
  gs_tensor cube = gs_view(m, (int64_t[]){3, 2, 2}, 3);
  gs_tensor f = gs_flatten(cube, 1, -1);
  assert_geometry(f, 2, (int64_t[]){3, 4}, (int64_t[]){4, 1}, 0);
  g_assert_cmpuint(gs_storage_id(f), ==, gs_storage_id(m));
  EXPECT_ERROR(gs_flatten(cube, 2, 1), "comes after");
  gs_tensor handles[] = {col, col31, e, e2, sq, same, ones, all, m, cube, f};
  for (size_t i = 0; i < G_N_ELEMENTS(handles); i++)
    gs_dispose(handles[i]);
}

static void test_view_refuses_reshape_copies(void) {
  gs_tensor m = make_3x4();
  gs_tensor tr = gs_transpose(m, 0, 1);
  EXPECT_ERROR(gs_view(tr, (int64_t[]){12}, 1), "use reshape");
  gs_tensor flat = gs_reshape(tr, (int64_t[]){12}, 1); /* copies */
  g_assert_cmpuint(gs_storage_id(flat), !=, gs_storage_id(m));
  test_assert_values(flat, (int64_t[]){12}, 1,
                     (double[]){0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}, 0, 0);
  gs_tensor split = gs_view(tr, (int64_t[]){2, 2, 3}, 3); /* splitting a dim is a view */
  g_assert_cmpuint(gs_storage_id(split), ==, gs_storage_id(m));
  gs_tensor cont = gs_contiguous(tr);
  g_assert_true(gs_is_contiguous(cont));
  g_assert_cmpuint(gs_storage_id(cont), !=, gs_storage_id(m));
  gs_tensor cont_m = gs_contiguous(m); /* already contiguous: a view */
  g_assert_cmpuint(gs_storage_id(cont_m), ==, gs_storage_id(m));
  EXPECT_ERROR(gs_view(m, (int64_t[]){5, -1}, 2), "invalid for a tensor of shape [3, 4]");
  EXPECT_ERROR(gs_view(m, (int64_t[]){-1, -1}, 2), "only one size may be -1");
  gs_dispose(m), gs_dispose(tr), gs_dispose(flat), gs_dispose(split), gs_dispose(cont);
  gs_dispose(cont_m);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/views/view-shares-storage-and-writes", test_view_shares_storage_and_writes);
  g_test_add_func("/views/transpose-permute-t", test_transpose_permute_t);
  g_test_add_func("/views/slice-select-narrow", test_slice_select_narrow);
  g_test_add_func("/views/expand-squeeze-unsqueeze-flatten",
                  test_expand_squeeze_unsqueeze_flatten);
  g_test_add_func("/views/view-refuses-reshape-copies", test_view_refuses_reshape_copies);
  return g_test_run();
}
