/* formula.c: what backward formulas use beside the ops: handles to saved tensors, temporaries
 * disposed when the formula returns, and the shaping of a gradient to its input (summing
 * broadcast dims away, casting back), and a tensor reversed along a dim. Here, not in
 * engine/autograd, because gs__reduce_grad is written with ops (sum_to, to_dtype).
 *
 * Under create_graph (double backward) the handles given to formulas carry autograd history:
 * a saved input's handle flows back to that input's history, a saved output's to the node
 * itself, and a gradient passed through keeps the gradient's own history. */
#include <stdlib.h>
#include <string.h>

#include "ops-impl.h"

/* Handles a formula obtained from gs__saved or gs__formula_temp, disposed when it returns. */
static GS__THREAD_LOCAL gs_tensor *formula_temps;
static GS__THREAD_LOCAL size_t formula_temp_count, formula_temp_capacity;

size_t gs__formula_temps_mark(void) { return formula_temp_count; }

/* In the order they were registered, as always: the slots freed, and so the ids handed out
 * next, stay as they were. */
void gs__formula_temps_dispose_to(size_t mark) {
  for (size_t i = mark; i < formula_temp_count; i++)
    gs_dispose(formula_temps[i]);
  formula_temp_count = mark;
}

gs_tensor gs__formula_temp(gs_tensor t) {
  if (!t.id)
    return t;
  if (formula_temp_count == formula_temp_capacity) {
    size_t cap = formula_temp_capacity ? formula_temp_capacity * 2 : 16;
    gs_tensor *temps = realloc(formula_temps, cap * sizeof *temps);
    if (!temps)
      abort(); /* a handful of handles: failing here means the process is already lost */
    formula_temps = temps;
    formula_temp_capacity = cap;
  }
  formula_temps[formula_temp_count++] = t;
  return t;
}

/* True on this thread while a create_graph pass runs formulas. */
static GS__THREAD_LOCAL bool creating_graph;

bool gs__formula_creates_graph(void) { return creating_graph; }

bool gs__formula_set_creates_graph(bool on) {
  bool was = creating_graph;
  creating_graph = on;
  return was;
}

/* Makes handle h a non-leaf whose gradient flows to edge (a node, or NULL for none): h is a
 * new handle over a tensor whose history is edge's. */
static void give_history(gs_tensor h, gs__node *edge) {
  gs__tensor *t = edge ? gs__lookup(h, "backward") : NULL;
  if (!t)
    return;
  gs__node_retain(edge);
  t->ag.grad_fn = edge;
  t->ag.requires_grad = true;
}

void gs__formula_give_history(gs_tensor h, gs__node *edge) { give_history(h, edge); }

gs_tensor gs__pass_grad_through(gs_tensor g) {
  gs__tensor *t = gs__lookup(g, "backward");
  if (!t)
    return g;
  gs_tensor v = gs__make_view(t, t->shape, t->strides, t->ndim, t->offset, "backward");
  if (creating_graph && v.id)
    give_history(v, gs__grad_edge(gs__lookup(g, "backward")));
  return v;
}

gs_tensor gs__saved(gs__node *n, int i) {
  gs__tensor copy = n->saved[i].value;
  /* A new handle over the saved tensor's own storage (its bytes and version counter): a view
   * of the tensor it was saved from, whatever that tensor's own origin was (a clone's saved
   * copy does not share bytes copy-on-write with the clone's source). */
  copy.origin = GS__ORIGIN_VIEW;
  copy.source = n->saved[i].tensor;
  /* Under create_graph its history is given below: not a live view of a base, whose history
   * a later write through a view has moved on (the value an in-place op overwrote). */
  if (creating_graph)
    copy.view_base = 0;
  gs__storage_retain(copy.storage);
  gs_tensor h = gs__register(&copy, n->kind->name);
  if (creating_graph && h.id) {
    /* Connected to the history of what it was saved from (an input's, as recorded with the
     * node; the node's own for its output), so the gradient of a gradient reaches it. */
    int input = n->saved[i].input;
    give_history(h, input >= 0 ? n->next[input] : input == GS__SAVED_RESULT ? n : NULL);
  }
  return gs__formula_temp(h);
}

gs_tensor gs__reduce_grad(gs__node *n, int i, gs_tensor g) {
  const gs__input_meta *m = &n->inputs[i];
  gs__tensor *t = gs__lookup(g, n->kind->name);
  if (!t)
    return GS_NO_TENSOR;
  bool same_shape = t->ndim == m->ndim &&
                    memcmp(t->shape, m->shape, (size_t)m->ndim * sizeof(int64_t)) == 0;
  if (!same_shape) {
    gs_tensor summed = gs_sum_to(g, m->shape, m->ndim);
    gs_dispose(g);
    g = summed;
    t = gs__lookup(g, n->kind->name);
  }
  if (t && t->dtype != m->dtype) {
    gs_tensor cast = gs_to_dtype(g, m->dtype);
    gs_dispose(g);
    g = cast;
  }
  return g;
}

gs_tensor gs__reduce_grad_through(gs__node *n, int i, gs_tensor g) {
  const gs__input_meta *m = &n->inputs[i];
  gs__tensor *t = creating_graph ? NULL : gs__lookup(g, n->kind->name);
  /* The sum reads g as it would read the view of it (the same bytes, strides and dtype). */
  if (t && (t->ndim != m->ndim || memcmp(t->shape, m->shape, (size_t)m->ndim * sizeof(int64_t))))
    return gs__reduce_grad(n, i, gs_sum_to(g, m->shape, m->ndim));
  return gs__reduce_grad(n, i, gs__pass_grad_through(g));
}

gs_tensor gs__formula_flip(gs_tensor x, int d) {
  int64_t len = gs_ndim(x) ? gs_size(x, d) : 1;
  int64_t *order = malloc(sizeof(int64_t) * (size_t)(len > 0 ? len : 1));
  if (!order) {
    gs__error(GS_ERR_OUT_OF_MEMORY, "flip", "out of memory for %lld positions", (long long)len);
    return GS_NO_TENSOR;
  }
  for (int64_t k = 0; k < len; k++)
    order[k] = len - 1 - k;
  gs_tensor index = gs__formula_temp(gs_from_data(GS_I64, &len, 1, order));
  free(order);
  return gs__formula_temp(gs_index_select(x, d, index));
}
