/* cases-index-write.c: gradcheck cases for the ops that write by index (scatter in both
 * forms, index_add, index_fill, take), t[index] and t[rows, cols] (read and written), the products
 * (prod, cumprod, index_reduce, with zeros in the input), the picks of an order (median, cummax,
 * cummin) and cross and trace. Index inputs are constants made in the case; inputs that must hold
 * zeros get them written by the case. */
#include "grad-case.h"

#define FN(NAME, ...)                                                                              \
  static gs_tensor NAME(const gs_tensor *in, int n, void *u) {                                     \
    (void)n, (void)u;                                                                              \
    return __VA_ARGS__;                                                                            \
  }

static gs_tensor i64(const int64_t *data, int ndim, const int64_t *shape) {
  return gs__keep(gs_from_data(GS_I64, shape, ndim, data));
}

/* A [2, 4] index into dim 0 of a [3, 4] tensor, no position twice in a column. */
static const int64_t rows_2x4[] = {0, 1, 2, 0, 2, 0, 1, 1};
#define ROWS_2X4 i64(rows_2x4, 2, (int64_t[]){2, 4})
FN(f_scatter, gs_scatter(in[0], 0, ROWS_2X4, in[1], GS_SCATTER_REPLACE))
FN(f_scatter_value, gs_scatter_value(in[0], 0, ROWS_2X4, 1.5, GS_SCATTER_REPLACE))
/* scatter_reduce into dim 0 of [3, 4] from a [2, 4] src (src's values are distinct random
 * numbers, so amax and amin have no ties to split at the finite-difference points). */
#define REDUCE_CASE(NAME, MODE, SELF)                                                              \
  FN(NAME, gs_scatter_reduced(in[0], 0, ROWS_2X4, in[1], MODE, SELF))
static const int64_t rows_repeat[] = {0, 1, 2, 0, 0, 1, 2, 0};
#define ROWS_REPEAT i64(rows_repeat, 2, (int64_t[]){2, 4})
REDUCE_CASE(f_sr_sum, GS_SCATTER_SUM, true)
REDUCE_CASE(f_sr_prod, GS_SCATTER_PROD, false)
REDUCE_CASE(f_sr_mean, GS_SCATTER_MEAN, false)
REDUCE_CASE(f_sr_amax, GS_SCATTER_AMAX, true)
FN(f_sr_amin_repeat, gs_scatter_reduced(in[0], 0, ROWS_REPEAT, in[1], GS_SCATTER_AMIN, false))
FN(f_sr_prod_repeat, gs_scatter_reduced(in[0], 0, ROWS_REPEAT, in[1], GS_SCATTER_PROD, true))
FN(f_sr_mean_dim1, gs_scatter_reduced(in[0], 1, ROWS_2X4, in[1], GS_SCATTER_MEAN, true))
static const int64_t picks_3[] = {2, 0, 2};
#define PICKS_3 i64(picks_3, 1, (int64_t[]){3})
FN(f_index_add, gs_index_add(in[0], 1, PICKS_3, in[1], 2.0))
FN(f_index_fill, gs_index_fill(in[0], 1, PICKS_3, -1.0))
static const int64_t takes[] = {0, 11, -1, 5, 5, 3};
FN(f_take, gs_take(in[0], i64(takes, 2, (int64_t[]){2, 3})))
/* t[index] (gs_index): a [2, 3] index along one dim, repeats and negatives among it; the
 * true positions of a mask of t's shape; and two dims of three taken as one. */
static const int64_t picks_2x3[] = {2, -1, 0, 2, 4, -5};
FN(f_index_dim, gs_index(in[0], 1, 1, i64(picks_2x3, 2, (int64_t[]){2, 3})))
static const int64_t mask_positions[] = {0, 3, 5, 6, 11};
FN(f_index_mask, gs_index(in[0], 0, 2, i64(mask_positions, 1, (int64_t[]){5})))
static const int64_t pairs[] = {1, 11, 7, 1};
FN(f_index_span, gs_index(in[0], -2, 2, i64(pairs, 1, (int64_t[]){4})))

/* t[rows, cols] (gs_index_tensors): paired, one position picked twice, negatives; two index
 * tensors broadcast across a slice (so their shape goes first); a mask over dims 1 and 2. */
static const int64_t pair_rows[] = {0, 2, 0, -1}, pair_cols[] = {1, 3, 1, 0};
#define PAIR_ROWS i64(pair_rows, 1, (int64_t[]){4})
#define PAIR_COLS i64(pair_cols, 1, (int64_t[]){4})
FN(f_index_pairs, gs_index_tensors(in[0], 2, (gs_tensor[]){PAIR_ROWS, PAIR_COLS}))
static const int64_t apart_rows[] = {2, 0}, apart_cols[] = {4, -1, 1};
FN(f_index_apart, gs_index_tensors(in[0], 3,
                                   (gs_tensor[]){i64(apart_rows, 2, (int64_t[]){2, 1}),
                                                 GS_NO_TENSOR, i64(apart_cols, 1, (int64_t[]){3})}))
static const bool mask_3x4[] = {1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0, 0};
#define MASK_3X4 gs__keep(gs_from_data(GS_BOOL, (int64_t[]){3, 4}, 2, mask_3x4))
FN(f_index_mask_dims, gs_index_tensors(in[0], 2, (gs_tensor[]){GS_NO_TENSOR, MASK_3X4}))
/* t[rows, cols] = v: added with a repeat; written (values broadcast from [1]); and in place
 * into a fresh tensor (its grad_fn: the write's own node). */
FN(f_index_put_acc,
   gs_index_put_tensors(in[0], 2, (gs_tensor[]){PAIR_ROWS, PAIR_COLS}, in[1], true))
static const int64_t put_rows[] = {1, 2, 0}, put_cols[] = {3, 0, -2};
#define PUT_ROWS i64(put_rows, 1, (int64_t[]){3})
#define PUT_COLS i64(put_cols, 1, (int64_t[]){3})
FN(f_index_put, gs_index_put_tensors(in[0], 2, (gs_tensor[]){PUT_ROWS, PUT_COLS}, in[1], false))
static gs_tensor index_put_in_place(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  gs_tensor t = gs_mul_scalar(in[0], 1.0);
  gs_index_put_tensors_(t, 3, (gs_tensor[]){GS_NO_TENSOR, PUT_ROWS, PUT_COLS}, in[1], false);
  return t;
}

/* x with element `at` (row-major, x contiguous) set to zero, differentiably: x * mask. */
static gs_tensor with_zero(gs_tensor x, int64_t at) {
  int64_t shape[GS_MAX_DIMS];
  int nd = gs_shape(x, shape);
  gs_tensor mask = gs__keep(gs_ones(GS_F64, shape, nd));
  int64_t n = gs_numel(x);
  gs_tensor flat = gs__keep(gs_reshape(mask, &n, 1));
  gs_tensor one = gs__keep(gs_select(flat, 0, at));
  gs_fill_(one, 0.0);
  return gs__keep(gs_mul(x, mask));
}
FN(f_prod_all, gs_prod_all(in[0]))
FN(f_prod_all_zero, gs_prod_all(with_zero(in[0], 4)))
FN(f_prod_dim, gs_prod(in[0], 1, false))
FN(f_prod_dim_zero, gs_prod(with_zero(in[0], 5), 1, true))
FN(f_cumprod, gs_cumprod(in[0], 1))
FN(f_cumprod_zero, gs_cumprod(with_zero(in[0], 6), 0))
/* index_reduce: slices of a [3, 3] source into columns {2, 0, 2} of [3, 4] (column 2 twice,
 * columns 1 and 3 untouched); prod with a zero in the source, then in both operands. */
FN(f_ir_prod_zero, gs_index_reduce(in[0], 1, PICKS_3, with_zero(in[1], 4), GS_SCATTER_PROD, true))
FN(f_ir_prod_zeros,
   gs_index_reduce(with_zero(in[0], 2), 1, PICKS_3, with_zero(in[1], 0), GS_SCATTER_PROD, false))
FN(f_ir_mean, gs_index_reduce(in[0], 1, PICKS_3, in[1], GS_SCATTER_MEAN, true))
FN(f_ir_amax, gs_index_reduce(in[0], 1, PICKS_3, in[1], GS_SCATTER_AMAX, false))
FN(f_ir_amin, gs_index_reduce(in[0], -1, PICKS_3, in[1], GS_SCATTER_AMIN, true))

static gs_tensor median_values(gs_tensor t, int dim, bool keepdim) {
  gs_tensor values = GS_NO_TENSOR;
  gs_median(t, dim, keepdim, &values, NULL);
  return values;
}
static gs_tensor running(bool largest, gs_tensor t, int dim) {
  gs_tensor values = GS_NO_TENSOR;
  (largest ? gs_cummax : gs_cummin)(t, dim, &values, NULL);
  return values;
}
FN(f_median_all, gs_median_all(in[0]))
FN(f_median_dim, median_values(in[0], 1, false))
FN(f_median_keep, median_values(in[0], 0, true))
FN(f_cummax, running(true, in[0], 1))
FN(f_cummin, running(false, in[0], 0))
FN(f_cross, gs_cross(in[0], in[1], 1))
FN(f_cross_broadcast, gs_cross(in[0], in[1], -1))
FN(f_trace, gs_trace(in[0]))

const grad_case grad_cases_index_write[] = {
    {"ScatterBackward", "src into dim 0 of [3, 4]", f_scatter, 2, {GI(2, 3, 4), GI_T(2, 2, 5)}},
    {"ScatterValueBackward", "1.5 into dim 0 of [3, 4]", f_scatter_value, 1, {GI_S(2, 3, 4)}},
    {"ScatterReduceBackward", "sum, include_self", f_sr_sum, 2, {GI(2, 3, 4), GI_T(2, 2, 4)}},
    {"ScatterReduceBackward", "prod, not include_self", f_sr_prod, 2, {GI_S(2, 3, 4), GI(2, 2, 4)}},
    {"ScatterReduceBackward", "mean, not include_self", f_sr_mean, 2, {GI(2, 3, 4), GI_S(2, 2, 4)}},
    {"ScatterReduceBackward", "amax, include_self", f_sr_amax, 2, {GI_T(2, 3, 4), GI(2, 2, 4)}},
    {"ScatterReduceBackward",
     "amin, repeats, not include_self",
     f_sr_amin_repeat,
     2,
     {GI(2, 3, 4), GI(2, 2, 4)}},
    {"ScatterReduceBackward",
     "prod, repeats, include_self",
     f_sr_prod_repeat,
     2,
     {GI(2, 3, 4), GI_T(2, 2, 4)}},
    {"ScatterReduceBackward",
     "mean along dim 1, include_self",
     f_sr_mean_dim1,
     2,
     {GI(2, 4, 3), GI(2, 2, 4)}},
    {"IndexAddBackward", "alpha 2, column 2 twice", f_index_add, 2, {GI(2, 2, 4), GI_T(2, 2, 3)}},
    {"IndexReduceBackward",
     "prod, a zero in source, include_self",
     f_ir_prod_zero,
     2,
     {GI(2, 3, 4), GI_T(2, 3, 3)}},
    {"IndexReduceBackward",
     "prod, zeros in both, not include_self",
     f_ir_prod_zeros,
     2,
     {GI(2, 3, 4), GI(2, 3, 3)}},
    {"IndexReduceBackward", "mean, include_self", f_ir_mean, 2, {GI_S(2, 3, 4), GI(2, 3, 3)}},
    {"IndexReduceBackward", "amax, not include_self", f_ir_amax, 2, {GI(2, 3, 4), GI_S(2, 3, 3)}},
    {"IndexReduceBackward",
     "amin, dim -1, include_self",
     f_ir_amin,
     2,
     {GI_T(2, 3, 4), GI(2, 3, 3)}},
    {"IndexFillBackward", "columns {2, 0} of [3, 4]", f_index_fill, 1, {GI_T(2, 3, 4)}},
    {"TakeBackward", "negative and repeated positions", f_take, 1, {GI_S(2, 3, 4)}},
    {"IndexBackward", "[2, 3] index along dim 1", f_index_dim, 1, {GI_S(3, 2, 5, 3)}},
    {"IndexBackward", "mask positions of [3, 4]", f_index_mask, 1, {GI_T(2, 3, 4)}},
    {"IndexBackward", "dims 1 and 2 of [2, 3, 4] as one", f_index_span, 1, {GI_T(3, 2, 3, 4)}},
    {"IndexTensorsBackward",
     "rows and cols of [3, 4] paired, one twice",
     f_index_pairs,
     1,
     {GI_T(2, 3, 4)}},
    {"IndexTensorsBackward",
     "[2, 1] and [3] across a slice of [3, 4, 5]",
     f_index_apart,
     1,
     {GI_S(3, 3, 4, 5)}},
    {"IndexTensorsBackward",
     "a mask of dims 1 and 2 of [2, 3, 4]",
     f_index_mask_dims,
     1,
     {GI(3, 2, 3, 4)}},
    {"IndexPutBackward",
     "accumulate, a position twice",
     f_index_put_acc,
     2,
     {GI_T(2, 3, 4), GI(1, 4)}},
    {"IndexPutBackward", "values broadcast from [1]", f_index_put, 2, {GI_S(2, 3, 4), GI(1, 1)}},
    {"IndexPutBackward",
     "in place, dims 1 and 2 of [2, 3, 4]",
     index_put_in_place,
     2,
     {GI(3, 2, 3, 4), GI(2, 2, 1)}},
    {"ProdBackward", "of everything", f_prod_all, 1, {GI_T(2, 3, 3)}},
    {"ProdBackward", "of everything, one zero", f_prod_all_zero, 1, {GI(2, 3, 3)}},
    {"ProdDimBackward", "along dim 1", f_prod_dim, 1, {GI_S(2, 3, 4)}},
    {"ProdDimBackward", "along dim 1 keepdim, one zero", f_prod_dim_zero, 1, {GI(2, 3, 4)}},
    {"CumprodBackward", "along dim 1", f_cumprod, 1, {GI_T(2, 3, 4)}},
    {"CumprodBackward", "along dim 0, one zero", f_cumprod_zero, 1, {GI(2, 4, 3)}},
    {"MedianBackward", "of everything (even count: the lower)", f_median_all, 1, {GI(2, 3, 4)}},
    {"MedianDimBackward", "along dim 1", f_median_dim, 1, {GI_T(2, 3, 5)}},
    {"MedianDimBackward", "along dim 0 keepdim", f_median_keep, 1, {GI(2, 4, 3)}},
    {"CummaxBackward", "along dim 1", f_cummax, 1, {GI_S(2, 3, 5)}},
    {"CumminBackward", "along dim 0", f_cummin, 1, {GI(2, 4, 3)}},
    {"CrossBackward", "along dim 1 of [2, 3]", f_cross, 2, {GI(2, 2, 3), GI_T(2, 2, 3)}},
    {"CrossBackward",
     "broadcast [4, 3] x [1, 3]",
     f_cross_broadcast,
     2,
     {GI(2, 4, 3), GI(2, 1, 3)}},
    {"TraceBackward", "of [3, 4]", f_trace, 1, {GI_T(2, 3, 4)}},
};
const int grad_cases_index_write_count =
    (int)(sizeof grad_cases_index_write / sizeof grad_cases_index_write[0]);
