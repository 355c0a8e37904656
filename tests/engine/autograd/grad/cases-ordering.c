/* cases-ordering.c: gradcheck cases for the ops along a dim (cumsum, logcumsumexp; sort and topk,
 * whose gradients scatter back to where each value came from), Python's % (remainder, also by a
 * number, and fmod by one), repeat,
 * norm (p 2, 1, 3, 0.5, inf and 0), and the compositions PyTorch programs call: masked_select
 * and index_put. Their index and mask inputs are constants made
 * in the case, so only the floating inputs are perturbed. */
#include "grad-case.h"

#define FN(NAME, ...)                                                                        \
  static gs_tensor NAME(const gs_tensor *in, int n, void *u) {                               \
    (void)n, (void)u;                                                                        \
    return __VA_ARGS__;                                                                      \
  }

FN(f_cumsum_0, gs_cumsum(in[0], 0))
FN(f_cumsum_neg1, gs_cumsum(in[0], -1))
FN(f_remainder, gs_remainder(in[0], in[1]))
FN(f_remainder_scalar, gs_remainder_scalar(in[0], 1.5))
FN(f_fmod_scalar, gs_fmod_scalar(in[0], -0.7))
FN(f_logcumsumexp_1, gs_logcumsumexp(in[0], 1))
FN(f_logcumsumexp_0, gs_logcumsumexp(in[0], 0))

static gs_tensor sort_values(gs_tensor t, int dim, bool descending) {
  gs_tensor values = GS_NO_TENSOR;
  gs_sort(t, dim, descending, &values, NULL);
  return values;
}
static gs_tensor topk_values(gs_tensor t, int64_t k, int dim, bool largest) {
  gs_tensor values = GS_NO_TENSOR;
  gs_topk(t, k, dim, largest, &values, NULL);
  return values;
}
FN(f_sort_1, sort_values(in[0], 1, false))
FN(f_sort_0_desc, sort_values(in[0], 0, true))
FN(f_topk_2, topk_values(in[0], 2, -1, true))
FN(f_topk_smallest, topk_values(in[0], 3, 0, false))

/* A fixed mask over [3, 4], and one row [4] that broadcasts over the rows. */
static const bool mask_3x4[] = {1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0, 0};
static const bool mask_row[] = {0, 1, 1, 0};
FN(f_masked_select, gs_masked_select(in[0], gs__keep(gs_from_data(GS_BOOL, (int64_t[]){3, 4}, 2,
                                                                   mask_3x4))))
FN(f_masked_select_row, gs_masked_select(in[0], gs__keep(gs_from_data(GS_BOOL, (int64_t[]){4}, 1,
                                                                       mask_row))))

static const int64_t rows_2_0[] = {2, 0}, rows_1_1[] = {1, 1};
FN(f_index_put, gs_index_put(in[0], gs__keep(gs_from_data(GS_I64, (int64_t[]){2}, 1, rows_2_0)),
                             in[1], false))
FN(f_index_put_acc, gs_index_put(in[0], gs__keep(gs_from_data(GS_I64, (int64_t[]){2}, 1, rows_1_1)),
                                 in[1], true))

FN(f_repeat, gs_repeat(in[0], (int64_t[]){2, 1, 3}, 3))
FN(f_repeat_same, gs_repeat(in[0], (int64_t[]){1, 1}, 2))
FN(f_repeat_inner, gs_repeat(in[0], (int64_t[]){1, 3, 2}, 3))
FN(f_norm_2, gs_norm(in[0], 2.0, NULL, 0, false))
FN(f_norm_2_dims, gs_norm(in[0], 2.0, (int[]){0, 2}, 2, true))
FN(f_norm_1_dim, gs_norm(in[0], 1.0, (int[]){1}, 1, true))
FN(f_norm_3_dim, gs_norm(in[0], 3.0, (int[]){0}, 1, false))
FN(f_norm_half, gs_norm(in[0], 0.5, (int[]){-1}, 1, false))
FN(f_norm_inf, gs_norm(in[0], INFINITY, (int[]){1}, 1, false))
FN(f_norm_ninf, gs_norm(in[0], -INFINITY, NULL, 0, false))
FN(f_norm_0, gs_norm(in[0], 0.0, (int[]){1}, 1, false))
FN(f_norm_1_no_keepdim, gs_norm(in[0], 1.0, (int[]){-1}, 1, false))

const grad_case grad_cases_ordering[] = {
    {"CumsumBackward", "dim 0 of [3, 4]", f_cumsum_0, 1, {GI(2, 3, 4)}},
    {"CumsumBackward", "dim -1 of transposed [2, 3, 4]", f_cumsum_neg1, 1, {GI_T(3, 2, 3, 4)}},
    {"LogcumsumexpBackward", "dim 1 of [3, 4]", f_logcumsumexp_1, 1, {GI(2, 3, 4)}},
    {"LogcumsumexpBackward", "dim 0 of transposed [4, 3]", f_logcumsumexp_0, 1, {GI_T(2, 4, 3)}},
    {"RemainderBackward",
     "a % b, b positive, broadcast",
     f_remainder,
     2,
     {GI(2, 3, 4), GI_POS(1, 4)}},
    {"RemainderScalarBackward", "a % 1.5", f_remainder_scalar, 1, {GI_T(2, 3, 4)}},
    {"FmodScalarBackward", "fmod(a, -0.7)", f_fmod_scalar, 1, {GI_S(2, 3, 4)}},
    {"SortBackward", "sort along dim 1", f_sort_1, 1, {GI(2, 3, 5)}},
    {"SortBackward", "sort descending along dim 0, sliced", f_sort_0_desc, 1, {GI_S(2, 4, 3)}},
    {"TopkBackward", "topk 2 largest along -1", f_topk_2, 1, {GI_T(2, 3, 5)}},
    {"TopkBackward", "topk 3 smallest along 0", f_topk_smallest, 1, {GI(2, 4, 2)}},
    {"IndexSelectBackward", "masked_select of [3, 4]", f_masked_select, 1, {GI_T(2, 3, 4)}},
    {"IndexSelectBackward", "masked_select, mask broadcast", f_masked_select_row, 1, {GI(2, 3, 4)}},
    {"WhereBackward", "index_put of rows {2, 0}", f_index_put, 2, {GI(2, 3, 4), GI(2, 2, 4)}},
    {"AddBackward",
     "index_put accumulate, row 1 twice, values broadcast",
     f_index_put_acc,
     2,
     {GI(2, 3, 4), GI(1, 4)}},
    {"RepeatBackward", "repeat (2, 1, 3) of [2, 3]", f_repeat, 1, {GI_S(2, 2, 3)}},
    {"RepeatBackward", "repeat (1, 1) of [3, 4]: a copy", f_repeat_same, 1, {GI_T(2, 3, 4)}},
    {"RepeatBackward", "repeat (1, 3, 2) of transposed [2, 3]", f_repeat_inner, 1, {GI_T(2, 2, 3)}},
    {"NormBackward", "2-norm of everything", f_norm_2, 1, {GI_T(2, 3, 4)}},
    {"NormBackward", "2-norm over dims {0, 2}, keepdim", f_norm_2_dims, 1, {GI_S(3, 2, 3, 4)}},
    {"NormBackward", "1-norm along dim 1, keepdim", f_norm_1_dim, 1, {GI(2, 3, 4)}},
    {"NormBackward", "3-norm along dim 0", f_norm_3_dim, 1, {GI(2, 3, 4)}},
    {"NormBackward", "0.5-norm along dim -1", f_norm_half, 1, {GI_POS(2, 3, 4)}},
    {"NormBackward", "inf-norm along dim 1", f_norm_inf, 1, {GI_T(2, 3, 4)}},
    {"NormBackward", "-inf-norm of everything", f_norm_ninf, 1, {GI(2, 3, 4)}},
    {"NormBackward", "0-norm along dim 1 (a count: no gradient)", f_norm_0, 1, {GI(2, 3, 4)}},
    {"NormBackward", "1-norm along dim -1, not kept", f_norm_1_no_keepdim, 1, {GI_T(2, 3, 4)}},
};
const int grad_cases_ordering_count =
    (int)(sizeof grad_cases_ordering / sizeof grad_cases_ordering[0]);
