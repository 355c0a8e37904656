/* node-handle.c: graph nodes as public handles (gs_node), as PyTorch shows a tensor's grad_fn.
 *
 * Nodes are refcounted records that ops make by the thousand per step, so they do not all take
 * a pool slot: a node gets one the first time someone asks for its handle, keeps it for life
 * (equal ids mean the same node), and gives it back when it is freed. The pool then answers
 * a stale handle as every other kind of handle does, naming the event that freed the node.
 * Lookups take no lock (the pool's); giving a handle takes a short lock so two threads asking
 * for the same node agree on one.
 */
#include <string.h>

#include "autograd-impl.h"

#define MAX_NODE_HANDLES (1u << 24)

typedef struct node_slot {
  gs__pool_slot pool;
  gs__node *node;
  atomic_int_fast64_t holds; /* gs_node_retain calls not yet released */
} node_slot;

static gs__pool node_handles =
    GS__POOL_INIT("graph node", sizeof(node_slot), 8, MAX_NODE_HANDLES, 0);
GS__POOL_GUARD_FORK(node_handles)
static const gs__handle_kind node_kind = {.pool = &node_handles,
                                          .noun = "graph node",
                                          .nouns = "graph nodes",
                                          .it = "the node",
                                          .ended = "freed"};
static gs__spinlock give_lock = GS__SPINLOCK_INIT;
GS__FORK_GUARD_SPINLOCK(GS__FORK_RANK_NODE_HANDLES, give_lock)

gs_node gs__node_handle(gs__node *n) {
  gs__spin_lock(&give_lock);
  if (!n->handle) {
    uint64_t id;
    node_slot *s = (node_slot *)gs__pool_take(&node_handles, &id);
    if (s) {
      s->node = n;
      atomic_store_explicit(&s->holds, 0, memory_order_relaxed);
      gs__pool_publish(&node_handles, &s->pool);
      n->handle = id;
    }
  }
  gs_node h = {n->handle};
  gs__spin_unlock(&give_lock);
  if (!h.id)
    gs__error(GS_ERR_OUT_OF_MEMORY, "grad_fn", "too many graph nodes have handles (%u)",
              MAX_NODE_HANDLES);
  return h;
}

void gs__node_handle_end(gs__node *n, uint64_t event) {
  gs__pool_release(&node_handles, n->handle,
                   "the release of the last tensor, node or holder that referred to it", event,
                   GS__POOL_DISPOSED);
  n->handle = 0;
}

gs__node *gs__node_lookup(gs_node h, const char *fn) {
  node_slot *s = gs__pool_get(&node_handles, h.id);
  if (!s) {
    gs__report_stale(&node_kind, h.id, fn);
    return NULL;
  }
  return s->node;
}

bool gs_node_is_alive(gs_node h) { return gs__pool_get(&node_handles, h.id) != NULL; }

/* ---- from tensors ----------------------------------------------------------------------- */

gs_node gs_grad_fn(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "grad_fn");
  if (!t)
    return GS_NO_NODE;
  gs__refresh_view(t); /* a view's grad_fn as of now: its base may have been written since */
  return t->ag.grad_fn ? gs__node_handle(t->ag.grad_fn) : GS_NO_NODE;
}

gs_node gs_grad_accumulator(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "grad_accumulator");
  if (!t)
    return GS_NO_NODE;
  gs__refresh_view(t);
  if (t->ag.grad_fn || !t->ag.requires_grad)
    return GS_NO_NODE;
  gs__node *acc = gs__grad_edge(t);
  return acc ? gs__node_handle(acc) : GS_NO_NODE;
}

/* ---- what a node says of itself --------------------------------------------------------- */

const char *gs_node_name(gs_node h) {
  gs__node *n = gs__node_lookup(h, "node_name");
  return n ? n->kind->name : NULL;
}

uint64_t gs_node_number(gs_node h) {
  gs__node *n = gs__node_lookup(h, "node_number");
  return n ? n->id : 0;
}

int gs_node_n_inputs(gs_node h) {
  gs__node *n = gs__node_lookup(h, "node_n_inputs");
  return n ? n->n_inputs : -1;
}

_Static_assert(GS_NODE_REALS == GS__NODE_REALS && GS_NODE_INTS == GS__NODE_INTS,
               "gs_node_scalars copies a node's whole arrays");

int gs_node_scalars(gs_node h, double *reals, int64_t *ints) {
  gs__node *n = gs__node_lookup(h, "node_scalars");
  if (!n)
    return -1;
  if (reals)
    memcpy(reals, n->reals, sizeof n->reals);
  if (ints)
    memcpy(ints, n->ints, sizeof n->ints);
  return 0;
}

/* input in [0, n_inputs), else an error naming fn; NULL after reporting. */
static gs__node *node_input(gs_node h, int input, const char *fn) {
  gs__node *n = gs__node_lookup(h, fn);
  if (n && (input < 0 || input >= n->n_inputs)) {
    gs__error(GS_ERR_INDEX, fn, "%s #%llu has %d input%s, got input %d", n->kind->name,
              (unsigned long long)n->id, n->n_inputs, n->n_inputs == 1 ? "" : "s", input);
    return NULL;
  }
  return n;
}

gs_node gs_node_next(gs_node h, int input) {
  gs__node *n = node_input(h, input, "node_next");
  return n && n->next[input] ? gs__node_handle(n->next[input]) : GS_NO_NODE;
}

int gs_node_input_shape(gs_node h, int input, int64_t *shape, gs_dtype *dtype) {
  gs__node *n = node_input(h, input, "node_input_shape");
  if (!n)
    return -1;
  const gs__input_meta *m = &n->inputs[input];
  if (shape)
    memcpy(shape, m->shape, (size_t)m->ndim * sizeof *shape);
  if (dtype)
    *dtype = m->dtype;
  return m->ndim;
}

int gs_node_output_shape(gs_node h, int64_t *shape) {
  gs__node *n = gs__node_lookup(h, "node_output_shape");
  if (!n)
    return -1;
  if (shape)
    memcpy(shape, n->out_shape, (size_t)n->out_ndim * sizeof *shape);
  return n->out_ndim;
}

gs_tensor gs_node_variable(gs_node h) {
  gs__node *n = gs__node_lookup(h, "node_variable");
  if (!n || n->kind != gs__kinds.accumulate_grad)
    return GS_NO_TENSOR;
  gs_tensor leaf = {n->leaf};
  return gs__lookup(leaf, "node_variable") ? leaf : GS_NO_TENSOR;
}

bool gs_node_released(gs_node h) {
  gs__node *n = gs__node_lookup(h, "node_released");
  return n && n->released;
}

/* Holds are counted per handle, so a release without its retain is refused instead of freeing
 * a node tensors still use. */
void gs_node_retain(gs_node h) {
  gs__node *n = gs__node_lookup(h, "node_retain");
  if (!n)
    return;
  node_slot *s = gs__pool_get(&node_handles, h.id);
  atomic_fetch_add_explicit(&s->holds, 1, memory_order_relaxed);
  gs__node_retain(n);
}

void gs_node_release(gs_node h) {
  gs__node *n = gs__node_lookup(h, "node_release");
  if (!n)
    return;
  node_slot *s = gs__pool_get(&node_handles, h.id);
  int_fast64_t holds = atomic_load_explicit(&s->holds, memory_order_relaxed);
  do {
    if (holds <= 0) {
      gs__error(GS_ERR_STATE, "node_release",
                "%s #%llu is not held: each gs_node_release needs an earlier gs_node_retain",
                n->kind->name, (unsigned long long)n->id);
      return;
    }
  } while (!atomic_compare_exchange_weak_explicit(&s->holds, &holds, holds - 1,
                                                  memory_order_relaxed, memory_order_relaxed));
  gs__node_release(n); /* may free it, ending the handle */
}
