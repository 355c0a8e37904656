/* graph.c: turning the replay's live nodes into items and edges (see graph.h). */
#include "graph.h"

#include "event-fields.h"

static void item_clear(gpointer p) {
  gs_graph_item *item = p;
  g_free(item->key);
  g_free(item->label);
}

void gs_graph_free(gs_graph *g) {
  if (!g)
    return;
  g_array_unref(g->items);
  g_array_unref(g->edges);
  g_free(g);
}

static gint by_id(gconstpointer a, gconstpointer b) {
  const gs_replay_node *x = *(gs_replay_node *const *)a, *y = *(gs_replay_node *const *)b;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* "name" or "#3.1", then the shape when the tensor is still alive: what a reader of the graph
 * needs to recognise a tensor from their code. */
static char *tensor_label(const gs_replay *r, guint64 tensor, const char *prefix) {
  GString *s = g_string_new(prefix);
  const char *name = gs_replay_tensor_name(r, tensor);
  char handle[32];
  g_string_append(s, name && *name ? name : gs_format_handle(tensor, handle, sizeof handle));
  const gs_replay_object *o = g_hash_table_lookup(r->objects, &tensor);
  if (o && !o->composite) {
    g_string_append(s, "\n(");
    for (int i = 0; i < o->ndim; i++)
      g_string_append_printf(s, "%s%" G_GINT64_FORMAT, i ? ", " : "", o->shape[i]);
    g_string_append(s, ")");
  }
  return g_string_free(s, FALSE);
}

static guint add_item(gs_graph *g, GHashTable *index, gs_graph_item_kind kind, guint64 id,
                      guint64 tensor, char *key, char *label) {
  gpointer found;
  if (g_hash_table_lookup_extended(index, key, NULL, &found)) {
    g_free(key);
    g_free(label);
    return GPOINTER_TO_UINT(found);
  }
  gs_graph_item item = {kind, id, tensor, key, label};
  g_array_append_val(g->items, item);
  guint at = g->items->len - 1;
  g_hash_table_insert(index, key, GUINT_TO_POINTER(at));
  return at;
}

static void add_edge(gs_graph *g, guint from, guint to, gboolean undirected) {
  gs_graph_edge edge = {from, to, undirected};
  g_array_append_val(g->edges, edge);
}

gs_graph *gs_graph_build(const gs_replay *r) {
  gs_graph *g = g_new0(gs_graph, 1);
  g->items = g_array_new(FALSE, TRUE, sizeof(gs_graph_item));
  g_array_set_clear_func(g->items, item_clear);
  g->edges = g_array_new(FALSE, FALSE, sizeof(gs_graph_edge));

  g_autoptr(GPtrArray) nodes = g_ptr_array_new();
  g_autoptr(GHashTable) consumed = g_hash_table_new(gs_id_hash, gs_id_equal);
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, r->nodes);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    gs_replay_node *n = value;
    g_ptr_array_add(nodes, n);
    for (guint i = 0; i < n->n_inputs; i++)
      if (n->inputs[i])
        g_hash_table_add(consumed, &n->inputs[i]);
  }
  g_ptr_array_sort(nodes, by_id);

  /* Keys are owned by the items; the index only borrows them. */
  g_autoptr(GHashTable) index = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < nodes->len; i++) {
    const gs_replay_node *n = nodes->pdata[i];
    gboolean leaf = g_strcmp0(n->kind, "AccumulateGrad") == 0;
    add_item(g, index, leaf ? GS_GRAPH_LEAF : GS_GRAPH_OP, n->id, leaf ? n->tensor : 0,
             g_strdup_printf("n%" G_GUINT64_FORMAT, n->id),
             leaf ? tensor_label(r, n->tensor, "") : g_strdup(*n->kind ? n->kind : "node"));
  }
  for (guint i = 0; i < nodes->len; i++) {
    const gs_replay_node *n = nodes->pdata[i];
    char key[32];
    g_snprintf(key, sizeof key, "n%" G_GUINT64_FORMAT, n->id);
    guint self = GPOINTER_TO_UINT(g_hash_table_lookup(index, key));
    for (guint k = 0; k < n->n_inputs; k++) {
      g_snprintf(key, sizeof key, "n%" G_GUINT64_FORMAT, n->inputs[k]);
      gpointer from;
      /* An input node released before now is not drawn, nor is its edge. */
      if (n->inputs[k] && g_hash_table_lookup_extended(index, key, NULL, &from))
        add_edge(g, GPOINTER_TO_UINT(from), self, FALSE);
    }
    if (!n->saved_freed)
      for (guint k = 0; k < n->n_saved; k++) {
        if (!n->saved[k])
          continue;
        guint saved = add_item(g, index, GS_GRAPH_SAVED, n->saved[k], n->saved[k],
                               g_strdup_printf("s%" G_GUINT64_FORMAT, n->saved[k]),
                               tensor_label(r, n->saved[k], "saved "));
        add_edge(g, saved, self, TRUE);
      }
    gboolean root = !g_hash_table_contains(consumed, &n->id);
    if (root && n->tensor && g_strcmp0(n->kind, "AccumulateGrad") != 0) {
      guint out = add_item(g, index, GS_GRAPH_OUTPUT, n->tensor, n->tensor,
                           g_strdup_printf("t%" G_GUINT64_FORMAT, n->tensor),
                           tensor_label(r, n->tensor, ""));
      add_edge(g, self, out, FALSE);
    }
  }
  return g;
}
