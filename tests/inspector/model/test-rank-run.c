/* test-rank-run.c: a distributed run's ranks read together (inspector/model/index/rank-logs.c,
 * rank-run.c, rank-sync.c) on real logs: examples/digits-ddp recorded twice as 2 MPI ranks
 * (tests/common/with-ddp-logs.sh: GS_DDP_LOGS holds a-0, a-1, b-0, b-1). Logs of two runs,
 * a rank given twice and a log of no run are refused with sentences naming the files, their
 * ranks and run ids; the merged order keeps each rank's log order and always takes the
 * earliest next event; the ranks' counts are each log's events, counted again here with the
 * trace reader; the collectives and the wait spans are those the logs hold, read again here
 * event by event. */
#include <glib/gstdio.h>
#include <gradscope/gradscope.h>
#include <inttypes.h>

#include "rank-run.h"

static char *log_path(const char *name) {
  const char *dir = g_getenv("GS_DDP_LOGS");
  g_assert_nonnull(dir);
  return g_build_filename(dir, name, NULL);
}

/* What a log holds, read with the trace reader alone (no model): its events, the numbers of
 * its collectives that ended, and its waits with their waited ns: the wait_end events, and the
 * collectives that blocked the rank outside DDP's waits (rank-sync.c makes each a wait). */
typedef struct raw_log {
  guint64 events;
  GHashTable *ended; /* collective number -> 1 */
  guint waits;
  guint64 waited_ns;
} raw_log;

static raw_log read_raw(const char *path) {
  raw_log out = {.ended = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL)};
  gchar *bytes;
  gsize len;
  g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
  gs_trace_reader *r = gs_trace_reader_new();
  gs_trace_reader_feed(r, bytes, len);
  gs_trace_event e;
  gboolean in_wait = FALSE;
  while (gs_trace_reader_next(r, &e) == GS_TRACE_EVENT) {
    if (gs_trace_kind_is_table(e.kind))
      continue;
    out.events++;
    if (e.kind == GS_TRACE_COLLECTIVE_END) {
      guint64 *key = g_new(guint64, 1);
      *key = e.collective;
      g_hash_table_add(out.ended, key);
      if (!in_wait && e.waited_ns > 0) {
        out.waits++;
        out.waited_ns += e.waited_ns;
      }
    } else if (e.kind == GS_TRACE_WAIT_BEGIN) {
      in_wait = TRUE;
    } else if (e.kind == GS_TRACE_WAIT_END) {
      in_wait = FALSE;
      out.waits++;
      out.waited_ns += e.waited_ns;
    }
  }
  gs_trace_reader_free(r);
  g_free(bytes);
  return out;
}

static GArray *read_logs(char **paths, guint n) {
  GArray *logs = g_array_new(FALSE, TRUE, sizeof(gs_rank_log));
  for (guint i = 0; i < n; i++) {
    gs_rank_log l;
    g_autoptr(GError) error = NULL;
    g_assert_true(gs_rank_log_read(paths[i], &l, &error));
    g_assert_no_error(error);
    g_array_append_val(logs, l);
  }
  return logs;
}

static void test_refuses_two_runs(void) {
  g_autofree char *a0 = log_path("a-0.gstrace"), *b1 = log_path("b-1.gstrace");
  g_autoptr(GArray) logs = read_logs((char *[]){a0, b1}, 2);
  const gs_rank_log *la = &g_array_index(logs, gs_rank_log, 0);
  const gs_rank_log *lb = &g_array_index(logs, gs_rank_log, 1);
  g_assert_true(la->has_run && lb->has_run);
  g_assert_cmpuint(la->rank, ==, 0);
  g_assert_cmpuint(lb->rank, ==, 1);
  g_assert_cmpuint(la->world, ==, 2);
  g_assert_cmpuint(la->run, !=, lb->run); /* two runs: two ids */
  g_autoptr(GError) error = NULL;
  g_assert_false(gs_rank_logs_one_run(logs, &error));
  g_assert_nonnull(error);
  g_autofree char *want =
      g_strdup_printf("%s and %s are not logs of one run: %s is rank 0 of run %016" PRIx64
                      " and %s is rank 1 of run %016" PRIx64,
                      a0, b1, a0, la->run, b1, lb->run);
  if (!g_str_has_prefix(error->message, want))
    g_error("refusal: %s\nwanted it to begin: %s", error->message, want);
}

static void test_refuses_a_rank_twice(void) {
  g_autofree char *a0 = log_path("a-0.gstrace"), *a1 = log_path("a-1.gstrace");
  g_autoptr(GArray) logs = read_logs((char *[]){a0, a1, a0}, 3);
  g_autoptr(GError) error = NULL;
  g_assert_false(gs_rank_logs_one_run(logs, &error));
  g_autofree char *want = g_strdup_printf("%s and %s are both rank 0 of run %016" PRIx64, a0, a0,
                                          g_array_index(logs, gs_rank_log, 0).run);
  if (!g_str_has_prefix(error->message, want))
    g_error("refusal: %s\nwanted it to begin: %s", error->message, want);
}

/* A log of a program that never joined a group has no run to be a rank of. */
static void test_refuses_a_log_of_no_run(void) {
  g_autofree char *a0 = log_path("a-0.gstrace");
  g_autofree char *solo = log_path("solo.gstrace");
  g_assert_cmpint(gs_trace_open(solo), ==, 0);
  gs_dispose(gs_zeros(GS_F32, (int64_t[]){4}, 1));
  gs_trace_close();
  g_autoptr(GArray) logs = read_logs((char *[]){a0, solo}, 2);
  g_assert_false(g_array_index(logs, gs_rank_log, 1).has_run);
  g_assert_true(gs_rank_logs_any_run(logs));
  g_autoptr(GError) error = NULL;
  g_assert_false(gs_rank_logs_one_run(logs, &error));
  g_autofree char *want = g_strdup_printf("%s holds no distributed run", solo);
  if (!g_str_has_prefix(error->message, want))
    g_error("refusal: %s\nwanted it to begin: %s", error->message, want);
  g_unlink(solo);
}

/* Run a's two ranks, given rank 1 first: sorted by rank, loaded. */
static gs_rank_run *load_run_a(GArray **logs_out) {
  g_autofree char *a0 = log_path("a-0.gstrace"), *a1 = log_path("a-1.gstrace");
  GArray *logs = read_logs((char *[]){a1, a0}, 2);
  g_autoptr(GError) error = NULL;
  g_assert_true(gs_rank_logs_one_run(logs, &error));
  g_assert_no_error(error);
  gs_trace_model *models[2];
  for (guint i = 0; i < 2; i++) {
    const gs_rank_log *l = &g_array_index(logs, gs_rank_log, i);
    g_assert_cmpuint(l->rank, ==, i);
    models[i] = gs_trace_model_load_file(l->path, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
  }
  gs_rank_run *run = gs_rank_run_new(models, (const gs_rank_log *)logs->data, 2);
  *logs_out = logs;
  return run;
}

static void test_merged_order(void) {
  GArray *logs;
  g_autoptr(gs_rank_run) run = load_run_a(&logs);
  g_assert_cmpuint(gs_rank_run_n_lanes(run), ==, 2);
  g_assert_cmpuint(gs_rank_run_world(run), ==, 2);
  /* One machine: one wall clock, and the ranks' dist_init events (just after one broadcast)
   * land close together on the shared axis. */
  g_assert_cmpint(gs_rank_run_clock(run), ==, GS_RANK_CLOCK_WALL);
  guint64 init[2] = {0, 0};
  for (guint lane = 0; lane < 2; lane++) {
    gs_trace_model *m = gs_rank_run_model(run, lane);
    for (guint64 i = 0; i < gs_trace_model_n_events(m); i++)
      if (gs_trace_model_kind_at(m, i) == GS_TRACE_DIST_INIT) {
        init[lane] = gs_rank_run_time(run, lane, i);
        break;
      }
    g_assert_cmpuint(init[lane], >, 0);
  }
  guint64 apart = init[0] > init[1] ? init[0] - init[1] : init[1] - init[0];
  g_test_message("dist_init events %.3f ms apart on the shared axis", apart / 1e6);
  g_assert_cmpuint(apart, <, G_GUINT64_CONSTANT(500000000));

  guint64 len[2], next[2] = {0, 0};
  for (guint lane = 0; lane < 2; lane++)
    len[lane] = gs_trace_model_n_events(gs_rank_run_model(run, lane));
  g_assert_cmpuint(gs_rank_run_n_events(run), ==, len[0] + len[1]);
  guint64 last_time = 0, out_of_order = 0;
  for (guint64 p = 0; p < gs_rank_run_n_events(run); p++) {
    guint lane;
    guint64 index;
    g_assert_true(gs_rank_run_event_at(run, p, &lane, &index));
    /* each rank's events in its log's order */
    g_assert_cmpuint(index, ==, next[lane]);
    g_assert_cmpuint(gs_rank_run_position_of(run, lane, index), ==, p);
    guint64 t = gs_rank_run_time(run, lane, index);
    /* the earliest next event of all ranks goes first */
    guint other = 1 - lane;
    if (next[other] < len[other])
      g_assert_cmpuint(t, <=, gs_rank_run_time(run, other, next[other]));
    out_of_order += t < last_time;
    last_time = t;
    next[lane]++;
  }
  g_assert_cmpuint(next[0], ==, len[0]);
  g_assert_cmpuint(next[1], ==, len[1]);
  g_test_message("%" G_GUINT64_FORMAT " merged events, %" G_GUINT64_FORMAT
                 " earlier than the one before (a rank's threads' chunks interleaving)",
                 gs_rank_run_n_events(run), out_of_order);
  g_assert_false(gs_rank_run_event_at(run, gs_rank_run_n_events(run), NULL, NULL));
  g_array_unref(logs);
}

/* A rank's rows are its log's events: the merged positions of each lane, counted, against
 * the events the trace reader finds in each file. */
static void test_rank_counts(void) {
  GArray *logs;
  g_autoptr(gs_rank_run) run = load_run_a(&logs);
  guint64 count[2] = {0, 0};
  for (guint64 p = 0; p < gs_rank_run_n_events(run); p++) {
    guint lane;
    gs_rank_run_event_at(run, p, &lane, NULL);
    count[lane]++;
  }
  for (guint lane = 0; lane < 2; lane++) {
    raw_log raw = read_raw(gs_rank_run_path(run, lane));
    g_assert_cmpuint(count[lane], ==, raw.events);
    g_assert_cmpuint(count[lane], >, 100000);
    g_hash_table_unref(raw.ended);
  }
  g_array_unref(logs);
}

static void test_collectives_and_waits(void) {
  GArray *logs;
  g_autoptr(gs_rank_run) run = load_run_a(&logs);
  raw_log raw[2] = {read_raw(gs_rank_run_path(run, 0)), read_raw(gs_rank_run_path(run, 1))};
  /* Every collective number either log ended, and those both did. */
  g_autoptr(GHashTable) all = g_hash_table_new(g_int64_hash, g_int64_equal);
  guint both = 0;
  GHashTableIter it;
  gpointer key;
  for (guint lane = 0; lane < 2; lane++) {
    g_hash_table_iter_init(&it, raw[lane].ended);
    while (g_hash_table_iter_next(&it, &key, NULL)) {
      g_hash_table_add(all, key);
      both += lane == 0 && g_hash_table_contains(raw[1].ended, key);
    }
  }
  const GArray *collectives = gs_rank_run_collectives(run);
  g_test_message("%u collectives, %u ended on both ranks; waits %u and %u", collectives->len, both,
                 raw[0].waits, raw[1].waits);
  /* digits-ddp: 1350 steps, a bucket's allreduce each, plus the checks and broadcasts */
  g_assert_cmpuint(both, >, 1350);
  g_assert_cmpuint(collectives->len, ==, g_hash_table_size(all));
  g_assert_cmpuint(gs_rank_run_n_shared_collectives(run), ==, both);
  for (guint i = 0; i < collectives->len; i++) {
    const gs_rank_collective *c = &g_array_index(collectives, gs_rank_collective, i);
    g_assert_true(i == 0 ||
                  c->number > g_array_index(collectives, gs_rank_collective, i - 1).number);
    g_assert_nonnull(c->op);
    for (guint lane = 0; lane < 2; lane++)
      if (c->end[lane] != G_MAXUINT64 && c->begin[lane] != G_MAXUINT64)
        g_assert_cmpuint(c->begin[lane], <=, c->end[lane]);
  }
  for (guint lane = 0; lane < 2; lane++) {
    const GArray *waits = gs_rank_run_waits(run, lane);
    g_assert_cmpuint(waits->len, ==, raw[lane].waits);
    guint64 waited = 0;
    for (guint i = 0; i < waits->len; i++) {
      const gs_rank_wait *w = &g_array_index(waits, gs_rank_wait, i);
      g_assert_true(w->ended);
      g_assert_cmpuint(w->begin, <=, w->end);
      g_assert_cmpuint(w->begin_index, <, w->end_index);
      waited += w->waited_ns;
    }
    g_assert_cmpuint(waited, ==, raw[lane].waited_ns);
    g_hash_table_unref(raw[lane].ended);
  }
  g_array_unref(logs);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/rank-run/refuses-two-runs", test_refuses_two_runs);
  g_test_add_func("/rank-run/refuses-a-rank-twice", test_refuses_a_rank_twice);
  g_test_add_func("/rank-run/refuses-a-log-of-no-run", test_refuses_a_log_of_no_run);
  g_test_add_func("/rank-run/merged-order", test_merged_order);
  g_test_add_func("/rank-run/rank-counts", test_rank_counts);
  g_test_add_func("/rank-run/collectives-and-waits", test_collectives_and_waits);
  return g_test_run();
}
