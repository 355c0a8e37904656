/* cases-views.c: gradcheck cases for views, reshapes, clone, contiguous, dtype conversion and
 * padding (constant, which may crop; reflection, replication, circular), nearest resizing,
 * pixel_shuffle/pixel_unshuffle and unfold (overlapping windows):
 * each routes its gradient back into the shape (and dtype) of the tensor it came from. Where a
 * view alone would be linear in a trivial way, the case multiplies by a fixed weight first so
 * that misplaced gradients change the result. */
#include "grad-case.h"

/* in[0] * weight with weight = 1, 2, 3, ... so every element's gradient is distinct. */
static gs_tensor weighted(gs_tensor x) {
  int64_t shape[GS_MAX_DIMS];
  int nd = gs_shape(x, shape);
  gs_tensor flat = gs_arange(1, (double)gs_numel(x) + 1, 1, GS_F64);
  gs_tensor w = gs_reshape(flat, shape, nd);
  gs_tensor y = gs_mul(x, w);
  gs_dispose(flat), gs_dispose(w);
  return y;
}

/* Applies a view op to a weighted copy of in[0]; the view is the last op. */
#define VIEW_CASE(NAME, CALL)                                                                \
  static gs_tensor NAME(const gs_tensor *in, int n, void *u) {                               \
    (void)n, (void)u;                                                                        \
    gs_tensor x = weighted(in[0]);                                                           \
    gs_tensor r = CALL;                                                                      \
    gs_dispose(x);                                                                           \
    return r;                                                                                \
  }

VIEW_CASE(f_view, gs_view(x, (int64_t[]){4, -1}, 2))
VIEW_CASE(f_alias, gs_alias(x))
VIEW_CASE(f_reshape_copy, gs_reshape(gs__keep(gs_t(x)), (int64_t[]){12}, 1))
VIEW_CASE(f_flatten, gs_flatten(x, 0, 1))
VIEW_CASE(f_transpose, gs_transpose(x, 0, 2))
VIEW_CASE(f_t, gs_t(x))
VIEW_CASE(f_permute, gs_permute(x, (int[]){2, 0, 1}, 3))
VIEW_CASE(f_slice, gs_slice(x, 1, 1, 100, 2))
VIEW_CASE(f_narrow, gs_narrow(x, 0, 1, 2))
VIEW_CASE(f_select, gs_select(x, 1, -1))
VIEW_CASE(f_expand, gs_expand(x, (int64_t[]){2, 3, 4}, 3))
VIEW_CASE(f_squeeze, gs_squeeze(x, 1))
VIEW_CASE(f_squeeze_all, gs_squeeze_all(x))
VIEW_CASE(f_unsqueeze, gs_unsqueeze(x, 1))
VIEW_CASE(f_pad_last, gs_constant_pad_nd(x, (int64_t[]){1, 2}, 2, 0.5))
VIEW_CASE(f_pad_crop, gs_constant_pad_nd(x, (int64_t[]){-1, 1, 2, -1, 0, 1}, 6, -1.0))
VIEW_CASE(f_pad_none, gs_constant_pad_nd(x, NULL, 0, 0.0))
VIEW_CASE(f_reflect_1d, gs_reflection_pad(x, (int64_t[]){2, 1}, 2))
VIEW_CASE(f_reflect_2d, gs_reflection_pad(x, (int64_t[]){1, 2, 2, 0}, 4))
VIEW_CASE(f_reflect_3d, gs_reflection_pad(x, (int64_t[]){1, 1, 0, 1, 1, 0}, 6))
VIEW_CASE(f_replicate_1d, gs_replication_pad(x, (int64_t[]){3, 1}, 2))
VIEW_CASE(f_replicate_2d, gs_replication_pad(x, (int64_t[]){0, 2, 1, 1}, 4))
VIEW_CASE(f_replicate_3d, gs_replication_pad(x, (int64_t[]){1, 0, 1, 2, 0, 1}, 6))
VIEW_CASE(f_circular_1d, gs_circular_pad(x, (int64_t[]){3, 1}, 2))
VIEW_CASE(f_circular_2d, gs_circular_pad(x, (int64_t[]){2, 0, 1, 2}, 4))
VIEW_CASE(f_circular_3d, gs_circular_pad(x, (int64_t[]){1, 2, 0, 1, 1, 1}, 6))
VIEW_CASE(f_nearest_1d, gs_upsample_nearest(x, (int64_t[]){7}, NULL, 1))
VIEW_CASE(f_nearest_2d, gs_upsample_nearest(x, (int64_t[]){6, 2}, (double[]){0.5, 0}, 2))
VIEW_CASE(f_nearest_3d, gs_upsample_nearest(x, (int64_t[]){3, 5, 4}, NULL, 3))
VIEW_CASE(f_unfold,
          gs_unfold(x, (int64_t[]){2, 3}, (int64_t[]){1, 1}, (int64_t[]){1, 0}, (int64_t[]){1, 2}))
VIEW_CASE(f_unfold_3d,
          gs_unfold(x, (int64_t[]){2, 2}, (int64_t[]){2, 1}, (int64_t[]){0, 1}, (int64_t[]){1, 1}))
VIEW_CASE(f_pixel_shuffle, gs_pixel_shuffle(x, 2))
VIEW_CASE(f_pixel_shuffle_1, gs_pixel_shuffle(x, 1))
VIEW_CASE(f_pixel_unshuffle, gs_pixel_unshuffle(x, 2))
VIEW_CASE(f_contiguous_copy, gs_contiguous(gs__keep(gs_t(x))))
VIEW_CASE(f_contiguous_view, gs_contiguous(x))
VIEW_CASE(f_channels_last, gs_contiguous_as(x, GS_CHANNELS_LAST))
VIEW_CASE(f_channels_last_3d, gs_contiguous_as(gs__keep(gs_unsqueeze(x, 2)), GS_CHANNELS_LAST_3D))
VIEW_CASE(f_clone, gs_clone(x))
VIEW_CASE(f_as_strided_windows, gs_as_strided(x, (int64_t[]){3, 4}, (int64_t[]){2, 1}, 2, 1))
/* Over a transposed input: positions are the storage's, the gradient the input's layout. */
VIEW_CASE(f_as_strided_of_t,
          gs_as_strided(gs__keep(gs_t(x)), (int64_t[]){2, 5}, (int64_t[]){3, 1}, 2, 2))
VIEW_CASE(f_to_f32_and_back, gs_to_dtype(gs__keep(gs_to_dtype(x, GS_F32)), GS_F64))

/* Two views of one tensor: their gradients must sum in it. */
static gs_tensor f_two_slices(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  gs_tensor a = gs_slice(in[0], 0, 0, 3, 1), b = gs_slice(in[0], 0, 1, 4, 1);
  gs_tensor ab = gs_mul(a, b);
  gs_tensor r = gs_slice(ab, 1, 0, 2, 1);
  gs_dispose(a), gs_dispose(b), gs_dispose(ab);
  return r;
}

/* ---- in-place writes through views, and views made stale by them ---------------------- */

/* mul_ through rows 1-2 of a weighted [4, 3] copy of in[0]: the base's grad_fn becomes
 * CopySlices, which runs MulBackward on the rows and passes the others through. */
static gs_tensor f_mul_through_narrow(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  gs_tensor y = weighted(in[0]);
  gs_tensor rows = gs_narrow(y, 0, 1, 2);
  gs_mul_(rows, in[1]);
  gs_dispose(rows);
  return y;
}

/* copy_ into row 1 of a zeros buffer that needs no gradient itself, as an RNN fills the
 * rows of its output. */
static gs_tensor f_copy_into_row(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  gs_tensor buffer = gs_zeros(GS_F64, (int64_t[]){3, 4}, 2);
  gs_tensor row = gs_select(buffer, 0, 1);
  gs_copy_(row, gs__keep(gs_tanh(in[0])));
  gs_dispose(row);
  return buffer;
}

/* mul_ into column 2 of a base laid out transposed (a clone keeps its source's strides): the
 * view's elements are found through the base's own layout. */
static gs_tensor f_mul_into_strided_base(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  gs_tensor y = gs_clone(gs__keep(gs_t(gs__keep(weighted(in[0])))));
  gs_tensor column = gs_select(y, 1, 2);
  gs_mul_(column, in[1]);
  gs_dispose(column);
  return y;
}

/* A view made before its base was written through another, overlapping view: on use it gets
 * its history from the base's current one (here after the base itself was disposed). */
static gs_tensor f_stale_view(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  gs_tensor y = weighted(in[0]);
  gs_tensor late = gs_narrow(y, 0, 2, 4);
  gs_tensor early = gs_narrow(y, 0, 0, 4);
  gs_mul_(early, in[1]);
  gs_dispose(early), gs_dispose(y);
  return late;
}

const grad_case grad_cases_views[] = {
    {"ViewBackward", "view [3, 4] as [4, -1]", f_view, 1, {GI_S(2, 3, 4)}},
    {"AliasBackward", "alias of a sliced [3, 4]", f_alias, 1, {GI_S(2, 3, 4)}},
    {"TBackward", "t of a 1-D tensor", f_t, 1, {GI(1, 5)}},
    {"ReshapeBackward", "reshape of a transposed view copies", f_reshape_copy, 1, {GI(2, 3, 4)}},
    {"ReshapeBackward", "flatten", f_flatten, 1, {GI_T(3, 2, 3, 4)}},
    {"TransposeBackward", "transpose(0, 2)", f_transpose, 1, {GI_S(3, 2, 3, 4)}},
    {"TBackward", "t", f_t, 1, {GI_T(2, 3, 4)}},
    {"PermuteBackward", "permute(2, 0, 1)", f_permute, 1, {GI_T(3, 2, 3, 4)}},
    {"SliceBackward", "slice with step 2", f_slice, 1, {GI_S(3, 2, 5, 3)}},
    {"SliceBackward", "narrow", f_narrow, 1, {GI_T(2, 4, 3)}},
    {"SliceBackward", "two overlapping slices", f_two_slices, 1, {GI_S(2, 4, 3)}},
    {"SelectBackward", "select(1, -1)", f_select, 1, {GI_T(3, 2, 3, 4)}},
    {"ExpandBackward", "expand [3, 1] to [2, 3, 4]", f_expand, 1, {GI(2, 3, 1)}},
    {"SqueezeBackward", "squeeze(1)", f_squeeze, 1, {GI(3, 3, 1, 4)}},
    {"SqueezeBackward", "squeeze all", f_squeeze_all, 1, {GI_S(4, 1, 3, 1, 2)}},
    {"UnsqueezeBackward", "unsqueeze(1)", f_unsqueeze, 1, {GI_T(2, 3, 4)}},
    {"ContiguousBackward", "of a transposed view (copies)", f_contiguous_copy, 1, {GI(2, 3, 4)}},
    {"ContiguousBackward",
     "of a contiguous tensor (a view)",
     f_contiguous_view,
     1,
     {GI_S(2, 3, 4)}},
    {"ContiguousBackward", "channels_last (copies)", f_channels_last, 1, {GI_T(4, 2, 3, 2, 2)}},
    {"ContiguousBackward", "channels_last_3d (copies)", f_channels_last_3d, 1, {GI(4, 2, 3, 2, 2)}},
    {"CloneBackward", "copy-on-write clone", f_clone, 1, {GI_T(2, 3, 4)}},
    {"CopySlices", "mul_ through a narrow", f_mul_through_narrow, 2, {GI(2, 4, 3), GI(2, 2, 3)}},
    {"CopySlices", "copy_ into a row of a buffer", f_copy_into_row, 1, {GI(1, 4)}},
    {"CopySlices",
     "mul_ into a column of a transposed base",
     f_mul_into_strided_base,
     2,
     {GI(2, 3, 4), GI_T(1, 4)}},
    {"AsStridedBackward",
     "a view made stale by a write through another",
     f_stale_view,
     2,
     {GI(1, 6), GI_S(1, 4)}},
    {"AsStridedBackward", "as_strided: overlapping windows", f_as_strided_windows, 1, {GI(1, 12)}},
    {"AsStridedBackward",
     "as_strided over a transposed input",
     f_as_strided_of_t,
     1,
     {GI(2, 3, 4)}},
    {"ConstantPadNdBackward", "pad (1, 2) of the last dim", f_pad_last, 1, {GI_S(2, 3, 4)}},
    {"ConstantPadNdBackward", "pad and crop 3 dims", f_pad_crop, 1, {GI_T(3, 2, 3, 4)}},
    {"ConstantPadNdBackward", "no pads: a copy", f_pad_none, 1, {GI(2, 3, 4)}},
    {"ReflectionPad1dBackward", "(2, 1) of [2, 3, 4]", f_reflect_1d, 1, {GI_T(3, 2, 3, 4)}},
    {"ReflectionPad2dBackward", "(1, 2, 2, 0) of [3, 4, 3]", f_reflect_2d, 1, {GI_S(3, 3, 4, 3)}},
    {"ReflectionPad3dBackward", "of [1, 2, 3, 2, 3]", f_reflect_3d, 1, {GI(5, 1, 2, 3, 2, 3)}},
    {"ReplicationPad1dBackward", "(3, 1) of [2, 3]", f_replicate_1d, 1, {GI(2, 2, 3)}},
    {"ReplicationPad2dBackward", "of [1, 2, 3, 2]", f_replicate_2d, 1, {GI_T(4, 1, 2, 3, 2)}},
    {"ReplicationPad3dBackward", "of [2, 2, 3, 2]", f_replicate_3d, 1, {GI(4, 2, 2, 3, 2)}},
    /* a pad as large as its dim takes every row twice: both gradients must add up */
    {"CircularPad1dBackward", "(3, 1) of [2, 3]", f_circular_1d, 1, {GI_T(2, 2, 3)}},
    {"CircularPad2dBackward", "(2, 0, 1, 2) of [2, 3, 2]", f_circular_2d, 1, {GI_S(3, 2, 3, 2)}},
    {"CircularPad3dBackward", "of [1, 2, 2, 3, 2]", f_circular_3d, 1, {GI(5, 1, 2, 2, 3, 2)}},
    {"UpsampleNearest1dBackward", "4 to 7", f_nearest_1d, 1, {GI(3, 2, 1, 4)}},
    {"UpsampleNearest2dBackward",
     "[3, 4] to [6, 2], scale 0.5 then none",
     f_nearest_2d,
     1,
     {GI_T(4, 1, 2, 3, 4)}},
    {"UpsampleNearest3dBackward",
     "[2, 3, 3] to [3, 5, 4]",
     f_nearest_3d,
     1,
     {GI(5, 1, 1, 2, 3, 3)}},
    {"Im2ColBackward",
     "2 x 3 windows, padding (1, 0), stride (1, 2)",
     f_unfold,
     1,
     {GI_T(4, 2, 2, 3, 5)}},
    {"Im2ColBackward",
     "[C, H, W], dilation (2, 1), padding (0, 1)",
     f_unfold_3d,
     1,
     {GI_S(3, 2, 4, 3)}},
    {"PixelShuffleBackward", "[2, 8, 2, 3] by 2", f_pixel_shuffle, 1, {GI(4, 2, 8, 2, 3)}},
    {"PixelShuffleBackward", "by 1: a copy, sliced", f_pixel_shuffle_1, 1, {GI_S(3, 2, 3, 4)}},
    {"PixelUnshuffleBackward",
     "[3, 4, 6] by 2, transposed",
     f_pixel_unshuffle,
     1,
     {GI_T(3, 3, 4, 6)}},
    {"ToDtypeBackward",
     "f64 -> f32 -> f64",
     f_to_f32_and_back,
     1,
     {GI(2, 3, 4)},
     {.eps = 1e-2, .atol = 1e-4, .rtol = 1e-3}},
};
const int grad_cases_views_count = G_N_ELEMENTS(grad_cases_views);
