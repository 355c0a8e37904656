/* views.c: zero-copy views (view, transpose, permute, slice, select, narrow, expand,
 * squeeze, unsqueeze, flatten), clone and detach, and the reshapes that copy only when a view
 * is impossible; with their backward formulas, which route a view's gradient back into the
 * shape of the tensor it views. */
#include <string.h>

#include "ops-impl.h"

/* ---- backward formulas ---------------------------------------------------------------- */

/* Records kind as the node of view v of base, with the op's small arguments. */
static gs_tensor record_view(gs_tensor v, const gs__tensor *base, const gs__node_kind *kind,
                             const int64_t *ints, int n_ints) {
  if (!v.id)
    return v;
  gs__node *n = gs__record(kind, gs__lookup(v, kind->name), 1, (const gs__tensor *[]){base}, 0);
  if (n && n_ints > 0)
    memcpy(n->ints, ints, (size_t)n_ints * sizeof *ints);
  return v;
}

/* Same elements, other shape (view, reshape, flatten, squeeze, unsqueeze): reshape back. */
static void reshape_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs_reshape(g, n->inputs[0].shape, n->inputs[0].ndim);
}
GS__BACKWARD_TWICE(ViewBackward, reshape_backward);
GS__BACKWARD_TWICE(ReshapeBackward, reshape_backward);
GS__BACKWARD_TWICE(SqueezeBackward, reshape_backward);
GS__BACKWARD_TWICE(UnsqueezeBackward, reshape_backward);
GS__BACKWARD_TWICE(AliasBackward, reshape_backward);

/* transpose(a, d0, d1): transpose the gradient back (dims in ints). */
static void transpose_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs_transpose(g, (int)n->ints[0], (int)n->ints[1]);
}
GS__BACKWARD_TWICE(TransposeBackward, transpose_backward);

/* t(): a kind of its own, as torch names it apart from transpose (TBackward0); of a vector
 * or a scalar it is the identity. */
static void t_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  if (n->inputs[0].ndim == 2)
    transpose_backward(n, g, grads);
  else
    reshape_backward(n, g, grads);
}
GS__BACKWARD_TWICE(TBackward, t_backward);

/* permute(a, p): permute the gradient by p's inverse (p in ints). */
static void permute_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  int inverse[GS_MAX_DIMS];
  for (int i = 0; i < n->inputs[0].ndim; i++)
    inverse[n->ints[i]] = i;
  grads[0] = gs_permute(g, inverse, n->inputs[0].ndim);
}
GS__BACKWARD_TWICE(PermuteBackward, permute_backward);

/* slice and select: the gradient lands in the viewed elements of a zero tensor of the
 * input's shape (dim, start, end, step or index in ints). */
static void slice_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor z = gs_zeros(gs_dtype_of(g), n->inputs[0].shape, n->inputs[0].ndim);
  gs_tensor part =
      gs__formula_temp(gs_slice(z, (int)n->ints[0], n->ints[1], n->ints[2], n->ints[3]));
  grads[0] = gs__write_into_zeros(z, part, g);
}
GS__BACKWARD_TWICE(SliceBackward, slice_backward);

static void select_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor z = gs_zeros(gs_dtype_of(g), n->inputs[0].shape, n->inputs[0].ndim);
  grads[0] =
      gs__write_into_zeros(z, gs__formula_temp(gs_select(z, (int)n->ints[0], n->ints[1])), g);
}
GS__BACKWARD_TWICE(SelectBackward, select_backward);

/* expand: each input element was read by several outputs: sum their gradients. */
static void expand_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad_through(n, 0, g);
}
GS__BACKWARD_TWICE(ExpandBackward, expand_backward);

/* contiguous and clone are the identity for gradients. */
static void identity_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad_through(n, 0, g);
}
GS__BACKWARD_TWICE(ContiguousBackward, identity_backward);
GS__BACKWARD_TWICE(CloneBackward, identity_backward);

/* Resolves a requested shape with at most one -1 against numel; false after reporting. */
static bool infer_shape(const gs__tensor *t, const int64_t *shape, int ndim, int64_t *out,
                        const char *fn) {
  char want[GS__SHAPE_STR], have[GS__SHAPE_STR];
  if (ndim < 0 || ndim > GS_MAX_DIMS || (ndim > 0 && !shape)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected 0 to %d sizes, got %d%s", GS_MAX_DIMS, ndim,
              ndim > 0 && !shape ? " and a NULL shape" : "");
    return false;
  }
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] == -1) {
      if (infer >= 0) {
        gs__error(GS_ERR_SHAPE, fn, "only one size may be -1, got %s",
                  gs__shape_str(want, shape, ndim));
        return false;
      }
      infer = i;
    } else if (shape[i] < 0) {
      gs__error(GS_ERR_SHAPE, fn, "expected sizes >= 0 or -1, got %s",
                gs__shape_str(want, shape, ndim));
      return false;
    } else if (__builtin_mul_overflow(known, shape[i], &known)) {
      gs__error(GS_ERR_OVERFLOW, fn, "shape %s has more elements than fit in 64 bits",
                gs__shape_str(want, shape, ndim));
      return false;
    }
    out[i] = shape[i];
  }
  if (infer >= 0) {
    if (known == 0 || t->numel % known != 0) {
      gs__error(GS_ERR_SHAPE, fn, "shape %s is invalid for a tensor of shape %s (%lld elements)",
                gs__shape_str(want, shape, ndim), gs__shape_str(have, t->shape, t->ndim),
                (long long)t->numel);
      return false;
    }
    out[infer] = t->numel / known;
  } else if (known != t->numel) {
    gs__error(GS_ERR_SHAPE, fn, "shape %s is invalid for a tensor of shape %s (%lld elements)",
              gs__shape_str(want, shape, ndim), gs__shape_str(have, t->shape, t->ndim),
              (long long)t->numel);
    return false;
  }
  return true;
}

/* Strides that make shape a view of t's elements, if t's strides allow it (PyTorch's
 * computeStride: each run of new dims must fit inside a run of old dims that is contiguous
 * with itself). */
static bool view_strides(const gs__tensor *t, const int64_t *shape, int ndim, int64_t *out) {
  if (t->numel == 0 || t->ndim == 0) {
    gs__contiguous_strides(shape, ndim, out);
    return true;
  }
  int view_d = ndim - 1;
  int64_t chunk_base_stride = t->strides[t->ndim - 1];
  int64_t tensor_numel = 1, view_numel = 1;
  for (int d = t->ndim - 1; d >= 0; d--) {
    tensor_numel *= t->shape[d];
    if (d == 0 || (t->shape[d - 1] != 1 && t->strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= shape[view_d];
        view_d--;
      }
      if (view_numel != tensor_numel)
        return false;
      if (d > 0) {
        chunk_base_stride = t->strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

gs_tensor gs_view(gs_tensor h, const int64_t *shape, int ndim) {
  gs__tensor *t = gs__lookup(h, "view");
  int64_t sh[GS_MAX_DIMS], st[GS_MAX_DIMS];
  if (!t || !infer_shape(t, shape, ndim, sh, "view"))
    return GS_NO_TENSOR;
  if (!view_strides(t, sh, ndim, st)) {
    char want[GS__SHAPE_STR], have[GS__SHAPE_STR], strides[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, "view",
              "shape %s is not a view of a tensor of shape %s with strides %s (its elements "
              "are not laid out compatibly); use reshape, which copies",
              gs__shape_str(want, sh, ndim), gs__shape_str(have, t->shape, t->ndim),
              gs__shape_str(strides, t->strides, t->ndim));
    return GS_NO_TENSOR;
  }
  return record_view(gs__make_view(t, sh, st, ndim, t->offset, "view"), t, &ViewBackward, NULL, 0);
}

gs_tensor gs_alias(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "alias");
  if (!t)
    return GS_NO_TENSOR;
  return record_view(gs__make_view(t, t->shape, t->strides, t->ndim, t->offset, "alias"), t,
                     &AliasBackward, NULL, 0);
}

/* A contiguous copy of t viewed as shape sh (already validated). */
static gs_tensor copy_as_shape(const gs__tensor *t, const int64_t *sh, int ndim, const char *fn) {
  gs__tensor *out;
  /* Made in its final shape, so the log's record of it is what it is; the bytes are written
   * through a record of the same buffer in t's shape (row-major in both). */
  gs_tensor h = gs__tensor_new(t->dtype, sh, ndim, fn, &out);
  if (!h.id)
    return h;
  gs__tensor as_source = *out;
  as_source.ndim = t->ndim;
  memcpy(as_source.shape, t->shape, sizeof as_source.shape);
  gs__contiguous_strides(as_source.shape, t->ndim, as_source.strides);
  gs__copy_into(&as_source, t);
  return h;
}

gs_tensor gs_reshape(gs_tensor h, const int64_t *shape, int ndim) {
  gs__tensor *t = gs__lookup(h, "reshape");
  int64_t sh[GS_MAX_DIMS], st[GS_MAX_DIMS];
  if (!t || !infer_shape(t, shape, ndim, sh, "reshape"))
    return GS_NO_TENSOR;
  if (view_strides(t, sh, ndim, st))
    return record_view(gs__make_view(t, sh, st, ndim, t->offset, "reshape"), t,
                       &ReshapeBackward, NULL, 0);
  return record_view(copy_as_shape(t, sh, ndim, "reshape"), t, &ReshapeBackward, NULL, 0);
}

/* The view of t with dims a and b swapped, recorded as kind. */
static gs_tensor swap_dims(gs__tensor *t, int a, int b, const gs__node_kind *kind, const char *fn) {
  int64_t sh[GS_MAX_DIMS], st[GS_MAX_DIMS];
  memcpy(sh, t->shape, sizeof sh);
  memcpy(st, t->strides, sizeof st);
  if (t->ndim > 0) {
    sh[a] = t->shape[b], sh[b] = t->shape[a];
    st[a] = t->strides[b], st[b] = t->strides[a];
  }
  int64_t dims[2] = {a, b};
  return record_view(gs__make_view(t, sh, st, t->ndim, t->offset, fn), t, kind, dims, 2);
}

gs_tensor gs_transpose(gs_tensor h, int dim0, int dim1) {
  gs__tensor *t = gs__lookup(h, "transpose");
  if (!t)
    return GS_NO_TENSOR;
  int a = gs__wrap_dim(dim0, t->ndim, "transpose");
  int b = a < 0 ? -1 : gs__wrap_dim(dim1, t->ndim, "transpose");
  if (b < 0)
    return GS_NO_TENSOR;
  return swap_dims(t, a, b, &TransposeBackward, "transpose");
}

gs_tensor gs_t(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "t");
  if (!t)
    return GS_NO_TENSOR;
  if (t->ndim > 2) {
    gs__error(GS_ERR_SHAPE, "t", "expected a tensor of at most 2 dimensions, got %d-D",
              t->ndim);
    return GS_NO_TENSOR;
  }
  if (t->ndim < 2)
    return record_view(gs__make_view(t, t->shape, t->strides, t->ndim, t->offset, "t"), t,
                       &TBackward, NULL, 0);
  return swap_dims(t, 0, 1, &TBackward, "t");
}

gs_tensor gs_permute(gs_tensor h, const int *dims, int ndims) {
  gs__tensor *t = gs__lookup(h, "permute");
  if (!t)
    return GS_NO_TENSOR;
  if (ndims != t->ndim || (ndims > 0 && !dims)) {
    gs__error(GS_ERR_ARGUMENT, "permute", "expected %d dims for a %d-D tensor, got %d",
              t->ndim, t->ndim, ndims);
    return GS_NO_TENSOR;
  }
  int64_t sh[GS_MAX_DIMS], st[GS_MAX_DIMS];
  bool seen[GS_MAX_DIMS] = {false};
  for (int i = 0; i < ndims; i++) {
    int d = gs__wrap_dim(dims[i], t->ndim, "permute");
    if (d < 0)
      return GS_NO_TENSOR;
    if (seen[d]) {
      gs__error(GS_ERR_ARGUMENT, "permute", "dim %d appears twice in the permutation", d);
      return GS_NO_TENSOR;
    }
    seen[d] = true;
    sh[i] = t->shape[d];
    st[i] = t->strides[d];
  }
  int64_t perm[GS_MAX_DIMS];
  for (int i = 0; i < ndims; i++)
    perm[i] = gs__wrap_dim(dims[i], t->ndim, "permute");
  return record_view(gs__make_view(t, sh, st, ndims, t->offset, "permute"), t, &PermuteBackward,
                     perm, ndims);
}

/* Python slice semantics: negative indices count from the end, then clamp to [0, size]. */
static int64_t clamp_index(int64_t i, int64_t size) {
  if (i < 0)
    i += size;
  if (i < 0)
    return 0;
  return i > size ? size : i;
}

gs_tensor gs_slice(gs_tensor h, int dim, int64_t start, int64_t end, int64_t step) {
  gs__tensor *t = gs__lookup(h, "slice");
  if (!t)
    return GS_NO_TENSOR;
  if (t->ndim == 0) {
    gs__error(GS_ERR_DIM, "slice", "cannot slice a 0-D tensor");
    return GS_NO_TENSOR;
  }
  int d = gs__wrap_dim(dim, t->ndim, "slice");
  if (d < 0)
    return GS_NO_TENSOR;
  if (step <= 0) {
    gs__error(GS_ERR_ARGUMENT, "slice", "expected a positive step, got %lld", (long long)step);
    return GS_NO_TENSOR;
  }
  int64_t size = t->shape[d];
  int64_t s = clamp_index(start, size), e = clamp_index(end, size);
  int64_t len = e > s ? (e - s + step - 1) / step : 0;
  int64_t sh[GS_MAX_DIMS], st[GS_MAX_DIMS];
  memcpy(sh, t->shape, sizeof sh);
  memcpy(st, t->strides, sizeof st);
  sh[d] = len;
  st[d] = t->strides[d] * step;
  int64_t args[4] = {d, s, s + len * step, step};
  return record_view(
      gs__make_view(t, sh, st, t->ndim, t->offset + (len ? s * t->strides[d] : 0), "slice"), t,
      &SliceBackward, args, 4);
}

gs_tensor gs_select(gs_tensor h, int dim, int64_t index) {
  gs__tensor *t = gs__lookup(h, "select");
  if (!t)
    return GS_NO_TENSOR;
  if (t->ndim == 0) {
    gs__error(GS_ERR_DIM, "select", "cannot select from a 0-D tensor");
    return GS_NO_TENSOR;
  }
  int d = gs__wrap_dim(dim, t->ndim, "select");
  if (d < 0)
    return GS_NO_TENSOR;
  int64_t size = t->shape[d];
  if (index < -size || index >= size) {
    gs__error(GS_ERR_INDEX, "select", "index %lld is out of range for dim %d of size %lld",
              (long long)index, d, (long long)size);
    return GS_NO_TENSOR;
  }
  if (index < 0)
    index += size;
  int64_t sh[GS_MAX_DIMS], st[GS_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < t->ndim; i++)
    if (i != d)
      sh[n] = t->shape[i], st[n++] = t->strides[i];
  int64_t args[2] = {d, index};
  return record_view(gs__make_view(t, sh, st, n, t->offset + index * t->strides[d], "select"), t,
                     &SelectBackward, args, 2);
}

gs_tensor gs_narrow(gs_tensor h, int dim, int64_t start, int64_t length) {
  gs__tensor *t = gs__lookup(h, "narrow");
  if (!t)
    return GS_NO_TENSOR;
  if (t->ndim == 0) {
    gs__error(GS_ERR_DIM, "narrow", "cannot narrow a 0-D tensor");
    return GS_NO_TENSOR;
  }
  int d = gs__wrap_dim(dim, t->ndim, "narrow");
  if (d < 0)
    return GS_NO_TENSOR;
  int64_t size = t->shape[d];
  if (start < 0)
    start += size;
  if (start < 0 || length < 0 || start > size || length > size - start) {
    gs__error(GS_ERR_INDEX, "narrow",
              "start %lld and length %lld do not fit in dim %d of size %lld",
              (long long)start, (long long)length, d, (long long)size);
    return GS_NO_TENSOR;
  }
  return gs_slice(h, d, start, start + length, 1);
}

gs_tensor gs_expand(gs_tensor h, const int64_t *shape, int ndim) {
  gs__tensor *t = gs__lookup(h, "expand");
  if (!t)
    return GS_NO_TENSOR;
  char want[GS__SHAPE_STR], have[GS__SHAPE_STR];
  if (ndim < t->ndim || ndim > GS_MAX_DIMS || (ndim > 0 && !shape)) {
    gs__error(GS_ERR_SHAPE, "expand",
              "expected at least as many sizes as the tensor's %d dims (at most %d), got %d",
              t->ndim, GS_MAX_DIMS, ndim);
    return GS_NO_TENSOR;
  }
  int64_t sh[GS_MAX_DIMS], st[GS_MAX_DIMS];
  int lead = ndim - t->ndim;
  for (int i = 0; i < ndim; i++) {
    int64_t want_size = shape[i];
    if (i < lead) {
      if (want_size < 0) {
        gs__error(GS_ERR_SHAPE, "expand", "new leading dim %d must have a size >= 0, got %lld",
                  i, (long long)want_size);
        return GS_NO_TENSOR;
      }
      sh[i] = want_size, st[i] = 0;
      continue;
    }
    int64_t have_size = t->shape[i - lead];
    if (want_size == -1 || want_size == have_size) {
      sh[i] = have_size, st[i] = t->strides[i - lead];
    } else if (have_size == 1 && want_size >= 0) {
      sh[i] = want_size, st[i] = 0;
    } else {
      gs__error(GS_ERR_SHAPE, "expand",
                "cannot expand shape %s to %s: dim %d has size %lld, not 1 or %lld",
                gs__shape_str(have, t->shape, t->ndim), gs__shape_str(want, shape, ndim), i,
                (long long)have_size, (long long)want_size);
      return GS_NO_TENSOR;
    }
  }
  if (gs__checked_numel(sh, ndim, "expand") < 0)
    return GS_NO_TENSOR;
  return record_view(gs__make_view(t, sh, st, ndim, t->offset, "expand"), t, &ExpandBackward,
                     NULL, 0);
}

/* Any geometry over the input's storage, as torch.as_strided: bounds checked against the
 * storage (PyTorch's words), negative strides refused. Its gradient goes to the input's
 * elements the view reads (AsStridedBackward, view-grad.c); storage elements outside the input
 * get none, as in PyTorch. */
gs_tensor gs_as_strided(gs_tensor h, const int64_t *shape, const int64_t *strides, int ndim,
                        int64_t storage_offset) {
  const char *fn = "as_strided";
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return GS_NO_TENSOR;
  if (!gs__geometry_fits(t, shape, strides, ndim, storage_offset, fn))
    return GS_NO_TENSOR;
  gs_tensor v = gs__make_view(t, shape, strides, ndim, storage_offset, fn);
  gs__tensor *vt = v.id ? gs__lookup(v, fn) : NULL;
  if (!vt)
    return v;
  gs__node *n = gs__record(gs__kinds.as_strided, vt, 1, (const gs__tensor *[]){t}, 0);
  if (n && !(n->geometry = gs__view_geometry_new(vt, t))) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not allocate the view's geometry");
    gs_dispose(v);
    return GS_NO_TENSOR;
  }
  return v;
}

gs_tensor gs_squeeze(gs_tensor h, int dim) {
  gs__tensor *t = gs__lookup(h, "squeeze");
  if (!t)
    return GS_NO_TENSOR;
  int d = gs__wrap_dim(dim, t->ndim, "squeeze");
  if (d < 0)
    return GS_NO_TENSOR;
  int64_t sh[GS_MAX_DIMS], st[GS_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < t->ndim; i++)
    if (i != d || t->shape[i] != 1)
      sh[n] = t->shape[i], st[n++] = t->strides[i];
  return record_view(gs__make_view(t, sh, st, n, t->offset, "squeeze"), t, &SqueezeBackward,
                     NULL, 0);
}

gs_tensor gs_squeeze_all(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "squeeze_all");
  if (!t)
    return GS_NO_TENSOR;
  int64_t sh[GS_MAX_DIMS], st[GS_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < t->ndim; i++)
    if (t->shape[i] != 1)
      sh[n] = t->shape[i], st[n++] = t->strides[i];
  return record_view(gs__make_view(t, sh, st, n, t->offset, "squeeze_all"), t, &SqueezeBackward,
                     NULL, 0);
}

gs_tensor gs_unsqueeze(gs_tensor h, int dim) {
  gs__tensor *t = gs__lookup(h, "unsqueeze");
  if (!t)
    return GS_NO_TENSOR;
  if (t->ndim >= GS_MAX_DIMS) {
    gs__error(GS_ERR_SHAPE, "unsqueeze", "a tensor already has the most dims, %d", GS_MAX_DIMS);
    return GS_NO_TENSOR;
  }
  int d = gs__wrap_dim(dim, t->ndim + 1, "unsqueeze");
  if (d < 0)
    return GS_NO_TENSOR;
  int64_t sh[GS_MAX_DIMS], st[GS_MAX_DIMS];
  int n = 0;
  for (int i = 0; i <= t->ndim; i++) {
    if (i == d) {
      sh[n] = 1;
      st[n++] = i < t->ndim ? t->shape[i] * t->strides[i] : 1;
    }
    if (i < t->ndim)
      sh[n] = t->shape[i], st[n++] = t->strides[i];
  }
  return record_view(gs__make_view(t, sh, st, n, t->offset, "unsqueeze"), t,
                     &UnsqueezeBackward, NULL, 0);
}

gs_tensor gs_flatten(gs_tensor h, int start_dim, int end_dim) {
  gs__tensor *t = gs__lookup(h, "flatten");
  if (!t)
    return GS_NO_TENSOR;
  int s = gs__wrap_dim(start_dim, t->ndim, "flatten");
  int e = s < 0 ? -1 : gs__wrap_dim(end_dim, t->ndim, "flatten");
  if (e < 0)
    return GS_NO_TENSOR;
  if (s > e) {
    gs__error(GS_ERR_DIM, "flatten", "start_dim %d comes after end_dim %d", s, e);
    return GS_NO_TENSOR;
  }
  if (t->ndim == 0) {
    int64_t one = 1;
    return gs_reshape(h, &one, 1);
  }
  int64_t sh[GS_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < t->ndim; i++) {
    if (i <= s || i > e)
      sh[n++] = t->shape[i];
    else
      sh[n - 1] *= t->shape[i];
  }
  return gs_reshape(h, sh, n);
}

gs_tensor gs_contiguous(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "contiguous");
  if (!t)
    return GS_NO_TENSOR;
  if (gs__is_contiguous(t))
    return record_view(gs__make_view(t, t->shape, t->strides, t->ndim, t->offset, "contiguous"),
                       t, &ContiguousBackward, NULL, 0);
  return record_view(copy_as_shape(t, t->shape, t->ndim, "contiguous"), t, &ContiguousBackward,
                     NULL, 0);
}

gs_tensor gs_contiguous_as(gs_tensor h, gs_memory_format format) {
  const char *fn = "contiguous";
  gs__tensor *t = gs__lookup(h, fn);
  int64_t strides[GS_MAX_DIMS]; /* checked first: a rank the format does not take */
  if (!t || !gs__memory_format_strides(format, t->shape, t->ndim, strides, fn))
    return GS_NO_TENSOR;
  if (format == GS_CONTIGUOUS_FORMAT)
    return gs_contiguous(h);
  if (gs__is_contiguous_as(t, format))
    return record_view(gs__make_view(t, t->shape, t->strides, t->ndim, t->offset, fn), t,
                       &ContiguousBackward, NULL, 0);
  /* given the format's strides before it is registered, so the log records it as it is */
  gs__tensor c;
  if (!gs__tensor_init_format(&c, t->dtype, t->shape, t->ndim, format, fn))
    return GS_NO_TENSOR;
  gs__copy_into(&c, t);
  return record_view(gs__register(&c, fn), t, &ContiguousBackward, NULL, 0);
}

gs_tensor gs_clone(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "clone");
  if (!t)
    return GS_NO_TENSOR;
  gs__tensor c = *t;
  c.origin = GS__ORIGIN_CLONE;
  c.source = t->id;
  c.view_base = 0; /* a clone is a base of its own, even of a view */
  c.base_history = 0;
  c.storage = gs__storage_share_cow(t->storage, true);
  if (!c.storage) {
    gs__error(GS_ERR_OUT_OF_MEMORY, "clone", "could not allocate the storage record");
    return GS_NO_TENSOR;
  }
  return record_view(gs__register(&c, "clone"), t, &CloneBackward, NULL, 0);
}

gs_tensor gs_detach(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "detach");
  if (!t)
    return GS_NO_TENSOR;
  /* Made a detach from the start, so the log records it as one (origin detach, op "detach"). */
  return gs__make_view_as(t, t->shape, t->strides, t->ndim, t->offset, GS__ORIGIN_DETACH,
                          "detach");
}
