/* index-write.c: ops that write or read by a 1-D index along a dim, or by positions in the
 * flattened tensor: index_add, index_reduce, index_fill, take and take_along_dim.
 *
 * Each checks its arguments under its own name, then computes its result with scatter_add,
 * scatter and index_select with grad mode off, and records its own node (torch's name for
 * it), whose formula is written with those ops so it can be differentiated again.
 * index_reduce spreads its index across source and is scatter_reduce's (scatter-reduce.c).
 * take_along_dim records nothing of its own: torch's is a gather, and so is ours.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops-impl.h"

gs_tensor gs__checked_positions(const gs__tensor *index, int64_t size, bool wrap, const char *what,
                                const char *fn) {
  gs__tensor c;
  if (!gs__as_contiguous(index, GS_I64, &c, fn))
    return GS_NO_TENSOR;
  int64_t count = c.numel;
  gs__tensor *out;
  gs_tensor h = gs__tensor_new(GS_I64, &count, 1, fn, &out);
  if (h.id) {
    const int64_t *v = (const int64_t *)gs__tensor_data(&c);
    int64_t *w = (int64_t *)gs__tensor_data(out);
    for (int64_t i = 0; i < count; i++) {
      int64_t p = wrap && v[i] < 0 ? v[i] + size : v[i];
      if (p < 0 || p >= size) {
        gs__error(GS_ERR_INDEX, fn, "index %lld is out of range for %s (expected %s%lld to %lld)",
                  (long long)v[i], what, wrap ? "-" : "", (long long)(wrap ? size : 0),
                  (long long)(size - 1));
        gs_dispose(h);
        h = GS_NO_TENSOR;
        break;
      }
      w[i] = p;
    }
  }
  gs__tensor_release(&c);
  return h;
}

/* Records kind over inputs on h (when a floating result needs it), saving positions (the
 * checked index) in slot 0, dim d in ints[0] and alpha in reals[0]. Disposes positions. */
static gs_tensor record_with_positions(const gs__node_kind *kind, gs_tensor h, int n_inputs,
                                       const gs__tensor *const *inputs, gs_tensor positions, int d,
                                       double alpha) {
  gs__tensor *out = h.id ? gs__lookup(h, kind->name) : NULL;
  if (out && gs_dtype_is_floating(out->dtype)) {
    gs__node *n = gs__record(kind, out, n_inputs, inputs, 1);
    if (n) {
      gs__save(n, 0, gs__lookup(positions, kind->name));
      n->ints[0] = d;
      n->reals[0] = alpha;
    }
  }
  gs_dispose(positions);
  return h;
}

/* index (1-D, len k) laid along dim d of shape (whose size along d is k) and repeated across
 * the other dims: the per-element index scatter and scatter_add take. */
static gs_tensor spread_along(gs_tensor positions, int d, const int64_t *shape, int nd) {
  if (nd == 0) /* a 0-D input: one position */
    return gs_reshape(positions, NULL, 0);
  int64_t along[GS_MAX_DIMS];
  for (int e = 0; e < nd; e++)
    along[e] = e == d ? shape[d] : 1;
  gs_tensor column = gs_reshape(positions, along, nd);
  gs_tensor spread = gs_expand(column, shape, nd);
  gs_dispose(column);
  return spread;
}

/* The checked index of index_add and index_fill: 1-D (or 0-D) with values in t's dim d. */
static gs_tensor dim_positions(const gs__tensor *t, int d, const gs__tensor *index, bool takes_i32,
                               const char *fn) {
  if (!gs__check_index_dtype(index, takes_i32, fn))
    return GS_NO_TENSOR;
  if (index->ndim > 1) {
    gs__error(GS_ERR_SHAPE, fn, "expected a 1-D index, got %d-D", index->ndim);
    return GS_NO_TENSOR;
  }
  char what[64];
  int64_t size = t->ndim ? t->shape[d] : 1;
  snprintf(what, sizeof what, "dim %d of size %lld", d, (long long)size);
  return gs__checked_positions(index, size, false, what, fn);
}

/* The dim of index_add and index_reduce wrapped (0 or -1 for a 0-D t), or -1 after reporting. */
static int wrap_index_dim(const gs__tensor *t, int dim, const char *fn) {
  int d = t->ndim ? gs__wrap_dim(dim, t->ndim, fn) : (dim == 0 || dim == -1 ? 0 : -1);
  if (d < 0 && !t->ndim)
    gs__error(GS_ERR_ARGUMENT, fn, "expected dim 0 or -1 for a 0-D tensor, got %d", dim);
  return d;
}

/* index_add's and index_reduce's source: t's dtype (not bool), t's shape with len(index)
 * along d; false after reporting. */
static bool check_source(const gs__tensor *t, int d, const gs__tensor *index, const gs__tensor *src,
                         const char *fn) {
  if (src->dtype != t->dtype) {
    gs__error(GS_ERR_DTYPE, fn, "expected source of the input's dtype %s, got %s",
              gs_dtype_name(t->dtype), gs_dtype_name(src->dtype));
    return false;
  }
  if (t->dtype == GS_BOOL) {
    gs__error(GS_ERR_DTYPE, fn, "expected an f32, f64 or integer tensor, got bool");
    return false;
  }
  /* source: t's shape with len(index) along dim */
  int64_t want[GS_MAX_DIMS];
  memcpy(want, t->shape, sizeof want);
  if (t->ndim)
    want[d] = index->numel;
  bool fits = src->ndim == t->ndim;
  for (int e = 0; fits && e < t->ndim; e++)
    fits = src->shape[e] == want[e];
  if (!fits) {
    char ws[GS__SHAPE_STR], gs[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn,
              "expected source of shape %s (the input's, with the index's length %lld along dim "
              "%d), got %s",
              gs__shape_str(ws, want, t->ndim), (long long)index->numel, d,
              gs__shape_str(gs, src->shape, src->ndim));
    return false;
  }
  return true;
}

/* ---- index_add ------------------------------------------------------------------------- */

/* d index_add(t, d, index, src, alpha) = g, alpha * index_select(g, d, index) */
static void index_add_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  int d = (int)n->ints[0];
  if (gs__needs_grad(n, 0))
    grads[0] = gs__reduce_grad_through(n, 0, g);
  if (gs__needs_grad(n, 2)) {
    gs_tensor picked =
        n->inputs[0].ndim ? gs_index_select(g, d, gs__saved(n, 0)) : gs__pass_grad_through(g);
    grads[2] = gs__reduce_grad(
        n, 2, n->reals[0] == 1.0 ? picked : gs_mul_scalar(gs__formula_temp(picked), n->reals[0]));
  }
}
GS__BACKWARD_TWICE(IndexAddBackward, index_add_backward);

gs_tensor gs_index_add(gs_tensor ht, int dim, gs_tensor hindex, gs_tensor hsrc, double alpha) {
  const char *fn = "index_add";
  gs__tensor *t = gs__lookup(ht, fn);
  gs__tensor *index = t ? gs__lookup(hindex, fn) : NULL;
  gs__tensor *src = index ? gs__lookup(hsrc, fn) : NULL;
  if (!src)
    return GS_NO_TENSOR;
  int d = wrap_index_dim(t, dim, fn);
  if (d < 0)
    return GS_NO_TENSOR;
  if (!check_source(t, d, index, src, fn))
    return GS_NO_TENSOR;
  if (!gs_dtype_is_floating(t->dtype) && alpha != (double)(int64_t)alpha) {
    gs__error(GS_ERR_DTYPE, fn, "expected an integral alpha for a %s tensor, got %g",
              gs_dtype_name(t->dtype), alpha);
    return GS_NO_TENSOR;
  }
  gs_tensor positions = dim_positions(t, d, index, true, fn);
  if (!positions.id)
    return GS_NO_TENSOR;
  gs_no_grad_begin();
  gs_tensor spread = spread_along(positions, d, src->shape, src->ndim);
  gs_tensor scaled = alpha == 1.0 ? gs_clone(hsrc) : gs_mul_scalar(hsrc, alpha);
  if (scaled.id && gs_dtype_of(scaled) != t->dtype) { /* an integer times a double is floating */
    gs_tensor exact = gs_to_dtype(scaled, t->dtype);
    gs_dispose(scaled);
    scaled = exact;
  }
  gs_tensor h = gs_scatter_add(ht, d, spread, scaled);
  gs_no_grad_end();
  gs_dispose(spread), gs_dispose(scaled);
  return record_with_positions(&IndexAddBackward, h, 3, (const gs__tensor *[]){t, index, src},
                               positions, d, alpha);
}

/* ---- index_reduce ---------------------------------------------------------------------- */

gs_tensor gs_index_reduce(gs_tensor ht, int dim, gs_tensor hindex, gs_tensor hsrc,
                          gs_scatter_reduction reduce, bool include_self) {
  const char *fn = "index_reduce";
  gs__tensor *t = gs__lookup(ht, fn);
  gs__tensor *index = t ? gs__lookup(hindex, fn) : NULL;
  gs__tensor *src = index ? gs__lookup(hsrc, fn) : NULL;
  if (!src)
    return GS_NO_TENSOR;
  if (reduce == GS_SCATTER_SUM || (unsigned)reduce > GS_SCATTER_AMIN) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected reduce prod, mean, amax or amin, got mode %d",
              (int)reduce);
    return GS_NO_TENSOR;
  }
  int d = wrap_index_dim(t, dim, fn);
  if (d < 0 || !check_source(t, d, index, src, fn))
    return GS_NO_TENSOR;
  gs_tensor positions = dim_positions(t, d, index, true, fn);
  if (!positions.id)
    return GS_NO_TENSOR;
  gs_tensor spread = spread_along(positions, d, src->shape, src->ndim);
  gs_dispose(positions);
  gs__tensor *at = spread.id ? gs__lookup(spread, fn) : NULL;
  gs_tensor h = at ? gs__scatter_reduced_as(&IndexReduceBackward, gs__lookup(ht, fn), d, at,
                                            gs__lookup(hsrc, fn), reduce, include_self, fn)
                   : GS_NO_TENSOR;
  gs_dispose(spread);
  return h;
}

/* ---- index_fill ------------------------------------------------------------------------ */

/* d index_fill(t, d, index, v) = g with zeros at the filled positions */
static void index_fill_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, gs_index_fill(g, (int)n->ints[0], gs__saved(n, 0), 0.0));
}
GS__BACKWARD_TWICE(IndexFillBackward, index_fill_backward);

gs_tensor gs_index_fill(gs_tensor ht, int dim, gs_tensor hindex, double value) {
  const char *fn = "index_fill";
  gs__tensor *t = gs__lookup(ht, fn);
  gs__tensor *index = t ? gs__lookup(hindex, fn) : NULL;
  if (!index)
    return GS_NO_TENSOR;
  int d = t->ndim ? gs__wrap_dim(dim, t->ndim, fn) : (dim == 0 || dim == -1 ? 0 : -1);
  if (d < 0) {
    if (!t->ndim)
      gs__error(GS_ERR_ARGUMENT, fn, "expected dim 0 or -1 for a 0-D tensor, got %d", dim);
    return GS_NO_TENSOR;
  }
  gs_tensor positions = dim_positions(t, d, index, false, fn);
  if (!positions.id)
    return GS_NO_TENSOR;
  int64_t shape[GS_MAX_DIMS];
  memcpy(shape, t->shape, sizeof shape);
  if (t->ndim)
    shape[d] = index->numel;
  gs_no_grad_begin();
  gs_tensor spread = spread_along(positions, d, shape, t->ndim);
  gs_tensor h = gs_scatter_value(ht, d, spread, value, GS_SCATTER_REPLACE);
  gs_no_grad_end();
  gs_dispose(spread);
  return record_with_positions(&IndexFillBackward, h, 2, (const gs__tensor *[]){t, index},
                               positions, d, 0.0);
}

/* ---- take ------------------------------------------------------------------------------ */

/* d take(t, index) = zeros(numel(t)) with g added at the positions, in t's shape */
static void take_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor positions = gs__saved(n, 0);
  int64_t count = gs_numel(positions), numel = 1;
  for (int e = 0; e < n->inputs[0].ndim; e++)
    numel *= n->inputs[0].shape[e];
  gs_tensor flat_g = gs__formula_temp(gs_reshape(g, &count, 1));
  gs_tensor zeros = gs__formula_temp(gs_zeros(gs_dtype_of(g), &numel, 1));
  gs_tensor flat = gs__formula_temp(gs_scatter_add(zeros, 0, positions, flat_g));
  grads[0] = gs__reduce_grad(n, 0, gs_reshape(flat, n->inputs[0].shape, n->inputs[0].ndim));
}
GS__BACKWARD_TWICE(TakeBackward, take_backward);

gs_tensor gs_take(gs_tensor ht, gs_tensor hindex) {
  const char *fn = "take";
  gs__tensor *t = gs__lookup(ht, fn);
  gs__tensor *index = t ? gs__lookup(hindex, fn) : NULL;
  if (!index || !gs__check_index_dtype(index, false, fn))
    return GS_NO_TENSOR;
  char what[64];
  snprintf(what, sizeof what, "a tensor of %lld elements", (long long)t->numel);
  gs_tensor positions = gs__checked_positions(index, t->numel, true, what, fn);
  if (!positions.id)
    return GS_NO_TENSOR;
  int64_t numel = t->numel;
  gs_no_grad_begin();
  gs_tensor flat = gs_reshape(ht, &numel, 1);
  gs_tensor picked = gs_index_select(flat, 0, positions);
  gs_tensor h = gs_reshape(picked, index->shape, index->ndim);
  gs_tensor out = gs_contiguous(h);
  gs_no_grad_end();
  gs_dispose(flat), gs_dispose(picked), gs_dispose(h);
  return record_with_positions(&TakeBackward, out, 2, (const gs__tensor *[]){t, index}, positions,
                               0, 0.0);
}

/* ---- take_along_dim -------------------------------------------------------------------- */

gs_tensor gs_take_along_dim(gs_tensor ht, gs_tensor hindex, int dim, bool dim_given) {
  const char *fn = "take_along_dim";
  gs__tensor *t = gs__lookup(ht, fn);
  gs__tensor *index = t ? gs__lookup(hindex, fn) : NULL;
  if (!index || !gs__check_index_dtype(index, false, fn))
    return GS_NO_TENSOR;
  if (!dim_given) {
    int64_t n = t->numel, k = index->numel;
    gs_tensor flat = gs_reshape(ht, &n, 1), flat_index = gs_reshape(hindex, &k, 1);
    gs_tensor r = gs_gather(flat, 0, flat_index);
    gs_dispose(flat), gs_dispose(flat_index);
    return r;
  }
  if (index->ndim != t->ndim) {
    gs__error(GS_ERR_SHAPE, fn, "expected an index of the input's %d dims, got %d-D", t->ndim,
              index->ndim);
    return GS_NO_TENSOR;
  }
  int d = gs__wrap_dim(dim, t->ndim, fn);
  if (d < 0)
    return GS_NO_TENSOR;
  /* Broadcast every dim but d (each keeps its own size along d). */
  int64_t ts[GS_MAX_DIMS], is[GS_MAX_DIMS], both[GS_MAX_DIMS];
  int nd;
  memcpy(ts, t->shape, sizeof ts), memcpy(is, index->shape, sizeof is);
  ts[d] = is[d] = 1;
  if (!gs__broadcast_shapes(ts, t->ndim, is, index->ndim, both, &nd)) {
    gs__report_broadcast(fn, t->shape, t->ndim, index->shape, index->ndim);
    return GS_NO_TENSOR;
  }
  memcpy(ts, both, sizeof ts), memcpy(is, both, sizeof is);
  ts[d] = t->shape[d], is[d] = index->shape[d];
  gs_tensor wide = gs_expand(ht, ts, nd), wide_index = gs_expand(hindex, is, nd);
  gs_tensor r = gs_gather(wide, d, wide_index);
  gs_dispose(wide), gs_dispose(wide_index);
  return r;
}
