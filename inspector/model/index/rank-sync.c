/* rank-sync.c: what went between the ranks of a run (rank-run.h): each collective as every
 * rank logged it, matched by its number (the same on every rank, doc/trace-format.md), and the
 * spans each rank spent in a wait for the others (wait_begin to wait_end). Only those events
 * are decoded: the kinds column finds them. */
#include "rank-run-private.h"

/* The collective numbered `number`, made on first sight (collectives stay in number order:
 * a rank numbers them from 1 as it begins them). */
static gs_rank_collective *collective(GArray *all, GHashTable *by_number, guint64 number, guint n) {
  gpointer at = g_hash_table_lookup(by_number, &number);
  if (at)
    return &g_array_index(all, gs_rank_collective, GPOINTER_TO_UINT(at) - 1);
  gs_rank_collective c = {.number = number, .bucket = -1};
  c.begin = g_new(guint64, 3 * n);
  c.end = c.begin + n;
  c.waited_ns = c.end + n;
  for (guint i = 0; i < 3 * n; i++)
    c.begin[i] = G_MAXUINT64;
  g_array_append_val(all, c);
  guint64 *key = g_new(guint64, 1);
  *key = number;
  g_hash_table_insert(by_number, key, GUINT_TO_POINTER(all->len));
  return &g_array_index(all, gs_rank_collective, all->len - 1);
}

static gint by_number(gconstpointer a, gconstpointer b) {
  const gs_rank_collective *x = a, *y = b;
  return x->number < y->number ? -1 : x->number > y->number;
}

/* One lane's collective events into all, its waits into waits. A collective outside DDP's
 * waits that blocked this rank (the first one, while another rank still starts; a metric's
 * allreduce) is a wait too, its last waited_ns before its end: the lane's waits then add up to
 * the time `gradscope stats` counts in collectives, and a rank held up there shows. */
static void scan_lane(gs_rank_run *run, guint lane, GArray *all, GHashTable *numbers, GArray *waits,
                      GStringChunk *strings) {
  gs_trace_model *m = gs_rank_run_model(run, lane);
  guint n = gs_rank_run_n_lanes(run);
  guint64 n_events = gs_trace_model_n_events(m);
  gboolean open = FALSE;
  gs_rank_wait w = {0};
  guint64 begun_number = 0, begun_index = 0; /* this lane's last collective_begin */
  for (guint64 i = 0; i < n_events; i++) {
    gs_trace_kind kind = gs_trace_model_kind_at(m, i);
    if (kind != GS_TRACE_COLLECTIVE_BEGIN && kind != GS_TRACE_COLLECTIVE_END &&
        kind != GS_TRACE_WAIT_BEGIN && kind != GS_TRACE_WAIT_END)
      continue;
    gs_trace_event e;
    if (!gs_trace_model_event(m, i, &e))
      continue;
    guint64 t = gs_rank_run_time(run, lane, i);
    const char *name = gs_trace_model_string(m, e.name ? e.name : e.op);
    if (kind == GS_TRACE_WAIT_BEGIN) {
      if (open) /* a begin without its end: the log is inconsistent; the old span ends here */
        g_array_append_val(waits, w);
      w = (gs_rank_wait){.begin = t,
                         .end = t,
                         .begin_index = i,
                         .end_index = i,
                         .name = g_string_chunk_insert_const(strings, name)};
      open = TRUE;
    } else if (kind == GS_TRACE_WAIT_END) {
      if (!open)
        continue; /* an end without a begin (a log begun mid-wait) */
      w.end = MAX(t, w.begin);
      w.end_index = i;
      w.waited_ns = e.waited_ns;
      w.ended = TRUE;
      g_array_append_val(waits, w);
      open = FALSE;
    } else {
      gs_rank_collective *c = collective(all, numbers, e.collective, n);
      if (!c->op)
        c->op = g_string_chunk_insert_const(strings, gs_trace_model_string(m, e.op));
      if (kind == GS_TRACE_COLLECTIVE_BEGIN) {
        begun_number = e.collective;
        begun_index = i;
        c->begin[lane] = t;
        if (!c->nbytes) {
          c->nbytes = e.nbytes;
          c->bucket = e.bucket;
        }
      } else {
        if (c->end[lane] == G_MAXUINT64)
          c->n_ended++;
        c->end[lane] = t;
        c->waited_ns[lane] = e.waited_ns;
        if (!open && e.waited_ns > 0) {
          guint64 from = t > e.waited_ns ? t - e.waited_ns : 0;
          gs_rank_wait blocked = {.begin = MAX(from, MIN(c->begin[lane], t)),
                                  .end = t,
                                  .begin_index = begun_number == e.collective ? begun_index : i,
                                  .end_index = i,
                                  .waited_ns = e.waited_ns,
                                  .name = c->op,
                                  .ended = TRUE};
          g_array_append_val(waits, blocked);
        }
      }
    }
  }
  if (open) { /* cut before its end: it lasts to the lane's last event */
    w.end_index = n_events - 1;
    w.end = MAX(w.begin, gs_rank_run_time(run, lane, n_events - 1));
    g_array_append_val(waits, w);
  }
}

void gs__rank_run_sync(gs_rank_run *run, GArray **collectives, GArray **waits,
                       GStringChunk *strings, guint *n_shared) {
  GArray *all = g_array_new(FALSE, TRUE, sizeof(gs_rank_collective));
  g_autoptr(GHashTable) numbers = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  for (guint lane = 0; lane < gs_rank_run_n_lanes(run); lane++) {
    waits[lane] = g_array_new(FALSE, TRUE, sizeof(gs_rank_wait));
    scan_lane(run, lane, all, numbers, waits[lane], strings);
  }
  g_array_sort(all, by_number);
  *n_shared = 0;
  for (guint i = 0; i < all->len; i++)
    if (g_array_index(all, gs_rank_collective, i).n_ended >= 2)
      ++*n_shared;
  *collectives = all;
}

void gs__rank_run_sync_free(GArray *collectives, GArray **waits, guint n) {
  for (guint i = 0; collectives && i < collectives->len; i++)
    g_free(g_array_index(collectives, gs_rank_collective, i).begin);
  if (collectives)
    g_array_unref(collectives);
  for (guint i = 0; waits && i < n; i++)
    if (waits[i])
      g_array_unref(waits[i]);
  g_free(waits);
}
