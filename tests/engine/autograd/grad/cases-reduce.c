/* cases-reduce.c: gradcheck cases for the reductions (sum, mean, max, min, logsumexp, sum_to,
 * var, std), the losses that reduce (mse_loss, nll_loss, cross_entropy) and softmax/log_softmax:
 * one dim, several, negative, all, keepdim or not, on transposed and sliced inputs. Ties of max/min
 * are not checked here (perturbing one tied element breaks the tie, so the finite difference is
 * one-sided): test-autograd-reduce.c checks them directly. */
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
FN(f_var_neg_keep, gs_var(in[0], (int[]){-1}, 1, 0.0, true))
FN(f_std_dims_keep, gs_std(in[0], (int[]){0, -1}, 2, 1.0, true))
FN(f_std_all, gs_std(in[0], NULL, 0, 1.0, false))
FN(f_std_dim1_biased, gs_std(in[0], (int[]){1}, 1, 0.0, false))

FN(f_mse_mean, gs_mse_loss(in[0], in[1], GS_REDUCTION_MEAN))
FN(f_mse_sum, gs_mse_loss(in[0], in[1], GS_REDUCTION_SUM))
FN(f_mse_none, gs_mse_loss(in[0], in[1], GS_REDUCTION_NONE))
static const int64_t classes_4[] = {2, 0, 2, 1};
#define CLASSES_4 gs__keep(gs_from_data(GS_I64, (int64_t[]){4}, 1, classes_4))
FN(f_nll_mean, gs_nll_loss(in[0], CLASSES_4, GS_REDUCTION_MEAN))
FN(f_nll_sum, gs_nll_loss(in[0], CLASSES_4, GS_REDUCTION_SUM))
FN(f_nll_none, gs_nll_loss(in[0], CLASSES_4, GS_REDUCTION_NONE))
FN(f_cross_entropy, gs_cross_entropy(in[0], CLASSES_4, GS_REDUCTION_MEAN, 0.0))
/* torch's weight=: one row ignored, the others scaled by their class's weight */
static const int64_t classes_4_ignoring[] = {2, -100, 0, 1};
static const double class_weight_3[] = {0.5, 2.0, 1.5};
#define CLASSES_4_IGNORING gs__keep(gs_from_data(GS_I64, (int64_t[]){4}, 1, classes_4_ignoring))
#define CLASS_WEIGHT_3 gs__keep(gs_from_data(GS_F64, (int64_t[]){3}, 1, class_weight_3))
FN(f_nll_weighted_mean,
   gs_nll_loss_weighted(in[0], CLASSES_4_IGNORING, CLASS_WEIGHT_3, GS_REDUCTION_MEAN, -100))
FN(f_nll_weighted_none,
   gs_nll_loss_weighted(in[0], CLASSES_4, CLASS_WEIGHT_3, GS_REDUCTION_NONE, -100))
FN(f_cross_entropy_weighted_smooth,
   gs_cross_entropy_weighted(in[0], CLASSES_4_IGNORING, CLASS_WEIGHT_3, GS_REDUCTION_MEAN, 0.2,
                             -100))
/* label smoothing without weighed rows: one node (engine/ops/cross-entropy.c) */
FN(f_cross_entropy_smooth_mean, gs_cross_entropy(in[0], CLASSES_4, GS_REDUCTION_MEAN, 0.2))
FN(f_cross_entropy_smooth_sum, gs_cross_entropy(in[0], CLASSES_4, GS_REDUCTION_SUM, 0.1))
FN(f_cross_entropy_smooth_none, gs_cross_entropy(in[0], CLASSES_4, GS_REDUCTION_NONE, 0.3))
FN(f_cross_entropy_smooth_not_ignored,
   gs_cross_entropy_ignore(in[0], CLASSES_4, GS_REDUCTION_MEAN, 1.0, -100))

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
    {"VarBackward", "var over dim 1, unbiased", f_var_dim1, 1, {GI_T(3, 2, 4, 3)}},
    {"VarBackward", "var over all, biased", f_var_all_biased, 1, {GI_S(2, 3, 4)}},
    {"VarBackward", "var over dim -1 keepdim, biased", f_var_neg_keep, 1, {GI(2, 3, 4)}},
    {"StdBackward", "std over dims 0 and -1, keepdim", f_std_dims_keep, 1, {GI_T(3, 3, 2, 4)}},
    {"StdBackward", "std over all", f_std_all, 1, {GI_S(2, 3, 4)}},
    {"StdBackward", "std over dim 1, biased", f_std_dim1_biased, 1, {GI(2, 3, 4)}},
    {"MseLossBackward",
     "mean over [3, 4], both inputs",
     f_mse_mean,
     2,
     {GI(2, 3, 4), GI_T(2, 3, 4)}},
    {"MseLossBackward", "sum, sliced input", f_mse_sum, 2, {GI_S(2, 3, 4), GI(2, 3, 4)}},
    {"MseLossBackward", "none", f_mse_none, 2, {GI_T(2, 3, 4), GI(2, 3, 4)}},
    {"NllLossBackward", "mean over 4 rows of 3 classes", f_nll_mean, 1, {GI(2, 4, 3)}},
    {"NllLossBackward", "sum, transposed", f_nll_sum, 1, {GI_T(2, 4, 3)}},
    {"NllLossBackward", "none, sliced", f_nll_none, 1, {GI_S(2, 4, 3)}},
    {"NllLossBackward", "cross_entropy: over log_softmax", f_cross_entropy, 1, {GI_T(2, 4, 3)}},
    {"NllLossBackward", "weighted mean, one row ignored", f_nll_weighted_mean, 1, {GI(2, 4, 3)}},
    {"NllLossBackward", "weighted, none, transposed", f_nll_weighted_none, 1, {GI_T(2, 4, 3)}},
    {"CrossEntropyLossBackward", "smoothed, mean", f_cross_entropy_smooth_mean, 1, {GI(2, 4, 3)}},
    {"CrossEntropyLossBackward",
     "smoothed, sum, transposed",
     f_cross_entropy_smooth_sum,
     1,
     {GI_T(2, 4, 3)}},
    {"CrossEntropyLossBackward",
     "smoothed, none, sliced",
     f_cross_entropy_smooth_none,
     1,
     {GI_S(2, 4, 3)}},
    {"CrossEntropyLossBackward",
     "all smoothing, ignore_index no row has",
     f_cross_entropy_smooth_not_ignored,
     1,
     {GI(2, 4, 3)}},
    {"DivScalarBackward",
     "cross_entropy: weighted, smoothed, one row ignored (the mean)",
     f_cross_entropy_weighted_smooth,
     1,
     {GI_S(2, 4, 3)}},
};
const int grad_cases_reduce_count = G_N_ELEMENTS(grad_cases_reduce);
