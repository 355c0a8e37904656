/* replay-graph.c: the autograd graph's nodes while they live: their inputs, and the tensors
 * they save for backward, which keep those tensors (and the storages they viewed when saved)
 * counted as needed until backward frees them or the node is released. */
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

/* A live node's saved tensors keep them (and their storages) alive for backward. */
static void node_saved_refs(gs_replay *r, gs_replay_node *n, int delta) {
  for (guint i = 0; i < n->n_saved; i++) {
    gs_replay_object *o = gs_replay_object_get(r, n->saved[i]);
    if (o && (delta > 0 || o->saved_refs > 0))
      o->saved_refs += delta;
    replay_storage *st = n->saved_storages[i] ? replay_storage_get(r, n->saved_storages[i]) : NULL;
    if (st && (delta > 0 || st->saved_refs > 0))
      st->saved_refs += delta;
  }
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
    gs_replay_object *o = gs_replay_object_get(r, e->saved[i]);
    n->saved_storages[i] = o ? o->storage : 0;
  }
  gs_replay_node *old = gs_replay_node_get(r, n->id);
  if (old && !old->saved_freed)
    node_saved_refs(r, old, -1);
  node_put(r, n);
  node_saved_refs(r, n, +1);
}

void replay_on_node_free_saved(gs_replay *r, const gs_trace_event *e) {
  gs_replay_node *n = gs_replay_node_get(r, e->node);
  if (n && !n->saved_freed) {
    n->saved_freed = TRUE;
    node_saved_refs(r, n, -1);
  }
}

void replay_on_node_release(gs_replay *r, const gs_trace_event *e) {
  gs_replay_node *n = gs_replay_node_get(r, e->node);
  if (n && !n->saved_freed)
    node_saved_refs(r, n, -1);
  gs_id_table_remove(r->node_index, e->node);
  g_hash_table_remove(r->nodes, &e->node);
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
