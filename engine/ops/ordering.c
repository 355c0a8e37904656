/* ordering.c: ops that run along one dim in order: cumsum and logcumsumexp, sort with its
 * forms argsort and topk, and what picks values by an order: median, cummax, cummin (unique is
 * unique-slices.c).
 *
 * Each works on a contiguous copy of the input (gs__as_contiguous, in the dtype it computes
 * in), seen as [outer, len, inner]: a row is len elements inner apart. cumsum records its own
 * node; sort computes only the order (an i64 index) and takes its values with gs_gather with
 * grad mode off, then records its own node (SortBackward0, TopkBackward0, as torch; median,
 * cummax and cummin alike), whose gradient is gather's: scatter_add back to where each value
 * came from.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops-impl.h"

/* ---- cumsum ----------------------------------------------------------------------------- */

/* d cumsum(a) = the running sums of g from the end: sum(g) - cumsum(g) + g along the dim */
static void cumsum_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  int dim = (int)n->ints[0];
  gs_tensor total = gs__formula_temp(gs_sum(g, &dim, 1, true));
  gs_tensor before = gs__formula_temp(gs_sub(gs__formula_temp(gs_cumsum(g, dim)), g));
  grads[0] = gs__reduce_grad(n, 0, gs_sub(total, before));
}
GS__BACKWARD_TWICE(CumsumBackward, cumsum_backward);

/* Floating sums accumulate in double (as PyTorch's CPU cumsum), integers wrap. */
#define CUMSUM_ROWS(NAME, T, ACC, ADD)                                                       \
  static void NAME(const void *src, void *dst, int64_t outer, int64_t len, int64_t inner) { \
    const T *x = src;                                                                        \
    T *y = dst;                                                                              \
    for (int64_t o = 0; o < outer; o++)                                                      \
      for (int64_t i = 0; i < inner; i++) {                                                  \
        ACC acc = 0;                                                                         \
        for (int64_t k = 0; k < len; k++) {                                                  \
          int64_t at = (o * len + k) * inner + i;                                            \
          acc = ADD;                                                                         \
          y[at] = (T)acc;                                                                    \
        }                                                                                    \
      }                                                                                      \
  }
CUMSUM_ROWS(cumsum_f32, float, double, acc + (double)x[at])
CUMSUM_ROWS(cumsum_f64, double, double, acc + x[at])
CUMSUM_ROWS(cumsum_i64, int64_t, int64_t, (int64_t)((uint64_t)acc + (uint64_t)x[at]))

gs_tensor gs_cumsum(gs_tensor h, int dim) {
  const char *fn = "cumsum";
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return GS_NO_TENSOR;
  int d = gs__wrap_dim(dim, t->ndim, fn);
  if (d < 0)
    return GS_NO_TENSOR;
  gs_dtype dtype = gs_dtype_is_floating(t->dtype) ? t->dtype : GS_I64;
  gs__tensor c;
  if (!gs__as_contiguous(t, dtype, &c, fn))
    return GS_NO_TENSOR;
  gs__tensor *out;
  gs_tensor r = gs__tensor_new(dtype, t->shape, t->ndim, fn, &out);
  if (r.id) {
    int64_t outer, len, inner;
    gs__row_layout(t, d, &outer, &len, &inner);
    void (*rows)(const void *, void *, int64_t, int64_t, int64_t) =
        dtype == GS_F32 ? cumsum_f32 : dtype == GS_F64 ? cumsum_f64 : cumsum_i64;
    rows(gs__tensor_data(&c), gs__tensor_data(out), outer, len, inner);
    gs__node *n = gs_dtype_is_floating(dtype)
                      ? gs__record(&CumsumBackward, out, 1, (const gs__tensor *[]){t}, 0)
                      : NULL;
    if (n)
      n->ints[0] = d;
  }
  gs__tensor_release(&c);
  return r;
}

/* ---- logcumsumexp ------------------------------------------------------------------------ */

/* d logcumsumexp(x)_j / dx_i = exp(x_i - y_j) for j >= i: grad_i = sum_{j >= i} g_j
 * exp(x_i - y_j), summed in the log domain from the end, the positive and the negative parts
 * of g apart (torch's formula, so it is as stable and differentiates again). */
static void logcumsumexp_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  int d = (int)n->ints[0];
  gs_tensor x = gs__saved(n, 0), y = gs__saved(n, 1);
  gs_dtype dtype = gs_dtype_of(g);
  gs_tensor lowest =
      gs__formula_temp(gs_full_like(g, dtype == GS_F32 ? -(double)FLT_MAX : -DBL_MAX));
  gs_tensor log_abs = gs__formula_temp(gs_log(gs__formula_temp(gs_abs(g))));
  gs_tensor parts[2];
  for (int neg = 0; neg < 2; neg++) {
    gs_tensor sign = gs__formula_temp(neg ? gs_lt_scalar(g, 0) : gs_gt_scalar(g, 0));
    gs_tensor log_g = gs__formula_temp(gs_where(sign, log_abs, lowest));
    gs_tensor shifted = gs__formula_temp(gs_sub(log_g, y));
    gs_tensor from_end =
        gs__formula_flip(gs__formula_temp(gs_logcumsumexp(gs__formula_flip(shifted, d), d)), d);
    parts[neg] = gs__formula_temp(gs_exp(gs__formula_temp(gs_add(from_end, x))));
  }
  grads[0] = gs__reduce_grad(n, 0, gs_sub(parts[0], parts[1]));
}
GS__BACKWARD_TWICE(LogcumsumexpBackward, logcumsumexp_backward);

/* Running log(sum(exp)) of each row, in double: acc = max + log1p(exp(min - max)). */
#define LOGCUMSUMEXP_ROWS(NAME, T)                                                                 \
  static void NAME(const void *src, void *dst, int64_t outer, int64_t len, int64_t inner) {        \
    const T *x = src;                                                                              \
    T *y = dst;                                                                                    \
    for (int64_t o = 0; o < outer; o++)                                                            \
      for (int64_t i = 0; i < inner; i++) {                                                        \
        double acc = -HUGE_VAL;                                                                    \
        for (int64_t k = 0; k < len; k++) {                                                        \
          int64_t at = (o * len + k) * inner + i;                                                  \
          double v = (double)x[at], hi = acc > v ? acc : v, lo = acc > v ? v : acc;                \
          acc = isnan(v) || isnan(acc) ? (double)NAN                                               \
                : lo == -HUGE_VAL      ? hi                                                        \
                : hi == HUGE_VAL       ? HUGE_VAL                                                  \
                                       : hi + log1p(exp(lo - hi));                                       \
          y[at] = (T)acc;                                                                          \
        }                                                                                          \
      }                                                                                            \
  }
LOGCUMSUMEXP_ROWS(logcumsumexp_f32, float)
LOGCUMSUMEXP_ROWS(logcumsumexp_f64, double)

gs_tensor gs_logcumsumexp(gs_tensor h, int dim) {
  const char *fn = "logcumsumexp";
  gs__tensor *t = gs__lookup(h, fn);
  int d = t ? gs__wrap_dim(dim, t->ndim, fn) : -1;
  if (d < 0)
    return GS_NO_TENSOR;
  if (!gs_dtype_is_floating(t->dtype)) {
    gs__error(GS_ERR_DTYPE, fn, "expected an f32 or f64 tensor, got %s", gs_dtype_name(t->dtype));
    return GS_NO_TENSOR;
  }
  gs__tensor c;
  if (!gs__as_contiguous(t, t->dtype, &c, fn))
    return GS_NO_TENSOR;
  gs__tensor *out;
  gs_tensor r = gs__tensor_new(t->dtype, t->shape, t->ndim, fn, &out);
  if (r.id) {
    int64_t outer, len, inner;
    gs__row_layout(t, d, &outer, &len, &inner);
    (t->dtype == GS_F32 ? logcumsumexp_f32 : logcumsumexp_f64)(
        gs__tensor_data(&c), gs__tensor_data(out), outer, len, inner);
    gs__node *n = gs__record(&LogcumsumexpBackward, out, 1, (const gs__tensor *[]){t}, 2);
    if (n) {
      gs__save(n, 0, t);
      gs__save(n, 1, out);
      n->ints[0] = d;
    }
  }
  gs__tensor_release(&c);
  return r;
}

/* ---- sort ------------------------------------------------------------------------------- */

/* Whether x comes before y: ascending with NaN last, or descending with NaN first (NaN is
 * the largest value, as in torch.sort). */
static bool before(double x, double y, bool descending) {
  if (descending) {
    if (isnan(x))
      return !isnan(y);
    return !isnan(y) && x > y;
  }
  if (isnan(y))
    return !isnan(x);
  return !isnan(x) && x < y;
}

/* A stable merge sort of idx[0..n) by key[idx[i]], with tmp as scratch of n entries. */
static void merge_sort(int64_t *idx, int64_t *tmp, int64_t n, const double *key,
                       bool descending) {
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      int64_t a = lo, b = mid, k = lo;
      while (a < mid && b < hi)
        tmp[k++] = before(key[idx[b]], key[idx[a]], descending) ? idx[b++] : idx[a++];
      while (a < mid)
        tmp[k++] = idx[a++];
      while (b < hi)
        tmp[k++] = idx[b++];
    }
    memcpy(idx, tmp, sizeof(int64_t) * (size_t)n);
  }
}

/* The sorting order of t along d as a new i64 tensor of t's shape. */
static gs_tensor sort_order(gs__tensor *t, int d, bool descending, const char *fn) {
  if (t->dtype == GS_BOOL) {
    gs__error(GS_ERR_DTYPE, fn, "expected an f32, f64 or integer tensor, got bool");
    return GS_NO_TENSOR;
  }
  gs__tensor c;
  if (!gs__as_contiguous(t, GS_F64, &c, fn))
    return GS_NO_TENSOR;
  gs__tensor *out;
  gs_tensor r = gs__tensor_new(GS_I64, t->shape, t->ndim, fn, &out);
  int64_t outer, len, inner;
  gs__row_layout(t, d, &outer, &len, &inner);
  size_t bytes = sizeof(double) * (size_t)(len > 0 ? len : 1);
  double *key = malloc(bytes);
  int64_t *idx = malloc(bytes), *tmp = malloc(bytes);
  if (r.id && (!key || !idx || !tmp)) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory for a row of %lld elements", (long long)len);
    gs_dispose(r);
    r = GS_NO_TENSOR;
  }
  if (r.id) {
    const double *x = (const double *)gs__tensor_data(&c);
    int64_t *y = (int64_t *)gs__tensor_data(out);
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) {
        for (int64_t k = 0; k < len; k++) {
          key[k] = x[(o * len + k) * inner + i];
          idx[k] = k;
        }
        merge_sort(idx, tmp, len, key, descending);
        for (int64_t k = 0; k < len; k++)
          y[(o * len + k) * inner + i] = idx[k];
      }
  }
  free(key), free(idx), free(tmp);
  gs__tensor_release(&c);
  return r;
}

/* d (values t picked at index along d) = zeros(t) with g added back at index (g of the
 * index's shape; without keepdim, ints[1] 0, g first gets dim d back) */
static void picked_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  int d = (int)n->ints[0];
  if (!n->ints[1])
    g = gs__formula_temp(gs_unsqueeze(g, d));
  gs_tensor zeros =
      gs__formula_temp(gs_zeros(gs_dtype_of(g), n->inputs[0].shape, n->inputs[0].ndim));
  grads[0] = gs__reduce_grad(n, 0, gs_scatter_add(zeros, d, gs__saved(n, 0), g));
}
GS__BACKWARD_TWICE(MedianDimBackward, picked_backward);
GS__BACKWARD_TWICE(CummaxBackward, picked_backward);
GS__BACKWARD_TWICE(CumminBackward, picked_backward);
GS__BACKWARD_TWICE(SortBackward, picked_backward);
GS__BACKWARD_TWICE(TopkBackward, picked_backward);

/* The values of h at index along d (squeezed there unless keepdim), recorded as kind: handed
 * out with the index as sort's are. Takes index over. */
static bool hand_out_picked(const gs__node_kind *kind, gs_tensor h, gs__tensor *t, int d,
                            bool keepdim, gs_tensor index, gs_tensor *values, gs_tensor *indices) {
  if (!index.id)
    return false;
  gs_tensor v = GS_NO_TENSOR, i = index;
  if (values) {
    gs_no_grad_begin();
    gs_tensor full = gs_gather(h, d, index);
    v = keepdim || !t->ndim ? gs_clone(full) : gs_squeeze(full, d);
    gs_no_grad_end();
    gs_dispose(full);
    gs__tensor *out = v.id ? gs__lookup(v, kind->name) : NULL;
    gs__node *n = out && gs_dtype_is_floating(out->dtype)
                      ? gs__record(kind, out, 1, (const gs__tensor *[]){t}, 1)
                      : NULL;
    if (n) {
      gs__save(n, 0, gs__lookup(index, kind->name));
      n->ints[0] = d;
      n->ints[1] = keepdim || !t->ndim;
    }
  }
  if (indices && !keepdim && t->ndim) {
    i = gs_squeeze(index, d);
    gs_dispose(index);
  }
  if (values && !v.id) {
    gs_dispose(i);
    return false;
  }
  if (values)
    *values = v;
  if (indices)
    *indices = i;
  else
    gs_dispose(i);
  return true;
}

bool gs_sort(gs_tensor h, int dim, bool descending, gs_tensor *values, gs_tensor *indices) {
  const char *fn = "sort";
  gs__tensor *t = gs__lookup(h, fn);
  int d = t ? gs__wrap_dim(dim, t->ndim, fn) : -1;
  if (d < 0)
    return false;
  return hand_out_picked(&SortBackward, h, t, d, true, sort_order(t, d, descending, fn), values,
                         indices);
}

gs_tensor gs_argsort(gs_tensor h, int dim, bool descending) {
  const char *fn = "argsort";
  gs__tensor *t = gs__lookup(h, fn);
  int d = t ? gs__wrap_dim(dim, t->ndim, fn) : -1;
  return d < 0 ? GS_NO_TENSOR : sort_order(t, d, descending, fn);
}

bool gs_topk(gs_tensor h, int64_t k, int dim, bool largest, gs_tensor *values,
             gs_tensor *indices) {
  const char *fn = "topk";
  gs__tensor *t = gs__lookup(h, fn);
  int d = t ? gs__wrap_dim(dim, t->ndim, fn) : -1;
  if (d < 0)
    return false;
  int64_t size = t->ndim ? t->shape[d] : 1;
  if (k < 0 || k > size) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected k in [0, %lld] (the size of dim %d), got %lld",
              (long long)size, d, (long long)k);
    return false;
  }
  gs_tensor order = sort_order(t, d, largest, fn);
  if (!order.id)
    return false;
  gs_tensor first = t->ndim ? gs_narrow(order, d, 0, k) : gs_clone(order);
  gs_tensor picked = gs_contiguous(first);
  gs_dispose(first), gs_dispose(order);
  return hand_out_picked(&TopkBackward, h, t, d, true, picked, values, indices);
}

/* ---- values picked by an index: median, cummax and cummin ------------------------------- */

/* The row keys of t (any dtype but bool) along d, as a contiguous f64 copy; false after
 * reporting. */
static bool row_keys(const gs__tensor *t, gs__tensor *c, const char *fn) {
  if (t->dtype == GS_BOOL) {
    gs__error(GS_ERR_DTYPE, fn, "expected an f32, f64 or integer tensor, got bool");
    return false;
  }
  return gs__as_contiguous(t, GS_F64, c, fn);
}

/* The lower median's position in each row of t along d (NaN: the row's first), as an i64
 * tensor of t's shape with size 1 along d. */
static gs_tensor median_positions(gs__tensor *t, int d, const char *fn) {
  gs__tensor c;
  if (!row_keys(t, &c, fn))
    return GS_NO_TENSOR;
  int64_t outer, len, inner, shape[GS_MAX_DIMS];
  gs__row_layout(t, d, &outer, &len, &inner);
  memcpy(shape, t->shape, sizeof shape);
  if (t->ndim)
    shape[d] = 1;
  gs__tensor *out;
  gs_tensor r = gs__tensor_new(GS_I64, shape, t->ndim, fn, &out);
  size_t bytes = sizeof(double) * (size_t)(len > 0 ? len : 1);
  double *key = malloc(bytes);
  int64_t *idx = malloc(bytes), *tmp = malloc(bytes);
  if (r.id && (!key || !idx || !tmp)) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory for a row of %lld elements", (long long)len);
    gs_dispose(r);
    r = GS_NO_TENSOR;
  }
  if (r.id) {
    const double *x = (const double *)gs__tensor_data(&c);
    int64_t *y = (int64_t *)gs__tensor_data(out);
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) {
        int64_t nan_at = -1;
        for (int64_t k = 0; k < len; k++) {
          key[k] = x[(o * len + k) * inner + i];
          idx[k] = k;
          if (nan_at < 0 && isnan(key[k]))
            nan_at = k;
        }
        if (nan_at < 0)
          merge_sort(idx, tmp, len, key, false);
        y[o * inner + i] = nan_at >= 0 ? nan_at : idx[(len - 1) / 2];
      }
  }
  free(key), free(idx), free(tmp);
  gs__tensor_release(&c);
  return r;
}

bool gs_median(gs_tensor h, int dim, bool keepdim, gs_tensor *values, gs_tensor *indices) {
  const char *fn = "median";
  gs__tensor *t = gs__lookup(h, fn);
  int d = t ? gs__wrap_dim(dim, t->ndim, fn) : -1;
  if (d < 0)
    return false;
  if (t->ndim && t->shape[d] == 0) {
    gs__error(GS_ERR_SHAPE, fn, "expected a non-empty dim %d to take the median of, got size 0", d);
    return false;
  }
  return hand_out_picked(&MedianDimBackward, h, t, d, keepdim, median_positions(t, d, fn), values,
                         indices);
}

/* d median(x) = g shared evenly by the elements equal to the median (NaN: the NaNs), as
 * torch's evenly_distribute_backward; the median's value is reals[0]. */
static void median_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor x = gs__saved(n, 0);
  double v = n->reals[0];
  gs_tensor hit = gs__formula_temp(isnan(v) ? gs_ne(x, x) : gs_eq_scalar(x, v));
  gs_tensor mask = gs__formula_temp(gs_to_dtype(hit, gs_dtype_of(g)));
  gs_tensor count = gs__formula_temp(gs_sum(mask, NULL, 0, false));
  gs_tensor share = gs__formula_temp(gs_div(g, count));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(mask, share));
}
GS__BACKWARD_TWICE(MedianBackward, median_backward);

gs_tensor gs_median_all(gs_tensor h) {
  const char *fn = "median";
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return GS_NO_TENSOR;
  if (t->numel == 0) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected a non-empty tensor to take the median of, got 0 elements");
    return GS_NO_TENSOR;
  }
  int64_t numel = t->numel;
  gs_tensor flat = gs_reshape(h, &numel, 1);
  gs_tensor at = flat.id ? median_positions(gs__lookup(flat, fn), 0, fn) : GS_NO_TENSOR;
  gs_tensor r = GS_NO_TENSOR;
  if (at.id) {
    gs_no_grad_begin();
    gs_tensor picked = gs_gather(flat, 0, at);
    r = gs_reshape(picked, NULL, 0);
    gs_no_grad_end();
    gs_dispose(picked);
  }
  gs_dispose(flat), gs_dispose(at);
  gs__tensor *out = r.id ? gs__lookup(r, fn) : NULL;
  gs__node *n = out && gs_dtype_is_floating(out->dtype)
                    ? gs__record(&MedianBackward, out, 1, (const gs__tensor *[]){t}, 1)
                    : NULL;
  if (n) {
    gs__save(n, 0, t);
    n->reals[0] = gs__load_f64(gs__tensor_data(out), out->dtype);
  }
  return r;
}

/* The running maximum's (or minimum's) positions along d: a tie moves to the later index
 * and a NaN, once met, stays (torch's rule). */
static gs_tensor running_extreme_positions(gs__tensor *t, int d, bool largest, const char *fn) {
  gs__tensor c;
  if (!row_keys(t, &c, fn))
    return GS_NO_TENSOR;
  gs__tensor *out;
  gs_tensor r = gs__tensor_new(GS_I64, t->shape, t->ndim, fn, &out);
  if (r.id) {
    int64_t outer, len, inner;
    gs__row_layout(t, d, &outer, &len, &inner);
    const double *x = (const double *)gs__tensor_data(&c);
    int64_t *y = (int64_t *)gs__tensor_data(out);
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) {
        int64_t best = 0;
        for (int64_t k = 0; k < len; k++) {
          int64_t at = (o * len + k) * inner + i;
          double v = x[at], b = x[(o * len + best) * inner + i];
          if (k == 0 || isnan(v) || (!isnan(b) && (largest ? v >= b : v <= b)))
            best = k;
          y[at] = best;
        }
      }
  }
  gs__tensor_release(&c);
  return r;
}

static bool running_extreme(gs_tensor h, int dim, bool largest, gs_tensor *values,
                            gs_tensor *indices, const char *fn) {
  gs__tensor *t = gs__lookup(h, fn);
  int d = t ? gs__wrap_dim(dim, t->ndim, fn) : -1;
  if (d < 0)
    return false;
  return hand_out_picked(largest ? &CummaxBackward : &CumminBackward, h, t, d, true,
                         running_extreme_positions(t, d, largest, fn), values, indices);
}

bool gs_cummax(gs_tensor h, int dim, gs_tensor *values, gs_tensor *indices) {
  return running_extreme(h, dim, true, values, indices, "cummax");
}

bool gs_cummin(gs_tensor h, int dim, gs_tensor *values, gs_tensor *indices) {
  return running_extreme(h, dim, false, values, indices, "cummin");
}
