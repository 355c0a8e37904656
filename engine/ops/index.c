/* index.c: ops that move elements by an index tensor: index_select, gather, scatter (with
 * its reduce forms, scatter_add among them) and embedding.
 *
 * All check every index value before allocating anything, so a bad index changes nothing.
 * index_select, gather and embedding are one strided run (gather_run): the source operand
 * walks every dim but the indexed one, and the inner loop adds index * stride along that dim.
 * The scatters are the same walk in the other direction (scatter_run), writing, adding or
 * multiplying.
 *
 * Their gradients run the other way: what an op picked gets its gradient back with
 * scatter_add, so an index that repeats adds up its gradients, and a scatter's source gets
 * its own back with gather (what scatter wrote over gets zeros). Indexes never require grad;
 * floating results record a node that saves the index.
 */
#include <stdio.h>
#include <string.h>

#include "ops-impl.h"

/* index_select and embedding take i32 indexes too, gather and scatter_add only i64: PyTorch
 * 1.13's rule. */
bool gs__check_index_dtype(const gs__tensor *index, bool takes_i32, const char *fn) {
  if (index->dtype != GS_I64 && !(takes_i32 && index->dtype == GS_I32)) {
    gs__error(GS_ERR_DTYPE, fn, "expected an i64%s index, got %s", takes_i32 ? " or i32" : "",
              gs_dtype_name(index->dtype));
    return false;
  }
  return true;
}

/* An index value at p, of an i64 or i32 index. */
static inline int64_t index_at(const char *p, gs_dtype dtype) {
  return dtype == GS_I32 ? *(const int32_t *)p : *(const int64_t *)p;
}

/* Checks that every value of index (any strides) lies in [0, size); reports the first, in
 * row-major order, that does not, with its position. what names the indexed dim. */
bool gs__check_index_values(const gs__tensor *index, int64_t size, const char *what,
                            const char *fn) {
  const char *data = gs__tensor_data(index);
  int64_t es = (int64_t)gs__elsize(index->dtype);
  int64_t pos[GS_MAX_DIMS] = {0}, off = 0;
  for (int64_t i = 0; i < index->numel; i++) {
    int64_t v = index_at(data + off * es, index->dtype);
    if (v < 0 || v >= size) {
      char where[GS__SHAPE_STR], range[64];
      if (size > 0)
        snprintf(range, sizeof range, "expected 0 to %lld", (long long)(size - 1));
      else
        snprintf(range, sizeof range, "it is empty, so no index is valid");
      gs__error(GS_ERR_INDEX, fn, "index%s = %lld is out of range for %s (%s)",
                index->ndim ? gs__shape_str(where, pos, index->ndim) : "", (long long)v, what,
                range);
      return false;
    }
    for (int d = index->ndim - 1; d >= 0; d--) {
      off += index->strides[d];
      if (++pos[d] < index->shape[d])
        break;
      off -= index->strides[d] * index->shape[d];
      pos[d] = 0;
    }
  }
  return true;
}

/* The inner loops move elements by their size only, so one loop serves every dtype. */
typedef struct jump_ctx {
  int64_t jump; /* bytes between neighbours along the indexed dim */
} jump_ctx;

#define GATHER_LOOP(NAME, T, IT)                                                                   \
  static void NAME(char **p, const int64_t *s, int64_t n, void *ctx) {                             \
    int64_t jump = ((const jump_ctx *)ctx)->jump;                                                  \
    char *out = p[0];                                                                              \
    const char *index = p[1], *src = p[2];                                                         \
    for (int64_t i = 0; i < n; i++, out += s[0], index += s[1], src += s[2])                       \
      *(T *)out = *(const T *)(src + (int64_t) * (const IT *)index * jump);                        \
  }
GATHER_LOOP(gather_1, uint8_t, int64_t)
GATHER_LOOP(gather_2, uint16_t, int64_t)
GATHER_LOOP(gather_4, uint32_t, int64_t)
GATHER_LOOP(gather_8, uint64_t, int64_t)
GATHER_LOOP(gather_1_by_i32, uint8_t, int32_t)
GATHER_LOOP(gather_2_by_i32, uint16_t, int32_t)
GATHER_LOOP(gather_4_by_i32, uint32_t, int32_t)
GATHER_LOOP(gather_8_by_i32, uint64_t, int32_t)

gs__loop_fn gs__gather_loop(size_t es) {
  return es == 1 ? gather_1 : es == 2 ? gather_2 : es == 4 ? gather_4 : gather_8;
}

/* out[i] = src[i with the indexed dim moved by index[i]]: index_strides and src_strides are
 * laid over out's shape (src's is 0 along the indexed dim, jump its real stride). */
static void gather_run(gs__tensor *out, const gs__tensor *index, const int64_t *index_strides,
                       const gs__tensor *src, const int64_t *src_strides, int64_t jump) {
  int64_t strides[3][GS_MAX_DIMS];
  memcpy(strides[0], out->strides, sizeof strides[0]);
  memcpy(strides[1], index_strides, sizeof(int64_t) * (size_t)out->ndim);
  memcpy(strides[2], src_strides, sizeof(int64_t) * (size_t)out->ndim);
  size_t es = gs_dtype_size(src->dtype);
  char *data[3] = {gs__tensor_data(out), gs__tensor_data(index), gs__tensor_data(src)};
  size_t sizes[3] = {es, gs__elsize(index->dtype), es};
  jump_ctx ctx = {jump * (int64_t)es};
  /* Indexed [index is i32][log2 of the element size]. */
  static const gs__loop_fn loops[2][4] = {
      {gather_1, gather_2, gather_4, gather_8},
      {gather_1_by_i32, gather_2_by_i32, gather_4_by_i32, gather_8_by_i32}};
  gs__loop_fn loop = loops[index->dtype == GS_I32][es == 1 ? 0 : es == 2 ? 1 : es == 4 ? 2 : 3];
  gs__iter_run(3, data, (const int64_t(*)[GS_MAX_DIMS])strides, sizes, out->shape, out->ndim,
               loop, &ctx);
}

/* A dim's size and stride, counting a 0-D tensor as one element along dim 0 (as PyTorch's
 * gather and scatter do). */
static int64_t dim_size(const gs__tensor *t, int d) { return t->ndim ? t->shape[d] : 1; }
static int64_t dim_stride(const gs__tensor *t, int d) { return t->ndim ? t->strides[d] : 0; }

/* ---- backward formulas ---------------------------------------------------------------- */

/* Records an index op's node: its inputs in the op's argument order (the index among them),
 * the index saved for the formula (slot 0) and the dim in ints. */
static gs_tensor record_indexed(const gs__node_kind *kind, gs_tensor h, int n_inputs,
                                const gs__tensor *const *inputs, const gs__tensor *index,
                                int d) {
  if (!h.id)
    return h;
  gs__tensor *out = gs__lookup(h, kind->name);
  if (!gs_dtype_is_floating(out->dtype))
    return h;
  gs__node *n = gs__record(kind, out, n_inputs, inputs, 1);
  if (n) {
    gs__save(n, 0, index);
    n->ints[0] = d;
  }
  return h;
}

/* Zeros of the given shape, in src's dtype, with src's slices along dim d added at the
 * positions a 1-D (or 0-D) index names: a position named twice receives both slices. */
static gs_tensor add_slices_into(const int64_t *zeros_shape, int zeros_ndim, int d, gs_tensor index,
                                 gs_tensor src) {
  int64_t shape[GS_MAX_DIMS], along[GS_MAX_DIMS];
  int nd = gs_shape(src, shape);
  if (gs_dtype_of(index) == GS_I32) /* scatter_add takes i64 indexes only */
    index = gs__formula_temp(gs_to_dtype(index, GS_I64));
  for (int e = 0; e < nd; e++)
    along[e] = e == d ? shape[d] : 1;
  /* One position per element of src: the index laid along d, repeated across the rest. */
  gs_tensor spread =
      gs__formula_temp(gs_expand(gs__formula_temp(gs_reshape(index, along, nd)), shape, nd));
  gs_tensor zeros = gs__formula_temp(gs_zeros(gs_dtype_of(src), zeros_shape, zeros_ndim));
  return gs_scatter_add(zeros, d, spread, src);
}

/* The same into zeros of input i's shape. */
static gs_tensor add_slices_at(gs__node *n, int i, int d, gs_tensor index, gs_tensor src) {
  return add_slices_into(n->inputs[i].shape, n->inputs[i].ndim, d, index, src);
}

/* d index_select(t, d, index) = zeros(t) with g's slices added back at index along d */
static void index_select_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, add_slices_at(n, 0, (int)n->ints[0], gs__saved(n, 0), g));
}
GS__BACKWARD_TWICE(IndexSelectBackward, index_select_backward);

/* d gather(t, d, index) = scatter_add(zeros(t), d, index, g) */
static void gather_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor zeros =
      gs__formula_temp(gs_zeros(gs_dtype_of(g), n->inputs[0].shape, n->inputs[0].ndim));
  grads[0] = gs__reduce_grad(n, 0, gs_scatter_add(zeros, (int)n->ints[0], gs__saved(n, 0), g));
}
GS__BACKWARD_TWICE(GatherBackward, gather_backward);

/* d scatter_add(t, d, index, src) = g, gather(g, d, index) (src may be larger than the index:
 * its elements beyond it were not added and get zero) */
static void scatter_add_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  if (gs__needs_grad(n, 0))
    grads[0] = gs__reduce_grad_through(n, 0, g);
  if (gs__needs_grad(n, 2)) {
    gs_tensor picked = gs__formula_temp(gs_gather(g, (int)n->ints[0], gs__saved(n, 0)));
    grads[2] = gs__grad_of_block(n, 2, picked, (const int64_t[GS_MAX_DIMS]){0});
  }
}
GS__BACKWARD_TWICE(ScatterAddBackward, scatter_add_backward);

/* d embedding(w, index) = zeros(w) with g's rows added back at the rows index names */
/* (ints[1]: padding_idx + 1, 0 for none: the padding row gets no gradient; ints[2]:
 * scale_grad_by_freq, each row's gradient divided by how many times the index names it) */
static void embedding_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor index = gs__saved(n, 0);
  int64_t count = gs_numel(index), width = n->inputs[0].shape[1];
  gs_tensor flat_index = gs__formula_temp(gs_reshape(index, (int64_t[]){count}, 1));
  gs_tensor rows = gs__formula_temp(gs_reshape(g, (int64_t[]){count, width}, 2));
  if (n->ints[1] > 0) {
    gs_tensor is_pad = gs__formula_temp(gs_eq_scalar(flat_index, (double)(n->ints[1] - 1)));
    rows = gs__formula_temp(gs_masked_fill(rows, gs__formula_temp(gs_unsqueeze(is_pad, 1)), 0.0));
  }
  if (n->ints[2]) {
    gs_tensor ones = gs__formula_temp(gs_ones(gs_dtype_of(g), &count, 1));
    gs_tensor freq = gs__formula_temp(add_slices_into(n->inputs[0].shape, 1, 0, flat_index, ones));
    gs_tensor per = gs__formula_temp(gs_index_select(freq, 0, flat_index));
    rows = gs__formula_temp(gs_div(rows, gs__formula_temp(gs_unsqueeze(per, 1))));
  }
  grads[0] = gs__reduce_grad(n, 0, add_slices_at(n, 0, 0, flat_index, rows));
}
GS__BACKWARD_TWICE(EmbeddingBackward, embedding_backward);

/* shape with dims [d, d + span) merged into one, their row-major flattening; the new ndim. */
static int merge_dims(const int64_t *shape, int ndim, int d, int span, int64_t *merged) {
  int k = 0;
  for (int e = 0; e < d; e++)
    merged[k++] = shape[e];
  merged[k] = 1;
  for (int e = d; e < d + span; e++)
    merged[k] *= shape[e];
  k++;
  for (int e = d + span; e < ndim; e++)
    merged[k++] = shape[e];
  return k;
}

/* d t[index] = zeros(t) with g's slices added back, along the merged dims, at the positions
 * picked (saved: the positions, negatives wrapped; ints: d, span) */
static void index_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  int d = (int)n->ints[0], span = (int)n->ints[1];
  gs_tensor positions = gs__saved(n, 0);
  int64_t merged[GS_MAX_DIMS], picked[GS_MAX_DIMS];
  int nm = merge_dims(n->inputs[0].shape, n->inputs[0].ndim, d, span, merged);
  memcpy(picked, merged, sizeof picked);
  picked[d] = gs_numel(positions);
  gs_tensor slices = gs__formula_temp(gs_reshape(g, picked, nm));
  gs_tensor sum = gs__formula_temp(add_slices_into(merged, nm, d, positions, slices));
  grads[0] = gs__reduce_grad(n, 0, gs_reshape(sum, n->inputs[0].shape, n->inputs[0].ndim));
}
GS__BACKWARD_TWICE(IndexBackward, index_backward);

/* ---- the ops -------------------------------------------------------------------------- */

/* t[index], one gather over t's dims [d, d + span) seen as one: the result is fresh (not a
 * view of an index_select's output), so it can carry the op's own node. */
gs_tensor gs_index(gs_tensor ht, int dim, int span, gs_tensor hindex) {
  const char *fn = "index";
  gs__tensor *t = gs__lookup(ht, fn);
  gs__tensor *index = t ? gs__lookup(hindex, fn) : NULL;
  if (!index || !gs__check_index_dtype(index, false, fn))
    return GS_NO_TENSOR;
  int d = t->ndim ? gs__wrap_dim(dim, t->ndim, fn) : -1;
  if (!t->ndim)
    gs__error(GS_ERR_SHAPE, fn, "expected a tensor of at least 1 dimension, got 0-D");
  if (d < 0)
    return GS_NO_TENSOR;
  if (span < 1 || d + span > t->ndim) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected 1 to %d dims from dim %d to index, got %d",
              t->ndim - d, d, span);
    return GS_NO_TENSOR;
  }
  int nd = t->ndim - span + index->ndim;
  if (nd > GS_MAX_DIMS) {
    gs__error(GS_ERR_SHAPE, fn, "the result would have %d dims, more than %d", nd, GS_MAX_DIMS);
    return GS_NO_TENSOR;
  }
  int64_t merged[GS_MAX_DIMS], shape[GS_MAX_DIMS];
  int nm = merge_dims(t->shape, t->ndim, d, span, merged);
  char what[96];
  snprintf(what, sizeof what, "dims %d to %d of size %lld", d, d + span - 1, (long long)merged[d]);
  if (span == 1)
    snprintf(what, sizeof what, "dim %d of size %lld", d, (long long)merged[d]);
  gs_tensor hpositions = gs__checked_positions(index, merged[d], true, what, fn);
  gs__tensor *positions = hpositions.id ? gs__lookup(hpositions, fn) : NULL;
  gs__tensor src;
  if (!positions || !gs__as_contiguous(t, t->dtype, &src, fn)) {
    gs_dispose(hpositions);
    return GS_NO_TENSOR;
  }
  /* The result's shape: t's dims before d, index's dims, t's dims after the span. */
  int k = 0;
  for (int e = 0; e < d; e++)
    shape[k++] = t->shape[e];
  for (int e = 0; e < index->ndim; e++)
    shape[k++] = index->shape[e];
  for (int e = d + span; e < t->ndim; e++)
    shape[k++] = t->shape[e];
  gs__tensor *out;
  gs_tensor h = gs__tensor_new(t->dtype, shape, nd, fn, &out);
  if (h.id) {
    /* out and src seen with the merged dims: both contiguous, so their strides are the
     * row-major ones of [.., count, ..] and of merged. */
    gs__tensor out_merged = *out, src_merged = src;
    out_merged.ndim = src_merged.ndim = nm;
    memcpy(src_merged.shape, merged, sizeof merged);
    memcpy(out_merged.shape, merged, sizeof merged);
    out_merged.shape[d] = positions->numel;
    gs__contiguous_strides(out_merged.shape, nm, out_merged.strides);
    gs__contiguous_strides(merged, nm, src_merged.strides);
    int64_t index_strides[GS_MAX_DIMS] = {0}, src_strides[GS_MAX_DIMS];
    memcpy(src_strides, src_merged.strides, sizeof src_strides);
    index_strides[d] = 1;
    src_strides[d] = 0;
    gather_run(&out_merged, positions, index_strides, &src_merged, src_strides,
               src_merged.strides[d]);
    gs__node *n = gs__record_result(&IndexBackward, h, 1, (const gs__tensor *[]){t}, 1, fn);
    if (n) {
      gs__save_constant(n, 0, positions);
      n->ints[0] = d;
      n->ints[1] = span;
    }
  }
  gs__tensor_release(&src);
  gs_dispose(hpositions);
  return h;
}

gs_tensor gs_index_select(gs_tensor ht, int dim, gs_tensor hindex) {
  const char *fn = "index_select";
  gs__tensor *t = gs__lookup(ht, fn);
  gs__tensor *index = t ? gs__lookup(hindex, fn) : NULL;
  if (!index || !gs__check_index_dtype(index, true, fn))
    return GS_NO_TENSOR;
  if (t->ndim == 0) {
    gs__error(GS_ERR_SHAPE, fn, "expected a tensor of at least 1 dimension, got 0-D");
    return GS_NO_TENSOR;
  }
  if (index->ndim > 1) {
    gs__error(GS_ERR_SHAPE, fn, "expected a 1-D index, got %d-D", index->ndim);
    return GS_NO_TENSOR;
  }
  int d = gs__wrap_dim(dim, t->ndim, fn);
  if (d < 0)
    return GS_NO_TENSOR;
  char what[64];
  snprintf(what, sizeof what, "dim %d of size %lld", d, (long long)t->shape[d]);
  if (!gs__check_index_values(index, t->shape[d], what, fn))
    return GS_NO_TENSOR;

  int64_t shape[GS_MAX_DIMS], index_strides[GS_MAX_DIMS] = {0}, src_strides[GS_MAX_DIMS];
  memcpy(shape, t->shape, sizeof shape);
  memcpy(src_strides, t->strides, sizeof src_strides);
  shape[d] = index->numel;
  index_strides[d] = dim_stride(index, 0);
  src_strides[d] = 0;
  gs__tensor *out;
  gs_tensor h = gs__tensor_new(t->dtype, shape, t->ndim, fn, &out);
  if (h.id)
    gather_run(out, index, index_strides, t, src_strides, t->strides[d]);
  return record_indexed(&IndexSelectBackward, h, 2, (const gs__tensor *[]){t, index}, index, d);
}

/* index fits inside bound in every dim (but skip, when skip >= 0), as gather and
 * scatter_add require; the message names both roles and the first dim that does not fit. */
static bool check_index_fits(const gs__tensor *index, const gs__tensor *bound, int skip,
                             const char *bound_name, const char *fn) {
  for (int d = 0; d < index->ndim; d++) {
    if (d == skip || index->shape[d] <= bound->shape[d])
      continue;
    char si[GS__SHAPE_STR], sb[GS__SHAPE_STR], dims[32] = "every dim";
    if (skip >= 0)
      snprintf(dims, sizeof dims, "every dim but %d", skip);
    gs__error(GS_ERR_SHAPE, fn,
              "expected index.size(d) <= %s.size(d) for %s, got index of shape %s and %s of "
              "shape %s (dim %d: %lld > %lld)",
              bound_name, dims, gs__shape_str(si, index->shape, index->ndim), bound_name,
              gs__shape_str(sb, bound->shape, bound->ndim), d, (long long)index->shape[d],
              (long long)bound->shape[d]);
    return false;
  }
  return true;
}

static bool check_same_ndim(const gs__tensor *t, const gs__tensor *other, const char *name,
                            const char *fn) {
  if (other->ndim == t->ndim)
    return true;
  gs__error(GS_ERR_SHAPE, fn, "expected %s of the input's %d dims, got %d-D", name, t->ndim,
            other->ndim);
  return false;
}

gs_tensor gs_gather(gs_tensor ht, int dim, gs_tensor hindex) {
  const char *fn = "gather";
  gs__tensor *t = gs__lookup(ht, fn);
  gs__tensor *index = t ? gs__lookup(hindex, fn) : NULL;
  if (!index || !gs__check_index_dtype(index, false, fn) ||
      !check_same_ndim(t, index, "an index", fn))
    return GS_NO_TENSOR;
  int d = gs__wrap_dim(dim, t->ndim, fn);
  if (d < 0 || !check_index_fits(index, t, d, "input", fn))
    return GS_NO_TENSOR;
  char what[64];
  snprintf(what, sizeof what, "dim %d of size %lld", d, (long long)dim_size(t, d));
  if (!gs__check_index_values(index, dim_size(t, d), what, fn))
    return GS_NO_TENSOR;

  int64_t src_strides[GS_MAX_DIMS];
  memcpy(src_strides, t->strides, sizeof src_strides);
  src_strides[d] = 0;
  gs__tensor *out;
  gs_tensor h = gs__tensor_new(t->dtype, index->shape, index->ndim, fn, &out);
  if (h.id)
    gather_run(out, index, index->strides, t, src_strides, dim_stride(t, d));
  return record_indexed(&GatherBackward, h, 2, (const gs__tensor *[]){t, index}, index, d);
}

gs_tensor gs_embedding(gs_tensor weight, gs_tensor index) {
  return gs_embedding_with(weight, index, -1, false);
}

gs_tensor gs_embedding_with(gs_tensor hweight, gs_tensor hindex, int64_t padding_idx,
                            bool scale_grad_by_freq) {
  const char *fn = "embedding";
  gs__tensor *weight = gs__lookup(hweight, fn);
  gs__tensor *index = weight ? gs__lookup(hindex, fn) : NULL;
  if (!index || !gs__check_index_dtype(index, true, fn))
    return GS_NO_TENSOR;
  if (weight->ndim != 2) {
    gs__error(GS_ERR_SHAPE, fn, "expected a 2-D weight [rows, embedding_dim], got %d-D",
              weight->ndim);
    return GS_NO_TENSOR;
  }
  if (index->ndim >= GS_MAX_DIMS) {
    gs__error(GS_ERR_SHAPE, fn, "expected an index of at most %d dims, got %d-D",
              GS_MAX_DIMS - 1, index->ndim);
    return GS_NO_TENSOR;
  }
  if (padding_idx < -1 || padding_idx >= weight->shape[0]) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected padding_idx -1 (none) or a row in [0, %lld), got %lld",
              (long long)weight->shape[0], (long long)padding_idx);
    return GS_NO_TENSOR;
  }
  char what[64];
  snprintf(what, sizeof what, "a weight of %lld rows", (long long)weight->shape[0]);
  if (!gs__check_index_values(index, weight->shape[0], what, fn))
    return GS_NO_TENSOR;

  /* out[i..., j] = weight[index[i...], j]: the index repeats along j, the weight row along
   * the index's dims. */
  int nd = index->ndim;
  int64_t shape[GS_MAX_DIMS], index_strides[GS_MAX_DIMS], src_strides[GS_MAX_DIMS] = {0};
  memcpy(shape, index->shape, sizeof(int64_t) * (size_t)nd);
  memcpy(index_strides, index->strides, sizeof(int64_t) * (size_t)nd);
  shape[nd] = weight->shape[1];
  index_strides[nd] = 0;
  src_strides[nd] = weight->strides[1];
  gs__tensor *out;
  gs_tensor h = gs__tensor_new(weight->dtype, shape, nd + 1, fn, &out);
  if (h.id)
    gather_run(out, index, index_strides, weight, src_strides, weight->strides[0]);
  h = record_indexed(&EmbeddingBackward, h, 2, (const gs__tensor *[]){weight, index}, index, 0);
  gs__tensor *made = h.id ? gs__lookup(h, fn) : NULL;
  if (made && made->ag.grad_fn && made->ag.grad_fn->kind == &EmbeddingBackward) {
    made->ag.grad_fn->ints[1] = padding_idx + 1;
    made->ag.grad_fn->ints[2] = scale_grad_by_freq;
  }
  return h;
}

/* Rows of weight that index names whose norm_type-norm exceeds max_norm, scaled to
 * max_norm / (norm + 1e-7), in place and unrecorded, as torch.embedding_renorm_. */
bool gs_embedding_renorm_(gs_tensor weight, gs_tensor index, double max_norm, double norm_type) {
  const char *fn = "embedding_renorm_";
  gs__tensor *w = gs__lookup(weight, fn);
  gs__tensor *ix = w ? gs__lookup(index, fn) : NULL;
  if (!ix || !gs__check_index_dtype(ix, true, fn))
    return false;
  if (w->ndim != 2 || !gs_dtype_is_floating(w->dtype)) {
    gs__error(GS_ERR_SHAPE, fn, "expected a floating 2-D weight [rows, embedding_dim], got %d-D %s",
              w->ndim, gs_dtype_name(w->dtype));
    return false;
  }
  if (!(max_norm > 0) || !(norm_type > 0)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a positive max_norm and norm_type, got %g and %g",
              max_norm, norm_type);
    return false;
  }
  char what[64];
  snprintf(what, sizeof what, "a weight of %lld rows", (long long)w->shape[0]);
  if (!gs__check_index_values(ix, w->shape[0], what, fn))
    return false;
  int64_t count = ix->numel;
  int row_dim = 1;
  gs_no_grad_begin();
  gs_tensor flat = gs_reshape(index, &count, 1);
  gs_tensor rows = gs_index_select(weight, 0, flat);
  gs_tensor norms = gs_norm(rows, norm_type, &row_dim, 1, true);
  gs_tensor over = gs_gt_scalar(norms, max_norm);
  gs_tensor padded = gs_add_scalar(norms, 1e-7);
  gs_tensor inverse = gs_reciprocal(padded);
  gs_tensor shrink = gs_mul_scalar(inverse, max_norm);
  gs_tensor ones = gs_ones_like(norms);
  gs_tensor factor = gs_where(over, shrink, ones);
  gs_tensor scaled = gs_mul(rows, factor);
  bool ok = scaled.id != 0; /* each step reports its own error; the last one made fails */
  if (ok)
    gs_index_put_tensors_(weight, 1, &flat, scaled, false);
  gs_tensor made[] = {flat, rows, norms, over, padded, inverse, shrink, ones, factor, scaled};
  for (size_t i = 0; i < sizeof made / sizeof made[0]; i++)
    if (made[i].id)
      gs_dispose(made[i]);
  gs_no_grad_end();
  return ok;
}

/* ---- scatter and scatter_add ------------------------------------------------------------ */

/* scatter's plain write moves elements by their size only, as gather's. */
#define SCATTER_LOOP(NAME, T)                                                                      \
  static void NAME(char **p, const int64_t *s, int64_t n, void *ctx) {                             \
    int64_t jump = ((const jump_ctx *)ctx)->jump;                                                  \
    char *out = p[0];                                                                              \
    const char *index = p[1], *src = p[2];                                                         \
    for (int64_t i = 0; i < n; i++, out += s[0], index += s[1], src += s[2])                       \
      *(T *)(out + *(const int64_t *)index * jump) = *(const T *)src;                              \
  }
SCATTER_LOOP(scatter_1, uint8_t)
SCATTER_LOOP(scatter_2, uint16_t)
SCATTER_LOOP(scatter_4, uint32_t)
SCATTER_LOOP(scatter_8, uint64_t)

#define SCATTER_ADD_LOOP(NAME, T, ADD)                                                       \
  static void NAME(char **p, const int64_t *s, int64_t n, void *ctx) {                      \
    int64_t jump = ((const jump_ctx *)ctx)->jump;                                            \
    char *out = p[0];                                                                        \
    const char *index = p[1], *src = p[2];                                                   \
    for (int64_t i = 0; i < n; i++, out += s[0], index += s[1], src += s[2]) {              \
      T *dst = (T *)(out + *(const int64_t *)index * jump);                                  \
      T v = *(const T *)src;                                                                 \
      *dst = ADD;                                                                            \
    }                                                                                        \
  }
SCATTER_ADD_LOOP(scatter_add_f32, float, *dst + v)
SCATTER_ADD_LOOP(scatter_add_f64, double, *dst + v)
/* Wraps on overflow, as PyTorch's integer add does, instead of being undefined. */
SCATTER_ADD_LOOP(scatter_add_i64, int64_t, (int64_t)((uint64_t)*dst + (uint64_t)v))
SCATTER_ADD_LOOP(scatter_add_i32, int32_t, (int32_t)((uint32_t)*dst + (uint32_t)v))
SCATTER_ADD_LOOP(scatter_add_u8, uint8_t, (uint8_t)((uint32_t)*dst + (uint32_t)v))
SCATTER_ADD_LOOP(scatter_add_i8, int8_t, (int8_t)(uint8_t)((uint32_t)*dst + (uint32_t)v))
SCATTER_ADD_LOOP(scatter_add_i16, int16_t, (int16_t)(uint16_t)((uint32_t)*dst + (uint32_t)v))
/* scatter(reduce='multiply'); integers wrap as PyTorch's multiply does. */
SCATTER_ADD_LOOP(scatter_mul_f32, float, *dst *v)
SCATTER_ADD_LOOP(scatter_mul_f64, double, *dst *v)
SCATTER_ADD_LOOP(scatter_mul_i64, int64_t, (int64_t)((uint64_t)*dst *(uint64_t)v))
SCATTER_ADD_LOOP(scatter_mul_i32, int32_t, (int32_t)((uint32_t)*dst *(uint32_t)v))
SCATTER_ADD_LOOP(scatter_mul_u8, uint8_t, (uint8_t)((uint32_t)*dst *(uint32_t)v))
SCATTER_ADD_LOOP(scatter_mul_i8, int8_t, (int8_t)(uint8_t)((uint32_t)*dst *(uint32_t)v))
SCATTER_ADD_LOOP(scatter_mul_i16, int16_t, (int16_t)(uint16_t)((uint32_t)*dst *(uint32_t)v))

/* The inner loop of a scatter in mode over dtype (bool only replaces). */
gs__loop_fn gs__scatter_loop(gs_scatter_reduce mode, gs_dtype dtype) {
  /* Columns: f32 f64 i64 i32 u8 i8 i16. */
  static const gs__loop_fn add[] = {scatter_add_f32, scatter_add_f64, scatter_add_i64,
                                    scatter_add_i32, scatter_add_u8,  scatter_add_i8,
                                    scatter_add_i16};
  static const gs__loop_fn mul[] = {scatter_mul_f32, scatter_mul_f64, scatter_mul_i64,
                                    scatter_mul_i32, scatter_mul_u8,  scatter_mul_i8,
                                    scatter_mul_i16};
  if (mode == GS_SCATTER_REPLACE) {
    size_t es = gs_dtype_size(dtype);
    return es == 1 ? scatter_1 : es == 2 ? scatter_2 : es == 4 ? scatter_4 : scatter_8;
  }
  int col = dtype == GS_F32   ? 0
            : dtype == GS_F64 ? 1
            : dtype == GS_I64 ? 2
            : dtype == GS_I32 ? 3
            : dtype == GS_U8  ? 4
            : dtype == GS_I8  ? 5
            : dtype == GS_I16 ? 6
                              : -1;
  return col < 0 ? NULL : mode == GS_SCATTER_ADD ? add[col] : mul[col];
}

int gs__check_scatter_operands(const gs__tensor *t, int dim, const gs__tensor *index,
                               const gs__tensor *src, const char *fn) {
  if (!gs__check_index_dtype(index, false, fn))
    return -1;
  if (src && src->dtype != t->dtype) {
    gs__error(GS_ERR_DTYPE, fn, "expected src of the input's dtype %s, got %s",
              gs_dtype_name(t->dtype), gs_dtype_name(src->dtype));
    return -1;
  }
  if (!check_same_ndim(t, index, "an index", fn) || (src && !check_same_ndim(t, src, "src", fn)))
    return -1;
  int d = gs__wrap_dim(dim, t->ndim, fn);
  if (d < 0 || (src && !check_index_fits(index, src, -1, "src", fn)) ||
      !check_index_fits(index, t, d, "input", fn))
    return -1;
  char what[64];
  snprintf(what, sizeof what, "dim %d of size %lld", d, (long long)dim_size(t, d));
  if (!gs__check_index_values(index, dim_size(t, d), what, fn))
    return -1;
  return d;
}

static const char *const reduce_names[] = {"none", "add", "multiply"};

/* d scatter(t, d, index, src) = g with zeros where src was written, gather(g, d, index) */
static void scatter_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  int d = (int)n->ints[0];
  gs_tensor index = gs__saved(n, 0);
  if (gs__needs_grad(n, 0))
    grads[0] = gs__reduce_grad(n, 0, gs_scatter_value(g, d, index, 0.0, GS_SCATTER_REPLACE));
  if (n->n_inputs > 2 && gs__needs_grad(n, 2)) {
    gs_tensor picked = gs__formula_temp(gs_gather(g, d, index));
    grads[2] = gs__grad_of_block(n, 2, picked, (const int64_t[GS_MAX_DIMS]){0});
  }
}
GS__BACKWARD_TWICE(ScatterBackward, scatter_backward);
/* scatter of one value: t's gradient only (torch's ScatterBackward1). */
GS__BACKWARD_TWICE(ScatterValueBackward, scatter_backward);

/* The scatters' one body: a copy of t with src's elements (src_strides laid over the index's
 * shape: src's own, or zeros for one value) written (or added, multiplied) at index along
 * dim. src_shape is NULL for one value. Records kind over inputs (t, index[, src]) when the
 * mode has a gradient. */
static gs_tensor scatter_run(gs__tensor *t, int dim, gs__tensor *index, const gs__tensor *src,
                             bool value_form, gs_scatter_reduce mode, const gs__node_kind *kind,
                             const char *fn) {
  if (!gs__check_index_dtype(index, false, fn))
    return GS_NO_TENSOR;
  if ((unsigned)mode > GS_SCATTER_MULTIPLY) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected reduce none, add or multiply, got mode %d", (int)mode);
    return GS_NO_TENSOR;
  }
  if (!gs__scatter_loop(mode, t->dtype)) {
    if (mode == GS_SCATTER_MULTIPLY)
      gs__error(GS_ERR_DTYPE, fn,
                "reduce='multiply' expected an f32, f64 or integer tensor, got %s",
                gs_dtype_name(t->dtype));
    else
      gs__error(GS_ERR_DTYPE, fn, "expected an f32, f64 or integer tensor, got %s",
                gs_dtype_name(t->dtype));
    return GS_NO_TENSOR;
  }
  int d = gs__check_scatter_operands(t, dim, index, value_form ? NULL : src, fn);
  if (d < 0)
    return GS_NO_TENSOR;
  bool wants_grad = gs__any_requires_grad(value_form ? 1 : 2, (const gs__tensor *[]){t, src});
  if (mode == GS_SCATTER_MULTIPLY && wants_grad) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "reduce='%s' has no gradient (torch 1.13's backward refuses it too); expected "
              "inputs that do not require grad, or reduce=None",
              reduce_names[mode]);
    return GS_NO_TENSOR;
  }

  gs__tensor *out;
  gs_tensor h = gs__tensor_new(t->dtype, t->shape, t->ndim, fn, &out);
  if (!h.id)
    return h;
  gs__copy_into(out, t);
  /* Walk the index's shape; out is reached through every dim but d, and moved along d by
   * the index value. */
  int64_t strides[3][GS_MAX_DIMS] = {{0}};
  memcpy(strides[0], out->strides, sizeof strides[0]);
  if (out->ndim)
    strides[0][d] = 0;
  memcpy(strides[1], index->strides, sizeof strides[1]);
  if (!value_form)
    memcpy(strides[2], src->strides, sizeof strides[2]);
  size_t es = gs_dtype_size(t->dtype);
  char *data[3] = {gs__tensor_data(out), gs__tensor_data(index), gs__tensor_data(src)};
  size_t sizes[3] = {es, sizeof(int64_t), es};
  jump_ctx ctx = {dim_stride(out, d) * (int64_t)es};
  gs__iter_run(3, data, (const int64_t(*)[GS_MAX_DIMS])strides, sizes, index->shape, index->ndim,
               gs__scatter_loop(mode, t->dtype), &ctx);
  if (mode == GS_SCATTER_MULTIPLY)
    return h;
  if (value_form)
    return record_indexed(kind, h, 2, (const gs__tensor *[]){t, index}, index, d);
  return record_indexed(kind, h, 3, (const gs__tensor *[]){t, index, src}, index, d);
}

gs_tensor gs_scatter_add(gs_tensor ht, int dim, gs_tensor hindex, gs_tensor hsrc) {
  return gs_scatter(ht, dim, hindex, hsrc, GS_SCATTER_ADD);
}

gs_tensor gs_scatter(gs_tensor ht, int dim, gs_tensor hindex, gs_tensor hsrc,
                     gs_scatter_reduce reduce) {
  const char *fn = reduce == GS_SCATTER_ADD ? "scatter_add" : "scatter";
  gs__tensor *t = gs__lookup(ht, fn);
  gs__tensor *index = t ? gs__lookup(hindex, fn) : NULL;
  gs__tensor *src = index ? gs__lookup(hsrc, fn) : NULL;
  if (!src)
    return GS_NO_TENSOR;
  return scatter_run(t, dim, index, src, false, reduce,
                     reduce == GS_SCATTER_ADD ? &ScatterAddBackward : &ScatterBackward, fn);
}

gs_tensor gs_scatter_value(gs_tensor ht, int dim, gs_tensor hindex, double value,
                           gs_scatter_reduce reduce) {
  const char *fn = "scatter";
  gs__tensor *t = gs__lookup(ht, fn);
  gs__tensor *index = t ? gs__lookup(hindex, fn) : NULL;
  if (!index)
    return GS_NO_TENSOR;
  gs__scalar_box box;
  if (t->dtype != GS_BOOL && !gs_dtype_is_floating(t->dtype) && value != (double)(int64_t)value) {
    gs__error(GS_ERR_DTYPE, fn, "expected an integral value for a %s tensor, got %g",
              gs_dtype_name(t->dtype), value);
    return GS_NO_TENSOR;
  }
  return scatter_run(t, dim, index, gs__scalar_box_init(&box, t->dtype, value), true, reduce,
                     &ScatterValueBackward, fn);
}
