/* model-scopes.c: the scope tree as the log is indexed: each scope's place in the log (the
 * events that began and ended it), its children in begin order (rows a GtkTreeListModel
 * builds lazily), and which scope was innermost on a thread at any event, found from those
 * spans without storing a scope per event. */
#include "model-private.h"

static void free_array(gpointer p) { g_array_unref(p); }

void model_scopes_init(gs_trace_model *m) {
  m->scope_spans = g_array_new(FALSE, FALSE, sizeof(model_scope_span));
  m->scope_pos = g_hash_table_new_full(gs_id_hash, gs_id_equal, g_free, NULL);
  m->scope_kids = g_hash_table_new_full(gs_id_hash, gs_id_equal, g_free, free_array);
  m->thread_scope_list = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, free_array);
  model_scope_groups_init(m);
}

void model_scopes_clear(gs_trace_model *m) {
  g_clear_pointer(&m->scope_spans, g_array_unref);
  g_clear_pointer(&m->scope_pos, g_hash_table_destroy);
  g_clear_pointer(&m->scope_kids, g_hash_table_destroy);
  g_clear_pointer(&m->thread_scope_list, g_hash_table_destroy);
  model_scope_groups_clear(m);
}

static GArray *list_for(GHashTable *table, gpointer key, gboolean *fresh) {
  GArray *list = g_hash_table_lookup(table, key);
  *fresh = list == NULL;
  if (!list)
    list = g_array_new(FALSE, FALSE, sizeof(guint));
  return list;
}

static guint position_of(const gs_trace_model *m, guint64 id) {
  return GPOINTER_TO_UINT(g_hash_table_lookup(m->scope_pos, &id)); /* position + 1, 0: none */
}

void model_scopes_after(gs_trace_model *m, const gs_trace_event *e, guint64 index) {
  if (e->kind == GS_TRACE_SCOPE_BEGIN && m->head->scope_list->len > m->scope_spans->len) {
    guint pos = m->scope_spans->len;
    const gs_replay_scope *s = m->head->scope_list->pdata[pos];
    model_scope_span span = {index, G_MAXUINT64};
    g_array_append_val(m->scope_spans, span);
    g_hash_table_replace(m->scope_pos, g_memdup2(&s->id, sizeof s->id), GUINT_TO_POINTER(pos + 1));
    gboolean fresh;
    GArray *kids = list_for(m->scope_kids, (gpointer)&s->outer, &fresh);
    g_array_append_val(kids, pos);
    if (fresh)
      g_hash_table_insert(m->scope_kids, g_memdup2(&s->outer, sizeof s->outer), kids);
    GArray *mine = list_for(m->thread_scope_list, GUINT_TO_POINTER(s->thread), &fresh);
    g_array_append_val(mine, pos);
    if (fresh)
      g_hash_table_insert(m->thread_scope_list, GUINT_TO_POINTER(s->thread), mine);
    model_scope_groups_begin(m, pos);
  } else if (e->kind == GS_TRACE_SCOPE_END) {
    guint pos = position_of(m, e->scope);
    model_scope_span *span = pos ? &g_array_index(m->scope_spans, model_scope_span, pos - 1) : NULL;
    if (span && span->end == G_MAXUINT64) {
      span->end = index;
      model_scope_groups_end(m, pos - 1, index);
    }
  }
}

guint gs_trace_model_n_scopes(const gs_trace_model *m) { return m->head->scope_list->len; }

const gs_replay_scope *gs_trace_model_scope_at(const gs_trace_model *m, guint position) {
  return position < m->head->scope_list->len ? m->head->scope_list->pdata[position] : NULL;
}

const gs_replay_scope *gs_trace_model_scope(const gs_trace_model *m, guint64 scope_id) {
  return g_hash_table_lookup(m->head->scopes, &scope_id);
}

const gs_replay_scope *gs_trace_model_scope_in(const gs_trace_model *m, const gs_replay *state,
                                               guint64 scope_id) {
  const gs_replay_scope *s = g_hash_table_lookup(state->scopes, &scope_id);
  if (s)
    return s;
  guint pos = position_of(m, scope_id);
  return pos && pos <= state->scope_list->len ? state->scope_list->pdata[pos - 1] : NULL;
}

guint gs_trace_model_scope_position(const gs_trace_model *m, guint64 scope_id) {
  guint pos = position_of(m, scope_id);
  return pos ? pos - 1 : G_MAXUINT;
}

guint64 gs_trace_model_scope_begin_index(const gs_trace_model *m, guint position) {
  return position < m->scope_spans->len
             ? g_array_index(m->scope_spans, model_scope_span, position).begin
             : G_MAXUINT64;
}

guint64 gs_trace_model_scope_end_index(const gs_trace_model *m, guint position) {
  return position < m->scope_spans->len
             ? g_array_index(m->scope_spans, model_scope_span, position).end
             : G_MAXUINT64;
}

const GArray *gs_trace_model_scope_children(const gs_trace_model *m, guint64 scope_id) {
  return g_hash_table_lookup(m->scope_kids, &scope_id);
}

/* The latest scope begun on the thread at or before index, then out through its enclosing
 * scopes to the first still open at index: any scope open at index was open when that latest
 * one began, so it is one of its outer scopes. A scope's own begin and end events count as
 * inside it. */
guint64 gs_trace_model_scope_of(gs_trace_model *m, guint64 index) {
  if (index >= m->kinds->len)
    return 0;
  const GArray *list = g_hash_table_lookup(m->thread_scope_list,
                                           GUINT_TO_POINTER(gs_trace_model_thread_at(m, index)));
  if (!list)
    return 0;
  guint lo = 0, hi = list->len;
  while (lo < hi) {
    guint mid = (lo + hi) / 2;
    guint pos = g_array_index(list, guint, mid);
    if (g_array_index(m->scope_spans, model_scope_span, pos).begin <= index)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0)
    return 0;
  guint pos = g_array_index(list, guint, lo - 1) + 1;
  while (pos) {
    const model_scope_span *span = &g_array_index(m->scope_spans, model_scope_span, pos - 1);
    const gs_replay_scope *s = m->head->scope_list->pdata[pos - 1];
    if (span->end >= index)
      return s->id;
    guint outer = s->outer ? position_of(m, s->outer) : 0;
    pos = outer < pos ? outer : 0; /* an outer scope began earlier: never loop */
  }
  return 0;
}
