/* trace-stats.c: counting events and keeping errors, on top of the replayed state. */
#include "trace-stats.h"

#include "escape.h"

static void error_record_clear(gpointer p) {
  gs_trace_error_record *e = p;
  g_free(e->message);
}

gs_trace_stats *gs_trace_stats_new(void) {
  gs_trace_stats *s = g_new0(gs_trace_stats, 1);
  s->replay = gs_replay_new();
  s->by_thread = g_hash_table_new(g_direct_hash, g_direct_equal);
  s->open_backward = g_hash_table_new(g_direct_hash, g_direct_equal);
  s->backward_depth = g_hash_table_new(g_direct_hash, g_direct_equal);
  s->errors = g_array_new(FALSE, TRUE, sizeof(gs_trace_error_record));
  s->sites = gs_site_table_new();
  g_array_set_clear_func(s->errors, error_record_clear);
  return s;
}

void gs_trace_stats_free(gs_trace_stats *s) {
  if (!s)
    return;
  gs_replay_free(s->replay);
  g_hash_table_destroy(s->by_thread);
  g_hash_table_destroy(s->open_backward);
  g_hash_table_destroy(s->backward_depth);
  g_array_unref(s->errors);
  gs_site_table_free(s->sites);
  g_free(s);
}

void gs_trace_stats_add(gs_trace_stats *s, const gs_trace_event *e,
                        const gs_trace_reader *reader) {
  if (s->events == 0 || e->time_ns < s->first_ns)
    s->first_ns = e->time_ns;
  s->last_ns = MAX(s->last_ns, e->time_ns);
  s->events++;
  if (e->kind > 0 && e->kind < GS_TRACE_KIND_COUNT)
    s->by_kind[e->kind]++;
  else
    s->unknown_kinds++;
  gpointer thread = GUINT_TO_POINTER(e->thread);
  gsize n = GPOINTER_TO_SIZE(g_hash_table_lookup(s->by_thread, thread));
  g_hash_table_insert(s->by_thread, thread, GSIZE_TO_POINTER(n + 1));

  switch (e->kind) {
  case GS_TRACE_SITE:
  case GS_TRACE_BINARY:
    gs_site_table_add(s->sites, e, gs_trace_reader_string(reader, e->name));
    return;
  case GS_TRACE_SNAPSHOT_BEGIN:
    if (!s->snapshot) {
      s->snapshot = TRUE;
      s->snapshot_first_seq = e->seq + 1;
      s->snapshot_objects = e->count;
    }
    break;
  case GS_TRACE_SNAPSHOT_END: /* a snapshot walked as it was written counts at its end */
    if (s->snapshot && e->count && !s->snapshot_end_seen)
      s->snapshot_objects = e->count;
    s->snapshot_end_seen = s->snapshot;
    break;
  case GS_TRACE_ERROR: {
    gs_trace_error_record rec = {e->seq, e->thread, e->code, gs_text_from_log(e->text, e->text_len)};
    g_array_append_val(s->errors, rec);
    break;
  }
  case GS_TRACE_DIST_INIT:
    s->has_run = TRUE;
    s->rank = e->rank;
    s->world = e->world;
    s->run = e->run;
    break;
  case GS_TRACE_COLLECTIVE_END:
    s->collectives++;
    s->collective_wait_ns += e->waited_ns;
    if (!g_strcmp0(gs_trace_reader_string(reader, e->op), "allreduce"))
      s->allreduced_bytes += e->nbytes;
    break;
  case GS_TRACE_WAIT_END: s->synced_steps++; break;
  /* Begin times are stored +1 so that a pass starting at time 0 is still "open". */
  /* A pass started inside another (a custom function's backward running one) is part of the
   * outer pass's time: only the outermost begin and end count. */
  case GS_TRACE_BACKWARD_BEGIN: {
    gsize depth = GPOINTER_TO_SIZE(g_hash_table_lookup(s->backward_depth, thread));
    g_hash_table_insert(s->backward_depth, thread, GSIZE_TO_POINTER(depth + 1));
    if (depth == 0)
      g_hash_table_insert(s->open_backward, thread, GSIZE_TO_POINTER((gsize)e->time_ns + 1));
    break;
  }
  case GS_TRACE_BACKWARD_END: {
    gsize depth = GPOINTER_TO_SIZE(g_hash_table_lookup(s->backward_depth, thread));
    if (depth > 1) {
      g_hash_table_insert(s->backward_depth, thread, GSIZE_TO_POINTER(depth - 1));
      break;
    }
    gsize begin = GPOINTER_TO_SIZE(g_hash_table_lookup(s->open_backward, thread));
    if (begin && e->time_ns + 1 >= begin)
      s->backward_ns += e->time_ns + 1 - begin;
    g_hash_table_remove(s->open_backward, thread);
    g_hash_table_remove(s->backward_depth, thread);
    break;
  }
  default:
    break;
  }
  gs_replay_apply(s->replay, e, reader);
}

static gint by_value(gconstpointer a, gconstpointer b) {
  guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
  return x < y ? -1 : x > y;
}

GArray *gs_trace_stats_threads(const gs_trace_stats *s) {
  GArray *threads = g_array_new(FALSE, FALSE, sizeof(guint32));
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, s->by_thread);
  while (g_hash_table_iter_next(&it, &key, NULL)) {
    guint32 t = GPOINTER_TO_UINT(key);
    g_array_append_val(threads, t);
  }
  g_array_sort(threads, by_value);
  return threads;
}
