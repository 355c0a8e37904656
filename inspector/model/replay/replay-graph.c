/* replay-graph.c: the autograd graph's nodes while they live: their inputs, whether backward
 * can still reach them (runnable, replay.h), and the tensors they save for backward, which
 * keep those tensors (and the storages they viewed when saved) counted as needed while a
 * runnable node holds them, until backward frees them or the node is released.
 *
 * Reachability is kept by counting holders, as the engine counts node references, but
 * without the one loop the engine has: a node that saved its own output is held by that
 * output and holds it back (a leaked softmax result keeps its SoftmaxBackward alive). Here
 * that output does not hold it, so when nothing else leads to the node its saved bytes are
 * counted as whatever else holds them. The graph is otherwise acyclic (inputs are older
 * nodes), so counting is exact. */
#include "replay-private.h"

void replay_node_free(gpointer p) {
  gs_replay_node *n = p;
  g_free(n->inputs);
  g_free(n->saved);
  g_free(n->saved_storages);
  g_free(n);
}

/* Nodes go in and out of their table and its index together. */
static void node_put(gs_replay *r, gs_replay_node *n) {
  g_hash_table_replace(r->nodes, &n->id, n);
  gs_id_table_replace(r->node_index, n->id, n);
}

/* A runnable node's saved tensors keep them (and their storages) needed for backward. */
static void node_saved_refs(gs_replay *r, gs_replay_node *n, int delta) {
  for (guint i = 0; i < n->n_saved; i++) {
    gs_replay_object *o = replay_object_w(r, n->saved[i]);
    if (o && (delta > 0 || o->saved_refs > 0)) {
      o->saved_refs += delta;
      replay_recounted(r->recounted_objects, o->id);
    }
    replay_storage *st = n->saved_storages[i] ? replay_storage_w(r, n->saved_storages[i]) : NULL;
    if (st && (delta > 0 || st->saved_refs > 0)) {
      st->saved_refs += delta;
      replay_recounted(r->recounted_storages, st->id);
    }
  }
}

/* A node became runnable (delta +1) or stopped being runnable (-1): its saved tensors count
 * or stop counting, and its inputs gain or lose a holder, which may pass the change on up the
 * graph (a whole step's graph at once when its loss goes): an explicit stack, as the engine's
 * release walks it, so a long chain cannot overflow the C stack. A node's flag flips when it
 * is pushed, so a node that is an input twice (x * x) is passed on once. */
static void node_set_runnable(gs_replay *r, gs_replay_node *n, int delta) {
  GPtrArray *todo = NULL;
  n->runnable = delta > 0;
  for (;;) {
    if (!n->saved_freed)
      node_saved_refs(r, n, delta);
    for (guint i = 0; i < n->n_inputs; i++) {
      gs_replay_node *in = n->inputs[i] ? gs_replay_node_get(r, n->inputs[i]) : NULL;
      if (!in || (delta < 0 && in->holders == 0))
        continue;
      in->holders += delta;
      if ((in->holders > 0) != in->runnable) {
        in->runnable = delta > 0;
        if (!todo)
          todo = g_ptr_array_new();
        g_ptr_array_add(todo, in);
      }
    }
    if (!todo || todo->len == 0)
      break;
    n = g_ptr_array_steal_index_fast(todo, todo->len - 1);
  }
  if (todo)
    g_ptr_array_free(todo, TRUE);
}

static void node_hold(gs_replay *r, gs_replay_node *n) {
  if (++n->holders == 1 && !n->runnable)
    node_set_runnable(r, n, +1);
}

static void node_unhold(gs_replay *r, gs_replay_node *n) {
  if (n->holders == 0)
    return;
  if (--n->holders == 0 && n->runnable)
    node_set_runnable(r, n, -1);
}

/* Its output lets go of it (disposed, or given a newer grad_fn by an in-place write). */
static void output_lets_go(gs_replay *r, gs_replay_node *n) {
  if (!n || !n->output_holds)
    return;
  n->output_holds = FALSE;
  node_unhold(r, n);
}

/* A node that goes (released, or recorded again under its id) first stops being runnable:
 * the nodes it held lose it as a holder. */
static void node_retire(gs_replay *r, gs_replay_node *n) {
  n->output_holds = FALSE;
  n->holders = 0;
  if (n->runnable)
    node_set_runnable(r, n, -1);
}

static gboolean node_saved(const gs_replay_node *n, guint64 tensor) {
  for (guint i = 0; i < n->n_saved; i++)
    if (n->saved[i] == tensor)
      return TRUE;
  return FALSE;
}

void replay_on_node_create(gs_replay *r, const gs_trace_event *e, const replay_strings *st) {
  gs_replay_node *n = g_new0(gs_replay_node, 1);
  n->id = e->node;
  n->kind = replay_intern_id(r, st, e->name);
  n->tensor = e->tensor;
  n->create_seq = e->seq;
  n->n_inputs = e->n_inputs;
  n->n_saved = e->n_saved;
  n->inputs = g_memdup2(e->inputs, sizeof(guint64) * e->n_inputs);
  n->saved = g_memdup2(e->saved, sizeof(guint64) * e->n_saved);
  n->saved_storages = g_new0(guint64, e->n_saved);
  for (guint i = 0; i < e->n_saved; i++) {
    gs_replay_object *o = replay_object_w(r, e->saved[i]);
    n->saved_storages[i] = o ? o->storage : 0;
  }
  gs_replay_node *old = gs_replay_node_get(r, n->id);
  if (old) {
    replay_warn(r, e->seq, GS_REPLAY_WARN_NODE_TWICE, n->id);
    node_retire(r, old);
  }
  node_put(r, n);
  gs_replay_object *out = replay_object_w(r, e->tensor);
  if (!out)
    return;
  /* A tensor is made before its op attaches the node (its tensor_create says no): a tensor a
   * node makes, or a leaf it accumulates into, requires grad from now on. */
  out->requires_grad = TRUE;
  if (out->grad_fn != n->id)
    output_lets_go(r, gs_replay_node_get(r, out->grad_fn));
  out->grad_fn = n->id;
  if (!node_saved(n, out->id)) {
    n->output_holds = TRUE;
    node_hold(r, n);
  }
}

void replay_on_node_free_saved(gs_replay *r, const gs_trace_event *e) {
  gs_replay_node *n = gs_replay_node_get(r, e->node);
  if (n && !n->saved_freed) {
    n->saved_freed = TRUE;
    if (n->runnable)
      node_saved_refs(r, n, -1);
  }
}

void replay_on_node_release(gs_replay *r, const gs_trace_event *e) {
  gs_replay_node *n = gs_replay_node_get(r, e->node);
  if (n) {
    node_retire(r, n);
    /* An output still alive (a scope releases its graph before it disposes its tensors) no
     * longer has this grad_fn: no log that starts after this event could name it. */
    gs_replay_object *out = replay_object_w(r, n->tensor);
    if (out && out->grad_fn == n->id)
      out->grad_fn = 0;
  }
  gs_id_table_remove(r->node_index, e->node);
  g_hash_table_remove(r->nodes, &e->node);
}

void replay_nodes_on_dispose(gs_replay *r, const gs_replay_object *o) {
  if (o->grad_fn)
    output_lets_go(r, gs_replay_node_get(r, o->grad_fn));
}

/* The leaf's AccumulateGrad node follows the handle, as in engine/core/handles.c, and so do
 * the saved tensors that named the old handle. */
void replay_nodes_follow_move(gs_replay *r, guint64 from, guint64 to) {
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, r->nodes);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    gs_replay_node *n = value;
    if (n->tensor == from)
      n->tensor = to;
    for (guint i = 0; i < n->n_saved; i++)
      if (n->saved[i] == from)
        n->saved[i] = to;
  }
}

void replay_copy_nodes(gs_replay *r, const gs_replay *src) {
  GHashTableIter it;
  gpointer value;
  gs_id_table_reserve(r->node_index, g_hash_table_size(src->nodes));
  g_hash_table_iter_init(&it, src->nodes);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    const gs_replay_node *from = value;
    gs_replay_node *n = g_memdup2(from, sizeof *from);
    n->inputs = g_memdup2(from->inputs, sizeof(guint64) * from->n_inputs);
    n->saved = g_memdup2(from->saved, sizeof(guint64) * from->n_saved);
    n->saved_storages = g_memdup2(from->saved_storages, sizeof(guint64) * from->n_saved);
    node_put(r, n);
  }
}

/* A saved tensor's storage as a saved_pack says it: node_create names only the tensors, so
 * the model took each one's storage then; an in-place op that saved its input's values from
 * before the write keeps them on a storage of their own (copy-on-write), which the pack names.
 * The slot is the one already on that storage, else the first that saved the tensor. */
static void saved_storage_from_pack(gs_replay *r, gs_replay_node *n, const gs_trace_event *e) {
  guint slot = n->n_saved;
  for (guint i = 0; i < n->n_saved; i++) {
    if (n->saved[i] != e->tensor)
      continue;
    if (n->saved_storages[i] == e->storage)
      return;
    slot = MIN(slot, i);
  }
  if (slot == n->n_saved || !e->storage)
    return;
  if (n->runnable && !n->saved_freed) { /* its bytes are counted as saved on the other one */
    replay_storage *from =
        n->saved_storages[slot] ? replay_storage_w(r, n->saved_storages[slot]) : NULL;
    replay_storage *to = replay_storage_w(r, e->storage);
    if (from && from->saved_refs > 0) {
      from->saved_refs--;
      replay_recounted(r->recounted_storages, from->id);
    }
    if (to) {
      to->saved_refs++;
      replay_recounted(r->recounted_storages, to->id);
    }
  }
  n->saved_storages[slot] = e->storage;
}

void replay_on_saved_hook(gs_replay *r, const gs_trace_event *e) {
  gs_replay_node *n = gs_replay_node_get(r, e->node);
  if (!n)
    return;
  if (e->kind == GS_TRACE_SAVED_PACK) {
    n->n_packed++;
    saved_storage_from_pack(r, n, e);
  } else {
    n->n_unpacked++;
  }
}
