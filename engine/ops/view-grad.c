/* view-grad.c: the formulas of the nodes engine/autograd makes for writes through views
 * (autograd/view-history.c says when and why): AsStridedBackward, a view regenerated after its
 * base's history was rewritten, and CopySlices, the base after a write through a view. Their
 * gradients are scatters and gathers over the view's positions in its base. */
#include <stdlib.h>
#include <string.h>

#include "ops-impl.h"

/* Storage position of each element of (shape, strides) from offset, in row-major order. */
static void walk_positions(int ndim, const int64_t *shape, const int64_t *strides,
                           int64_t offset, int64_t numel, int64_t *out) {
  int64_t index[GS_MAX_DIMS] = {0};
  int64_t pos = offset;
  for (int64_t k = 0; k < numel; k++) {
    out[k] = pos;
    for (int d = ndim - 1; d >= 0; d--) { /* odometer: the last dim moves fastest */
      if (++index[d] < shape[d]) {
        pos += strides[d];
        break;
      }
      pos -= (shape[d] - 1) * strides[d];
      index[d] = 0;
    }
  }
}

/* The base's row-major index of each of the view's elements, as a 1-D i64 tensor; through an
 * inverse map of the base's positions when the base is not contiguous. An element of the
 * storage that is not one of the base's (gs_as_strided may reach past its input) gets index
 * base_numel: a slot past the base that scatter_into_base drops, as PyTorch drops it. */
static gs_tensor view_positions(const gs__view_geometry *g, const char *fn) {
  int64_t n = g->numel;
  int64_t *pos = malloc((size_t)(n > 0 ? n : 1) * sizeof *pos);
  if (!pos) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not allocate %lld view positions",
              (long long)n);
    return GS_NO_TENSOR;
  }
  walk_positions(g->ndim, g->shape, g->strides, g->offset, n, pos);
  if (g->base_contiguous) {
    for (int64_t k = 0; k < n; k++) {
      pos[k] -= g->base_offset;
      if (pos[k] < 0 || pos[k] >= g->base_numel)
        pos[k] = g->base_numel;
    }
  } else {
    /* Positions of a non-view base are distinct and at or after its offset. */
    int64_t extent = 1;
    for (int d = 0; d < g->base_ndim; d++)
      extent += (g->base_shape[d] - 1) * g->base_strides[d];
    int64_t *base_pos = malloc((size_t)(g->base_numel > 0 ? g->base_numel : 1) * sizeof *pos);
    int64_t *inverse = malloc((size_t)(extent > 0 ? extent : 1) * sizeof *inverse);
    if (!base_pos || !inverse) {
      free(base_pos), free(inverse), free(pos);
      gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not map a view into its base");
      return GS_NO_TENSOR;
    }
    walk_positions(g->base_ndim, g->base_shape, g->base_strides, g->base_offset, g->base_numel,
                   base_pos);
    for (int64_t i = 0; i < extent; i++)
      inverse[i] = g->base_numel;
    for (int64_t i = 0; i < g->base_numel; i++)
      inverse[base_pos[i] - g->base_offset] = i;
    for (int64_t k = 0; k < n; k++) {
      int64_t at = pos[k] - g->base_offset;
      pos[k] = at >= 0 && at < extent ? inverse[at] : g->base_numel;
    }
    free(base_pos), free(inverse);
  }
  gs_tensor t = gs_from_data(GS_I64, (int64_t[]){n}, 1, pos);
  free(pos);
  return t;
}

/* Base-shaped gradient from a view-shaped one: each element added where it lies in the base
 * (views that repeat an element, like expand, add into it more than once). */
static gs_tensor scatter_into_base(const gs__view_geometry *g, gs_tensor positions,
                                   gs_tensor view_grad, gs_dtype dtype) {
  gs_tensor flat = gs__formula_temp(gs_reshape(view_grad, (int64_t[]){g->numel}, 1));
  gs_tensor zeros = gs__formula_temp(gs_zeros(dtype, (int64_t[]){g->base_numel + 1}, 1));
  gs_tensor summed = gs__formula_temp(gs_scatter_add(zeros, 0, positions, flat));
  gs_tensor inside = gs__formula_temp(gs_narrow(summed, 0, 0, g->base_numel)); /* drop the slot */
  return gs_reshape(inside, g->base_shape, g->base_ndim);
}

gs_tensor gs__write_into_zeros(gs_tensor zeros, gs_tensor view, gs_tensor g) {
  if (!gs__formula_creates_graph()) {
    gs_copy_(view, g); /* grad mode is off: records nothing */
    return zeros;
  }
  const char *fn = "backward";
  gs__tensor *v = gs__lookup(view, fn), *z = v ? gs__lookup(zeros, fn) : NULL;
  gs__view_geometry *geometry = z ? gs__view_geometry_new(v, z) : NULL;
  if (!geometry) {
    if (z)
      gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not map a view into its base");
    gs_dispose(zeros);
    return GS_NO_TENSOR;
  }
  gs_dtype dtype = z->dtype;
  gs_tensor positions = gs__formula_temp(view_positions(geometry, fn));
  gs_tensor out = scatter_into_base(geometry, positions, g, dtype);
  free(geometry);
  gs_dispose(zeros);
  return out;
}

/* A regenerated view: its gradient lands on its elements of the base, zero elsewhere. */
static void as_strided_backward(gs__node *n, gs_tensor grad, gs_tensor *grads) {
  gs_tensor positions = gs__formula_temp(view_positions(n->geometry, n->kind->name));
  grads[0] =
      gs__reduce_grad(n, 0, scatter_into_base(n->geometry, positions, grad, n->inputs[0].dtype));
}
GS__BACKWARD_TWICE(AsStridedBackward, as_strided_backward);

/* Under create_graph the wrapped op's formula reads its saved input 0, the view's old value,
 * whose history is the base's previous one seen through the view; the op's node points at
 * the base's (base-shaped) instead. This makes a stand-in with that history, the base's
 * positions gathered from a zero base that carries it, and returns its node (or NULL when
 * the base had no history) for the formula's run. */
static gs__node *old_view_edge(gs__node *n, gs_tensor positions) {
  const gs__view_geometry *g = n->geometry;
  gs_dtype dt = n->inputs[0].dtype;
  gs_tensor base = gs__formula_temp(gs_zeros(dt, g->base_shape, g->base_ndim));
  gs__formula_give_history(base, n->next[0]);
  gs_tensor flat = gs__formula_temp(gs_reshape(base, (int64_t[]){g->base_numel}, 1));
  gs_tensor slot = gs__formula_temp(gs_zeros(dt, (int64_t[]){1}, 1)); /* view_positions' spare */
  gs_tensor padded = gs__formula_temp(gs_cat((gs_tensor[]){flat, slot}, 2, 0));
  gs_tensor picked = gs__formula_temp(gs_gather(padded, 0, positions));
  gs_tensor view = gs__formula_temp(gs_reshape(picked, g->shape, g->ndim));
  gs__tensor *t = view.id ? gs__lookup(view, n->kind->name) : NULL;
  return t ? t->ag.grad_fn : NULL;
}

/* The base after a write through a view: outside the view the gradient goes on unchanged to
 * the base's previous history; inside, the op's own formula (on the view-shaped slice of the
 * gradient) gives the gradient of the view's previous value, which replaces the slice, and the
 * gradients of the op's other operands. */
static void copy_slices_backward(gs__node *n, gs_tensor grad, gs_tensor *grads) {
  const gs__view_geometry *g = n->geometry;
  gs__node *inner = n->inner;
  gs_tensor positions = gs__formula_temp(view_positions(g, n->kind->name));
  gs_tensor flat = gs__formula_temp(gs_reshape(grad, (int64_t[]){g->base_numel}, 1));
  gs_tensor slice = gs__formula_temp(
      gs_reshape(gs__formula_temp(gs_gather(flat, 0, positions)), g->shape, g->ndim));

  gs_tensor inner_grads[8];
  gs_tensor *ig = inner->n_inputs <= 8 ? inner_grads
                                                    : calloc((size_t)inner->n_inputs, sizeof *ig);
  if (!ig)
    abort(); /* a few handles: failing here means the process is already lost */
  for (int i = 0; i < inner->n_inputs; i++)
    ig[i] = GS_NO_TENSOR;
  gs__node *inner_edge = inner->next[0];
  bool stand_in = gs__formula_creates_graph();
  if (stand_in) {
    inner->next[0] = old_view_edge(n, positions);
    if (inner->next[0])
      gs__node_retain(inner->next[0]);
  }
  inner->kind->backward(inner, slice, ig);
  if (stand_in) {
    if (inner->next[0])
      gs__node_release(inner->next[0]);
    inner->next[0] = inner_edge;
  }

  if (gs__needs_grad(n, 0)) {
    /* grad + scatter(inner's gradient of the old view - the slice): the slice replaced. */
    gs_tensor change =
        ig[0].id ? gs__formula_temp(gs_sub(ig[0], slice)) : gs__formula_temp(gs_neg(slice));
    gs_tensor inside =
        gs__formula_temp(scatter_into_base(n->geometry, positions, change, n->inputs[0].dtype));
    grads[0] = gs__reduce_grad(n, 0, gs_add(grad, inside));
  }
  if (ig[0].id)
    gs_dispose(ig[0]);
  for (int i = 1; i < inner->n_inputs; i++)
    grads[i] = ig[i];
  if (ig != inner_grads)
    free(ig);
}
/* Written with ops around the wrapped op's formula: differentiable when that formula is
 * (backward.c's check looks at the wrapped kind). */
GS__BACKWARD_TWICE(CopySlices, copy_slices_backward);

__attribute__((constructor)) static void install_view_kinds(void) {
  gs__kinds.copy_slices = &CopySlices;
  gs__kinds.as_strided = &AsStridedBackward;
}
