/* graph-source.c: graphs at model positions with incrementally tracked versions (see
 * graph-source.h). */
#include "graph-source.h"

#include <glib/gi18n-lib.h>

#include "graph-layout.h"

#include "escape.h"
#include "packed-steps.h"

#include "event-fields.h"
#include "tensor-values.h"

struct gs_graph_source {
  gs_trace_model *model;
  gs_graph_versions *versions;
  guint64 fed; /* events 0..fed-1 are in versions */
  gboolean has_values; /* a values event was seen: the log was recorded with GS_TRACE_VALUES */
};

gs_graph_source *gs_graph_source_new(gs_trace_model *model) {
  gs_graph_source *s = g_new0(gs_graph_source, 1);
  s->model = model;
  s->versions = gs_graph_versions_new();
  return s;
}

void gs_graph_source_free(gs_graph_source *s) {
  if (!s)
    return;
  gs_graph_versions_free(s->versions);
  g_free(s);
}

static void feed_versions(gs_graph_source *s, guint64 until) {
  if (until < s->fed) {
    gs_graph_versions_rewind(s->versions, until);
    s->fed = until;
  }
  for (guint64 i = s->fed; i < until; i++) {
    gs_trace_kind kind = gs_trace_model_kind_at(s->model, i);
    s->has_values |= kind == GS_TRACE_VALUES;
    if (!gs_graph_versions_wants(kind))
      continue;
    gs_trace_event e;
    if (gs_trace_model_event(s->model, i, &e))
      gs_graph_versions_apply(s->versions, i, &e, gs_trace_model_string(s->model, e.op));
  }
  s->fed = until;
}

/* When the item was made: its node's or its tensor's creation event, or G_MAXUINT64. */
static guint64 created_at(const gs_replay *state, const gs_graph_item *item) {
  if (item->kind == GS_GRAPH_OP || item->kind == GS_GRAPH_LEAF) {
    const gs_replay_node *n = g_hash_table_lookup(state->nodes, &item->id);
    return n ? n->create_seq : G_MAXUINT64;
  }
  const gs_replay_object *o = item->tensor ? gs_replay_object_find(state, item->tensor) : NULL;
  return o ? o->create_seq : G_MAXUINT64;
}

/* A tensor the replay no longer has (its handle was disposed while a node still saves it):
 * the index of its creation at or before index, from its life, with the event in *out;
 * G_MAXUINT64 if there is none. */
static guint64 find_creation(gs_graph_source *s, guint64 tensor, guint64 index,
                             gs_trace_event *out) {
  g_autoptr(gs_tensor_life) life = gs_trace_model_tensor_life(s->model, tensor);
  gs_tensor_life_cursor c;
  gs_tensor_life_cursor_init(&c, life, gs_tensor_life_count_upto(life, index));
  guint64 at;
  while (gs_tensor_life_cursor_prev(&c, &at)) {
    if (gs_trace_model_kind_at(s->model, at) == GS_TRACE_TENSOR_CREATE &&
        gs_trace_model_event(s->model, at, out) && out->tensor == tensor)
      return at;
  }
  return G_MAXUINT64;
}

/* Clusters by where things were computed: the scope open on the thread when the node or
 * tensor was made. (The replay only knows current owners, and a step's tensors are usually
 * disposed with its scope while its nodes live on until backward.) Leaves stay outside:
 * parameters belong to no step. A saved tensor whose handle is gone is found through its
 * creation, which also gives back its shape for the label. */
static const gs_replay_scope *model_scope_lookup(gpointer model, guint64 id) {
  return gs_trace_model_scope(model, id); /* ended scopes too: the model keeps them all */
}

static void scope_by_creation(gs_graph_source *s, const gs_replay *state, guint64 at,
                              gs_graph *g) {
  for (guint i = 0; i < g->items->len; i++) {
    gs_graph_item *item = &g_array_index(g->items, gs_graph_item, i);
    if (item->kind == GS_GRAPH_LEAF)
      continue;
    guint64 seq = created_at(state, item);
    guint64 index = seq == G_MAXUINT64 ? G_MAXUINT64 : gs_trace_model_find_seq(s->model, seq);
    gs_trace_event e;
    if (index == G_MAXUINT64 && item->tensor &&
        (index = find_creation(s, item->tensor, at, &e)) != G_MAXUINT64 &&
        item->kind == GS_GRAPH_SAVED) {
      g_autofree char *name = gs_text_clip(gs_replay_tensor_name(state, item->tensor),
                                           GS_GRAPH_MAX_NAME);
      char handle[32];
      g_free(item->label);
      item->label = gs_graph_saved_text(
          *name ? name : gs_format_handle(item->tensor, handle, sizeof handle), e.shape,
          CLAMP(e.ndim, 0, GS_MAX_DIMS));
    }
    if (index != G_MAXUINT64)
      item->scope = gs_trace_model_scope_of(s->model, index);
  }
  gs_graph_set_scopes(g, model_scope_lookup, s->model);
}

/* With values recorded, each tensor on the graph shows its data and (a leaf) its gradient as
 * they were at the event, as micrograd's draw_dot does. */
static void label_values(gs_graph_source *s, guint64 index, gs_graph *g) {
  for (guint i = 0; i < g->items->len; i++) {
    gs_graph_item *item = &g_array_index(g->items, gs_graph_item, i);
    if (!item->tensor || item->kind == GS_GRAPH_OP || item->kind == GS_GRAPH_GROUP)
      continue;
    g_autofree char *values = gs_trace_model_values_label(s->model, item->tensor, index);
    if (!values)
      continue;
    char *label = g_strdup_printf("%s\n%s", item->label, values);
    g_free(item->label);
    item->label = label;
  }
}

/* A fused recurrence node stands for all the time steps of a layer: its label says how many
 * it folds and how many sequences the packed steps ran over ("LSTM step ×18", "32 → 3
 * sequences"), as a box of repeated scopes says "×N". */
static void label_recurrences(gs_graph_source *s, const gs_replay *state, gs_graph *g) {
  for (guint i = 0; i < g->items->len; i++) {
    gs_graph_item *item = &g_array_index(g->items, gs_graph_item, i);
    const gs_replay_node *n = item->kind == GS_GRAPH_OP ? gs_replay_node_get(state, item->id)
                                                         : NULL;
    if (!n || !gs_packed_steps_cell(n->kind))
      continue;
    gs_packed_steps steps;
    if (!gs_packed_steps_find(s->model, gs_trace_model_find_seq(s->model, n->create_seq), &steps))
      continue;
    g_autofree char *folded = gs_packed_steps_label(&steps);
    char *label = g_strdup_printf("%s\n%s", item->label, folded);
    g_free(item->label);
    item->label = label;
    gs_packed_steps_clear(&steps);
  }
}

gs_graph *gs_graph_source_build(gs_graph_source *s, guint64 index) {
  guint64 n = gs_trace_model_n_events(s->model);
  if (n == 0)
    return gs_graph_new();
  index = MIN(index, n - 1);
  const gs_replay *state = gs_trace_model_seek(s->model, index);
  if (!state)
    return gs_graph_new();
  feed_versions(s, index + 1);
  gs_graph *g = gs_graph_build_with(state, s->versions);
  scope_by_creation(s, state, index, g);
  label_recurrences(s, state, g);
  if (s->has_values) /* last: reading values moves the model's seek position off state */
    label_values(s, index, g);
  return g;
}

gs_graph *gs_graph_source_build_at_most(gs_graph_source *s, guint64 index, guint max_nodes,
                                        GError **error) {
  guint64 n = gs_trace_model_n_events(s->model);
  const gs_replay *state = n ? gs_trace_model_seek(s->model, MIN(index, n - 1)) : NULL;
  guint live = state ? g_hash_table_size(state->nodes) : 0;
  if (live > max_nodes) {
    g_set_error(error, GS_LAYOUT_ERROR, GS_LAYOUT_ERROR_TOO_LARGE,
                /* TRANSLATORS: a graph too big to build for drawing; the inspector says it
                 * after "The graph is not drawn: ". */
                _("the graph has %u live nodes, too many to build and fold for drawing (at "
                  "most %u); pick an earlier moment or use gradscope export-dot"),
                live, max_nodes);
    return NULL;
  }
  return gs_graph_source_build(s, index); /* seeking there again costs nothing */
}

guint64 gs_graph_source_find_backward(gs_graph_source *s, guint n) {
  guint64 total = gs_trace_model_n_events(s->model);
  for (guint64 i = 0; i < total; i++)
    if (gs_trace_model_kind_at(s->model, i) == GS_TRACE_BACKWARD_BEGIN && n-- == 0)
      return i;
  return G_MAXUINT64;
}
