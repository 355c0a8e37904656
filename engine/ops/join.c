/* join.c: joining tensors (cat, stack) and cutting one into views (split, chunk).
 *
 * cat and stack copy each input into its slab of a fresh result with gs__copy_into, which
 * takes any strides and converts dtypes, so inputs of mixed layouts and (promoted) dtypes
 * need no preparation. split and chunk copy nothing: every piece is a view of the input.
 *
 * Backward undoes each: cat's and stack's gradients are cut out of the result's gradient, and
 * every piece of a split has its own node that puts its gradient back in place, so the
 * pieces' gradients add up in the input.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ops-impl.h"

static bool check_list(const gs_tensor *tensors, int count, const char *fn) {
  if (count > 0 && tensors)
    return true;
  gs__error(GS_ERR_ARGUMENT, fn, "expected a non-empty list of tensors, got %d tensors%s",
            count, tensors ? "" : " (NULL)");
  return false;
}

/* out's elements [start, start + len) along dim, unregistered, for copying into; with
 * drop_dim (len 1) that dim is removed, as stack's inputs lack it. */
static gs__tensor slab(const gs__tensor *out, int dim, int64_t start, int64_t len,
                       bool drop_dim) {
  gs__tensor s = *out;
  s.offset += start * out->strides[dim];
  s.shape[dim] = len;
  if (drop_dim) {
    memmove(&s.shape[dim], &s.shape[dim + 1], sizeof(int64_t) * (size_t)(s.ndim - dim - 1));
    memmove(&s.strides[dim], &s.strides[dim + 1],
            sizeof(int64_t) * (size_t)(s.ndim - dim - 1));
    s.ndim--;
  }
  s.numel = 1;
  for (int d = 0; d < s.ndim; d++)
    s.numel *= s.shape[d];
  return s;
}

/* PyTorch's legacy rule: a 1-D empty tensor joins anything (it is skipped). */
static bool is_legacy_empty(const gs__tensor *t) { return t->ndim == 1 && t->shape[0] == 0; }

/* ---- backward formulas ---------------------------------------------------------------- */

/* d cat(t_0, ..., t_k; dim) = each input's slab of g along dim, in order (dim in ints) */
static void cat_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  int d = (int)n->ints[0], g_ndim = gs_ndim(g);
  int64_t start = 0;
  for (int i = 0; i < n->n_inputs; i++) {
    const gs__input_meta *m = &n->inputs[i];
    if (m->ndim != g_ndim) { /* a legacy empty [0] input, skipped by the forward */
      if (gs__needs_grad(n, i))
        grads[i] = gs_zeros(m->dtype, m->shape, m->ndim);
      continue;
    }
    if (gs__needs_grad(n, i))
      grads[i] = gs__reduce_grad(n, i, gs_narrow(g, d, start, m->shape[d]));
    start += m->shape[d];
  }
}
GS__BACKWARD_TWICE(CatBackward, cat_backward);

/* d stack(t_0, ..., t_k; dim) = g selected at i along dim, for each input i (dim in ints) */
static void stack_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  for (int i = 0; i < n->n_inputs; i++)
    if (gs__needs_grad(n, i))
      grads[i] = gs__reduce_grad(n, i, gs_select(g, (int)n->ints[0], i));
}
GS__BACKWARD_TWICE(StackBackward, stack_backward);

/* A block's gradient written into zeros of the whole input (see ops-impl.h). */
gs_tensor gs__grad_of_block(gs__node *n, int i, gs_tensor g, const int64_t *start) {
  const gs__input_meta *m = &n->inputs[i];
  int64_t shape[GS_MAX_DIMS];
  int nd = gs_shape(g, shape);
  if (nd == m->ndim && memcmp(shape, m->shape, sizeof(int64_t) * (size_t)nd) == 0)
    return gs__reduce_grad_through(n, i, g); /* the block is the whole input */
  gs_tensor whole = gs_zeros(m->dtype, m->shape, m->ndim);
  gs_tensor block = whole;
  for (int d = 0; d < nd; d++)
    block = gs__formula_temp(gs_narrow(block, d, start[d], shape[d]));
  return gs__write_into_zeros(whole, block, g);
}

/* d split(t)[piece] = zeros(t) with g at the piece's place (dim, start, length in ints) */
static void split_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  int64_t start[GS_MAX_DIMS] = {0};
  start[n->ints[0]] = n->ints[1];
  grads[0] = gs__grad_of_block(n, 0, g, start);
}
GS__BACKWARD_TWICE(SplitBackward, split_backward);

/* Records the node of a join (cat or stack) of count tensors into h (dim d in ints). */
static gs_tensor record_join(const gs__node_kind *kind, gs_tensor h, const gs_tensor *tensors,
                             int count, int d) {
  if (!h.id || !gs__grad_mode() || !gs_dtype_is_floating(gs_dtype_of(h)))
    return h;
  const gs__tensor **inputs = malloc((size_t)count * sizeof *inputs);
  if (!inputs) {
    gs__error(GS_ERR_OUT_OF_MEMORY, kind->name, "could not allocate a graph node");
    return h;
  }
  for (int i = 0; i < count; i++)
    inputs[i] = gs__lookup(tensors[i], kind->name);
  gs__node *n = gs__record(kind, gs__lookup(h, kind->name), count, inputs, 0);
  if (n)
    n->ints[0] = d;
  free(inputs);
  return h;
}

/* Each piece of a split gets its own node (a node has one output), so that the gradients of
 * several pieces add up in the input. */
static void record_piece(gs_tensor piece, const gs__tensor *t, int d, int64_t start,
                         int64_t length) {
  if (!gs_dtype_is_floating(t->dtype))
    return;
  gs__node *n = gs__record(&SplitBackward, gs__lookup(piece, SplitBackward.name), 1,
                           (const gs__tensor *[]){t}, 0);
  if (n) {
    n->ints[0] = d;
    n->ints[1] = start;
    n->ints[2] = length;
  }
}

/* ---- the ops -------------------------------------------------------------------------- */

gs_tensor gs_cat(const gs_tensor *tensors, int count, int dim) {
  const char *fn = "cat";
  if (!check_list(tensors, count, fn))
    return GS_NO_TENSOR;
  /* First pass: every handle is live and no tensor is 0-D; the result's dtype; the tensor
   * whose shape the others must match. */
  const gs__tensor *ref = NULL;
  int ref_index = 0;
  gs_dtype dtype = GS_BOOL;
  for (int i = 0; i < count; i++) {
    const gs__tensor *t = gs__lookup(tensors[i], fn);
    if (!t)
      return GS_NO_TENSOR;
    if (t->ndim == 0) {
      gs__error(GS_ERR_SHAPE, fn, "a 0-D tensor (tensor %d) cannot be concatenated", i);
      return GS_NO_TENSOR;
    }
    dtype = i ? gs_promote_types(dtype, t->dtype) : t->dtype;
    if (!ref && !is_legacy_empty(t))
      ref = t, ref_index = i;
  }
  bool all_legacy_empty = !ref;
  if (all_legacy_empty)
    ref = gs__lookup(tensors[0], fn);
  int d = gs__wrap_dim(dim, ref->ndim, fn);
  if (d < 0)
    return GS_NO_TENSOR;

  int64_t total = 0;
  for (int i = 0; i < count; i++) {
    const gs__tensor *t = gs__lookup(tensors[i], fn);
    if (is_legacy_empty(t) && !all_legacy_empty)
      continue;
    char sr[GS__SHAPE_STR], st[GS__SHAPE_STR];
    bool fits = t->ndim == ref->ndim;
    for (int e = 0; e < t->ndim && fits; e++)
      fits = e == d || t->shape[e] == ref->shape[e];
    if (!fits) {
      gs__error(GS_ERR_SHAPE, fn,
                "expected shapes that match except in dim %d, got %s (tensor %d) and %s "
                "(tensor %d)",
                d, gs__shape_str(sr, ref->shape, ref->ndim), ref_index,
                gs__shape_str(st, t->shape, t->ndim), i);
      return GS_NO_TENSOR;
    }
    if (__builtin_add_overflow(total, t->shape[d], &total)) {
      gs__error(GS_ERR_OVERFLOW, fn, "the joined size of dim %d does not fit in 64 bits", d);
      return GS_NO_TENSOR;
    }
  }

  int64_t shape[GS_MAX_DIMS];
  memcpy(shape, ref->shape, sizeof shape);
  shape[d] = total;
  gs__tensor *out;
  gs_tensor h = gs__tensor_new(dtype, shape, ref->ndim, fn, &out);
  if (!h.id)
    return h;
  int64_t start = 0;
  for (int i = 0; i < count; i++) {
    const gs__tensor *t = gs__lookup(tensors[i], fn);
    if (is_legacy_empty(t) && !all_legacy_empty)
      continue;
    gs__tensor dst = slab(out, d, start, t->shape[d], false);
    gs__copy_into(&dst, t);
    start += t->shape[d];
  }
  return record_join(&CatBackward, h, tensors, count, d);
}

gs_tensor gs_stack(const gs_tensor *tensors, int count, int dim) {
  return gs__stack_into(tensors, count, dim, NULL, "stack");
}

gs_tensor gs__stack_into(const gs_tensor *tensors, int count, int dim, gs__stack_maker make,
                         const char *fn) {
  if (!check_list(tensors, count, fn))
    return GS_NO_TENSOR;
  const gs__tensor *first = gs__lookup(tensors[0], fn);
  if (!first)
    return GS_NO_TENSOR;
  if (first->ndim >= GS_MAX_DIMS) {
    gs__error(GS_ERR_SHAPE, fn, "expected tensors of at most %d dims, got %d-D",
              GS_MAX_DIMS - 1, first->ndim);
    return GS_NO_TENSOR;
  }
  int d = gs__wrap_dim(dim, first->ndim + 1, fn);
  if (d < 0)
    return GS_NO_TENSOR;
  gs_dtype dtype = first->dtype;
  for (int i = 1; i < count; i++) {
    const gs__tensor *t = gs__lookup(tensors[i], fn);
    if (!t)
      return GS_NO_TENSOR;
    bool same = t->ndim == first->ndim;
    for (int e = 0; e < t->ndim && same; e++)
      same = t->shape[e] == first->shape[e];
    if (!same) {
      char s0[GS__SHAPE_STR], si[GS__SHAPE_STR];
      gs__error(GS_ERR_SHAPE, fn,
                "expected tensors of one shape, got %s (tensor 0) and %s (tensor %d)",
                gs__shape_str(s0, first->shape, first->ndim),
                gs__shape_str(si, t->shape, t->ndim), i);
      return GS_NO_TENSOR;
    }
    dtype = gs_promote_types(dtype, t->dtype);
  }

  int64_t shape[GS_MAX_DIMS];
  for (int e = 0, s = 0; e <= first->ndim; e++)
    shape[e] = e == d ? count : first->shape[s++];
  gs__tensor *out;
  gs_tensor h = make ? make(dtype, shape, first->ndim + 1, fn)
                     : gs__tensor_new(dtype, shape, first->ndim + 1, fn, &out);
  if (!h.id)
    return h;
  if (make)
    out = gs__lookup(h, fn);
  for (int i = 0; i < count; i++) {
    gs__tensor dst = slab(out, d, i, 1, true);
    gs__copy_into(&dst, gs__lookup(tensors[i], fn));
  }
  return record_join(&StackBackward, h, tensors, count, d);
}

/* ---- split and chunk ---------------------------------------------------------------- */

/* Writes count views of t along d, split_size elements each (the last may have fewer), into
 * out, after checking they fit; the shared return convention of split and chunk. */
static int make_pieces(const gs__tensor *t, int d, int64_t split_size, int64_t count,
                       gs_tensor *out, int max_out, const char *fn) {
  if (count > INT_MAX) {
    gs__error(GS_ERR_OVERFLOW, fn, "there would be %lld pieces, more than an int counts",
              (long long)count);
    return -1;
  }
  if (!out && max_out == 0)
    return (int)count; /* the caller asked for the count only */
  if (!out || max_out < 0) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected an output array and its length (or NULL and 0 to ask for the count), "
              "got %s and %d",
              out ? "an array" : "NULL", max_out);
    return -1;
  }
  if (count > max_out) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "there would be %lld pieces, but the output array has room for %d",
              (long long)count, max_out);
    return -1;
  }
  int64_t shape[GS_MAX_DIMS], size = t->shape[d];
  memcpy(shape, t->shape, sizeof shape);
  for (int64_t i = 0; i < count; i++) {
    int64_t start = i * split_size;
    shape[d] = size - start < split_size ? size - start : split_size;
    out[i] = gs__make_view(t, shape, t->strides, t->ndim, t->offset + start * t->strides[d],
                           fn);
    if (!out[i].id) {
      /* Nothing is created when a piece cannot be: undo the pieces made so far. */
      for (int64_t j = 0; j < i; j++) {
        gs_dispose(out[j]);
        out[j] = GS_NO_TENSOR;
      }
      return -1;
    }
    record_piece(out[i], t, d, start, shape[d]);
  }
  return (int)count;
}

/* The tensor and dim to cut, after the checks split and chunk share; NULL after reporting. */
static const gs__tensor *cut_target(gs_tensor h, int dim, int *d, const char *fn) {
  const gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return NULL;
  if (t->ndim == 0) {
    gs__error(GS_ERR_SHAPE, fn, "expected a tensor of at least 1 dimension, got 0-D");
    return NULL;
  }
  *d = gs__wrap_dim(dim, t->ndim, fn);
  return *d < 0 ? NULL : t;
}

int gs_split(gs_tensor h, int64_t split_size, int dim, gs_tensor *out, int max_out) {
  const char *fn = "split";
  int d;
  const gs__tensor *t = cut_target(h, dim, &d, fn);
  if (!t)
    return -1;
  int64_t size = t->shape[d];
  if (split_size < 0 || (split_size == 0 && size > 0)) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected a split_size > 0 (or 0 for an empty dim), got %lld for dim %d of size "
              "%lld",
              (long long)split_size, d, (long long)size);
    return -1;
  }
  /* An empty dim still gives one (empty) piece, as torch.split does. */
  int64_t count = size == 0 ? 1 : (size - 1) / split_size + 1;
  return make_pieces(t, d, split_size, count, out, max_out, fn);
}

int gs_chunk(gs_tensor h, int chunks, int dim, gs_tensor *out, int max_out) {
  const char *fn = "chunk";
  int d;
  const gs__tensor *t = cut_target(h, dim, &d, fn);
  if (!t)
    return -1;
  if (chunks <= 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected chunks > 0, got %d", chunks);
    return -1;
  }
  int64_t size = t->shape[d];
  /* torch.chunk: pieces of ceil(size / chunks), so there may be fewer than chunks of them;
   * an empty dim gives chunks empty pieces. */
  int64_t split_size = size == 0 ? 0 : (size - 1) / chunks + 1;
  int64_t count = size == 0 ? chunks : (size - 1) / split_size + 1;
  return make_pieces(t, d, split_size, count, out, max_out, fn);
}
