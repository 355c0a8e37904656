/* view-history.c: in-place writes and views under autograd, as PyTorch does them.
 *
 * A view shares its base's storage, so an in-place write through either changes both. Two
 * things keep the gradients right:
 *
 *  - A write into a view rewrites the history of the base (the root of the chain of views):
 *    the op's node is wrapped in a CopySlices node that becomes the base's grad_fn. Backward
 *    through it passes the base's gradient on unchanged outside the view's elements and runs
 *    the op's own formula on the elements inside.
 *  - Every recorded in-place write into a base, directly or through a view, bumps the base's
 *    ag.history. A view made before then has a stale grad_fn (it leads to the base's old
 *    history); on its next use it gets an AsStridedBackward from the base's current one.
 *
 * A base disposed while views of it live on leaves its geometry and last grad_fn with its
 * storage (a gs__view_root), which the views share, so they can still be brought up to date;
 * bases count their live views for this, and the last view to go frees the record (which can
 * hold the storage itself through the tensors its graph saved).
 *
 * Both nodes know where the view lies in the base as a gs__view_geometry, turned into the
 * base's (row-major) index of each of the view's elements when a formula needs it. Their
 * formulas are written with ops (gather, scatter_add), so they live above this layer, in
 * ops/view-grad.c.
 */
#include <stdlib.h>
#include <string.h>

#include "autograd-impl.h"
#include "trace-writer.h"

struct gs__view_root {
  gs__tensor base;   /* the disposed base's geometry and ag.history (no storage, no links) */
  gs__node *grad_fn; /* owned */
  uint32_t views;    /* its views still alive: the last one frees the record */
};

void gs__view_root_free(struct gs__view_root *root) {
  if (root->grad_fn)
    gs__node_release(root->grad_fn);
  free(root);
}

/* The kept record of v's disposed base, if its storage has it. */
static struct gs__view_root *kept_root(const gs__tensor *v) {
  struct gs__view_root *kept = v->storage ? v->storage->orphan : NULL;
  return kept && kept->base.id == v->view_base ? kept : NULL;
}

void gs__count_view(gs__tensor *v, gs__tensor *root) {
  struct gs__view_root *kept = root ? NULL : kept_root(v);
  if (root)
    __atomic_fetch_add(&root->live_views, 1, __ATOMIC_RELAXED);
  else if (kept)
    __atomic_fetch_add(&kept->views, 1, __ATOMIC_RELAXED);
  v->counted_view = root || kept;
}

void gs__view_history_on_dispose(gs__tensor *t) {
  if (t->origin == GS__ORIGIN_VIEW) {
    if (!t->counted_view)
      return;
    t->counted_view = false;
    gs__tensor *root = gs__lookup_quiet(t->view_base);
    struct gs__view_root *kept = root ? NULL : kept_root(t);
    if (root) {
      __atomic_fetch_sub(&root->live_views, 1, __ATOMIC_RELAXED);
    } else if (kept && __atomic_sub_fetch(&kept->views, 1, __ATOMIC_ACQ_REL) == 0) {
      t->storage->orphan = NULL;
      gs__view_root_free(kept); /* may release saved tensors; t still holds its storage */
    }
    return;
  }
  uint32_t views = __atomic_load_n(&t->live_views, __ATOMIC_ACQUIRE);
  if (t->ag.history == 0 || !t->ag.grad_fn || !t->storage || views == 0)
    return;
  struct gs__view_root *root = malloc(sizeof *root);
  if (!root)
    return; /* its views keep the history they had */
  root->base = *t;
  root->base.storage = NULL;
  root->base.ag = (gs__autograd_meta){.history = t->ag.history};
  root->grad_fn = t->ag.grad_fn;
  root->views = views;
  t->ag.grad_fn = NULL;
  if (t->storage->orphan)
    gs__view_root_free(t->storage->orphan);
  t->storage->orphan = root;
}

gs__view_geometry *gs__view_geometry_new(const gs__tensor *v, const gs__tensor *base) {
  gs__view_geometry *g = malloc(sizeof *g);
  if (!g)
    return NULL;
  g->ndim = v->ndim;
  g->base_ndim = base->ndim;
  g->offset = v->offset;
  g->base_offset = base->offset;
  g->numel = v->numel;
  g->base_numel = base->numel;
  g->base_contiguous = gs__is_contiguous(base);
  memcpy(g->shape, v->shape, sizeof g->shape);
  memcpy(g->strides, v->strides, sizeof g->strides);
  memcpy(g->base_shape, base->shape, sizeof g->base_shape);
  memcpy(g->base_strides, base->strides, sizeof g->base_strides);
  return g;
}

bool gs__check_view_write(const gs__tensor *t, const char *op) {
  const gs__tensor *base = gs__lookup_quiet(t->view_base);
  char desc[GS__SHAPE_STR];
  if (!base) {
    gs__error(GS_ERR_STATE, op,
              "tensor #%u.%u is a view whose base tensor #%u.%u was disposed; a write into it "
              "could not be recorded in the base's history for autograd: write into a clone of "
              "the view instead",
              (unsigned)(t->id & 0xffffffffu), (unsigned)(t->id >> 32),
              (unsigned)(t->view_base & 0xffffffffu), (unsigned)(t->view_base >> 32));
    return false;
  }
  if (base->ag.requires_grad && !base->ag.grad_fn) {
    gs__error(GS_ERR_STATE, op,
              "tensor #%u.%u is a view of tensor #%u.%u %s %s, a leaf that requires grad; "
              "writing into the view would change the leaf in place: do it inside a no_grad "
              "block, or work on a clone",
              (unsigned)(t->id & 0xffffffffu), (unsigned)(t->id >> 32),
              (unsigned)(base->id & 0xffffffffu), (unsigned)(base->id >> 32),
              gs__shape_str(desc, base->shape, base->ndim), gs_dtype_name(base->dtype));
    return false;
  }
  return true;
}

void gs__record_view_write(gs__tensor *v, gs__tensor *base, gs__node *inner) {
  gs__node *c = gs__node_alloc(gs__kinds.copy_slices, inner->n_inputs, 0);
  gs__view_geometry *g = c ? gs__view_geometry_new(v, base) : NULL;
  if (!g) {
    /* Reported, and recorded as a write into the view alone (its other views keep their
     * history): the op has its node either way, to save into. */
    free(c);
    gs__error(GS_ERR_OUT_OF_MEMORY, inner->kind->name, "could not allocate a graph node");
    if (v->ag.grad_fn)
      gs__node_release(v->ag.grad_fn);
    v->ag.grad_fn = inner;
    v->ag.requires_grad = true;
    gs__node_announce(inner);
    return;
  }
  /* The wrapper checks, frees and logs the op's saved tensors as its own. */
  c->n_saved = inner->n_saved;
  c->saved = inner->saved;
  c->inner = inner;
  c->geometry = g;
  inner->wrapped = true;
  inner->wrapper_id = c->id;
  /* The op's first input is now the base's previous history (the view's may be stale). */
  gs__node *previous = gs__grad_edge(base);
  if (inner->next[0])
    gs__node_release(inner->next[0]);
  inner->next[0] = previous;
  if (previous)
    gs__node_retain(previous);
  c->inputs[0] = gs__input_meta_of(base);
  c->next[0] = previous; /* takes over the base's reference to its old grad_fn, below */
  if (previous && previous != base->ag.grad_fn)
    gs__node_retain(previous); /* an accumulator stays the base's too */
  for (int i = 1; i < inner->n_inputs; i++) {
    c->inputs[i] = inner->inputs[i];
    c->next[i] = inner->next[i];
    if (c->next[i])
      gs__node_retain(c->next[i]);
  }
  gs__move_retained_grad(base, c);
  base->ag.grad_fn = c;
  base->ag.requires_grad = true;
  base->ag.history++; /* every view of it, v too, is stale now */
  gs__node_set_output(c, base);
  gs__node_announce(c); /* written once the op has saved its tensors (into inner's slots) */
}

void gs__refresh_view_slow(gs__tensor *t) {
  gs__tensor *base = gs__lookup_quiet(t->view_base);
  const struct gs__view_root *kept = base ? NULL : kept_root(t);
  if (!base && !kept)
    return;
  if ((base ? base->ag.history : kept->base.ag.history) == t->base_history)
    return;
  if (t->ag.requires_grad && !t->ag.grad_fn)
    return; /* a view made a leaf of its own (gs_set_requires_grad): it has no history */
  gs__node *edge = base ? gs__grad_edge(base) : kept->grad_fn;
  if (!base)
    base = (gs__tensor *)&kept->base; /* read only below: its geometry */
  gs__node *a = NULL;
  if (edge) {
    a = gs__node_alloc(gs__kinds.as_strided, 1, 0);
    gs__view_geometry *g = a ? gs__view_geometry_new(t, base) : NULL;
    if (!g) {
      free(a);
      gs__error(GS_ERR_OUT_OF_MEMORY, "backward", "could not allocate a graph node");
      return;
    }
    a->geometry = g;
    a->inputs[0] = gs__input_meta_of(base);
    a->next[0] = edge;
    gs__node_retain(edge);
    gs__node_set_output(a, t);
  }
  t->base_history = base->ag.history;
  if (t->ag.grad_fn)
    gs__node_release(t->ag.grad_fn);
  t->ag.grad_fn = a;
  t->ag.requires_grad = a != NULL;
  if (a)
    gs__node_announce(a);
}
