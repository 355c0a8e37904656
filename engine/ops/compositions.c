/* compositions.c: ops PyTorch programs call that are compositions of the engine's own, so
 * their gradients come from the ops they are made of: masked_select (an index_select of the
 * flattened tensor), index_put (scatter_add and where), one_hot (scatter_add of ones), repeat
 * and lerp (start + weight * (end - start)); and repeat (cat along each repeated dim), which
 * computes so with grad mode off and records one node of its own (RepeatBackward0, as torch),
 * whose formula is written with ops.
 *
 * Each checks its own arguments first and reports them under its own name; the inner ops
 * then cannot fail on them.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "ops-impl.h"

static void dispose_all(gs_tensor *ts, int n) {
  for (int i = 0; i < n; i++)
    gs_dispose(ts[i]);
}

/* ---- masked_select ------------------------------------------------------------------------ */

gs_tensor gs_masked_select(gs_tensor h, gs_tensor hmask) {
  const char *fn = "masked_select";
  gs__tensor *mask;
  gs__tensor *t = gs__lookup_with_mask(h, hmask, fn, &mask);
  if (!t)
    return GS_NO_TENSOR;
  int64_t shape[GS_MAX_DIMS];
  int nd;
  if (!gs__broadcast_shapes(t->shape, t->ndim, mask->shape, mask->ndim, shape, &nd)) {
    gs__report_broadcast(fn, t->shape, t->ndim, mask->shape, mask->ndim);
    return GS_NO_TENSOR;
  }
  /* The positions of the true elements of the broadcast mask, in row-major order. */
  gs_tensor wide_mask = gs_expand(hmask, shape, nd);
  gs__tensor bits;
  if (!gs__as_contiguous(gs__lookup(wide_mask, fn), GS_BOOL, &bits, fn)) {
    gs_dispose(wide_mask);
    return GS_NO_TENSOR;
  }
  const bool *b = (const bool *)gs__tensor_data(&bits);
  int64_t count = 0;
  for (int64_t i = 0; i < bits.numel; i++)
    count += b[i];
  int64_t *positions = malloc(sizeof(int64_t) * (size_t)(count > 0 ? count : 1));
  gs_tensor out = GS_NO_TENSOR;
  if (!positions) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory for %lld positions", (long long)count);
  } else {
    for (int64_t i = 0, k = 0; i < bits.numel; i++)
      if (b[i])
        positions[k++] = i;
    gs_tensor index = gs_from_data(GS_I64, &count, 1, positions);
    gs_tensor wide = gs_expand(h, shape, nd);
    int64_t numel = bits.numel;
    gs_tensor flat = gs_reshape(wide, &numel, 1);
    out = gs_index_select(flat, 0, index);
    dispose_all((gs_tensor[]){index, wide, flat}, 3);
  }
  free(positions);
  gs__tensor_release(&bits);
  gs_dispose(wide_mask);
  return out;
}

/* ---- index_put ---------------------------------------------------------------------------- */

/* Every entry of a 1-D i64 index in [0, size), or false after reporting the first that is not. */
static bool check_rows(const gs__tensor *index, int64_t size, const char *fn) {
  gs__tensor c;
  if (!gs__as_contiguous(index, GS_I64, &c, fn))
    return false;
  const int64_t *v = (const int64_t *)gs__tensor_data(&c);
  bool ok = true;
  for (int64_t i = 0; i < c.numel && ok; i++)
    if (v[i] < 0 || v[i] >= size) {
      gs__error(GS_ERR_INDEX, fn, "index[%lld] = %lld is out of range for dim 0 of size %lld",
                (long long)i, (long long)v[i], (long long)size);
      ok = false;
    }
  gs__tensor_release(&c);
  return ok;
}

gs_tensor gs_index_put(gs_tensor h, gs_tensor hindex, gs_tensor hvalues, bool accumulate) {
  const char *fn = "index_put";
  gs__tensor *t = gs__lookup(h, fn);
  gs__tensor *index = t ? gs__lookup(hindex, fn) : NULL;
  gs__tensor *values = index ? gs__lookup(hvalues, fn) : NULL;
  if (!values)
    return GS_NO_TENSOR;
  if (index->dtype != GS_I64 || index->ndim != 1) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a 1-D i64 index, got %d-D %s", index->ndim,
              gs_dtype_name(index->dtype));
    return GS_NO_TENSOR;
  }
  if (t->ndim == 0 || t->dtype == GS_BOOL) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected an f32, f64 or integer tensor of at least 1 dim, got "
              "%d-D %s",
              t->ndim, gs_dtype_name(t->dtype));
    return GS_NO_TENSOR;
  }
  if (!check_rows(index, t->shape[0], fn))
    return GS_NO_TENSOR;
  /* The rows written: [len(index), t.shape[1:]], values broadcast to them. */
  int nd = t->ndim;
  int64_t rows[GS_MAX_DIMS], along[GS_MAX_DIMS];
  for (int d = 0; d < nd; d++) {
    rows[d] = d == 0 ? index->shape[0] : t->shape[d];
    along[d] = d == 0 ? index->shape[0] : 1;
  }
  int64_t unused[GS_MAX_DIMS];
  if (values->ndim > nd || !gs__broadcast_strides(values, rows, nd, unused)) {
    char sv[GS__SHAPE_STR], sr[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn, "values of shape %s cannot be broadcast to the indexed shape %s",
              gs__shape_str(sv, values->shape, values->ndim), gs__shape_str(sr, rows, nd));
    return GS_NO_TENSOR;
  }
  gs_tensor typed = gs_to_dtype(hvalues, t->dtype);
  gs_tensor wide = gs_expand(typed, rows, nd);
  gs_tensor column = gs_reshape(hindex, along, nd), spread = gs_expand(column, rows, nd);
  gs_tensor zeros = gs_zeros(t->dtype, t->shape, nd);
  gs_tensor scattered = gs_scatter_add(zeros, 0, spread, wide);
  gs_tensor out = GS_NO_TENSOR;
  if (scattered.id && accumulate) {
    out = gs_add(h, scattered);
  } else if (scattered.id) {
    /* Which rows were written: their counts, > 0, laid along dim 0. */
    int64_t n = index->shape[0], height = t->shape[0];
    gs_tensor ones = gs_ones(GS_I64, &n, 1), counts0 = gs_zeros(GS_I64, &height, 1);
    gs_tensor counts = gs_scatter_add(counts0, 0, hindex, ones);
    gs_tensor hit = gs_gt_scalar(counts, 0);
    int64_t rows_shape[GS_MAX_DIMS];
    for (int d = 0; d < nd; d++)
      rows_shape[d] = d == 0 ? height : 1;
    gs_tensor hit_rows = gs_reshape(hit, rows_shape, nd);
    out = gs_where(hit_rows, scattered, h);
    dispose_all((gs_tensor[]){ones, counts0, counts, hit, hit_rows}, 5);
  }
  dispose_all((gs_tensor[]){typed, wide, column, spread, zeros, scattered}, 6);
  return out;
}

/* ---- one_hot ------------------------------------------------------------------------------ */

gs_tensor gs_one_hot(gs_tensor hindex, int64_t num_classes) {
  const char *fn = "one_hot";
  gs__tensor *index = gs__lookup(hindex, fn);
  if (!index)
    return GS_NO_TENSOR;
  if (index->dtype != GS_I64) {
    gs__error(GS_ERR_DTYPE, fn, "expected an i64 index tensor, got %s",
              gs_dtype_name(index->dtype));
    return GS_NO_TENSOR;
  }
  if (index->ndim >= GS_MAX_DIMS) {
    gs__error(GS_ERR_SHAPE, fn, "expected an index of at most %d dims, got %d-D",
              GS_MAX_DIMS - 1, index->ndim);
    return GS_NO_TENSOR;
  }
  gs__tensor c;
  if (!gs__as_contiguous(index, GS_I64, &c, fn))
    return GS_NO_TENSOR;
  const int64_t *v = (const int64_t *)gs__tensor_data(&c);
  int64_t largest = -1, smallest = 0;
  for (int64_t i = 0; i < c.numel; i++) {
    largest = v[i] > largest ? v[i] : largest;
    smallest = v[i] < smallest ? v[i] : smallest;
  }
  gs__tensor_release(&c);
  if (num_classes < 0) {
    if (index->numel == 0) {
      gs__error(GS_ERR_ARGUMENT, fn, "cannot infer the number of classes from an empty index");
      return GS_NO_TENSOR;
    }
    num_classes = largest + 1;
  }
  if (smallest < 0 || largest >= num_classes) {
    gs__error(GS_ERR_INDEX, fn, "class values must be in [0, %lld), got %lld",
              (long long)num_classes, (long long)(smallest < 0 ? smallest : largest));
    return GS_NO_TENSOR;
  }
  int nd = index->ndim;
  int64_t shape[GS_MAX_DIMS];
  for (int d = 0; d < nd; d++)
    shape[d] = index->shape[d];
  shape[nd] = num_classes;
  gs_tensor column = gs_unsqueeze(hindex, -1);
  gs_tensor ones = gs_ones_like(column), zeros = gs_zeros(GS_I64, shape, nd + 1);
  gs_tensor out = gs_scatter_add(zeros, nd, column, ones);
  dispose_all((gs_tensor[]){column, ones, zeros}, 3);
  return out;
}

/* ---- repeat ------------------------------------------------------------------------------- */

/* d repeat(t, reps) = g summed over its copies: along each repeated dim d, g viewed as
 * [before, reps[d], size, after] and summed over the copies (ints: reps, their count at
 * ints[GS_MAX_DIMS]) */
static void repeat_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  const gs__input_meta *m = &n->inputs[0];
  int nr = (int)n->ints[GS_MAX_DIMS];
  int64_t cur[GS_MAX_DIMS], numel = 1;
  for (int d = 0; d < nr; d++) {
    cur[d] = n->out_shape[d];
    numel *= cur[d];
  }
  if (numel == 0) { /* no copy at all: nothing flows back */
    grads[0] = gs__reduce_grad(n, 0, gs_zeros(gs_dtype_of(g), m->shape, m->ndim));
    return;
  }
  gs_tensor sum = g;
  for (int d = 0; d < nr; d++) {
    if (n->ints[d] == 1)
      continue;
    int64_t size = cur[d] / n->ints[d], split[4] = {1, n->ints[d], size, 1};
    for (int e = 0; e < nr; e++)
      split[e < d ? 0 : 3] *= e == d ? 1 : cur[e];
    gs_tensor blocks = gs__formula_temp(gs_reshape(sum, split, 4));
    sum = gs__formula_temp(gs_sum(blocks, (const int[]){1}, 1, false));
    cur[d] = size;
  }
  grads[0] = gs__reduce_grad(n, 0, gs_reshape(sum, m->shape, m->ndim));
}
GS__BACKWARD_TWICE(RepeatBackward, repeat_backward);

/* repeat's result, joined from copies of t (the caller turns grad mode off) */
static gs_tensor repeat_values(gs_tensor h, const int64_t *reps, int n) {
  const char *fn = "repeat";
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return GS_NO_TENSOR;
  if (!reps || n < t->ndim || n > GS_MAX_DIMS) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected at least as many repeats as the tensor's %d dims (at most %d), got %d",
              t->ndim, GS_MAX_DIMS, n);
    return GS_NO_TENSOR;
  }
  int64_t shape[GS_MAX_DIMS];
  for (int d = 0; d < n; d++) {
    if (reps[d] < 0) {
      gs__error(GS_ERR_ARGUMENT, fn, "expected repeats >= 0, got %lld at dim %d",
                (long long)reps[d], d);
      return GS_NO_TENSOR;
    }
    shape[d] = d < n - t->ndim ? 1 : t->shape[d - (n - t->ndim)];
  }
  /* The result's size is checked before any work: repeats that overflow it (or the count of
   * copies a join takes) are refused, not wrapped into a small allocation. */
  int64_t out_shape[GS_MAX_DIMS], numel = 1;
  int zero_dim = -1;
  for (int d = 0; d < n; d++) {
    if (reps[d] > INT_MAX || __builtin_mul_overflow(shape[d], reps[d], &out_shape[d]) ||
        __builtin_mul_overflow(numel, out_shape[d], &numel) ||
        (uint64_t)numel > (uint64_t)PTRDIFF_MAX / gs_dtype_size(t->dtype)) {
      gs__error(GS_ERR_ARGUMENT, fn,
                "expected repeats whose result fits in memory, got %lld at dim %d (size %lld)",
                (long long)reps[d], d, (long long)shape[d]);
      return GS_NO_TENSOR;
    }
    if (out_shape[d] == 0 && zero_dim < 0)
      zero_dim = d;
  }
  gs_tensor cur = gs_reshape(h, shape, n);
  if (numel == 0 && cur.id) {
    /* An empty result: an empty view of h in the result's shape, not reps[d] empty copies. */
    gs_tensor empty = shape[zero_dim] == 0 ? cur : gs_narrow(cur, zero_dim, 0, 0);
    gs_tensor view = gs_reshape(empty, out_shape, n);
    if (empty.id != cur.id)
      gs_dispose(empty);
    gs_dispose(cur);
    if (!view.id)
      return GS_NO_TENSOR;
    gs_tensor copy = gs_clone(view);
    gs_dispose(view);
    return copy;
  }
  /* The tensor with n dims (leading ones), then each dim joined to itself reps[d] times. */
  for (int d = 0; d < n && cur.id; d++) {
    if (reps[d] == 1)
      continue;
    gs_tensor next;
    if (reps[d] == 0) {
      next = gs_narrow(cur, d, 0, 0);
    } else {
      gs_tensor *copies = malloc(sizeof(gs_tensor) * (size_t)reps[d]);
      if (!copies) {
        gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory for %lld repeats", (long long)reps[d]);
        gs_dispose(cur);
        return GS_NO_TENSOR;
      }
      for (int64_t i = 0; i < reps[d]; i++)
        copies[i] = cur;
      next = gs_cat(copies, (int)reps[d], d);
      free(copies);
    }
    gs_dispose(cur);
    cur = next;
  }
  /* All repeats 1 leave a view of h: repeat's result is a copy (a copy-on-write clone). */
  if (cur.id && gs_storage_id(cur) == gs_storage_id(h)) {
    gs_tensor copy = gs_clone(cur);
    gs_dispose(cur);
    cur = copy;
  }
  return cur;
}

gs_tensor gs_repeat(gs_tensor h, const int64_t *reps, int n) {
  gs_no_grad_begin();
  gs_tensor r = repeat_values(h, reps, n);
  gs_no_grad_end();
  gs__tensor *t = r.id ? gs__lookup(h, "repeat") : NULL;
  gs__node *node =
      t ? gs__record_result(&RepeatBackward, r, 1, (const gs__tensor *[]){t}, 0, "repeat") : NULL;
  if (node) {
    for (int d = 0; d < n; d++)
      node->ints[d] = reps[d];
    node->ints[GS_MAX_DIMS] = n;
  }
  return r;
}

/* ---- lerp --------------------------------------------------------------------------------- */

/* start and end of one floating dtype, as torch.lerp requires; false after reporting. */
static bool lerp_operands(gs_tensor hstart, gs_tensor hend, const char *fn) {
  gs__tensor *start = gs__lookup(hstart, fn);
  gs__tensor *end = start ? gs__lookup(hend, fn) : NULL;
  if (!end)
    return false;
  if (!gs_dtype_is_floating(start->dtype) || end->dtype != start->dtype) {
    gs__error(GS_ERR_DTYPE, fn, "expected start and end of one floating dtype, got %s and %s",
              gs_dtype_name(start->dtype), gs_dtype_name(end->dtype));
    return false;
  }
  return true;
}

/* start + step, the weighted difference; disposes diff and step, the temporaries. */
static gs_tensor lerp_step(gs_tensor start, gs_tensor diff, gs_tensor step) {
  gs_tensor out = gs_add(start, step);
  dispose_all((gs_tensor[]){diff, step}, 2);
  return out;
}

gs_tensor gs_lerp(gs_tensor start, gs_tensor end, gs_tensor hweight) {
  const char *fn = "lerp";
  if (!lerp_operands(start, end, fn))
    return GS_NO_TENSOR;
  gs__tensor *weight = gs__lookup(hweight, fn);
  if (!weight)
    return GS_NO_TENSOR;
  if (weight->dtype != gs_dtype_of(start)) {
    gs__error(GS_ERR_DTYPE, fn, "expected a weight of start's dtype %s, got %s",
              gs_dtype_name(gs_dtype_of(start)), gs_dtype_name(weight->dtype));
    return GS_NO_TENSOR;
  }
  gs_tensor diff = gs_sub(end, start);
  return lerp_step(start, diff, gs_mul(hweight, diff));
}

gs_tensor gs_lerp_scalar(gs_tensor start, gs_tensor end, double weight) {
  if (!lerp_operands(start, end, "lerp_scalar"))
    return GS_NO_TENSOR;
  gs_tensor diff = gs_sub(end, start);
  return lerp_step(start, diff, gs_mul_scalar(diff, weight));
}
