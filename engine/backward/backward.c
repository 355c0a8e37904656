/* backward.c: the backward pass, and the helpers backward formulas use.
 *
 * gs_backward finds every node reachable from the root, checks the whole graph first (a node
 * whose saved tensors were freed by an earlier backward, a saved tensor modified in place since
 * it was saved), so a failing backward changes no gradient. Then it runs the nodes in reverse
 * topological order (Kahn's algorithm on the number of edges still to arrive at each node),
 * summing gradients where paths join, and frees saved tensors unless asked to retain them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backward-impl.h"
#include "scope-impl.h"
#include "trace-writer.h"

/* One backward at a time in the process: the per-run bookkeeping lives in this state, and
 * graphs may be shared between threads. */
static pthread_mutex_t backward_lock = PTHREAD_MUTEX_INITIALIZER;
GS__FORK_GUARD_MUTEX(GS__FORK_RANK_BACKWARD, backward_lock)

typedef struct run_node {
  gs__node *node;
  int64_t pending; /* edges from reachable nodes not yet run */
  gs_tensor grad;  /* the sum of gradients arrived so far */
} run_node;

typedef struct run {
  run_node *nodes;
  size_t count, capacity;
  /* Open addressing from node pointer to index in nodes. */
  int64_t *slots;
  size_t slot_mask;
} run;

static size_t hash_node(const gs__node *n, size_t mask) {
  uint64_t x = (uint64_t)(uintptr_t)n;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x & mask;
}

static bool run_grow_slots(run *r) {
  size_t n = r->slot_mask ? (r->slot_mask + 1) * 2 : 64;
  int64_t *slots = malloc(n * sizeof *slots);
  if (!slots)
    return false;
  for (size_t i = 0; i < n; i++)
    slots[i] = -1;
  for (size_t i = 0; i < r->count; i++) {
    size_t h = hash_node(r->nodes[i].node, n - 1);
    while (slots[h] >= 0)
      h = (h + 1) & (n - 1);
    slots[h] = (int64_t)i;
  }
  free(r->slots);
  r->slots = slots;
  r->slot_mask = n - 1;
  return true;
}

/* Index of node in the run, adding it if new (*added says so); -1 if out of memory. */
static int64_t run_find(run *r, gs__node *node, bool *added) {
  *added = false;
  if ((r->count + 1) * 2 > r->slot_mask + 1 && !run_grow_slots(r))
    return -1;
  size_t h = hash_node(node, r->slot_mask);
  while (r->slots[h] >= 0) {
    if (r->nodes[r->slots[h]].node == node)
      return r->slots[h];
    h = (h + 1) & r->slot_mask;
  }
  if (r->count == r->capacity) {
    size_t cap = r->capacity ? r->capacity * 2 : 64;
    run_node *nodes = realloc(r->nodes, cap * sizeof *nodes);
    if (!nodes)
      return -1;
    r->nodes = nodes;
    r->capacity = cap;
  }
  r->nodes[r->count] = (run_node){.node = node};
  r->slots[h] = (int64_t)r->count;
  *added = true;
  return (int64_t)r->count++;
}

static void run_free(run *r) {
  for (size_t i = 0; i < r->count; i++)
    if (r->nodes[i].grad.id)
      gs_dispose(r->nodes[i].grad);
  free(r->nodes);
  free(r->slots);
}

static char *tensor_name(char *buf, size_t size, uint64_t id) {
  snprintf(buf, size, "#%u.%u", (unsigned)(id & 0xffffffffu), (unsigned)(id >> 32));
  return buf;
}

/* Which saved tensor of n slot is, as the node's formula saved it: "self (input 0)" for
 * unary and binary ops (PyTorch's names), "input 2", "result (its output)", else its slot. A
 * CopySlices node's saved tensors are those of the in-place op it wraps. */
static char *saved_role(char *buf, size_t size, const gs__node *n, int slot) {
  const gs__node *op = n->inner ? n->inner : n;
  int input = n->saved[slot].input;
  int used;
  if (input >= 0 && op->n_inputs <= 2)
    used = snprintf(buf, size, "%s (input %d)", input == 0 ? "self" : "other", input);
  else if (input >= 0)
    used = snprintf(buf, size, "input %d", input);
  else if (input == GS__SAVED_RESULT)
    used = snprintf(buf, size, "result (its output)");
  else
    used = snprintf(buf, size, "saved tensor %d", slot);
  if (n->inner && used > 0 && (size_t)used < size)
    snprintf(buf + used, size - (size_t)used, " of the %s it wraps", op->kind->name);
  return buf;
}

/* Checks a reachable node before anything runs; false after reporting. The node is named
 * "MulBackward #4", by the id the event log gives it, as the inspector names it. */
static bool check_node(const gs__node *n) {
  if (n->released && n->n_saved > 0) {
    gs__error(GS_ERR_STATE, "backward",
              "%s #%llu was already run by a backward that freed its saved tensors (at "
              "event %llu); to go backward through a graph twice, pass retain_graph to the "
              "first backward",
              n->kind->name, (unsigned long long)n->id, (unsigned long long)n->released_event);
    return false;
  }
  for (int i = 0; i < n->n_saved; i++) {
    const gs__saved_tensor *s = &n->saved[i];
    if (!s->value.storage)
      continue;
    const gs__storage *st = s->value.storage;
    int64_t now = atomic_load_explicit(&st->version, memory_order_relaxed);
    if (now == s->version)
      continue;
    char shape[GS__SHAPE_STR], writer[32], how[96], role[96];
    tensor_name(writer, sizeof writer, st->last_write_tensor);
    if (st->last_write_tensor == s->tensor)
      snprintf(how, sizeof how, "through the saved tensor itself");
    else if (st->last_write_origin == GS__ORIGIN_DETACH)
      snprintf(how, sizeof how, "through a detached alias (tensor %s)", writer);
    else if (st->last_write_origin == GS__ORIGIN_VIEW)
      snprintf(how, sizeof how, "through a view sharing its storage (tensor %s)", writer);
    else
      snprintf(how, sizeof how, "through tensor %s, which shares its storage", writer);
    gs__error(GS_ERR_STATE, "backward",
              "tensor %s %s saved by %s #%llu as %s is at version %lld; expected version "
              "%lld. It was modified in place by %s (event %llu) %s.",
              gs__shape_str(shape, s->value.shape, s->value.ndim),
              gs_dtype_name(s->value.dtype), n->kind->name, (unsigned long long)n->id,
              saved_role(role, sizeof role, n, i), (long long)now,
              (long long)s->version, st->last_write_op ? st->last_write_op : "a write",
              (unsigned long long)st->last_write_event, how);
    return false;
  }
  return true;
}

/* Every node reachable from start, each with the number of edges into it from reachable
 * nodes; false after reporting (a node that cannot run, or out of memory). */
static bool collect(run *r, gs__node *start) {
  bool added;
  if (run_find(r, start, &added) < 0)
    goto oom;
  for (size_t i = 0; i < r->count; i++) { /* r->nodes grows as the walk finds nodes */
    gs__node *n = r->nodes[i].node;
    if (!check_node(n))
      return false;
    for (int k = 0; k < n->n_inputs; k++) {
      if (!n->next[k])
        continue;
      int64_t j = run_find(r, n->next[k], &added);
      if (j < 0)
        goto oom;
      r->nodes[j].pending++;
    }
  }
  return true;
oom:
  gs__error(GS_ERR_OUT_OF_MEMORY, "backward", "could not allocate the backward bookkeeping");
  return false;
}

/* Adds g (owned) into the run's gradient for node j. */
static void add_grad(run *r, int64_t j, gs_tensor g) {
  gs_tensor *sum = &r->nodes[j].grad;
  if (!sum->id) {
    *sum = g;
    return;
  }
  gs_tensor total = gs_add(*sum, g);
  gs_dispose(*sum);
  gs_dispose(g);
  *sum = total;
}

/* A formula's gradient must have its input's shape and dtype: anything else is a bug in the
 * formula, reported by name (and dropped) rather than silently broadcast into a leaf. */
static void check_formula_grads(const gs__node *n, gs_tensor *grads) {
  for (int i = 0; i < n->n_inputs; i++) {
    if (!grads[i].id)
      continue;
    const gs__input_meta *m = &n->inputs[i];
    gs__tensor *g = gs__lookup(grads[i], n->kind->name);
    if (g && g->dtype == m->dtype && g->ndim == m->ndim &&
        memcmp(g->shape, m->shape, (size_t)m->ndim * sizeof(int64_t)) == 0)
      continue;
    char want[GS__SHAPE_STR], got[GS__SHAPE_STR];
    if (g)
      gs__error(GS_ERR_STATE, "backward",
                "%s produced a gradient %s %s for its input %d of shape %s %s (a bug in the "
                "formula)",
                n->kind->name, gs__shape_str(got, g->shape, g->ndim), gs_dtype_name(g->dtype),
                i, gs__shape_str(want, m->shape, m->ndim), gs_dtype_name(m->dtype));
    if (g)
      gs_dispose(grads[i]);
    grads[i] = GS_NO_TENSOR;
  }
}

static void run_node_formula(run *r, int64_t j, bool retain_graph) {
  gs__node *n = r->nodes[j].node;
  gs_tensor grad = r->nodes[j].grad;
  r->nodes[j].grad = GS_NO_TENSOR;
  gs__accumulate_retained(n, grad);

  gs_tensor stack_grads[8];
  gs_tensor *grads = n->n_inputs <= 8 ? stack_grads : calloc((size_t)n->n_inputs, sizeof *grads);
  if (!grads)
    abort();
  for (int i = 0; i < n->n_inputs; i++)
    grads[i] = GS_NO_TENSOR;
  n->kind->backward(n, grad, grads);
  gs__formula_temps_dispose();
  gs_dispose(grad);
  check_formula_grads(n, grads);

  for (int i = 0; i < n->n_inputs; i++) {
    if (!grads[i].id)
      continue;
    if (!n->next[i]) {
      gs_dispose(grads[i]);
      continue;
    }
    bool added;
    int64_t k = run_find(r, n->next[i], &added);
    add_grad(r, k, grads[i]);
  }
  if (grads != stack_grads)
    free(grads);
  if (!retain_graph) {
    gs__node_release_saved(n);
    n->released = true;
    n->released_event = gs__next_event();
    if (n->n_saved > 0) {
      if (gs__trace_on())
        gs__trace_node(GS_TRACE_NODE_FREE_SAVED, n->id);
      else
        gs__trace_skip(1);
    }
  }
}

void gs_backward_with(gs_tensor root_h, gs_tensor grad_h, bool retain_graph) {
  const char *fn = "backward";
  gs__tensor *root = gs__lookup(root_h, fn);
  if (!root)
    return;
  char shape[GS__SHAPE_STR], gshape[GS__SHAPE_STR];
  gs__refresh_view(root);
  if (!root->ag.requires_grad) {
    gs__error(GS_ERR_STATE, fn,
              "tensor #%u.%u %s does not require grad and has no grad_fn: nothing to "
              "differentiate (did an input call gs_set_requires_grad?)",
              (unsigned)(root_h.id & 0xffffffffu), (unsigned)(root_h.id >> 32),
              gs__shape_str(shape, root->shape, root->ndim));
    return;
  }
  gs__tensor *seed = NULL;
  if (grad_h.id) {
    seed = gs__lookup(grad_h, fn);
    if (!seed)
      return;
    if (seed->ndim != root->ndim ||
        memcmp(seed->shape, root->shape, (size_t)root->ndim * sizeof(int64_t)) != 0) {
      gs__error(GS_ERR_SHAPE, fn, "expected a gradient of the output's shape %s, got %s",
                gs__shape_str(shape, root->shape, root->ndim),
                gs__shape_str(gshape, seed->shape, seed->ndim));
      return;
    }
  } else if (root->numel != 1) {
    gs__error(GS_ERR_SHAPE, fn,
              "a gradient can be implied only for a one-element output; got shape %s, so pass "
              "one to gs_backward_with",
              gs__shape_str(shape, root->shape, root->ndim));
    return;
  }

  pthread_mutex_lock(&backward_lock);
  uintptr_t outer_site = gs__trace_on() ? gs__trace_site_enter() : 0;
  bool was_enabled = gs_set_grad_enabled(false);
  /* backward's temporaries are the engine's, not the user's scope's */
  gs__ownership_suspend_for(GS__REASON_BACKWARD_TEMPORARY);
  /* A leaf root accumulates into itself through its AccumulateGrad node. */
  gs__node *start = gs__grad_edge(root);
  if (gs__trace_on())
    gs__trace_backward(GS_TRACE_BACKWARD_BEGIN, root_h.id, start ? start->id : 0);
  else
    gs__trace_skip(1);
  gs__backward_hooks_call(GS__HOOK_BEGIN, root_h, GS_NO_TENSOR);
  run r = {0};
  if (start && collect(&r, start)) {
    gs_tensor first = seed ? gs_to_dtype(grad_h, root->dtype)
                           : gs_ones(root->dtype, root->shape, root->ndim);
    r.nodes[0].grad = first;
    /* Kahn: run a node once every edge into it has delivered its gradient. */
    int64_t *ready = malloc(r.count * sizeof *ready);
    if (!ready)
      abort();
    size_t n_ready = 0;
    ready[n_ready++] = 0;
    while (n_ready > 0) {
      int64_t j = ready[--n_ready];
      gs__node *n = r.nodes[j].node;
      if (r.nodes[j].grad.id)
        run_node_formula(&r, j, retain_graph);
      else if (!retain_graph && n->n_saved > 0) { /* no gradient reached it: still free */
        gs__node_release_saved(n);
        n->released = true;
        n->released_event = gs__next_event();
      }
      for (int i = 0; i < n->n_inputs; i++) {
        if (!n->next[i])
          continue;
        bool added;
        int64_t k = run_find(&r, n->next[i], &added);
        if (--r.nodes[k].pending == 0)
          ready[n_ready++] = k;
      }
    }
    free(ready);
  }
  run_free(&r);
  if (gs__trace_on())
    gs__trace_backward(GS_TRACE_BACKWARD_END, root_h.id, 0);
  else
    gs__trace_skip(1);
  gs__ownership_resume();
  gs_set_grad_enabled(was_enabled);
  if (gs__trace_on())
    gs__trace_site_leave(outer_site);
  pthread_mutex_unlock(&backward_lock);
  /* After the lock: an end hook may wait for other processes or run a backward itself. */
  gs__backward_hooks_call(GS__HOOK_END, root_h, GS_NO_TENSOR);
}

void gs_backward(gs_tensor t) { gs_backward_with(t, GS_NO_TENSOR, false); }

/* ---- leaves and grads --------------------------------------------------------------- */

void gs_set_requires_grad(gs_tensor h, bool requires_grad) {
  gs__tensor *t = gs__lookup(h, "set_requires_grad");
  if (!t)
    return;
  if (t->ag.grad_fn) {
    gs__error(GS_ERR_STATE, "set_requires_grad",
              "tensor #%u.%u is not a leaf (it was made by %s): only leaves can change "
              "requires_grad; detach it first",
              (unsigned)(h.id & 0xffffffffu), (unsigned)(h.id >> 32), t->ag.grad_fn->kind->name);
    return;
  }
  if (requires_grad && !gs_dtype_is_floating(t->dtype)) {
    gs__error(GS_ERR_DTYPE, "set_requires_grad",
              "only floating tensors can require grad, got %s", gs_dtype_name(t->dtype));
    return;
  }
  if (t->ag.requires_grad == requires_grad)
    return;
  t->ag.requires_grad = requires_grad;
  if (gs__trace_on()) /* numbered with the log on or off */
    gs__trace_requires_grad(h.id, requires_grad);
  else
    gs__trace_skip(1);
}

/* The getters see a view's history as of now: its base may have been written in place. */
bool gs_requires_grad(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "requires_grad");
  if (t)
    gs__refresh_view(t);
  return t && t->ag.requires_grad;
}

bool gs_is_leaf(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "is_leaf");
  if (t)
    gs__refresh_view(t);
  return t && !t->ag.grad_fn;
}

gs_tensor gs_grad(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "grad");
  if (!t)
    return GS_NO_TENSOR;
  gs_tensor g = {t->ag.grad};
  return g.id && gs_is_alive(g) ? g : GS_NO_TENSOR;
}

void gs_zero_grad(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "zero_grad");
  if (!t)
    return;
  gs_tensor g = {t->ag.grad};
  t->ag.grad = 0;
  if (g.id && gs_is_alive(g))
    gs__dispose_as(g, "gs_zero_grad");
}

void gs_retain_grad(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "retain_grad");
  if (!t)
    return;
  if (!t->ag.requires_grad) {
    gs__error(GS_ERR_STATE, "retain_grad",
              "tensor #%u.%u does not require grad: there is no gradient to retain",
              (unsigned)(h.id & 0xffffffffu), (unsigned)(h.id >> 32));
    return;
  }
  if (t->ag.grad_fn) /* leaves keep their grad anyway */
    t->ag.grad_fn->retained_output = h.id;
  t->ag.retains_grad = true;
}

const char *gs_grad_fn_name(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "grad_fn_name");
  if (t)
    gs__refresh_view(t);
  return t && t->ag.grad_fn ? t->ag.grad_fn->kind->name : NULL;
}

/* The linker gathers every GS__BACKWARD definition into this section. */
extern const gs__node_kind __start_gs_node_kinds[], __stop_gs_node_kinds[];

int gs_autograd_node_kinds(const char **names, int max) {
  int count = (int)(__stop_gs_node_kinds - __start_gs_node_kinds);
  for (int i = 0; i < count && i < max && names; i++)
    names[i] = __start_gs_node_kinds[i].name;
  return count;
}
