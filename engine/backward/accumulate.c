/* accumulate.c: AccumulateGrad, the node a leaf's gradient flows into, and gradients kept for
 * non-leaves (gs_retain_grad): the first gradient becomes the tensor's own, later ones are
 * added into it. Engine/autograd makes these nodes; their formula needs ops, so it lives here
 * and installs itself at start-up. Under create_graph the sum is made out of place and
 * recorded, so the .grad has a grad_fn (as PyTorch's). */
#include <stdlib.h>
#include <string.h>

#include "backward-impl.h"
#include "scope-impl.h"
#include "trace-writer.h"

/* Makes t the gradient leaf id owns (its .grad). The ownership change rides in the
 * grad_accumulate (format 2.2): one event where there were two. */
static void own_grad(gs__tensor *leaf, uint64_t id, gs_tensor own) {
  gs__tensor *g = gs__lookup(own, "backward");
  int previous_holder;
  uint64_t previous_owner;
  gs__own_lock();
  bool changed = gs__own_set_holder_locked_folded(&gs__slot_of(g)->own, GS__HELD_BY_TENSOR, id,
                                                  &previous_holder, &previous_owner);
  gs__own_unlock();
  leaf->ag.grad = own.id; /* the pool's pages never move: the pointer is still good */
  if (gs__trace_on())
    gs__trace_grad_accumulate(id, own.id, changed ? GS__HELD_BY_TENSOR : 0, previous_holder,
                              previous_owner);
  else
    gs__trace_skip(1);
}

int gs_set_grad(gs_tensor t, gs_tensor grad) {
  const char *fn = "set_grad";
  gs__tensor *leaf = gs__lookup(t, fn);
  if (!leaf)
    return -1;
  if (!grad.id) {
    gs_zero_grad(t);
    return 0;
  }
  gs__tensor *g = gs__lookup(grad, fn);
  if (!g)
    return -1;
  if (grad.id == t.id) {
    gs__error(GS_ERR_ARGUMENT, fn, "a tensor cannot be its own gradient (tensor #%u.%u)",
              (unsigned)(t.id & 0xffffffffu), (unsigned)(t.id >> 32));
    return -1;
  }
  if (grad.id == leaf->ag.grad)
    return 0; /* already its gradient */
  if (g->dtype != leaf->dtype || g->ndim != leaf->ndim ||
      memcmp(g->shape, leaf->shape, sizeof(int64_t) * (size_t)leaf->ndim) != 0) {
    char want[GS__SHAPE_STR], got[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn, "expected a gradient of shape %s %s (the tensor's), got %s %s",
              gs__shape_str(want, leaf->shape, leaf->ndim), gs_dtype_name(leaf->dtype),
              gs__shape_str(got, g->shape, g->ndim), gs_dtype_name(g->dtype));
    return -1;
  }
  gs__own_lock();
  const char *held = gs__own_refuses_dispose(&gs__slot_of(g)->own);
  gs__own_unlock();
  if (held) {
    gs__error(GS_ERR_STATE, fn,
              "the gradient must be a tensor the caller or a scope holds, but tensor #%u.%u %s",
              (unsigned)(grad.id & 0xffffffffu), (unsigned)(grad.id >> 32), held);
    return -1;
  }
  gs_zero_grad(t);
  own_grad(leaf, t.id, grad);
  return 0;
}

/* create_graph: grad and its history as they arrive at a tensor's .grad. */
static void accumulate_recorded(gs__tensor *leaf, uint64_t id, gs_tensor grad) {
  gs_tensor existing = {leaf->ag.grad};
  bool has = leaf->ag.grad && gs_is_alive(existing);
  gs_tensor own = has ? gs_add(existing, grad) : gs_clone(grad);
  if (!own.id)
    return;
  if (has)
    gs__dispose_as(existing, "backward");
  own_grad(gs__lookup((gs_tensor){id}, "backward"), id, own);
}

/* Whether the gradient g that AccumulateGrad was given can become leaf's .grad itself, as
 * PyTorch's AccumulateGrad steals a gradient nothing else refers to: the pass's own temporary
 * (held by the engine: no program, scope or node has its handle), fresh bytes of the leaf's
 * dtype and shape laid out contiguously from the start, and no other tensor over its storage
 * and no copy-on-write sharer of its bytes. Anything else is cloned, as before. */
static bool can_take(gs__tensor *g, const gs__tensor *leaf) {
  return g->origin == GS__ORIGIN_NEW && gs__slot_of(g)->own.holder == GS__HELD_BY_ENGINE &&
         g->dtype == leaf->dtype && g->ndim == leaf->ndim && g->offset == 0 &&
         gs__is_contiguous(g) &&
         memcmp(g->shape, leaf->shape, sizeof(int64_t) * (size_t)leaf->ndim) == 0 &&
         atomic_load_explicit(&g->storage->refcount, memory_order_acquire) == 1 &&
         !gs__storage_is_cow(g->storage);
}

/* may_take: grad is the pass's, given to a leaf's AccumulateGrad with no hook to see it after
 * the formula, so it may become the .grad itself (gs__formula_took_grad). */
static void accumulate_into(uint64_t id, gs_tensor grad, bool create_graph, bool may_take) {
  gs_tensor leaf_h = {id};
  if (!gs_is_alive(leaf_h))
    return; /* the leaf was disposed: its gradient has nowhere to go */
  gs__tensor *leaf = gs__lookup(leaf_h, "backward");
  if (create_graph) {
    accumulate_recorded(leaf, id, grad);
    return;
  }
  gs_tensor existing = {leaf->ag.grad};
  if (leaf->ag.grad && gs_is_alive(existing)) {
    gs_add_(existing, grad);
    if (gs__trace_on())
      gs__trace_grad_accumulate(id, existing.id, 0, 0, 0);
    else
      gs__trace_skip(1);
    return;
  }
  /* The first gradient becomes the leaf's own: the pass's temporary itself when nothing else
   * refers to it (an ownership transfer, in the log too: its grad_accumulate says the engine
   * handed it to the leaf), else a clone, a semantic copy in O(1) (the formula's temporary dies
   * right after, so nothing is ever copied); only a gradient laid out non-contiguously (an
   * expanded one, say) is copied, so later backwards can add into it. A gradient its formula
   * wrote into the leaf's home (gs__grad_home: DDP's bucket, whose bytes clones copy) becomes
   * the leaf's as another view of it. */
  gs__tensor *g = gs__lookup(grad, "backward");
  gs_tensor home = gs__grad_home ? gs__grad_home(id, false) : GS_NO_TENSOR;
  gs_tensor own;
  if (home.id && gs__is_contiguous(g) && g->numel == leaf->numel && gs_data(grad) == gs_data(home))
    own = gs_view(grad, leaf->shape, leaf->ndim);
  else if (may_take && !home.id && can_take(g, leaf)) {
    own = grad;
    gs__formula_took_grad();
  } else
    own = gs__is_contiguous(g) ? gs_clone(grad) : gs_contiguous(grad);
  own_grad(leaf, id, own);
}

static void accumulate_grad_backward(gs__node *n, gs_tensor grad, gs_tensor *grads) {
  (void)grads;
  accumulate_into(n->leaf, grad, gs__formula_creates_graph(), !n->hooks);
  /* A leaf's accumulator runs once per pass, after every path into it: its gradient is final. */
  gs_tensor leaf = {n->leaf};
  if (gs_is_alive(leaf))
    gs__backward_hooks_call(GS__HOOK_GRAD_READY, leaf, gs_grad(leaf));
}
GS__BACKWARD_TWICE(AccumulateGrad, accumulate_grad_backward);

void gs__accumulate_retained(gs__node *n, gs_tensor grad) {
  if (n->retained_output)
    accumulate_into(n->retained_output, grad, gs__formula_creates_graph(), false);
}

int gs_backward_inputs(const gs_tensor *outputs, const gs_tensor *grads, int n_outputs,
                       const gs_tensor *inputs, int n_inputs, bool retain_graph) {
  return gs_backward_inputs_with(outputs, grads, n_outputs, inputs, n_inputs,
                                 &(gs_backward_options){.retain_graph = retain_graph});
}

int gs_backward_inputs_with(const gs_tensor *outputs, const gs_tensor *grads, int n_outputs,
                            const gs_tensor *inputs, int n_inputs,
                            const gs_backward_options *options) {
  gs_backward_options o = options ? *options : (gs_backward_options){0};
  if (n_inputs <= 0 || !inputs) {
    gs__error(GS_ERR_ARGUMENT, "backward",
              "inputs: expected at least one tensor to accumulate into, got %d", n_inputs);
    return -1;
  }
  gs_tensor *got = calloc((size_t)n_inputs, sizeof *got);
  if (!got) {
    gs__error(GS_ERR_OUT_OF_MEMORY, "backward", "no memory for %d gradients", n_inputs);
    return -1;
  }
  /* All gradients first, then the accumulation: an error in the pass leaves every .grad as it
   * was. An input reached by no gradient keeps its .grad, as in PyTorch. */
  int rc = gs_autograd_grad_with(outputs, grads, n_outputs, inputs, n_inputs, &o, true, got);
  /* Recorded as the pass was, whatever the caller's grad mode. */
  bool was_enabled = o.create_graph ? gs_set_grad_enabled(true) : false;
  int no_grad_depth = o.create_graph ? gs__no_grad_suspend() : 0;
  for (int i = 0; i < n_inputs; i++) {
    if (!got[i].id)
      continue;
    if (rc == 0) /* with create_graph, got[i] has its history */
      accumulate_into(inputs[i].id, got[i], o.create_graph, false);
    gs_dispose(got[i]);
  }
  if (o.create_graph) {
    gs__no_grad_resume(no_grad_depth);
    gs_set_grad_enabled(was_enabled);
  }
  free(got);
  return rc;
}

__attribute__((constructor)) static void install_accumulate_grad(void) {
  gs__kinds.accumulate_grad = &AccumulateGrad;
}
