/* index-tensors.c: PyTorch's advanced indexing with several index tensors at once, as
 * at::index and at::index_put_: t[rows, cols] picks t[rows[i], cols[i]] (the index tensors
 * broadcast together and paired, not an outer product), and t[rows, cols] = v writes there.
 *
 * A plan says where each index tensor goes: a bool mask of k dims stands for its k nonzero()
 * columns; the indexed dims' broadcast shape replaces them in the result where they are when
 * they are adjacent, and goes first when something separates them (torch's rule). Each
 * position of that broadcast shape becomes one element offset into t (the sum of index times
 * stride over the indexed dims), checked against the dims' sizes with torch's words; then one
 * strided run over the result moves elements by those offsets (index.c's gather and scatter
 * loops), straight through t's strides, so a view is read and written in place.
 *
 * Gradients: reading (IndexTensorsBackward, torch's IndexBackward0) puts g back with an
 * accumulating index_put, so a position picked twice gets both; index_put (IndexPutBackward)
 * gives t g with zeros where it wrote (g itself when it accumulated) and the values what the
 * same index reads from g. Both formulas are these ops, so they differentiate again. The
 * index tensors are saved as constants, one saved slot per indexed dim.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops-impl.h"

/* The loops of index.c read their element jump from this (as their jump_ctx). */
typedef struct offset_jump {
  int64_t jump;
} offset_jump;

typedef struct index_plan {
  int n_adv;                    /* indexed dims */
  int dims[GS_MAX_DIMS];        /* which dims of t, ascending */
  gs_tensor index[GS_MAX_DIMS]; /* per indexed dim: an i64 index (owned: new for masks) */
  int64_t bshape[GS_MAX_DIMS];  /* their broadcast shape */
  int bnd;
  int block;                  /* where that shape sits in the result's dims */
  int64_t shape[GS_MAX_DIMS]; /* the result's shape */
  int nd;
  int64_t t_strides[GS_MAX_DIMS];   /* t's strides over the result (0 on the block) */
  int64_t off_strides[GS_MAX_DIMS]; /* offsets' strides over the result (0 off the block) */
  gs__tensor offsets;               /* i64 of bshape: element offsets into t (owned) */
  bool has_offsets;
} index_plan;

static void plan_clear(index_plan *p) {
  for (int k = 0; k < p->n_adv; k++)
    gs_dispose(p->index[k]);
  if (p->has_offsets)
    gs__tensor_release(&p->offsets);
  p->n_adv = 0;
  p->has_offsets = false;
}

/* The k i64 columns of a bool mask's true positions (row-major), as torch's nonzero(). */
static bool mask_columns(const gs__tensor *mask, gs_tensor *columns, const char *fn) {
  gs__tensor bits;
  if (!gs__as_contiguous(mask, GS_BOOL, &bits, fn))
    return false;
  const bool *b = (const bool *)gs__tensor_data(&bits);
  int64_t count = 0;
  for (int64_t i = 0; i < bits.numel; i++)
    count += b[i];
  bool ok = true;
  for (int j = 0; j < mask->ndim; j++)
    columns[j] = GS_NO_TENSOR;
  for (int j = 0; j < mask->ndim && ok; j++) {
    gs__tensor *col;
    columns[j] = gs__tensor_new(GS_I64, &count, 1, fn, &col);
    if (!columns[j].id) {
      ok = false;
      break;
    }
    int64_t *v = (int64_t *)gs__tensor_data(col), k = 0, inner = 1;
    for (int e = j + 1; e < mask->ndim; e++)
      inner *= mask->shape[e];
    for (int64_t i = 0; i < bits.numel; i++)
      if (b[i])
        v[k++] = (i / inner) % mask->shape[j];
  }
  if (!ok)
    for (int j = 0; j < mask->ndim; j++)
      gs_dispose(columns[j]);
  gs__tensor_release(&bits);
  return ok;
}

/* The indexed dims and their i64 indexes: entry i of indices indexes the next dim of t, or
 * (a bool mask of k dims) the next k; id 0 skips a dim. */
static bool plan_dims(index_plan *p, const gs__tensor *t, int n, const gs_tensor *indices,
                      const char *fn) {
  int pos = 0;
  for (int i = 0; i < n; i++) {
    if (!indices[i].id) {
      pos++;
      continue;
    }
    gs__tensor *ix = gs__lookup(indices[i], fn);
    if (!ix)
      return false;
    if (ix->dtype != GS_I64 && ix->dtype != GS_BOOL) {
      gs__error(GS_ERR_INDEX, fn,
                "tensors used as indices must be long, byte or bool tensors (expected i64 or "
                "bool, got %s at position %d)",
                gs_dtype_name(ix->dtype), i);
      return false;
    }
    int k = ix->dtype == GS_BOOL ? ix->ndim : 1;
    if (ix->dtype == GS_BOOL && k == 0) {
      gs__error(GS_ERR_INDEX, fn,
                "expected a bool mask of at least 1 dim at position %d, got "
                "a 0-D one (unsqueeze the tensor and index with [True] instead)",
                i);
      return false;
    }
    if (pos + k > t->ndim) {
      gs__error(GS_ERR_INDEX, fn, "too many indices for tensor of dimension %d", t->ndim);
      return false;
    }
    if (ix->dtype == GS_BOOL) {
      for (int j = 0; j < k; j++)
        if (ix->shape[j] != t->shape[pos + j]) {
          char ms[GS__SHAPE_STR], ts[GS__SHAPE_STR];
          gs__error(GS_ERR_INDEX, fn,
                    "The shape of the mask %s at index %d does not match the shape of the "
                    "indexed tensor %s at index %d",
                    gs__shape_str(ms, ix->shape, ix->ndim), j, gs__shape_str(ts, t->shape, t->ndim),
                    pos + j);
          return false;
        }
      if (!mask_columns(ix, p->index + p->n_adv, fn))
        return false;
    } else {
      p->index[p->n_adv] = gs_view(indices[i], ix->shape, ix->ndim); /* owned like a mask's */
      if (!p->index[p->n_adv].id)
        return false;
    }
    for (int j = 0; j < k; j++)
      p->dims[p->n_adv++] = pos++;
  }
  if (pos > t->ndim) {
    gs__error(GS_ERR_INDEX, fn, "too many indices for tensor of dimension %d", t->ndim);
    return false;
  }
  if (!p->n_adv) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected at least one index tensor, got none");
    return false;
  }
  return true;
}

/* The indexes' broadcast shape, and the result's shape and strides over it. */
static bool plan_shape(index_plan *p, const gs__tensor *t, const char *fn) {
  p->bnd = 0;
  for (int k = 0; k < p->n_adv; k++) {
    const gs__tensor *ix = gs__lookup(p->index[k], fn);
    int64_t before[GS_MAX_DIMS];
    memcpy(before, p->bshape, sizeof before);
    if (!gs__broadcast_shapes(before, p->bnd, ix->shape, ix->ndim, p->bshape, &p->bnd)) {
      char all[GS_MAX_DIMS * GS__SHAPE_STR + 8] = "", one[GS__SHAPE_STR];
      for (int j = 0; j < p->n_adv; j++) {
        const gs__tensor *jx = gs__lookup(p->index[j], fn);
        if (j)
          strcat(all, ", ");
        strcat(all, gs__shape_str(one, jx->shape, jx->ndim));
      }
      gs__error(GS_ERR_INDEX, fn,
                "shape mismatch: indexing tensors could not be broadcast together with shapes "
                "%s",
                all);
      return false;
    }
  }
  bool adjacent = p->dims[p->n_adv - 1] - p->dims[0] + 1 == p->n_adv;
  p->block = adjacent ? p->dims[0] : 0;
  p->nd = t->ndim - p->n_adv + p->bnd;
  if (p->nd > GS_MAX_DIMS) {
    gs__error(GS_ERR_SHAPE, fn, "the result would have %d dims, more than %d", p->nd, GS_MAX_DIMS);
    return false;
  }
  int64_t boff[GS_MAX_DIMS];
  gs__contiguous_strides(p->bshape, p->bnd, boff);
  for (int e = 0; e < p->bnd; e++) {
    p->shape[p->block + e] = p->bshape[e];
    p->t_strides[p->block + e] = 0;
    p->off_strides[p->block + e] = boff[e];
  }
  /* The dims not indexed, in order, around the block. */
  int r = 0, k = 0;
  for (int d = 0; d < t->ndim; d++) {
    if (k < p->n_adv && p->dims[k] == d) {
      k++;
      continue;
    }
    int at = r < p->block ? r : r + p->bnd;
    p->shape[at] = t->shape[d];
    p->t_strides[at] = t->strides[d];
    p->off_strides[at] = 0;
    r++;
  }
  return true;
}

/* offsets[b] = sum over the indexed dims of index[b] * stride, negatives counted from the end;
 * an index out of its dim's range is reported as torch reports it (the dimension counted
 * among the indexed ones), unless the result is empty (torch then moves nothing, so checks
 * nothing). */
static bool plan_offsets(index_plan *p, const gs__tensor *t, const char *fn) {
  if (!gs__tensor_init(&p->offsets, GS_I64, p->bshape, p->bnd, fn))
    return false;
  p->has_offsets = true;
  int64_t *off = (int64_t *)gs__tensor_data(&p->offsets);
  memset(off, 0, sizeof(int64_t) * (size_t)p->offsets.numel);
  /* torch checks an index only as it moves an element: an empty result checks none */
  int64_t result_numel = 1;
  for (int d = 0; d < p->nd; d++)
    result_numel *= p->shape[d];
  for (int k = 0; k < p->n_adv && result_numel; k++) {
    const gs__tensor *ix = gs__lookup(p->index[k], fn);
    int64_t st[GS_MAX_DIMS], pos[GS_MAX_DIMS] = {0}, at = 0;
    gs__broadcast_strides(ix, p->bshape, p->bnd, st);
    const int64_t *v = (const int64_t *)gs__tensor_data(ix);
    int64_t size = t->shape[p->dims[k]], stride = t->strides[p->dims[k]];
    for (int64_t i = 0; i < p->offsets.numel; i++) {
      int64_t x = v[at];
      if (x < -size || x >= size) {
        gs__error(GS_ERR_INDEX, fn, "index %lld is out of bounds for dimension %d with size %lld",
                  (long long)x, k, (long long)size);
        return false;
      }
      off[i] += (x < 0 ? x + size : x) * stride;
      for (int d = p->bnd - 1; d >= 0; d--) {
        at += st[d];
        if (++pos[d] < p->bshape[d])
          break;
        at -= st[d] * p->bshape[d];
        pos[d] = 0;
      }
    }
  }
  return true;
}

static bool plan_init(index_plan *p, const gs__tensor *t, int n, const gs_tensor *indices,
                      const char *fn) {
  memset(p, 0, sizeof *p);
  if (n < 0 || (n > 0 && !indices)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected n >= 0 indices in an array, got %d%s", n,
              indices ? "" : " and NULL");
    return false;
  }
  if (plan_dims(p, t, n, indices, fn) && plan_shape(p, t, fn) && plan_offsets(p, t, fn))
    return true;
  plan_clear(p);
  return false;
}

/* Saves the plan's indexes as constants of n (slot k for indexed dim k), with their dims in
 * ints[1..]: the formulas rebuild the index list from them. */
static void save_plan(gs__node *n, const index_plan *p, int ndim) {
  n->ints[0] = p->n_adv;
  n->ints[1] = ndim;
  for (int k = 0; k < p->n_adv; k++) {
    gs__save_constant(n, k, gs__lookup(p->index[k], "index"));
    n->ints[2 + k] = p->dims[k];
  }
}

/* The index list of a saved plan, one entry per dim up to the last indexed (0: not indexed). */
static int saved_list(gs__node *n, gs_tensor *list) {
  int count = 0;
  for (int k = 0; k < (int)n->ints[0]; k++) {
    int d = (int)n->ints[2 + k];
    while (count < d)
      list[count++] = GS_NO_TENSOR;
    list[count++] = gs__saved(n, k);
  }
  return count;
}

/* d t[indices] = zeros(t) with g added at the positions picked (repeats add up) */
static void index_tensors_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor list[GS_MAX_DIMS];
  int count = saved_list(n, list);
  gs_tensor zeros =
      gs__formula_temp(gs_zeros(gs_dtype_of(g), n->inputs[0].shape, n->inputs[0].ndim));
  grads[0] = gs__reduce_grad(n, 0, gs_index_put_tensors(zeros, count, list, g, true));
}
GS__BACKWARD_TWICE(IndexTensorsBackward, index_tensors_backward);

/* d index_put(t, indices, v) = g with zeros where v was written (g when it was added), and
 * g[indices] for v (summed over the dims v was broadcast along) */
static void index_put_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor list[GS_MAX_DIMS];
  int count = saved_list(n, list);
  bool accumulate = n->ints[GS__NODE_INTS - 1];
  if (gs__needs_grad(n, 0)) {
    gs_tensor zero = gs__formula_temp(gs_scalar(gs_dtype_of(g), 0.0));
    grads[0] = gs__reduce_grad(n, 0,
                               accumulate ? gs__pass_grad_through(g)
                                          : gs_index_put_tensors(g, count, list, zero, false));
  }
  if (gs__needs_grad(n, 1))
    grads[1] = gs__reduce_grad(n, 1, gs_index_tensors(g, count, list));
}
GS__BACKWARD_TWICE(IndexPutBackward, index_put_backward);

gs_tensor gs_index_tensors(gs_tensor ht, int n, const gs_tensor *indices) {
  const char *fn = "index";
  gs__tensor *t = gs__lookup(ht, fn);
  index_plan p;
  if (!t || !plan_init(&p, t, n, indices, fn))
    return GS_NO_TENSOR;
  gs__tensor *out;
  gs_tensor h = gs__tensor_new(t->dtype, p.shape, p.nd, fn, &out);
  if (h.id) {
    int64_t strides[3][GS_MAX_DIMS];
    memcpy(strides[0], out->strides, sizeof strides[0]);
    memcpy(strides[1], p.off_strides, sizeof strides[1]);
    memcpy(strides[2], p.t_strides, sizeof strides[2]);
    size_t es = gs__elsize(t->dtype);
    char *data[3] = {gs__tensor_data(out), gs__tensor_data(&p.offsets), gs__tensor_data(t)};
    size_t sizes[3] = {es, sizeof(int64_t), es};
    offset_jump jump = {(int64_t)es};
    gs__iter_run(3, data, (const int64_t(*)[GS_MAX_DIMS])strides, sizes, p.shape, p.nd,
                 gs__gather_loop(es), &jump);
    gs__node *node =
        gs__record_result(&IndexTensorsBackward, h, 1, (const gs__tensor *[]){t}, p.n_adv, fn);
    if (node)
      save_plan(node, &p, t->ndim);
  }
  plan_clear(&p);
  return h;
}

/* Writes (or adds) values into dst at the plan's positions; values already checked. */
static void put_run(gs__tensor *dst, const index_plan *p, const gs__tensor *values,
                    bool accumulate) {
  int64_t strides[3][GS_MAX_DIMS];
  memcpy(strides[0], p->t_strides, sizeof strides[0]);
  memcpy(strides[1], p->off_strides, sizeof strides[1]);
  gs__broadcast_strides(values, p->shape, p->nd, strides[2]);
  size_t es = gs__elsize(dst->dtype);
  char *data[3] = {gs__tensor_data(dst), gs__tensor_data(&p->offsets), gs__tensor_data(values)};
  size_t sizes[3] = {es, sizeof(int64_t), es};
  offset_jump jump = {(int64_t)es};
  gs__iter_run(3, data, (const int64_t(*)[GS_MAX_DIMS])strides, sizes, p->shape, p->nd,
               gs__scatter_loop(accumulate ? GS_SCATTER_ADD : GS_SCATTER_REPLACE, dst->dtype),
               &jump);
}

/* index_put's checks and plan, and values as put_run reads them (*tmp: a private copy when
 * values shares t's storage). */
static bool put_prepare(const gs__tensor *t, int n, const gs_tensor *indices,
                        const gs__tensor *values, bool accumulate, index_plan *p, gs__tensor *tmp,
                        bool *tmp_used, const char *fn) {
  *tmp_used = false;
  if (values->dtype != t->dtype) {
    gs__error(GS_ERR_DTYPE, fn,
              "Index put requires the source and destination dtypes match, got %s for the "
              "destination and %s for the source",
              gs_dtype_name(t->dtype), gs_dtype_name(values->dtype));
    return false;
  }
  if (accumulate && !gs__scatter_loop(GS_SCATTER_ADD, t->dtype)) {
    gs__error(GS_ERR_DTYPE, fn, "accumulate=True expected an f32, f64 or integer tensor, got %s",
              gs_dtype_name(t->dtype));
    return false;
  }
  if (!plan_init(p, t, n, indices, fn))
    return false;
  int64_t unused[GS_MAX_DIMS];
  if (values->ndim > p->nd || !gs__broadcast_strides(values, p->shape, p->nd, unused)) {
    char vs[GS__SHAPE_STR], rs[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn,
              "shape mismatch: value tensor of shape %s cannot be broadcast to indexing result "
              "of shape %s",
              gs__shape_str(vs, values->shape, values->ndim), gs__shape_str(rs, p->shape, p->nd));
    plan_clear(p);
    return false;
  }
  if (values->storage == t->storage) { /* t[i] = t[j]-like aliasing: read the old values */
    if (!gs__tensor_init(tmp, values->dtype, values->shape, values->ndim, fn)) {
      plan_clear(p);
      return false;
    }
    gs__copy_into(tmp, values);
    *tmp_used = true;
  }
  return true;
}

static gs__node *record_put(gs__tensor *out, const gs__tensor *t, const gs__tensor *values,
                            const index_plan *p, bool accumulate) {
  if (!gs_dtype_is_floating(out->dtype) ||
      !gs__any_requires_grad(2, (const gs__tensor *[]){t, values}))
    return NULL;
  gs__node *node =
      gs__record(&IndexPutBackward, out, 2, (const gs__tensor *[]){t, values}, p->n_adv);
  if (node) {
    save_plan(node, p, t->ndim);
    node->ints[GS__NODE_INTS - 1] = accumulate;
  }
  return node;
}

void gs_index_put_tensors_(gs_tensor ht, int n, const gs_tensor *indices, gs_tensor hvalues,
                           bool accumulate) {
  const char *fn = "index_put_";
  gs__tensor *t = gs__lookup(ht, fn);
  gs__tensor *values = t ? gs__lookup(hvalues, fn) : NULL;
  index_plan p;
  gs__tensor tmp;
  bool tmp_used;
  if (!values || !gs__check_writable(t, fn) ||
      !put_prepare(t, n, indices, values, accumulate, &p, &tmp, &tmp_used, fn))
    return;
  bool record = gs__any_requires_grad(2, (const gs__tensor *[]){t, values});
  if (gs__begin_write(t, values->ag.requires_grad, fn)) {
    put_run(t, &p, tmp_used ? &tmp : values, accumulate);
    if (record)
      record_put(t, t, values, &p, accumulate);
  }
  if (tmp_used)
    gs__tensor_release(&tmp);
  plan_clear(&p);
}

gs_tensor gs_index_put_tensors(gs_tensor ht, int n, const gs_tensor *indices, gs_tensor hvalues,
                               bool accumulate) {
  const char *fn = "index_put";
  gs__tensor *t = gs__lookup(ht, fn);
  gs__tensor *values = t ? gs__lookup(hvalues, fn) : NULL;
  if (!values)
    return GS_NO_TENSOR;
  /* A copy of t written in place; planned over the copy, whose strides the offsets follow
   * (it has t's shape, so the checks are t's). */
  gs__tensor *out;
  gs_tensor h = gs__tensor_new(t->dtype, t->shape, t->ndim, fn, &out);
  if (!h.id)
    return h;
  gs__copy_into(out, t);
  index_plan p;
  gs__tensor tmp;
  bool tmp_used;
  if (!put_prepare(out, n, indices, values, accumulate, &p, &tmp, &tmp_used, fn)) {
    gs_dispose(h);
    return GS_NO_TENSOR;
  }
  put_run(out, &p, values, accumulate);
  record_put(out, t, values, &p, accumulate);
  plan_clear(&p);
  return h;
}
