/* backward.c: the backward pass, and the helpers backward formulas use.
 *
 * gs_backward finds every node reachable from the root, checks the whole graph first (a node
 * whose saved tensors were freed by an earlier backward, a saved tensor modified in place since
 * it was saved), so a failing backward changes no gradient. Then it runs the nodes in reverse
 * topological order (Kahn's algorithm on the number of edges still to arrive at each node),
 * summing gradients where paths join, and frees saved tensors unless asked to retain them.
 *
 * With create_graph (double backward) the formulas run in grad mode, so the gradients they
 * make have a graph of their own, connected through the saved tensors to the forward's
 * history (formula.c); every node that runs must then have a differentiable formula.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backward-impl.h"
#include "scope-impl.h"
#include "trace-writer.h"

/* One backward at a time in the process (graphs may be shared between threads); a thread
 * holding it may nest passes (run_pass), taking it once. */
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

/* Index of node in the run, or -1 if the walk did not reach it. */
static int64_t run_lookup(const run *r, const gs__node *node) {
  if (!r->slots)
    return -1;
  for (size_t h = hash_node(node, r->slot_mask); r->slots[h] >= 0; h = (h + 1) & r->slot_mask)
    if (r->nodes[r->slots[h]].node == node)
      return r->slots[h];
  return -1;
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

/* A pass running on this thread, innermost first: a custom function's backward or a hook may
 * start a pass of its own (reentrant backward, as torch.utils.checkpoint does), which runs to
 * completion inside the outer one's node. */
typedef struct pass_frame {
  struct pass_frame *outer;
  const gs__node *running; /* the node whose hooks or formula run now, or NULL */
} pass_frame;
static GS__THREAD_LOCAL pass_frame *frames;
/* Passes started on this thread so far: a pass that sees the count move while one of its
 * nodes ran knows a nested pass may have freed or changed what its remaining nodes need. */
static GS__THREAD_LOCAL uint64_t passes_started;

/* The outer pass running n now, if any: a nested pass must not run it a second time. */
static bool running_outside(const gs__node *n) {
  for (const pass_frame *f = frames ? frames->outer : NULL; f; f = f->outer)
    if (f->running == n)
      return true;
  return false;
}

/* Checks a reachable node before anything runs; false after reporting. The node is named
 * "MulBackward #4", by the id the event log gives it, as the inspector names it. */
static bool check_node(const gs__node *n) {
  if (running_outside(n)) {
    gs__error(GS_ERR_STATE, "backward",
              "%s #%llu is running in an outer backward pass on this thread (this backward "
              "was started from its backward or one of its hooks): a nested backward cannot "
              "go through it again",
              n->kind->name, (unsigned long long)n->id);
    return false;
  }
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
    /* Begins with PyTorch's words, which are what people search for. */
    gs__error(GS_ERR_STATE, "backward",
              "one of the variables needed for gradient computation has been modified by an "
              "inplace operation: tensor %s %s saved by %s #%llu as %s is at version %lld; "
              "expected version "
              "%lld. It was modified in place by %s (event %llu) %s.",
              gs__shape_str(shape, s->value.shape, s->value.ndim), gs_dtype_name(s->value.dtype),
              n->kind->name, (unsigned long long)n->id, saved_role(role, sizeof role, n, i),
              (long long)now, (long long)s->version,
              st->last_write_op ? st->last_write_op : "a write",
              (unsigned long long)st->last_write_event, how);
    return false;
  }
  return true;
}

/* Every node reachable from start, each with the number of edges into it from reachable
 * nodes (added to what walks from earlier roots found); false after reporting (a node that
 * cannot run, or out of memory). */
static bool collect(run *r, gs__node *start) {
  bool added;
  size_t first = r->count; /* another root's walk may have found some already */
  if (run_find(r, start, &added) < 0)
    goto oom;
  for (size_t i = first; i < r->count; i++) { /* r->nodes grows as the walk finds nodes */
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

/* Frees n's saved tensors once a pass without retain_graph is done with it. */
static void release_saved(gs__node *n) {
  gs__node_release_saved(n);
  n->released = true;
  n->released_event = gs__next_event();
}

/* Set by gs__formula_stop while a formula runs on this thread. */
static GS__THREAD_LOCAL bool formula_stopped;

void gs__formula_stop(void) { formula_stopped = true; }

/* Set by gs__formula_took_grad while a formula runs on this thread. */
static GS__THREAD_LOCAL bool formula_took_grad;

void gs__formula_took_grad(void) { formula_took_grad = true; }

/* Runs node j's formula on the gradient that arrived at it (the pass's; disposed here) and
 * hands what it gives its inputs to the nodes they lead to. */
/* False when a post-hook stopped the pass (reported; the gradients are disposed). */
static bool run_node_formula(run *r, int64_t j, bool retain_graph) {
  gs__node *n = r->nodes[j].node;
  gs_tensor grad = r->nodes[j].grad;
  r->nodes[j].grad = GS_NO_TENSOR;

  gs_tensor stack_grads[8];
  gs_tensor *grads = n->n_inputs <= 8 ? stack_grads : calloc((size_t)n->n_inputs, sizeof *grads);
  if (!grads)
    abort();
  for (int i = 0; i < n->n_inputs; i++)
    grads[i] = GS_NO_TENSOR;
  formula_stopped = false;
  size_t temps = gs__formula_temps_mark(); /* an outer pass's formula may have some */
  /* Hooked saved tensors are unpacked once per run of the node, before its formula, as
   * PyTorch's nodes unpack theirs on entry. */
  /* A pass started inside the formula (by a hook) keeps its own flag: this one's is put back. */
  bool outer_took_grad = formula_took_grad;
  formula_took_grad = false;
  if (gs__node_load_saved(n, "backward")) {
    n->kind->backward(n, grad, grads);
    gs__node_unload_saved(n);
  } else {
    formula_stopped = true;
  }
  bool took_grad = formula_took_grad;
  formula_took_grad = outer_took_grad;
  gs__formula_temps_dispose_to(temps);
  bool ok = !formula_stopped;
  formula_stopped = false;
  if (ok)
    check_formula_grads(n, grads);
  ok = ok && (!n->hooks || gs__node_post_hooks_run(n, grads, grad));
  if (!took_grad) /* else it is a leaf's .grad now */
    gs_dispose(grad);
  if (!ok)
    for (int i = 0; i < n->n_inputs; i++)
      if (grads[i].id) {
        gs_dispose(grads[i]);
        grads[i] = GS_NO_TENSOR;
      }

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
    release_saved(n);
    if (n->n_saved > 0) {
      if (gs__trace_on())
        gs__trace_node(GS_TRACE_NODE_FREE_SAVED, n->id);
      else
        gs__trace_skip(1);
    }
  }
  return ok;
}

/* What one pass is asked to do: gs_backward_with and gs_backward_many accumulate into
 * leaves; gs_autograd_grad captures the gradient arriving at each of capture[] instead and
 * runs only the nodes that lead to one. */
typedef struct pass {
  const gs_tensor *roots, *seeds; /* seeds may be NULL, an entry GS_NO_TENSOR: ones */
  int n_roots;
  bool retain_graph;
  bool create_graph;        /* record the formulas' graph (double backward) */
  gs__node *const *capture; /* per input of gs_autograd_grad; NULL: an ordinary backward */
  int n_capture;
  gs_tensor *captured;     /* per input: the gradient that arrived (caller-owned) */
  const gs_tensor *inputs; /* the tensors captured, for messages */
  bool allow_unused;
} pass;

/* In a capturing pass: an input no gradient reaches is an error unless allow_unused; false
 * after reporting. after: the check once the pass ran (else: before, on reachability). */
static bool check_used(const pass *p, const run *r, bool after, const char *fn) {
  for (int c = 0; c < p->n_capture && !p->allow_unused; c++) {
    if (after ? p->captured[c].id != 0 : run_lookup(r, p->capture[c]) >= 0)
      continue;
    gs__error(GS_ERR_STATE, fn,
              "input %d (tensor #%u.%u) %s: it has no gradient; pass allow_unused to get none "
              "for it",
              c, (unsigned)(p->inputs[c].id & 0xffffffffu), (unsigned)(p->inputs[c].id >> 32),
              after ? "received no gradient from the outputs"
                    : "was not used in the graph of the outputs");
    return false;
  }
  return true;
}

/* Whether node j of the run will run its formula in this pass. */
static bool node_runs(const pass *p, const run *r, const bool *leads, size_t j) {
  return !p->capture || (leads[j] && r->nodes[j].node->kind != gs__kinds.accumulate_grad);
}

/* With create_graph, before anything runs: every node that will run must have a
 * differentiable formula, and must not read a saved copy whose history the engine does not
 * keep (the value an in-place op overwrote); false after reporting. */
static bool check_differentiable(const pass *p, const run *r, const bool *leads, const char *fn) {
  for (size_t j = 0; p->create_graph && j < r->count; j++) {
    const gs__node *n = r->nodes[j].node;
    if (!node_runs(p, r, leads, j))
      continue;
    /* A write through a view (CopySlices) runs the formula of the op it wraps. */
    const gs__node_kind *kind = n->inner && n->kind->differentiable ? n->inner->kind : n->kind;
    if (!kind->differentiable) {
      gs__error(GS_ERR_STATE, fn,
                "double backward through %s is not supported yet: %s #%llu is in the graph%s, "
                "and its backward formula calls kernels that record no graph, so its gradient "
                "cannot be differentiated again (create_graph)",
                kind->name, kind->name, (unsigned long long)n->id,
                kind != n->kind ? " (written through a view: CopySlices)" : "");
      return false;
    }
    for (int i = 0; i < n->n_saved; i++) {
      const gs__saved_tensor *s = &n->saved[i];
      if (s->input != GS__SAVED_OTHER || !gs__saved_present(s) ||
          !gs_dtype_is_floating(s->value.dtype))
        continue;
      gs__error(GS_ERR_STATE, fn,
                "double backward through %s of an in-place op is not supported yet: %s #%llu "
                "saved the value its in-place write overwrote, whose history is not kept "
                "(create_graph); use the out-of-place op",
                n->kind->name, n->kind->name, (unsigned long long)n->id);
      return false;
    }
  }
  return true;
}

/* Checks root i and its seed before anything runs; false after reporting. */
static bool check_root(const pass *p, int i, const char *fn) {
  gs_tensor root_h = p->roots[i], grad_h = p->seeds ? p->seeds[i] : GS_NO_TENSOR;
  gs__tensor *root = gs__lookup(root_h, fn);
  if (!root)
    return false;
  char shape[GS__SHAPE_STR], gshape[GS__SHAPE_STR];
  gs__refresh_view(root);
  if (!root->ag.requires_grad) {
    gs__error(GS_ERR_STATE, fn,
              "tensor #%u.%u %s does not require grad and has no grad_fn: nothing to "
              "differentiate (did an input call gs_set_requires_grad?)",
              (unsigned)(root_h.id & 0xffffffffu), (unsigned)(root_h.id >> 32),
              gs__shape_str(shape, root->shape, root->ndim));
    return false;
  }
  if (grad_h.id) {
    gs__tensor *seed = gs__lookup(grad_h, fn);
    if (!seed)
      return false;
    if (seed->ndim != root->ndim ||
        memcmp(seed->shape, root->shape, (size_t)root->ndim * sizeof(int64_t)) != 0) {
      gs__error(GS_ERR_SHAPE, fn, "expected a gradient of the output's shape %s, got %s",
                gs__shape_str(shape, root->shape, root->ndim),
                gs__shape_str(gshape, seed->shape, seed->ndim));
      return false;
    }
  } else if (root->numel != 1) {
    gs__error(GS_ERR_SHAPE, fn,
              "a gradient can be implied only for a one-element output; got shape %s, so pass "
              "one to gs_backward_with",
              gs__shape_str(shape, root->shape, root->ndim));
    return false;
  }
  return true;
}

/* For gs_autograd_grad: whether each node leads (through its inputs) to a captured node, so
 * its formula must run; from a topological order of the run (Kahn's, without running). */
static bool *leads_to_capture(run *r, const pass *p) {
  bool *leads = calloc(r->count, sizeof *leads);
  int64_t *order = malloc(r->count * sizeof *order);
  int64_t *pending = malloc(r->count * sizeof *pending);
  if (!leads || !order || !pending) {
    free(order);
    free(pending);
    free(leads);
    return NULL;
  }
  size_t head = 0, tail = 0;
  for (size_t j = 0; j < r->count; j++)
    if ((pending[j] = r->nodes[j].pending) == 0)
      order[tail++] = (int64_t)j;
  while (head < tail) {
    gs__node *n = r->nodes[order[head++]].node;
    for (int i = 0; i < n->n_inputs; i++) {
      bool added;
      int64_t k = n->next[i] ? run_find(r, n->next[i], &added) : -1;
      if (k >= 0 && --pending[k] == 0)
        order[tail++] = k;
    }
  }
  for (size_t o = tail; o-- > 0;) {
    gs__node *n = r->nodes[order[o]].node;
    for (int i = 0; i < n->n_inputs && !leads[order[o]]; i++) {
      bool added;
      int64_t k = n->next[i] ? run_find(r, n->next[i], &added) : -1;
      if (k < 0)
        continue;
      leads[order[o]] = leads[k];
      for (int c = 0; c < p->n_capture; c++)
        leads[order[o]] |= p->capture[c] == n->next[i];
    }
  }
  free(order);
  free(pending);
  return leads;
}

/* In a capturing pass: hands the gradient that arrived at n to every input captured there, as
 * tensors the caller owns. The first capture takes the pass's gradient itself, as PyTorch
 * returns it (under create_graph its grad_fn is then the formula's last node, MulBackward0, not
 * a clone's); the pass keeps a clone only if n's formula still has to run on it, and further
 * captures of the same node (an input named twice) get clones. */
static void capture_grad(const pass *p, const gs__node *n, gs_tensor *grad, bool runs) {
  bool handed = false;
  gs__ownership_resume(); /* the caller's, as if gs_autograd_grad made them */
  for (int c = 0; c < p->n_capture; c++) {
    if (p->capture[c] != n || p->captured[c].id)
      continue;
    if (handed) {
      p->captured[c] = gs_clone(*grad);
    } else {
      p->captured[c] = *grad;
      gs__own_adopt(*grad);
      handed = true;
    }
  }
  gs__ownership_suspend_for(GS__REASON_BACKWARD_TEMPORARY);
  if (handed)
    *grad = runs ? gs_clone(*grad) : GS_NO_TENSOR;
}

/* One backward pass; false after reporting (nothing ran if the graph failed its checks). A
 * pass started while another runs on this thread (from a custom function's backward or a
 * hook: reentrant backward) runs to completion inside it, with its own bookkeeping; the outer
 * pass's thread state (grad mode, no_grad depth, create_graph, ownership, the formula that
 * stopped) is saved here and given back. */
static bool run_pass(const pass *p, const char *fn) {
  for (int i = 0; i < p->n_roots; i++)
    if (!check_root(p, i, fn))
      return false;

  bool outermost = frames == NULL; /* else this thread holds the lock already */
  if (outermost)
    pthread_mutex_lock(&backward_lock);
  pass_frame frame = {.outer = frames};
  frames = &frame;
  uint64_t seen = ++passes_started;
  bool was_stopped = formula_stopped;
  gs__trace_call call = gs__trace_call_enter();
  bool was_enabled = gs_set_grad_enabled(p->create_graph);
  int no_grad_depth = p->create_graph ? gs__no_grad_suspend() : 0;
  bool was_creating = gs__formula_set_creates_graph(p->create_graph);
  /* backward's temporaries are the engine's, not the user's scope's */
  gs__ownership_suspend_for(GS__REASON_BACKWARD_TEMPORARY);
  gs_tensor first_root = p->roots[0];
  /* A leaf root accumulates into itself through its AccumulateGrad node. */
  gs__node *first_start = gs__grad_edge(gs__lookup(first_root, fn));
  if (gs__trace_on())
    gs__trace_backward(GS_TRACE_BACKWARD_BEGIN, first_root.id, first_start ? first_start->id : 0);
  else
    gs__trace_skip(1);
  if (outermost) /* the layers above see one pass, nested ones being part of it */
    gs__backward_hooks_call(GS__HOOK_BEGIN, first_root, GS_NO_TENSOR);
  run r = {0};
  bool ok = true, collected = true;
  for (int i = 0; i < p->n_roots && collected; i++) {
    gs__node *start = gs__grad_edge(gs__lookup(p->roots[i], fn));
    collected = start && collect(&r, start);
  }
  ok = collected && (!p->capture || check_used(p, &r, false, fn));
  bool *leads = ok && p->capture ? leads_to_capture(&r, p) : NULL;
  if (ok && p->capture && !leads) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not allocate the backward bookkeeping");
    ok = false;
  }
  ok = ok && check_differentiable(p, &r, leads, fn);
  int64_t *ready = ok ? malloc(r.count * sizeof *ready) : NULL;
  if (ok && !ready)
    abort();
  size_t n_ready = 0;
  for (int i = 0; ok && i < p->n_roots; i++) {
    const gs__tensor *root = gs__lookup(p->roots[i], fn);
    gs_tensor seed = p->seeds ? p->seeds[i] : GS_NO_TENSOR;
    gs_tensor first =
        seed.id ? gs_to_dtype(seed, root->dtype) : gs_ones(root->dtype, root->shape, root->ndim);
    bool added;
    add_grad(&r, run_find(&r, gs__grad_edge((gs__tensor *)root), &added), first);
  }
  for (size_t j = 0; ok && j < r.count; j++)
    if (r.nodes[j].pending == 0)
      ready[n_ready++] = (int64_t)j;
  /* Kahn: run a node once every edge into it has delivered its gradient. */
  while (ok && n_ready > 0) {
    int64_t j = ready[--n_ready];
    gs__node *n = r.nodes[j].node;
    gs__trace_call_retime(); /* each node's events at the node's own time */
    bool runs = node_runs(p, &r, leads, (size_t)j);
    /* A nested pass started by an earlier node may have freed this one's saved tensors. */
    if (passes_started != seen && runs && r.nodes[j].grad.id && !check_node(n)) {
      ok = false;
      break;
    }
    frame.running = n;
    if (r.nodes[j].grad.id) {
      gs__accumulate_retained(n, r.nodes[j].grad); /* before hooks, as torch 1.13 when
                                                      retain_grad came first */
      if (n->hooks && !gs__grad_hooks_run(n, &r.nodes[j].grad)) {
        ok = false;
        break;
      }
      if (p->capture)
        capture_grad(p, n, &r.nodes[j].grad, runs);
      if (runs) {
        if (!run_node_formula(&r, j, p->retain_graph)) {
          ok = false;
          break;
        }
      } else if (r.nodes[j].grad.id) {
        gs_dispose(r.nodes[j].grad);
        r.nodes[j].grad = GS_NO_TENSOR;
      }
    } else if (runs && !p->retain_graph && n->n_saved > 0) { /* no gradient reached it */
      release_saved(n);
    }
    frame.running = NULL;
    /* Leaves' accumulators that became ready go on top, so they run next, as PyTorch's engine
     * runs AccumulateGrad first: a leaf's gradient is final as soon as every path into it has
     * arrived (DDP starts reducing its bucket then, not after the rest of backward). They have
     * no inputs, so the other nodes still run in the same order. */
    for (int leaves = 0; leaves < 2; leaves++)
      for (int i = 0; i < n->n_inputs; i++) {
        if (!n->next[i] || (n->next[i]->leaf != 0) != (leaves == 1))
          continue;
        bool added;
        int64_t k = run_find(&r, n->next[i], &added);
        if (--r.nodes[k].pending == 0)
          ready[n_ready++] = k;
      }
  }
  free(ready);
  free(leads);
  run_free(&r);
  if (ok && p->capture)
    ok = check_used(p, &r, true, fn);
  if (gs__trace_on())
    gs__trace_backward(GS_TRACE_BACKWARD_END, first_root.id, 0);
  else
    gs__trace_skip(1);
  gs__ownership_resume();
  gs__formula_set_creates_graph(was_creating);
  if (p->create_graph)
    gs__no_grad_resume(no_grad_depth);
  gs_set_grad_enabled(was_enabled);
  gs__trace_call_leave(call);
  formula_stopped = was_stopped;
  frames = frame.outer;
  if (!outermost)
    return ok;
  pthread_mutex_unlock(&backward_lock);
  /* After the lock: an end hook may wait for other processes or run a backward itself. */
  gs__backward_hooks_call(GS__HOOK_END, first_root, GS_NO_TENSOR);
  return ok;
}

void gs_backward_with(gs_tensor root_h, gs_tensor grad_h, bool retain_graph) {
  run_pass(&(pass){.roots = &root_h, .seeds = &grad_h, .n_roots = 1, .retain_graph = retain_graph},
           "backward");
}

void gs_backward_many(const gs_tensor *outputs, const gs_tensor *grads, int n, bool retain_graph) {
  gs_backward_many_with(outputs, grads, n, &(gs_backward_options){.retain_graph = retain_graph});
}

void gs_backward_many_with(const gs_tensor *outputs, const gs_tensor *grads, int n,
                           const gs_backward_options *options) {
  if (!outputs || n < 1) {
    gs__error(GS_ERR_ARGUMENT, "backward_many", "expected at least one output, got %s",
              outputs ? "none" : "NULL");
    return;
  }
  gs_backward_options o = options ? *options : (gs_backward_options){0};
  run_pass(&(pass){.roots = outputs,
                   .seeds = grads,
                   .n_roots = n,
                   .retain_graph = o.retain_graph,
                   .create_graph = o.create_graph},
           "backward");
}

int gs_autograd_grad(const gs_tensor *outputs, const gs_tensor *grad_outputs, int n_outputs,
                     const gs_tensor *inputs, int n_inputs, bool retain_graph, bool allow_unused,
                     gs_tensor *grads_out) {
  return gs_autograd_grad_with(outputs, grad_outputs, n_outputs, inputs, n_inputs,
                               &(gs_backward_options){.retain_graph = retain_graph}, allow_unused,
                               grads_out);
}

int gs_autograd_grad_with(const gs_tensor *outputs, const gs_tensor *grad_outputs, int n_outputs,
                          const gs_tensor *inputs, int n_inputs, const gs_backward_options *options,
                          bool allow_unused, gs_tensor *grads_out) {
  const char *fn = "autograd_grad";
  gs_backward_options o = options ? *options : (gs_backward_options){0};
  if (!outputs || n_outputs < 1 || !inputs || n_inputs < 1 || !grads_out) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected at least one output, one input and room for the gradients, got %d "
              "output%s, %d input%s%s",
              outputs ? n_outputs : 0, n_outputs == 1 ? "" : "s", inputs ? n_inputs : 0,
              n_inputs == 1 ? "" : "s", grads_out ? "" : " and grads_out NULL");
    return -1;
  }
  gs__node **capture = malloc((size_t)n_inputs * sizeof *capture);
  if (!capture) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not allocate the backward bookkeeping");
    return -1;
  }
  for (int i = 0; i < n_inputs; i++)
    grads_out[i] = GS_NO_TENSOR;
  bool ok = true;
  for (int i = 0; i < n_inputs && ok; i++) {
    gs__tensor *t = gs__lookup(inputs[i], fn);
    ok = t != NULL;
    if (t)
      gs__refresh_view(t);
    if (t && !t->ag.requires_grad) {
      gs__error(GS_ERR_STATE, fn,
                "input %d (tensor #%u.%u) does not require grad: there is no gradient to "
                "take with respect to it",
                i, (unsigned)(inputs[i].id & 0xffffffffu), (unsigned)(inputs[i].id >> 32));
      ok = false;
    }
    /* Its gradient is the one arriving where it flows: its grad_fn, or its AccumulateGrad. */
    if (ok && !(capture[i] = gs__grad_edge(t)))
      ok = false;
  }
  ok = ok && run_pass(&(pass){.roots = outputs,
                              .seeds = grad_outputs,
                              .n_roots = n_outputs,
                              .retain_graph = o.retain_graph,
                              .create_graph = o.create_graph,
                              .capture = capture,
                              .n_capture = n_inputs,
                              .captured = grads_out,
                              .inputs = inputs,
                              .allow_unused = allow_unused},
                      fn);
  free(capture);
  if (ok)
    return 0;
  for (int i = 0; i < n_inputs; i++) {
    if (grads_out[i].id)
      gs_dispose(grads_out[i]);
    grads_out[i] = GS_NO_TENSOR;
  }
  return -1;
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

bool gs_retains_grad(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "retains_grad");
  if (t)
    gs__refresh_view(t);
  return t && t->ag.retains_grad && t->ag.grad_fn; /* a leaf keeps its grad anyway */
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

bool gs_autograd_node_kind_twice(const char *name) {
  for (const gs__node_kind *k = __start_gs_node_kinds; name && k < __stop_gs_node_kinds; k++)
    if (strcmp(k->name, name) == 0)
      return k->differentiable;
  return false;
}
