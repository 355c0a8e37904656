/* cases-reduce.c: gradcheck cases for the reductions (sum, mean, max, min, logsumexp, sum_to)
 * and softmax/log_softmax: one dim, several, negative, all, keepdim or not, on transposed and
 * sliced inputs. Ties of max/min are not checked here (perturbing one tied element breaks the
 * tie, so the finite difference is one-sided): test-autograd-reduce.c checks them directly. */
#include "grad-case.h"

#define FN(NAME, ...)                                                                        \
  static gs_tensor NAME(const gs_tensor *in, int n, void *u) {                               \
    (void)n, (void)u;                                                                        \
    return __VA_ARGS__;                                                                      \
  }

/* One set of dim lists for every reduction, so each is checked on the same variations. */
#define REDUCTION(OP)                                                                        \
  FN(f_##OP##_dim1, gs_##OP(in[0], (int[]){1}, 1, false))                                    \
  FN(f_##OP##_dims02_keep, gs_##OP(in[0], (int[]){0, 2}, 2, true))                           \
  FN(f_##OP##_neg_keep, gs_##OP(in[0], (int[]){-1}, 1, true))                                \
  FN(f_##OP##_neg2, gs_##OP(in[0], (int[]){-1, 0}, 2, false))                                \
  FN(f_##OP##_all, gs_##OP(in[0], NULL, 0, false))                                           \
  FN(f_##OP##_all_keep, gs_##OP(in[0], NULL, 0, true))                                       \
  FN(f_##OP##_listed_all, gs_##OP(in[0], (int[]){2, 0, 1}, 3, false))

REDUCTION(sum)
REDUCTION(mean)
REDUCTION(max)
REDUCTION(min)
REDUCTION(logsumexp)

FN(f_sum_scalar_dim0, gs_sum(in[0], (int[]){0}, 1, false))

FN(f_sum_to_row, gs_sum_to(in[0], (int64_t[]){4}, 1))
FN(f_sum_to_col, gs_sum_to(in[0], (int64_t[]){3, 1}, 2))
FN(f_sum_to_ones, gs_sum_to(in[0], (int64_t[]){1, 1, 1}, 3))
FN(f_sum_to_scalar, gs_sum_to(in[0], NULL, 0))
FN(f_sum_to_same, gs_sum_to(in[0], (int64_t[]){3, 4}, 2))

FN(f_var_dim1, gs_var(in[0], (int[]){1}, 1, 1.0, false))
FN(f_var_all_biased, gs_var(in[0], NULL, 0, 0.0, false))
FN(f_std_dims_keep, gs_std(in[0], (int[]){0, -1}, 2, 1.0, true))

FN(f_softmax_0, gs_softmax(in[0], 0))
FN(f_softmax_1, gs_softmax(in[0], 1))
FN(f_softmax_neg1, gs_softmax(in[0], -1))
FN(f_log_softmax_0, gs_log_softmax(in[0], 0))
FN(f_log_softmax_1, gs_log_softmax(in[0], 1))
FN(f_log_softmax_neg1, gs_log_softmax(in[0], -1))

/* The reduction cases of one op: the dim lists above, over 3-D inputs in each layout. */
#define REDUCTION_CASES(KIND, OP)                                                            \
  {KIND, "dim 1 of [3, 4]", f_##OP##_dim1, 1, {GI(2, 3, 4)}},                                \
  {KIND, "dim 1 of transposed [2, 3, 4]", f_##OP##_dim1, 1, {GI_T(3, 2, 3, 4)}},             \
  {KIND, "dims {0, 2} keepdim, sliced", f_##OP##_dims02_keep, 1, {GI_S(3, 2, 3, 4)}},        \
  {KIND, "dims {0, 2} keepdim, transposed", f_##OP##_dims02_keep, 1, {GI_T(3, 3, 2, 4)}},    \
  {KIND, "dim -1 keepdim, transposed", f_##OP##_neg_keep, 1, {GI_T(3, 2, 3, 4)}},            \
  {KIND, "dims {-1, 0}, sliced", f_##OP##_neg2, 1, {GI_S(3, 2, 3, 4)}},                      \
  {KIND, "all dims, transposed", f_##OP##_all, 1, {GI_T(3, 2, 3, 4)}},                       \
  {KIND, "all dims keepdim, sliced", f_##OP##_all_keep, 1, {GI_S(3, 2, 3, 4)}},              \
  {KIND, "all dims listed {2, 0, 1}", f_##OP##_listed_all, 1, {GI(3, 2, 3, 4)}},             \
  {KIND, "dim 1 of size 1", f_##OP##_dim1, 1, {GI(3, 4, 1, 3)}}

const grad_case grad_cases_reduce[] = {
    REDUCTION_CASES("SumBackward", sum),
    {"SumBackward", "0-dim, all dims", f_sum_all, 1, {GI(0, 0)}},
    {"SumBackward", "0-dim, dim 0", f_sum_scalar_dim0, 1, {GI(0, 0)}},
    REDUCTION_CASES("MeanBackward", mean),
    {"MeanBackward", "0-dim, all dims", f_mean_all, 1, {GI(0, 0)}},
    REDUCTION_CASES("MaxBackward", max),
    REDUCTION_CASES("MinBackward", min),
    REDUCTION_CASES("LogsumexpBackward", logsumexp),
    {"SumToBackward", "[3, 4] to [4]", f_sum_to_row, 1, {GI_T(2, 3, 4)}},
    {"SumToBackward", "[2, 3, 4] to [3, 1]", f_sum_to_col, 1, {GI_S(3, 2, 3, 4)}},
    {"SumToBackward", "[2, 3, 4] to [1, 1, 1]", f_sum_to_ones, 1, {GI_T(3, 2, 3, 4)}},
    {"SumToBackward", "[3, 4] to 0-dim", f_sum_to_scalar, 1, {GI(2, 3, 4)}},
    {"SumToBackward", "[3, 4] to itself", f_sum_to_same, 1, {GI_S(2, 3, 4)}},
    {"SoftmaxBackward", "dim 0 of [3, 4]", f_softmax_0, 1, {GI(2, 3, 4)}},
    {"SoftmaxBackward", "dim 1 of transposed [3, 4]", f_softmax_1, 1, {GI_T(2, 3, 4)}},
    {"SoftmaxBackward", "dim -1 of sliced [3, 4]", f_softmax_neg1, 1, {GI_S(2, 3, 4)}},
    {"SoftmaxBackward", "dim 0 of sliced [2, 3, 4]", f_softmax_0, 1, {GI_S(3, 2, 3, 4)}},
    {"SoftmaxBackward", "dim 1 of [2, 3, 4]", f_softmax_1, 1, {GI(3, 2, 3, 4)}},
    {"SoftmaxBackward", "dim -1 of transposed [2, 3, 4]", f_softmax_neg1, 1, {GI_T(3, 2, 3, 4)}},
    {"SoftmaxBackward", "0-dim", f_softmax_0, 1, {GI(0, 0)}},
    {"LogSoftmaxBackward", "dim 0 of sliced [3, 4]", f_log_softmax_0, 1, {GI_S(2, 3, 4)}},
    {"LogSoftmaxBackward", "dim 1 of [3, 4]", f_log_softmax_1, 1, {GI(2, 3, 4)}},
    {"LogSoftmaxBackward", "dim -1 of transposed [3, 4]", f_log_softmax_neg1, 1, {GI_T(2, 3, 4)}},
    {"LogSoftmaxBackward", "dim 0 of transposed [2, 3, 4]", f_log_softmax_0, 1, {GI_T(3, 2, 3, 4)}},
    {"LogSoftmaxBackward", "dim 1 of sliced [2, 3, 4]", f_log_softmax_1, 1, {GI_S(3, 2, 3, 4)}},
    {"LogSoftmaxBackward", "dim -1 of [2, 3, 4]", f_log_softmax_neg1, 1, {GI(3, 2, 3, 4)}},
    {"LogSoftmaxBackward", "0-dim", f_log_softmax_0, 1, {GI(0, 0)}},
    {"DivScalarBackward", "var over dim 1, unbiased", f_var_dim1, 1, {GI_T(3, 2, 4, 3)}},
    {"DivScalarBackward", "var over all, biased", f_var_all_biased, 1, {GI_S(2, 3, 4)}},
    {"SqrtBackward", "std over dims 0 and -1, keepdim", f_std_dims_keep, 1, {GI_T(3, 3, 2, 4)}},
};
const int grad_cases_reduce_count = G_N_ELEMENTS(grad_cases_reduce);
