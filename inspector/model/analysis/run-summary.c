/* run-summary.c: one pass over a log that keeps what a comparison of two runs needs (see
 * run-summary.h). The counting rides on gs_trace_stats (its replay and call-site table); this
 * file adds what stats does not keep: where the peak happened, objects made per site, the
 * step marks, and each backward pass's graph as signatures. */
#include "run-summary.h"

#include <glib/gi18n-lib.h>
#include <string.h>

#include "trace-file.h"
#include "trace-stats.h"

typedef struct reading {
  gs_trace_stats *stats;
  gs_run_summary *summary;
  GHashTable *created_by_site; /* site id -> objects made there (pointer-sized counts) */
  GHashTable *first_by_site;   /* site id -> seq of the first object made there + 1 */
  guint64 peak_seen;
  const char *last_step; /* the latest step or epoch mark (interned) */
  guint passes_since_mark;
  gboolean peak_site_pending; /* the peak came with a derived storage event: its site is on
                               * the tensor event of the same seq that follows */
  guint64 peak_event_seq;
} reading;

static gboolean is_step_label(const char *label) {
  return g_ascii_strncasecmp(label, "step", 4) == 0 || g_ascii_strncasecmp(label, "epoch", 5) == 0;
}

/* FNV-1a over the kind, mixed with the consumer's signature and the slot: equal paths from
 * the root give equal signatures in any run. */
static guint64 node_signature(guint64 parent, guint slot, const char *kind) {
  guint64 h = 14695981039346656037ull ^ parent;
  h = (h ^ slot) * 1099511628211ull;
  for (const char *c = kind; *c; c++)
    h = (h ^ (guchar)*c) * 1099511628211ull;
  return h ^ (h >> 29);
}

void gs_run_pass_nodes(const gs_replay *replay, guint64 root, GStringChunk *strings,
                       GArray *out) {
  const gs_replay_node *first = root ? gs_replay_node_get(replay, root) : NULL;
  if (!first)
    return;
  /* Breadth first, each node once (a node two consumers share keeps the first path found, in
   * input order, which is the same in both runs; a cycle in a hostile log closes here). */
  g_autoptr(GHashTable) visited = g_hash_table_new_full(gs_id_hash, gs_id_equal, g_free, NULL);
  g_hash_table_add(visited, g_memdup2(&first->id, sizeof first->id));
  guint start = out->len;
  gs_run_node n = {first->id, node_signature(0, 0, first->kind),
                   g_string_chunk_insert_const(strings, first->kind)};
  g_array_append_val(out, n);
  for (guint i = start; i < out->len; i++) {
    gs_run_node at = g_array_index(out, gs_run_node, i);
    const gs_replay_node *node = gs_replay_node_get(replay, at.id);
    if (!node)
      continue;
    for (guint slot = 0; slot < node->n_inputs; slot++) {
      guint64 input = node->inputs[slot];
      const gs_replay_node *next = input ? gs_replay_node_get(replay, input) : NULL;
      if (!next || g_hash_table_contains(visited, &input))
        continue;
      g_hash_table_add(visited, g_memdup2(&input, sizeof input));
      gs_run_node child = {input, node_signature(at.signature, slot, next->kind),
                           g_string_chunk_insert_const(strings, next->kind)};
      g_array_append_val(out, child);
    }
  }
}

static void on_backward(reading *r, const gs_trace_event *e) {
  gs_run_summary *s = r->summary;
  gs_run_pass *pass = g_new0(gs_run_pass, 1);
  pass->number = s->passes->len + 1;
  pass->seq = e->seq;
  pass->step = r->last_step ? g_strdup(r->last_step) : NULL;
  pass->in_step = ++r->passes_since_mark;
  pass->nodes = g_array_new(FALSE, FALSE, sizeof(gs_run_node));
  gs_run_pass_nodes(r->stats->replay, e->node, s->strings, pass->nodes);
  g_ptr_array_add(s->passes, pass);
}

static void on_mark(reading *r, const gs_trace_event *e, const gs_trace_reader *reader) {
  const char *label = gs_trace_reader_string(reader, e->name);
  if (!label || !is_step_label(label))
    return;
  g_autofree char *valid = g_utf8_make_valid(label, -1);
  r->last_step = g_string_chunk_insert_const(r->summary->strings, valid);
  r->passes_since_mark = 0;
  gs_run_mark mark = {g_strdup(valid), e->seq};
  g_array_append_val(r->summary->marks, mark);
}

/* The peak moved to this event: remember its innermost scope and its call site now, while the
 * state still says which scopes are open. */
static void on_new_peak(reading *r, const gs_trace_event *e) {
  gs_run_summary *s = r->summary;
  const gs_replay *replay = r->stats->replay;
  g_clear_pointer(&s->peak_scope, g_free);
  g_clear_pointer(&s->peak_site, g_free);
  GArray *open = g_hash_table_lookup(replay->thread_scopes, GUINT_TO_POINTER(e->thread));
  if (open && open->len) {
    guint64 id = g_array_index(open, guint64, open->len - 1);
    const gs_replay_scope *scope = g_hash_table_lookup(replay->scopes, &id);
    if (scope)
      s->peak_scope = g_strdup(scope->name);
  }
  r->peak_event_seq = e->seq;
  r->peak_site_pending = !e->site;
  const char *where = e->site ? gs_site_table_text(r->stats->sites, e->site) : NULL;
  if (where)
    s->peak_site = g_strdup(where);
}

static gboolean on_event(const gs_trace_event *e, const gs_trace_reader *reader,
                         gpointer user_data) {
  reading *r = user_data;
  if (e->kind == GS_TRACE_BACKWARD_BEGIN)
    on_backward(r, e); /* the graph as the pass finds it */
  else if (e->kind == GS_TRACE_MARK)
    on_mark(r, e, reader);
  else if ((e->kind == GS_TRACE_TENSOR_CREATE || e->kind == GS_TRACE_COMPOSITE_CREATE) &&
           e->site) {
    gpointer key = GUINT_TO_POINTER(e->site);
    gsize n = GPOINTER_TO_SIZE(g_hash_table_lookup(r->created_by_site, key));
    g_hash_table_insert(r->created_by_site, key, GSIZE_TO_POINTER(n + 1));
    if (!g_hash_table_contains(r->first_by_site, key))
      g_hash_table_insert(r->first_by_site, key, GSIZE_TO_POINTER((gsize)e->seq + 1));
  }
  if (r->peak_site_pending && e->seq == r->peak_event_seq && e->site && !e->derived) {
    const char *where = gs_site_table_text(r->stats->sites, e->site);
    r->summary->peak_site = where ? g_strdup(where) : NULL;
    r->peak_site_pending = FALSE;
  }
  gs_trace_stats_add(r->stats, e, reader);
  if (r->stats->replay->peak_bytes > r->peak_seen) {
    r->peak_seen = r->stats->replay->peak_bytes;
    on_new_peak(r, e);
  }
  return TRUE;
}

static void scope_free(gpointer p) {
  gs_run_scope *s = p;
  g_free(s->name);
  g_free(s);
}

static void site_free(gpointer p) {
  gs_run_site *s = p;
  g_free(s->where);
  g_free(s);
}

static void pass_free(gpointer p) {
  gs_run_pass *pass = p;
  g_free(pass->step);
  g_array_unref(pass->nodes);
  g_free(pass);
}

static void mark_clear(gpointer p) {
  g_free(((gs_run_mark *)p)->label);
}

static gs_run_summary *summary_new(void) {
  gs_run_summary *s = g_new0(gs_run_summary, 1);
  s->scopes = g_ptr_array_new_with_free_func(scope_free);
  s->sites = g_ptr_array_new_with_free_func(site_free);
  s->passes = g_ptr_array_new_with_free_func(pass_free);
  s->marks = g_array_new(FALSE, TRUE, sizeof(gs_run_mark));
  g_array_set_clear_func(s->marks, mark_clear);
  s->strings = g_string_chunk_new(256);
  return s;
}

void gs_run_summary_free(gs_run_summary *s) {
  if (!s)
    return;
  g_free(s->peak_scope);
  g_free(s->peak_site);
  g_ptr_array_unref(s->scopes);
  g_ptr_array_unref(s->sites);
  g_ptr_array_unref(s->passes);
  g_array_unref(s->marks);
  g_free(s->problem);
  g_string_chunk_free(s->strings);
  g_free(s);
}

/* Per scope name: the stats' groups, plus the mean of the instances' peaks and where the
 * largest one began (a place to take the reader to). */
static void collect_scopes(gs_run_summary *s, const gs_replay *replay) {
  for (guint i = 0; i < replay->scope_group_list->len; i++) {
    const gs_replay_scope_name *g = replay->scope_group_list->pdata[i];
    gs_run_scope *scope = g_new0(gs_run_scope, 1);
    scope->name = g_strdup(g->name ? g->name : "");
    scope->instances = g->instances;
    scope->created = g->created;
    scope->disposed = g->disposed;
    scope->peak_bytes = g->peak_bytes;
    g_ptr_array_add(s->scopes, scope);
  }
  g_autofree guint64 *peak_sums = g_new0(guint64, s->scopes->len + 1);
  g_autofree gboolean *placed = g_new0(gboolean, s->scopes->len + 1);
  for (guint i = 0; i < replay->scope_list->len; i++) {
    const gs_replay_scope *instance = replay->scope_list->pdata[i];
    if (instance->group >= s->scopes->len)
      continue;
    gs_run_scope *scope = s->scopes->pdata[instance->group];
    guint64 *sum = &peak_sums[instance->group];
    if (!g_uint64_checked_add(sum, *sum, instance->peak_bytes))
      *sum = G_MAXUINT64; /* a hostile log's sizes: the mean saturates */
    if (instance->peak_bytes == scope->peak_bytes && !placed[instance->group]) {
      scope->peak_seq = instance->begin_seq;
      placed[instance->group] = TRUE;
    }
  }
  for (guint i = 0; i < s->scopes->len; i++) {
    gs_run_scope *scope = s->scopes->pdata[i];
    scope->mean_bytes = scope->instances ? peak_sums[i] / scope->instances : 0;
  }
}

/* Per site text (two ids with one text, as frames past the innermost differ, are one row). */
static void collect_sites(gs_run_summary *s, reading *r) {
  const gs_replay *replay = r->stats->replay;
  g_autoptr(GHashTable) by_text = g_hash_table_new(g_str_hash, g_str_equal);
  g_autoptr(GHashTable) alive_first = g_hash_table_new(g_direct_hash, g_direct_equal);
  g_autoptr(GHashTable) alive = g_hash_table_new(g_direct_hash, g_direct_equal);
  g_autoptr(GPtrArray) objects = gs_replay_alive_objects(replay);
  for (guint i = 0; i < objects->len; i++) {
    const gs_replay_object *o = objects->pdata[i];
    if (!o->site)
      continue;
    gpointer key = GUINT_TO_POINTER(o->site);
    gsize n = GPOINTER_TO_SIZE(g_hash_table_lookup(alive, key));
    g_hash_table_insert(alive, key, GSIZE_TO_POINTER(n + 1));
    if (!n) /* objects come by creation: the first is the oldest */
      g_hash_table_insert(alive_first, key, GSIZE_TO_POINTER((gsize)o->create_seq + 1));
  }
  g_autoptr(GList) ids = g_hash_table_get_keys(r->created_by_site);
  for (GList *l = ids; l; l = l->next) {
    guint32 site = GPOINTER_TO_UINT(l->data);
    const char *text = gs_site_table_text(r->stats->sites, site);
    g_autofree char *fallback = text ? NULL : g_strdup_printf("site %u", site);
    const char *where = text ? text : fallback;
    gs_run_site *row = g_hash_table_lookup(by_text, where);
    if (!row) {
      row = g_new0(gs_run_site, 1);
      row->where = g_utf8_make_valid(where, -1);
      row->first_seq = G_MAXUINT64;
      g_hash_table_insert(by_text, row->where, row);
      g_ptr_array_add(s->sites, row);
    }
    row->created += GPOINTER_TO_SIZE(g_hash_table_lookup(r->created_by_site, l->data));
    row->alive += GPOINTER_TO_SIZE(g_hash_table_lookup(alive, l->data));
    gsize first = GPOINTER_TO_SIZE(g_hash_table_lookup(alive_first, l->data));
    if (!first)
      first = GPOINTER_TO_SIZE(g_hash_table_lookup(r->first_by_site, l->data));
    row->first_seq = MIN(row->first_seq, (guint64)first - 1);
  }
}

static gint by_first_seq(gconstpointer a, gconstpointer b) {
  const gs_run_site *x = *(gs_run_site *const *)a, *y = *(gs_run_site *const *)b;
  if (x->first_seq != y->first_seq)
    return x->first_seq < y->first_seq ? -1 : 1;
  return g_strcmp0(x->where, y->where);
}

gs_run_summary *gs_run_summary_read(const char *path, GError **error) {
  g_autoptr(gs_trace_stats) stats = gs_trace_stats_new();
  gs_run_summary *s = summary_new();
  reading r = {stats, s, g_hash_table_new(g_direct_hash, g_direct_equal),
               g_hash_table_new(g_direct_hash, g_direct_equal), 0, NULL, 0, FALSE, 0};
  gs_trace_read_result result;
  gboolean ok = gs_trace_file_read(path, on_event, NULL, &r, &result, error);
  if (ok && !result.has_header) {
    g_autofree char *why = gs_trace_file_not_a_log(path);
    g_autofree char *problem = gs_trace_read_result_problem(&result);
    if (why)
      g_set_error_literal(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, why);
    else
      g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, _("%s holds no readable events: %s"),
                  path, problem ? problem : "?");
    ok = FALSE;
  }
  if (ok) {
    const gs_replay *replay = stats->replay;
    s->events = stats->events;
    memcpy(s->by_kind, stats->by_kind, sizeof s->by_kind);
    s->last_seq = replay->last_seq;
    s->peak_bytes = replay->peak_bytes;
    s->peak_seq = replay->peak_seq;
    s->live_objects = gs_replay_n_objects(replay);
    s->live_bytes = replay->live_bytes;
    s->has_sites = gs_site_table_size(stats->sites) > 0;
    s->problem = gs_trace_read_result_problem(&result);
    collect_scopes(s, replay);
    collect_sites(s, &r);
    g_ptr_array_sort(s->sites, by_first_seq);
  }
  gs_trace_read_result_clear(&result);
  g_hash_table_destroy(r.created_by_site);
  g_hash_table_destroy(r.first_by_site);
  if (!ok) {
    gs_run_summary_free(s);
    return NULL;
  }
  return s;
}
