/* node.c: graph nodes: recording them as ops run, saving tensors for backward, grad mode,
 * leaves' AccumulateGrad nodes, announcing nodes in the event log, and the graph's part in a
 * tensor's life (the lifecycle hooks: disposal, in-place writes, views, moves). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd-impl.h"
#include "scope-impl.h"
#include "trace-writer.h"

static GS__THREAD_LOCAL int no_grad_depth;
static GS__THREAD_LOCAL bool grad_disabled; /* gs_set_grad_enabled(false) */
static atomic_uint_fast64_t next_node_id;

bool gs__grad_mode(void) { return no_grad_depth == 0 && !grad_disabled; }
bool gs_grad_enabled(void) { return gs__grad_mode(); }

bool gs_set_grad_enabled(bool enabled) {
  bool previous = !grad_disabled;
  grad_disabled = !enabled;
  return previous;
}

void gs_no_grad_begin(void) { no_grad_depth++; }

int gs__no_grad_suspend(void) {
  int depth = no_grad_depth;
  no_grad_depth = 0;
  return depth;
}

void gs__no_grad_resume(int depth) { no_grad_depth = depth; }

void gs_no_grad_end(void) {
  if (no_grad_depth == 0) {
    gs__error(GS_ERR_STATE, "no_grad_end", "no no_grad block is open on this thread");
    return;
  }
  no_grad_depth--;
}

bool gs__any_requires_grad(int n, const gs__tensor *const *inputs) {
  if (!gs__grad_mode())
    return false;
  bool any = false;
  for (int i = 0; i < n; i++) {
    if (!inputs[i])
      continue;
    /* A view whose base was written in place since may require grad now (a cast-away const
     * of its graph bookkeeping, not of its values). */
    gs__refresh_view((gs__tensor *)inputs[i]);
    any |= inputs[i]->ag.requires_grad;
  }
  return any;
}

/* ---- lifetime ------------------------------------------------------------------------ */

void gs__node_retain(gs__node *node) {
  atomic_fetch_add_explicit(&node->refcount, 1, memory_order_relaxed);
}

void gs__node_release_saved(gs__node *node) {
  for (int i = 0; i < node->n_saved; i++) {
    if (node->saved[i].value.storage)
      gs__tensor_release(&node->saved[i].value);
    gs__saved_free_packed(&node->saved[i]);
  }
}

/* Releasing a node can release the nodes it feeds: done with an explicit stack, so a long
 * chain (an RNN over thousands of steps) cannot overflow the C stack. */
void gs__node_release(gs__node *node) {
  gs__node *stack[64];
  gs__node **pending = stack;
  size_t count = 0, capacity = 64;
  if (node)
    pending[count++] = node;
  while (count > 0) {
    gs__node *n = pending[--count];
    if (atomic_fetch_sub_explicit(&n->refcount, 1, memory_order_acq_rel) != 1)
      continue;
    if (!n->wrapped) {
      if (gs__trace_on())
        gs__trace_node(GS_TRACE_NODE_RELEASE, n->id);
      else
        gs__trace_skip(1);
    }
    if (n->handle) /* named by the release event just numbered */
      gs__node_handle_end(n, gs__events_settle());
    while (n->hooks) {
      gs__grad_hook *h = n->hooks;
      n->hooks = h->next;
      gs__grad_hook_free(h);
    }
    gs__node_release_saved(n); /* a CopySlices node's are its inner node's */
    if (n->free_user)
      n->free_user(n->user);
    free(n->geometry);
    for (int i = -1; i < n->n_inputs; i++) {
      gs__node *next = i < 0 ? n->inner : n->next[i];
      if (!next)
        continue;
      if (count == capacity) {
        gs__node **bigger = malloc(2 * capacity * sizeof *bigger);
        if (!bigger)
          abort(); /* cannot free the graph: out of memory with no way to report it */
        memcpy(bigger, pending, count * sizeof *bigger);
        if (pending != stack)
          free(pending);
        pending = bigger;
        capacity *= 2;
      }
      pending[count++] = next;
    }
    free(n);
  }
  if (pending != stack)
    free(pending);
}

/* One allocation: the node, then its per-input edges and metadata, then its saved slots. */
gs__node *gs__node_alloc(const gs__node_kind *kind, int n_inputs, int n_saved) {
  size_t size = sizeof(gs__node) + (size_t)n_inputs * (sizeof(gs__node *) + sizeof(gs__input_meta)) +
                (size_t)n_saved * sizeof(gs__saved_tensor);
  gs__node *n = calloc(1, size);
  if (!n)
    return NULL;
  atomic_init(&n->refcount, 1);
  n->id = atomic_fetch_add_explicit(&next_node_id, 1, memory_order_relaxed) + 1;
  n->kind = kind;
  n->n_inputs = n_inputs;
  n->next = (gs__node **)(n + 1);
  n->inputs = (gs__input_meta *)(n->next + n_inputs);
  n->n_saved = n_saved;
  n->saved = (gs__saved_tensor *)(n->inputs + n_inputs);
  return n;
}

void gs__grad_hook_free(gs__grad_hook *h) {
  if (h->free_user_data)
    h->free_user_data(h->user_data);
  free(h);
}

gs__autograd_kinds gs__kinds;
gs__grad_home_fn gs__grad_home;

gs__node *gs__grad_edge(gs__tensor *t) {
  gs__refresh_view(t);
  if (!t->ag.requires_grad)
    return NULL;
  if (t->ag.grad_fn)
    return t->ag.grad_fn;
  if (!t->ag.grad_accumulator) {
    gs__node *acc = gs__node_alloc(gs__kinds.accumulate_grad, 0, 0);
    if (!acc)
      return NULL;
    acc->leaf = t->id;
    gs__node_set_output(acc, t);
    t->ag.grad_accumulator = acc; /* the leaf's reference */
    gs__node_announce(acc);
  }
  return t->ag.grad_accumulator;
}

void gs__move_retained_grad(gs__tensor *t, gs__node *n) {
  if (!t->ag.retains_grad || !t->ag.grad_fn)
    return;
  t->ag.grad_fn->retained_output = 0;
  n->retained_output = t->id;
}

gs__node *gs__record(const gs__node_kind *kind, gs__tensor *out, int n_inputs,
                     const gs__tensor *const *inputs, int n_saved) {
  gs__saved_pack_pending(); /* the previous op's saves, before this op's */
  if (!gs__any_requires_grad(n_inputs, inputs))
    return NULL;
  gs__node *n = gs__node_alloc(kind, n_inputs, n_saved);
  if (!n) {
    gs__error(GS_ERR_OUT_OF_MEMORY, kind->name, "could not allocate a graph node");
    return NULL;
  }
  for (int i = 0; i < n_inputs; i++) {
    n->inputs[i] = gs__input_meta_of(inputs[i]);
    /* gs__grad_edge may create an accumulator in the input (a cast-away const of the
     * input's bookkeeping, not of its values). */
    n->next[i] = gs__grad_edge((gs__tensor *)inputs[i]);
    if (n->next[i])
      gs__node_retain(n->next[i]);
  }
  bool inplace = n_inputs > 0 && inputs[0] == out;
  gs__node_set_output(n, out);
  gs__tensor *base = inplace && out->origin == GS__ORIGIN_VIEW ? gs__lookup_quiet(out->view_base)
                                                                : NULL;
  if (base) { /* written through a view: the base's history is what changes */
    gs__record_view_write(out, base, n);
    return n;
  }
  /* In-place ops pass out as inputs[0]: its old history is now an edge of the new node, and
   * views made of it before are stale. */
  if (inplace)
    out->ag.history++;
  gs__move_retained_grad(out, n);
  if (out->ag.grad_fn)
    gs__node_release(out->ag.grad_fn);
  out->ag.grad_fn = n; /* the node's first reference */
  out->ag.requires_grad = true;
  gs__node_announce(n); /* written once the op has saved its tensors */
  return n;
}

bool gs__record_unary_for_test(const gs__node_kind *kind, gs_tensor out, gs_tensor in) {
  gs__tensor *o = gs__lookup(out, kind->name), *i = o ? gs__lookup(in, kind->name) : NULL;
  return i && gs__record(kind, o, 1, (const gs__tensor *const[]){i}, 0);
}

void gs__save(gs__node *node, int slot, const gs__tensor *t) {
  gs__saved_tensor *s = &node->saved[slot];
  s->value = *t;
  s->value.id = 0;
  s->value.ag = (gs__autograd_meta){0};
  gs__storage_retain(t->storage);
  s->version = atomic_load_explicit(&t->storage->version, memory_order_relaxed);
  s->tensor = t->id;
  /* x * x saves the same handle twice: slot i names input i when it can. */
  s->input = GS__SAVED_OTHER;
  if (t->id && slot < node->n_inputs && node->inputs[slot].tensor == t->id)
    s->input = slot;
  for (int i = 0; t->id && s->input == GS__SAVED_OTHER && i < node->n_inputs; i++)
    if (node->inputs[i].tensor == t->id)
      s->input = i;
  if (t->id && s->input == GS__SAVED_OTHER && t->id == node->output)
    s->input = GS__SAVED_RESULT;
  gs__saved_pack(node, s);
}

void gs__save_result(gs__node *node, int slot, const gs__tensor *t) {
  gs__save(node, slot, t);
  node->saved[slot].input = GS__SAVED_RESULT;
}

void gs__save_constant(gs__node *node, int slot, const gs__tensor *t) {
  gs__save(node, slot, t);
  node->saved[slot].input = GS__SAVED_CONSTANT;
}

/* ---- the event log -------------------------------------------------------------------- */

/* What a node_create lists: its inputs' nodes (0 for none), then its saved tensors; in
 * stack_ids if they fit, else allocated (NULL when out of memory). */
static uint64_t *node_event_ids(const gs__node *n, uint64_t stack_ids[16]) {
  size_t count = (size_t)n->n_inputs + (size_t)n->n_saved;
  uint64_t *ids = count <= 16 ? stack_ids : malloc(count * sizeof *ids);
  if (!ids)
    return NULL;
  for (int i = 0; i < n->n_inputs; i++)
    ids[i] = n->next[i] ? n->next[i]->id : 0;
  for (int i = 0; i < n->n_saved; i++)
    ids[n->n_inputs + i] = n->saved[i].tensor;
  return ids;
}

/* The tensor a node_create names: the leaf for an AccumulateGrad, else the node's output. */
static uint64_t node_event_tensor(const gs__node *n) {
  return n->kind == gs__kinds.accumulate_grad ? n->leaf : n->output;
}

/* Writes a node's creation with its inputs' nodes and its saved tensors. */
static void emit_node(void *ctx, uint64_t seq) {
  gs__node *n = ctx;
  uint64_t stack_ids[16];
  uint64_t *ids = node_event_ids(n, stack_ids);
  if (!ids)
    return;
  gs__trace_node_create(seq, n->id, n->kind->name, node_event_tensor(n), ids, (uint32_t)n->n_inputs,
                        ids + n->n_inputs, (uint32_t)n->n_saved);
  if (ids != stack_ids)
    free(ids);
}

void gs__node_announce(gs__node *n) {
  if (gs__trace_on()) /* written once the op has saved its tensors, at its output's time */
    gs__trace_defer_after_create(emit_node, n, node_event_tensor(n));
  else
    gs__trace_skip(1);
}

/* ---- the tensor lifecycle (core/lifecycle.h) ------------------------------------------- */

static void tensor_disposed(gs__slot *s) { gs__autograd_on_dispose(&s->tensor); }

static bool tensor_written(gs__tensor *t, bool operand_requires_grad, const char *op) {
  return gs__autograd_check_inplace(t, operand_requires_grad, op);
}

/* Gradient bookkeeping moves with the tensor: its AccumulateGrad node names the new handle. */
static void tensor_moved(gs__slot *to, gs__slot *from) {
  (void)from;
  if (to->tensor.ag.grad_accumulator)
    to->tensor.ag.grad_accumulator->leaf = to->tensor.id;
}

static void storage_freed(gs__storage *s) {
  if (s->orphan)
    gs__view_root_free(s->orphan);
}

__attribute__((constructor)) static void add_autograd_to_lifecycle(void) {
  static const gs__lifecycle_i autograd = {
      .layer = "autograd", .rank = 4, .on_dispose = tensor_disposed,
      .on_write = tensor_written, .on_view = gs__count_view, .on_move = tensor_moved,
      .on_storage_free = storage_freed};
  gs__lifecycle_add(&autograd);
}

void gs__autograd_on_dispose(gs__tensor *t) {
  gs__view_history_on_dispose(t); /* may take over its grad_fn */
  if (t->ag.grad_fn)
    gs__node_release(t->ag.grad_fn);
  if (t->ag.grad_accumulator)
    gs__node_release(t->ag.grad_accumulator);
  gs_tensor grad = {t->ag.grad};
  t->ag = (gs__autograd_meta){0};
  if (grad.id && gs_is_alive(grad))
    gs__dispose_as(grad, "the disposal of the tensor it was the gradient of");
}

bool gs__autograd_check_inplace(const gs__tensor *t, bool operand_requires_grad,
                                const char *op) {
  if (!gs__grad_mode())
    return true;
  gs__refresh_view((gs__tensor *)t); /* its requires_grad may be stale */
  if (!(t->ag.requires_grad || operand_requires_grad))
    return true;
  char desc[GS__SHAPE_STR];
  if (t->ag.requires_grad && !t->ag.grad_fn) {
    gs__error(GS_ERR_STATE, op,
              "tensor #%u.%u %s %s is a leaf that requires grad and cannot be modified in "
              "place; change it inside a no_grad block, or work on a clone",
              (unsigned)(t->id & 0xffffffffu), (unsigned)(t->id >> 32),
              gs__shape_str(desc, t->shape, t->ndim), gs_dtype_name(t->dtype));
    return false;
  }
  if (t->origin == GS__ORIGIN_VIEW && !gs__check_view_write(t, op))
    return false;
  return true;
}

/* ---- a late log's snapshot (trace/snapshot.c) ----------------------------------------- */

/* n as its node_create (after the storages its saved tensors hold), and node_free_saved if a
 * backward freed them (as backward logs it: for a node that saved something). */
static void snapshot_write_node(const gs__node *n) {
  uint64_t stack_ids[16];
  uint64_t *ids = node_event_ids(n, stack_ids);
  if (!ids)
    return;
  for (int i = 0; i < n->n_saved; i++)
    gs__snapshot_storage(n->saved[i].value.storage);
  gs__trace_snapshot_event(&(gs_trace_event){.kind = GS_TRACE_NODE_CREATE,
                                             .node = n->id,
                                             .name = gs__trace_string(n->kind->name),
                                             .tensor = node_event_tensor(n),
                                             .n_inputs = (uint32_t)n->n_inputs,
                                             .inputs = ids,
                                             .n_saved = (uint32_t)n->n_saved,
                                             .saved = ids + n->n_inputs});
  if (n->released && n->n_saved > 0)
    gs__trace_snapshot_event(&(gs_trace_event){.kind = GS_TRACE_NODE_FREE_SAVED, .node = n->id});
  if (ids != stack_ids)
    free(ids);
}

/* The graph under root, each node once and after its inputs (a reader links a node to its
 * inputs when it arrives). Iterative: graphs can be deep. */
static void snapshot_graph(gs__node *root) {
  typedef struct frame {
    gs__node *node;
    int input;
  } frame;
  if (!root || root->wrapped || !gs__snapshot_first_node(root->id))
    return;
  size_t count = 0, capacity = 64;
  frame *stack = malloc(capacity * sizeof *stack);
  if (!stack)
    return;
  stack[count++] = (frame){root, 0};
  while (count > 0) {
    frame *f = &stack[count - 1];
    if (f->input == f->node->n_inputs) {
      snapshot_write_node(f->node);
      count--;
      continue;
    }
    gs__node *next = f->node->next[f->input++];
    if (!next || next->wrapped || !gs__snapshot_first_node(next->id))
      continue;
    if (count == capacity) {
      frame *bigger = realloc(stack, 2 * capacity * sizeof *stack);
      if (!bigger)
        break; /* out of memory: the snapshot lacks the rest of this graph */
      stack = bigger;
      capacity *= 2;
    }
    stack[count++] = (frame){next, 0};
  }
  free(stack);
}

/* Every node a live tensor's history or gradient accumulator holds. */
static uint64_t snapshot_nodes(void) {
  uint32_t count = atomic_load_explicit(&gs__tensors.count, memory_order_acquire);
  for (uint32_t i = 0; i < count; i++) {
    gs__slot *s = (gs__slot *)gs__pool_slot_of(&gs__tensors, i);
    if (!atomic_load_explicit(&s->pool.live, memory_order_acquire))
      continue;
    snapshot_graph(s->tensor.ag.grad_accumulator);
    snapshot_graph(s->tensor.ag.grad_fn);
  }
  return 0;
}

__attribute__((constructor)) static void register_node_snapshot(void) {
  gs__trace_add_snapshot_hook(70, snapshot_nodes);
}
