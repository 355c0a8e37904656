/* ordering.c: ops that run along one dim in order: cumsum, and sort with its forms argsort
 * and topk.
 *
 * Each works on a contiguous copy of the input (gs__as_contiguous, in the dtype it computes
 * in), seen as [outer, len, inner]: a row is len elements inner apart. cumsum records its own
 * node; sort computes only the order (an i64 index) and takes its values with gs_gather, so
 * their gradient is gather's (scatter_add back to where each value came from).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops-impl.h"

/* outer, len and inner of a contiguous tensor of t's shape seen along dim d. */
static void row_layout(const gs__tensor *t, int d, int64_t *outer, int64_t *len, int64_t *inner) {
  *outer = 1, *len = t->ndim ? t->shape[d] : 1, *inner = 1;
  for (int i = 0; i < t->ndim; i++) {
    if (i < d)
      *outer *= t->shape[i];
    else if (i > d)
      *inner *= t->shape[i];
  }
}

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
    row_layout(t, d, &outer, &len, &inner);
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
  row_layout(t, d, &outer, &len, &inner);
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

/* Hands order (and the values it picks from h, when asked) to the caller's pointers. */
static bool hand_out(gs_tensor h, int d, gs_tensor order, gs_tensor *values,
                     gs_tensor *indices) {
  if (!order.id)
    return false;
  if (values) {
    *values = gs_gather(h, d, order);
    if (!values->id) {
      gs_dispose(order);
      return false;
    }
  }
  if (indices)
    *indices = order;
  else
    gs_dispose(order);
  return true;
}

bool gs_sort(gs_tensor h, int dim, bool descending, gs_tensor *values, gs_tensor *indices) {
  const char *fn = "sort";
  gs__tensor *t = gs__lookup(h, fn);
  int d = t ? gs__wrap_dim(dim, t->ndim, fn) : -1;
  if (d < 0)
    return false;
  return hand_out(h, d, sort_order(t, d, descending, fn), values, indices);
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
  return hand_out(h, d, picked, values, indices);
}
