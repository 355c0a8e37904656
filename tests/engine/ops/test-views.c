/* test-views.c: views share their base's storage and see its writes; their geometry matches
 * PyTorch's; reshape copies only when a view is impossible; the channels-last memory formats'
 * strides are torch's; every bad argument is reported. */
#include "test-util.h"

/* A [2, 3, 4] f64 tensor holding 0..23. */
static gs_tensor iota234(void) {
  gs_tensor flat = gs_arange(0, 24, 1, GS_F64);
  gs_tensor t = gs_view(flat, (int64_t[]){2, 3, 4}, 3);
  gs_dispose(flat);
  return t;
}

static void assert_geometry(gs_tensor t, const int64_t *shape, const int64_t *strides, int ndim,
                            int64_t offset) {
  g_assert_cmpint(gs_ndim(t), ==, ndim);
  for (int i = 0; i < ndim; i++) {
    g_assert_cmpint(gs_size(t, i), ==, shape[i]);
    g_assert_cmpint(gs_stride(t, i), ==, strides[i]);
  }
  g_assert_cmpint(gs_storage_offset(t), ==, offset);
}

/* Fills v with a fresh marker value and checks the base changed exactly where v points. */
static void assert_view_writes_through(gs_tensor base, gs_tensor v) {
  static double marker = -1.0;
  g_assert_cmpuint(gs_storage_id(base), ==, gs_storage_id(v));
  int64_t n = gs_numel(base);
  double *before = test_values(base);
  gs_fill_(v, marker--); /* a value no earlier call wrote */
  double *after = test_values(base);
  int64_t changed = 0;
  for (int64_t i = 0; i < n; i++)
    changed += after[i] != before[i];
  g_assert_cmpint(changed, ==, gs_numel(v) > n ? n : gs_numel(v));
  g_free(before);
  g_free(after);
}

static void test_view_and_reshape(void) {
  gs_tensor t = iota234();
  gs_tensor v = gs_view(t, (int64_t[]){6, -1}, 2);
  assert_geometry(v, (int64_t[]){6, 4}, (int64_t[]){4, 1}, 2, 0);
  assert_view_writes_through(t, v);
  gs_dispose(v);
  gs_dispose(t);
  t = iota234(); /* fresh values for the reshape checks */

  gs_tensor tr = gs_transpose(t, 1, 2); /* [2, 4, 3], not viewable as [2, 12] */
  EXPECT_ERROR(gs_view(tr, (int64_t[]){2, 12}, 2), "use reshape, which copies");
  gs_tensor r = gs_reshape(tr, (int64_t[]){2, 12}, 2);
  g_assert_cmpuint(gs_storage_id(r), !=, gs_storage_id(t));
  g_assert_true(gs_is_contiguous(r));
  /* r[0][0..3] = t[0][0][0], t[0][1][0], t[0][2][0], t[0][0][1] */
  g_assert_cmpfloat(gs_get(r, (int64_t[]){0, 0}), ==, 0);
  g_assert_cmpfloat(gs_get(r, (int64_t[]){0, 1}), ==, 4);
  g_assert_cmpfloat(gs_get(r, (int64_t[]){0, 2}), ==, 8);
  g_assert_cmpfloat(gs_get(r, (int64_t[]){0, 3}), ==, 1);
  /* Merging only the batch dim of the transposed tensor is still a view. */
  gs_tensor merged = gs_view(tr, (int64_t[]){2, 4, 3}, 3);
  g_assert_cmpuint(gs_storage_id(merged), ==, gs_storage_id(t));
  gs_tensor r2 = gs_reshape(t, (int64_t[]){4, 6}, 2); /* viewable: no copy */
  g_assert_cmpuint(gs_storage_id(r2), ==, gs_storage_id(t));

  EXPECT_ERROR(gs_view(t, (int64_t[]){5, 5}, 2),
               "view: shape [5, 5] is invalid for a tensor of shape [2, 3, 4] (24 elements)");
  EXPECT_ERROR(gs_view(t, (int64_t[]){-1, -1}, 2), "only one size may be -1");
  EXPECT_ERROR(gs_view(t, (int64_t[]){-1, 5}, 2), "is invalid for a tensor of shape");
  DISPOSE_ALL(merged, r2, r, tr, t);
}

static void test_transpose_permute_t(void) {
  gs_tensor t = iota234();
  gs_tensor tr = gs_transpose(t, 0, -1);
  assert_geometry(tr, (int64_t[]){4, 3, 2}, (int64_t[]){1, 4, 12}, 3, 0);
  g_assert_false(gs_is_contiguous(tr));
  g_assert_cmpfloat(gs_get(tr, (int64_t[]){3, 2, 1}), ==, 1 * 12 + 2 * 4 + 3);
  gs_tensor p = gs_permute(t, (int[]){1, 2, 0}, 3);
  assert_geometry(p, (int64_t[]){3, 4, 2}, (int64_t[]){4, 1, 12}, 3, 0);
  assert_view_writes_through(t, p);
  EXPECT_ERROR(gs_permute(t, (int[]){0, 0, 1}, 3), "permute: dim 0 appears twice");
  EXPECT_ERROR(gs_permute(t, (int[]){0, 1}, 2), "permute: expected 3 dims for a 3-D tensor, got 2");
  EXPECT_ERROR(gs_transpose(t, 0, 3), "transpose: expected a dimension in [-3, 2] for a 3-D "
                                      "tensor, got 3");
  EXPECT_ERROR(gs_t(t), "t: expected a tensor of at most 2 dimensions, got 3-D");
  DISPOSE_ALL(tr, p, t);
}

/* as_strided: any geometry over the storage, PyTorch's bounds and messages, and its gradient
 * reaching only the input's elements (the values PyTorch 1.13 gives). */
static void test_as_strided(void) {
  gs_tensor t = iota234();
  gs_tensor w = gs_as_strided(t, (int64_t[]){3, 4}, (int64_t[]){2, 1}, 2, 1);
  assert_geometry(w, (int64_t[]){3, 4}, (int64_t[]){2, 1}, 2, 1);
  g_assert_cmpfloat(gs_get(w, (int64_t[]){2, 3}), ==, 1 + 4 + 3);
  gs_fill_(w, -1); /* its windows overlap: elements 1..8 of the base, each once */
  for (int64_t i = 0; i < 24; i++)
    g_assert_cmpfloat(gs_get(t, (int64_t[]){i / 12, i / 4 % 3, i % 4}), ==,
                      i >= 1 && i <= 8 ? -1 : (double)i);
  gs_tensor z = gs_zeros(GS_F32, (int64_t[]){4}, 1);
  EXPECT_ERROR(gs_as_strided(z, (int64_t[]){2, 3}, (int64_t[]){1, 2}, 2, 0),
               "as_strided: setStorage: sizes [2, 3], strides [1, 2], storage offset 0, and "
               "itemsize 4 requiring a storage size of 24 are out of bounds for storage of "
               "size 16");
  EXPECT_ERROR(gs_as_strided(z, (int64_t[]){2}, (int64_t[]){-1}, 1, 0),
               "as_strided: Negative strides are not supported at the moment, got strides: [-1]");
  EXPECT_ERROR(gs_as_strided(z, (int64_t[]){2}, (int64_t[]){1}, 1, -1),
               "as_strided: invalid storage offset -1");
  gs_tensor empty = gs_as_strided(z, (int64_t[]){0, 3}, (int64_t[]){9, 9}, 2, 4);
  g_assert_cmpint(gs_numel(empty), ==, 0);

  /* b = arange(6) (requires grad); b[2:4].as_strided((4,), (1,), 0).sum().backward() gives
   * [0, 0, 1, 1, 0, 0]; b.as_strided((2, 2), (1, 1), 1) times [[1, 2], [3, 4]] gives
   * [0, 1, 5, 4, 0, 0]. */
  gs_tensor b = gs_arange(0, 6, 1, GS_F64);
  gs_set_requires_grad(b, true);
  gs_tensor mid = gs_slice(b, 0, 2, 4, 1);
  gs_tensor past = gs_as_strided(mid, (int64_t[]){4}, (int64_t[]){1}, 1, 0);
  gs_tensor s1 = gs_sum(past, NULL, 0, false);
  gs_backward(s1);
  test_assert_values(gs_grad(b), (int64_t[]){6}, 1, (double[]){0, 0, 1, 1, 0, 0}, 0, 0);
  gs_zero_grad(b);
  gs_tensor win = gs_as_strided(b, (int64_t[]){2, 2}, (int64_t[]){1, 1}, 2, 1);
  double wv[4] = {1, 2, 3, 4};
  gs_tensor k = gs_from_data(GS_F64, (int64_t[]){2, 2}, 2, wv);
  gs_tensor prod = gs_mul(win, k), s2 = gs_sum(prod, NULL, 0, false);
  gs_backward(s2);
  test_assert_values(gs_grad(b), (int64_t[]){6}, 1, (double[]){0, 1, 5, 4, 0, 0}, 0, 0);
  DISPOSE_ALL(w, z, empty, mid, past, s1, win, k, prod, s2, b, t);
}

static void test_slice_select_narrow(void) {
  gs_tensor t = iota234();
  gs_tensor s = gs_slice(t, 2, 1, 100, 2); /* columns 1, 3 */
  assert_geometry(s, (int64_t[]){2, 3, 2}, (int64_t[]){12, 4, 2}, 3, 1);
  g_assert_cmpfloat(gs_get(s, (int64_t[]){1, 2, 1}), ==, 12 + 8 + 3);
  gs_tensor neg = gs_slice(t, 1, -2, -1, 1); /* row 1 only */
  assert_geometry(neg, (int64_t[]){2, 1, 4}, (int64_t[]){12, 4, 1}, 3, 4);
  gs_tensor empty = gs_slice(t, 0, 2, 1, 1);
  g_assert_cmpint(gs_size(empty, 0), ==, 0);
  g_assert_cmpint(gs_numel(empty), ==, 0);
  gs_tensor sel = gs_select(t, 1, -1);
  assert_geometry(sel, (int64_t[]){2, 4}, (int64_t[]){12, 1}, 2, 8);
  gs_tensor nar = gs_narrow(t, 2, 1, 2);
  assert_geometry(nar, (int64_t[]){2, 3, 2}, (int64_t[]){12, 4, 1}, 3, 1);
  assert_view_writes_through(t, s);
  assert_view_writes_through(t, sel);

  EXPECT_ERROR(gs_slice(t, 0, 0, 2, 0), "slice: expected a positive step, got 0");
  EXPECT_ERROR(gs_select(t, 1, 3), "select: index 3 is out of range for dim 1 of size 3");
  EXPECT_ERROR(gs_narrow(t, 2, 3, 2), "narrow: start 3 and length 2 do not fit in dim 2 of "
                                      "size 4");
  gs_tensor scalar = gs_scalar(GS_F32, 1);
  EXPECT_ERROR(gs_select(scalar, 0, 0), "select: cannot select from a 0-D tensor");
  DISPOSE_ALL(scalar, s, neg, empty, sel, nar, t);
}

static void test_expand_squeeze_unsqueeze(void) {
  gs_tensor col = gs_arange(0, 3, 1, GS_F32);
  gs_tensor c = gs_view(col, (int64_t[]){3, 1}, 2);
  gs_tensor e = gs_expand(c, (int64_t[]){2, 3, 4}, 3);
  assert_geometry(e, (int64_t[]){2, 3, 4}, (int64_t[]){0, 1, 0}, 3, 0);
  g_assert_cmpfloat(gs_get(e, (int64_t[]){1, 2, 3}), ==, 2);
  gs_tensor keep = gs_expand(c, (int64_t[]){-1, 5}, 2);
  assert_geometry(keep, (int64_t[]){3, 5}, (int64_t[]){1, 0}, 2, 0);
  EXPECT_ERROR(gs_expand(c, (int64_t[]){4, 1}, 2),
               "expand: cannot expand shape [3, 1] to [4, 1]: dim 0 has size 3, not 1 or 4");
  EXPECT_ERROR(gs_expand(c, (int64_t[]){3}, 1), "expected at least as many sizes");
  /* Writing into an expanded tensor would write one element several times. */
  EXPECT_ERROR(gs_fill_(e, 1.0), "cannot write in place into an expanded tensor");

  gs_tensor sq = gs_squeeze(c, 1);
  assert_geometry(sq, (int64_t[]){3}, (int64_t[]){1}, 1, 0);
  gs_tensor same = gs_squeeze(c, 0); /* size 3: unchanged */
  assert_geometry(same, (int64_t[]){3, 1}, (int64_t[]){1, 1}, 2, 0);
  gs_tensor un = gs_unsqueeze(col, 0);
  assert_geometry(un, (int64_t[]){1, 3}, (int64_t[]){3, 1}, 2, 0);
  gs_tensor un_last = gs_unsqueeze(col, -1);
  assert_geometry(un_last, (int64_t[]){3, 1}, (int64_t[]){1, 1}, 2, 0);
  gs_tensor ones = gs_zeros(GS_F32, (int64_t[]){1, 3, 1, 2, 1}, 5);
  gs_tensor all = gs_squeeze_all(ones);
  assert_geometry(all, (int64_t[]){3, 2}, (int64_t[]){2, 1}, 2, 0);
  EXPECT_ERROR(gs_unsqueeze(col, 2), "unsqueeze: expected a dimension in [-2, 1]");

  gs_tensor handles[] = {col, c, e, keep, sq, same, un, un_last, ones, all};
  for (size_t i = 0; i < G_N_ELEMENTS(handles); i++)
    gs_dispose(handles[i]);
}

static void test_flatten_and_contiguous(void) {
  gs_tensor t = iota234();
  gs_tensor f = gs_flatten(t, 0, -1);
  assert_geometry(f, (int64_t[]){24}, (int64_t[]){1}, 1, 0);
  gs_tensor f12 = gs_flatten(t, 1, 2);
  assert_geometry(f12, (int64_t[]){2, 12}, (int64_t[]){12, 1}, 2, 0);
  g_assert_cmpuint(gs_storage_id(f12), ==, gs_storage_id(t));
  gs_tensor tr = gs_transpose(t, 0, 2);
  gs_tensor ft = gs_flatten(tr, 0, 1); /* must copy */
  g_assert_cmpuint(gs_storage_id(ft), !=, gs_storage_id(t));
  g_assert_cmpfloat(gs_get(ft, (int64_t[]){1, 0}), ==, 4); /* tr[0][1][0] = t[0][1][0] */
  EXPECT_ERROR(gs_flatten(t, 2, 1), "flatten: start_dim 2 comes after end_dim 1");

  gs_tensor c = gs_contiguous(tr);
  g_assert_true(gs_is_contiguous(c));
  g_assert_cmpuint(gs_storage_id(c), !=, gs_storage_id(t));
  double *vt = test_values(tr), *vc = test_values(c);
  for (int i = 0; i < 24; i++)
    g_assert_cmpfloat(vt[i], ==, vc[i]);
  g_free(vt);
  g_free(vc);
  gs_tensor same = gs_contiguous(t); /* already contiguous: a view */
  g_assert_cmpuint(gs_storage_id(same), ==, gs_storage_id(t));

  DISPOSE_ALL(t, f, f12, tr, ft, c, same);
}

static void test_views_keep_storage_alive(void) {
  gs_memory_stats s0, s1;
  gs_memory_get_stats(&s0);
  gs_tensor t = iota234();
  gs_tensor v = gs_select(t, 0, 1);
  gs_dispose(t);
  g_assert_cmpfloat(gs_get(v, (int64_t[]){2, 3}), ==, 12 + 8 + 3);
  gs_dispose(v);
  gs_memory_get_stats(&s1);
  g_assert_cmpuint(s1.live_storages, ==, s0.live_storages);
}

static void test_zero_dim_and_empty(void) {
  gs_tensor s = gs_scalar(GS_I64, 5);
  g_assert_cmpint(gs_ndim(s), ==, 0);
  g_assert_cmpint(gs_numel(s), ==, 1);
  gs_tensor one = gs_view(s, (int64_t[]){1, 1}, 2);
  g_assert_cmpfloat(gs_item(one), ==, 5);
  gs_tensor back = gs_view(one, NULL, 0);
  g_assert_cmpint(gs_ndim(back), ==, 0);
  gs_tensor empty = gs_zeros(GS_F32, (int64_t[]){0, 3}, 2);
  gs_tensor ev = gs_view(empty, (int64_t[]){3, 0, 5}, 3);
  g_assert_cmpint(gs_numel(ev), ==, 0);
  /* A tensor without elements is contiguous (as in PyTorch), so contiguous() never copies. */
  g_assert_true(gs_is_contiguous(ev));
  int64_t copy_id;
  {
    gs_tensor c = gs_contiguous(ev);
    copy_id = (int64_t)gs_storage_id(c);
    gs_dispose(c);
  }
  g_assert_cmpint(copy_id, ==, (int64_t)gs_storage_id(empty));
  g_assert_cmpint(gs_copy_to(ev, NULL, 0), ==, 0); /* nothing to copy, NULL is fine */
  EXPECT_ERROR(gs_view(empty, (int64_t[]){-1, 0}, 2), "is invalid for a tensor of shape [0, 3]");
  DISPOSE_ALL(s, one, back, empty, ev);
}

/* channels_last (4-D) and channels_last_3d (5-D) as torch 1.13 lays them out: the strides of a
 * copy and of an empty tensor (a size-1 dim keeps the format's stride in empty but not in an
 * already laid out tensor, which contiguous_as returns as a view), the test of a layout, the
 * values kept, and the ranks refused. */
static void test_memory_formats(void) {
  gs_tensor flat = gs_arange(0, 120, 1, GS_F64);
  gs_tensor x = gs_view(flat, (int64_t[]){2, 3, 4, 5}, 4);
  g_assert_true(gs_is_contiguous_as(x, GS_CONTIGUOUS_FORMAT));
  g_assert_false(gs_is_contiguous_as(x, GS_CHANNELS_LAST));
  gs_tensor cl = gs_contiguous_as(x, GS_CHANNELS_LAST);
  assert_geometry(cl, (int64_t[]){2, 3, 4, 5}, (int64_t[]){60, 1, 15, 3}, 4, 0);
  g_assert_true(gs_is_contiguous_as(cl, GS_CHANNELS_LAST));
  g_assert_false(gs_is_contiguous(cl));
  g_assert_cmpuint(gs_storage_id(cl), !=, gs_storage_id(x));
  double *a = test_values(x), *b = test_values(cl);
  for (int i = 0; i < 120; i++)
    g_assert_cmpfloat(a[i], ==, b[i]);
  g_free(a), g_free(b);
  gs_tensor again = gs_contiguous_as(cl, GS_CHANNELS_LAST); /* laid out already: a view */
  g_assert_cmpuint(gs_storage_id(again), ==, gs_storage_id(cl));
  gs_tensor back = gs_contiguous_as(cl, GS_CONTIGUOUS_FORMAT);
  assert_geometry(back, (int64_t[]){2, 3, 4, 5}, (int64_t[]){60, 20, 5, 1}, 4, 0);
  gs_tensor e = gs_empty_format(GS_F32, (int64_t[]){2, 3, 1, 1}, 4, GS_CHANNELS_LAST);
  assert_geometry(e, (int64_t[]){2, 3, 1, 1}, (int64_t[]){3, 1, 3, 3}, 4, 0);
  g_assert_true(gs_is_contiguous_as(e, GS_CHANNELS_LAST) && gs_is_contiguous(e));
  gs_tensor none = gs_empty_format(GS_F32, (int64_t[]){2, 0, 4, 5}, 4, GS_CHANNELS_LAST);
  assert_geometry(none, (int64_t[]){2, 0, 4, 5}, (int64_t[]){0, 1, 0, 0}, 4, 0);
  gs_tensor v = gs_empty_format(GS_F64, (int64_t[]){2, 3, 4, 5, 6}, 5, GS_CHANNELS_LAST_3D);
  assert_geometry(v, (int64_t[]){2, 3, 4, 5, 6}, (int64_t[]){360, 1, 90, 18, 3}, 5, 0);
  g_assert_false(gs_is_contiguous_as(v, GS_CHANNELS_LAST));
  EXPECT_ERROR(gs_contiguous_as(flat, GS_CHANNELS_LAST), "required rank 4 tensor");
  EXPECT_ERROR(gs_empty_format(GS_F32, (int64_t[]){2, 3, 4, 5}, 4, GS_CHANNELS_LAST_3D),
               "required rank 5 tensor to use channels_last_3d");
  EXPECT_ERROR(gs_contiguous_as(x, (gs_memory_format)7), "expected a memory format");
  gs_tensor all[] = {flat, x, cl, again, back, e, none, v};
  for (size_t i = 0; i < G_N_ELEMENTS(all); i++)
    gs_dispose(all[i]);
}

/* t.as_strided_ (and unsqueeze_, t_ made of it): the tensor itself takes the geometry over its
 * own storage, keeps its handle and its views, and its version goes up; what autograd tracks
 * is refused, and a node that saved the tensor refuses to run backward after the change. */
static void test_as_strided_in_place(void) {
  gs_tensor t = iota234();
  gs_tensor other = gs_select(t, 0, 1); /* another view of the storage */
  int64_t version = gs_version(t);
  uint64_t storage = gs_storage_id(t);
  g_assert_true(gs_as_strided_(t, (int64_t[]){4, 3}, (int64_t[]){1, 4}, 2, 12, "t_"));
  assert_geometry(t, (int64_t[]){4, 3}, (int64_t[]){1, 4}, 2, 12);
  g_assert_cmpint(gs_numel(t), ==, 12);
  g_assert_cmpuint(gs_storage_id(t), ==, storage);
  g_assert_cmpint(gs_version(t), ==, version + 1);
  g_assert_cmpint(gs_version(other), ==, version + 1);
  g_assert_cmpfloat(gs_get(t, (int64_t[]){3, 2}), ==, 12 + 3 + 8);
  assert_view_writes_through(t, other); /* still one storage: writes show through */
  EXPECT_ERROR(gs_as_strided_(t, (int64_t[]){5, 5}, (int64_t[]){5, 1}, 2, 0, "resize_"),
               "resize_: setStorage: sizes [5, 5], strides [5, 1], storage offset 0, and "
               "itemsize 8 requiring a storage size of 200 are out of bounds for storage of "
               "size 192");
  assert_geometry(t, (int64_t[]){4, 3}, (int64_t[]){1, 4}, 2, 12); /* unchanged after it */

  gs_tensor leaf = gs_ones(GS_F64, (int64_t[]){2}, 1);
  gs_set_requires_grad(leaf, true);
  EXPECT_ERROR(gs_as_strided_(leaf, (int64_t[]){1, 2}, (int64_t[]){2, 1}, 2, 0, "unsqueeze_"),
               "unsqueeze_: a leaf Variable that requires grad is being used in an in-place "
               "operation.");
  gs_tensor made = gs_mul(leaf, leaf);
  EXPECT_ERROR(gs_as_strided_(made, (int64_t[]){1, 2}, (int64_t[]){2, 1}, 2, 0, NULL),
               "as_strided_: tensor #");
  g_assert_cmpint(gs_ndim(made), ==, 1);
  bool was = gs_set_grad_enabled(false); /* under no_grad a leaf may change shape, as torch */
  g_assert_true(gs_as_strided_(leaf, (int64_t[]){1, 2}, (int64_t[]){2, 1}, 2, 0, "unsqueeze_"));
  gs_set_grad_enabled(was);
  g_assert_cmpint(gs_ndim(leaf), ==, 2);

  /* w * c saved c (for w's gradient): c changing shape afterwards makes backward refuse */
  gs_tensor w = gs_ones(GS_F64, (int64_t[]){2}, 1);
  gs_set_requires_grad(w, true);
  gs_tensor c = gs_arange(1, 3, 1, GS_F64);
  gs_tensor y = gs_mul(w, c), s = gs_sum(y, NULL, 0, false);
  g_assert_true(gs_as_strided_(c, (int64_t[]){1, 2}, (int64_t[]){2, 1}, 2, 0, "unsqueeze_"));
  EXPECT_ERROR(gs_backward(s), "modified by an inplace operation");
  g_assert_null(gs_grad(w).id ? "a gradient" : NULL);
  DISPOSE_ALL(other, t, leaf, made, w, c, y, s);
}

/* An elementwise result is laid out as its operands are, as torch's TensorIterator lays it
 * out: channels-last in, channels-last out (unary, binary, a broadcast bias first or second,
 * a comparison, where, a dtype conversion); a transposed input gives a transposed result; the
 * first operand that orders the dims decides; row-major inputs give row-major results; the
 * values are the row-major ones. */
static void test_elementwise_results_keep_the_layout(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 5);
  gs_tensor x = gs_randn(GS_F64, (int64_t[]){2, 3, 4, 5}, 4, &rng);
  gs_tensor cl = gs_contiguous_as(x, GS_CHANNELS_LAST);
  gs_tensor bias = gs_randn(GS_F64, (int64_t[]){3, 1, 1}, 3, &rng);
  const int64_t cl_strides[4] = {60, 1, 15, 3}, row_major[4] = {60, 20, 5, 1};
  gs_tensor positive = gs_gt_scalar(cl, 0.0);
  gs_tensor results[] = {gs_exp(cl),
                         gs_mul_scalar(cl, 2.0),
                         gs_add(cl, bias),
                         gs_add(bias, cl),
                         gs_add(cl, x),
                         positive,
                         gs_where(positive, cl, x),
                         gs_to_dtype(cl, GS_F32)};
  for (size_t i = 0; i < G_N_ELEMENTS(results); i++) {
    test_set_context("result %zu", i);
    assert_geometry(results[i], (int64_t[]){2, 3, 4, 5}, cl_strides, 4, 0);
  }
  gs_tensor row = gs_add(x, cl); /* x comes first and orders the dims */
  assert_geometry(row, (int64_t[]){2, 3, 4, 5}, row_major, 4, 0);
  gs_tensor plain = gs_exp(x);
  assert_geometry(plain, (int64_t[]){2, 3, 4, 5}, row_major, 4, 0);
  gs_tensor xt = gs_transpose(x, 2, 3), txt = gs_neg(xt);
  assert_geometry(txt, (int64_t[]){2, 3, 5, 4}, (int64_t[]){60, 20, 1, 5}, 4, 0);
  test_set_context("values");
  double *want = test_values(plain), *got = test_values(results[0]);
  for (int i = 0; i < 120; i++)
    g_assert_cmpfloat(want[i], ==, got[i]);
  g_free(want), g_free(got);
  for (size_t i = 0; i < G_N_ELEMENTS(results); i++)
    gs_dispose(results[i]);
  gs_tensor rest[] = {x, cl, bias, row, plain, xt, txt};
  for (size_t i = 0; i < G_N_ELEMENTS(rest); i++)
    gs_dispose(rest[i]);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/views/view-and-reshape", test_view_and_reshape);
  g_test_add_func("/views/elementwise-results-keep-the-layout",
                  test_elementwise_results_keep_the_layout);
  g_test_add_func("/views/transpose-permute-t", test_transpose_permute_t);
  g_test_add_func("/views/slice-select-narrow", test_slice_select_narrow);
  g_test_add_func("/views/as-strided", test_as_strided);
  g_test_add_func("/views/as-strided-in-place", test_as_strided_in_place);
  g_test_add_func("/views/expand-squeeze-unsqueeze", test_expand_squeeze_unsqueeze);
  g_test_add_func("/views/flatten-and-contiguous", test_flatten_and_contiguous);
  g_test_add_func("/views/memory-formats", test_memory_formats);
  test_add_leak_checked("/views/views-keep-storage-alive", test_views_keep_storage_alive);
  g_test_add_func("/views/zero-dim-and-empty", test_zero_dim_and_empty);
  return g_test_run();
}
