/* cases-views.c: gradcheck cases for views, reshapes, clone, contiguous and dtype conversion:
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
VIEW_CASE(f_contiguous_copy, gs_contiguous(gs__keep(gs_t(x))))
VIEW_CASE(f_contiguous_view, gs_contiguous(x))
VIEW_CASE(f_clone, gs_clone(x))
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

const grad_case grad_cases_views[] = {
    {"ViewBackward", "view [3, 4] as [4, -1]", f_view, 1, {GI_S(2, 3, 4)}},
    {"ViewBackward", "t of a 1-D tensor", f_t, 1, {GI(1, 5)}},
    {"ReshapeBackward", "reshape of a transposed view copies", f_reshape_copy, 1, {GI(2, 3, 4)}},
    {"ReshapeBackward", "flatten", f_flatten, 1, {GI_T(3, 2, 3, 4)}},
    {"TransposeBackward", "transpose(0, 2)", f_transpose, 1, {GI_S(3, 2, 3, 4)}},
    {"TransposeBackward", "t", f_t, 1, {GI_T(2, 3, 4)}},
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
    {"ContiguousBackward", "of a contiguous tensor (a view)", f_contiguous_view, 1, {GI_S(2, 3, 4)}},
    {"CloneBackward", "copy-on-write clone", f_clone, 1, {GI_T(2, 3, 4)}},
    {"ToDtypeBackward", "f64 -> f32 -> f64", f_to_f32_and_back, 1, {GI(2, 3, 4)},
     {.eps = 1e-2, .atol = 1e-4, .rtol = 1e-3}},
};
const int grad_cases_views_count = G_N_ELEMENTS(grad_cases_views);
