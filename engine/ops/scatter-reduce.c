/* scatter-reduce.c: torch.scatter_reduce: a copy of t where each element of src is combined,
 * by sum, prod, mean, amax or amin, into the element of t that index names along dim (for dim
 * 0: out[index[i][j]][j] op= src[i][j]); with include_self false, an element that receives
 * something starts from the first value it receives instead of t's.
 *
 * The forward walks the index once, combining in double into a copy of t (then divides the
 * means; integer means round down, as torch's floor division). The backward formulas are
 * torch 1.13's (scatter_reduce_backward), written with ops so they differentiate again:
 *   sum:  dt = g, dsrc = gather(g);
 *   mean: N = (include_self ? 1 : 0) + how many srcs land on each element (1 where none),
 *         dt = g / N, dsrc = gather(g / N);
 *   amax, amin: the gradient is split evenly between the values equal to the result, of t
 *         and of src (ties share);
 *   prod: dt = g * (the product without t's element) / ..., with zeros handled as torch does:
 *         t's zeros are masked to 1 and the product recomputed; a src element that is the one
 *         zero of its group gets g times the product of the others.
 * Without include_self t's elements that received something get no gradient.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops-impl.h"

/* ints: the dim, the reduction, include_self. saved: index, t, src, the result. */
enum { SR_DIM, SR_REDUCE, SR_INCLUDE_SELF };

/* src narrowed to index's shape (the part a scatter reads), inside a formula. */
static gs_tensor src_part(gs_tensor src, gs_tensor index) {
  int64_t shape[GS_MAX_DIMS], ishape[GS_MAX_DIMS];
  int nd = gs_shape(src, shape);
  gs_shape(index, ishape);
  gs_tensor part = src;
  for (int d = 0; d < nd; d++)
    if (ishape[d] < shape[d])
      part = gs__formula_temp(gs_narrow(part, d, 0, ishape[d]));
  return part;
}

static gs_tensor as_dtype_of(gs_tensor mask, gs_tensor like) {
  return gs__formula_temp(gs_to_dtype(mask, gs_dtype_of(like)));
}

static void scatter_reduce_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
#define T(x) gs__formula_temp(x)
  int d = (int)n->ints[SR_DIM];
  gs_scatter_reduction mode = (gs_scatter_reduction)n->ints[SR_REDUCE];
  bool include_self = n->ints[SR_INCLUDE_SELF];
  gs_tensor index = gs__saved(n, 0), self = gs__saved(n, 1);
  gs_tensor src = src_part(gs__saved(n, 2), index);
  gs_tensor gself = g, gsrc = GS_NO_TENSOR;
  switch (mode) {
  case GS_SCATTER_SUM: gsrc = T(gs_gather(g, d, index)); break;
  case GS_SCATTER_MEAN: {
    gs_tensor start = T(include_self ? gs_ones_like(g) : gs_zeros_like(g));
    gs_tensor count = T(gs_scatter_add(start, d, index, T(gs_ones_like(src))));
    count = T(gs_masked_fill(count, T(gs_eq_scalar(count, 0)), 1.0));
    gself = T(gs_div(g, count));
    gsrc = T(gs_gather(gself, d, index));
    break;
  }
  case GS_SCATTER_AMAX:
  case GS_SCATTER_AMIN: {
    gs_tensor result = gs__saved(n, 3);
    gs_tensor value = T(gs_gather(result, d, index));
    gs_tensor self_is = as_dtype_of(T(gs_eq(self, result)), g);
    gs_tensor src_is = as_dtype_of(T(gs_eq(src, value)), g);
    gs_tensor shares = T(gs_scatter_add(self_is, d, index, src_is));
    gs_tensor each = T(gs_div(g, shares));
    gself = T(gs_mul(self_is, each));
    gsrc = T(gs_mul(src_is, T(gs_gather(each, d, index))));
    break;
  }
  case GS_SCATTER_PROD: {
    gs_tensor result = gs__saved(n, 3);
    gs_tensor masked_self = T(gs_masked_fill(self, T(gs_eq_scalar(self, 0)), 1.0));
    gs_tensor others =
        T(gs_scatter_reduced(masked_self, d, index, src, GS_SCATTER_PROD, include_self));
    gself = T(gs_div(T(gs_mul(g, others)), masked_self));
    gs_tensor src_zero = T(gs_eq_scalar(src, 0));
    gs_tensor zeros_here = T(
        gs_gather(T(gs_scatter_add(T(gs_zeros_like(self)), d, index, as_dtype_of(src_zero, self))),
                  d, index));
    gs_tensor single = T(gs_logical_and(src_zero, T(gs_eq_scalar(zeros_here, 1))));
    gs_tensor without = T(gs_scatter_reduced(self, d, index, T(gs_masked_fill(src, single, 1.0)),
                                             GS_SCATTER_PROD, include_self));
    gs_tensor quotient = T(gs_div(T(gs_gather(T(gs_mul(g, result)), d, index)),
                                  T(gs_masked_fill(src, src_zero, 1.0))));
    gsrc = T(gs_where(single, T(gs_gather(T(gs_mul(g, without)), d, index)), quotient));
    break;
  }
  }
  if (!include_self)
    gself = T(gs_scatter_value(gself, d, index, 0.0, GS_SCATTER_REPLACE));
  if (gs__needs_grad(n, 0))
    grads[0] = gs__reduce_grad_through(n, 0, gself);
  if (gs__needs_grad(n, 1))
    grads[1] = gs__grad_of_block(n, 1, gsrc, (const int64_t[GS_MAX_DIMS]){0});
#undef T
}
GS__BACKWARD_TWICE(ScatterReduceBackward, scatter_reduce_backward);
/* torch.index_reduce is this scatter with its 1-D index spread across source (index-write.c):
 * the same formulas (torch's index_reduce_backward is scatter_reduce_backward's with
 * index_select for gather), under torch's name for it. */
GS__BACKWARD_TWICE(IndexReduceBackward, scatter_reduce_backward);

/* Combines v into *acc by mode (NaN wins amax and amin, as torch's). */
static double combine(gs_scatter_reduction mode, double acc, double v) {
  switch (mode) {
  case GS_SCATTER_SUM:
  case GS_SCATTER_MEAN: return acc + v;
  case GS_SCATTER_PROD: return acc * v;
  case GS_SCATTER_AMAX: return isnan(acc) || acc >= v ? acc : v;
  case GS_SCATTER_AMIN: return isnan(acc) || acc <= v ? acc : v;
  }
  return acc;
}

/* The combined values into out (a contiguous copy of t, as doubles in vals). */
static bool scatter_reduce_run(const gs__tensor *t, int d, const gs__tensor *index,
                               const gs__tensor *src, gs_scatter_reduction mode, bool include_self,
                               gs__tensor *out) {
  int64_t numel = t->numel;
  double *vals = malloc(sizeof(double) * (size_t)(numel ? numel : 1));
  int64_t *count = calloc((size_t)(numel ? numel : 1), sizeof(int64_t));
  if (!vals || !count) {
    free(vals), free(count);
    return false;
  }
  size_t es = gs_dtype_size(t->dtype);
  const char *od = gs__tensor_data(out);
  for (int64_t i = 0; i < numel; i++)
    vals[i] = gs__load_f64(od + (size_t)i * es, t->dtype);
  const char *id = gs__tensor_data(index), *sd = gs__tensor_data(src);
  int64_t pos[GS_MAX_DIMS] = {0}, ioff = 0, soff = 0, ooff = 0;
  for (int64_t i = 0; i < index->numel; i++) {
    int64_t at = ooff + *(const int64_t *)(id + ioff * 8) * (t->ndim ? out->strides[d] : 0);
    double v = gs__load_f64(sd + soff * (int64_t)es, src->dtype);
    vals[at] = count[at] == 0 && !include_self ? v : combine(mode, vals[at], v);
    count[at]++;
    for (int k = index->ndim - 1; k >= 0; k--) {
      ioff += index->strides[k], soff += src->strides[k];
      if (k != d)
        ooff += out->strides[k];
      if (++pos[k] < index->shape[k])
        break;
      ioff -= index->strides[k] * index->shape[k], soff -= src->strides[k] * index->shape[k];
      if (k != d)
        ooff -= out->strides[k] * index->shape[k];
      pos[k] = 0;
    }
  }
  char *po = gs__tensor_data(out);
  for (int64_t i = 0; i < numel; i++) {
    if (mode == GS_SCATTER_MEAN && count[i] > 0) {
      double n = (double)(count[i] + (include_self ? 1 : 0));
      vals[i] = gs_dtype_is_floating(t->dtype) ? vals[i] / n : floor(vals[i] / n);
    }
    gs__store_f64(po + (size_t)i * es, t->dtype, vals[i]);
  }
  free(vals), free(count);
  return true;
}

gs_tensor gs_scatter_reduced(gs_tensor ht, int dim, gs_tensor hindex, gs_tensor hsrc,
                             gs_scatter_reduction reduce, bool include_self) {
  const char *fn = "scatter_reduce";
  gs__tensor *t = gs__lookup(ht, fn);
  gs__tensor *index = t ? gs__lookup(hindex, fn) : NULL;
  gs__tensor *src = index ? gs__lookup(hsrc, fn) : NULL;
  if (!src)
    return GS_NO_TENSOR;
  if ((unsigned)reduce > GS_SCATTER_AMIN) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected reduce sum, prod, mean, amax or amin, got mode %d",
              (int)reduce);
    return GS_NO_TENSOR;
  }
  if (t->dtype == GS_BOOL) {
    gs__error(GS_ERR_DTYPE, fn, "expected a numeric tensor, got bool");
    return GS_NO_TENSOR;
  }
  int d = gs__check_scatter_operands(t, dim, index, src, fn);
  if (d < 0)
    return GS_NO_TENSOR;
  return gs__scatter_reduced_as(&ScatterReduceBackward, t, d, index, src, reduce, include_self, fn);
}

gs_tensor gs__scatter_reduced_as(const gs__node_kind *kind, const gs__tensor *t, int d,
                                 const gs__tensor *index, const gs__tensor *src,
                                 gs_scatter_reduction reduce, bool include_self, const char *fn) {
  gs__tensor *out;
  gs_tensor h = gs__tensor_new(t->dtype, t->shape, t->ndim, fn, &out);
  if (!h.id)
    return h;
  gs__copy_into(out, t);
  if (!scatter_reduce_run(t, d, index, src, reduce, include_self, out)) {
    gs_dispose(h);
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    return GS_NO_TENSOR;
  }
  if (!gs_dtype_is_floating(t->dtype))
    return h;
  gs__node *n = gs__record(kind, out, 2, (const gs__tensor *[]){t, src}, 4);
  if (n) {
    n->ints[SR_DIM] = d;
    n->ints[SR_REDUCE] = reduce;
    n->ints[SR_INCLUDE_SELF] = include_self;
    gs__save(n, 0, index);
    gs__save(n, 1, t);
    gs__save(n, 2, src);
    gs__save_result(n, 3, out);
  }
  return h;
}
