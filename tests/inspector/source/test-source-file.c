/* test-source-file.c: log files as sources: read whole (with progress and the model handed
 * over), followed while another thread appends a real log in odd pieces (counts grow, a
 * partial chunk is only "not yet", the model keeps no log bytes and decodes every event again
 * from the file), and the ways a file ends badly: a cut tail, damage (in
 * the loaded part and in the followed part), a file that is missing or is a folder, and a
 * file truncated under a follower. Every event before a problem stays in the model. */
#include <fcntl.h>
#include <glib/gstdio.h>
#include <gradscope/gradscope.h>
#include <unistd.h>

#include "source-test-util.h"

static GBytes *workload_log(void) {
  static GBytes *log;
  if (!log) {
    g_autofree char *path = g_build_filename(source_test_dir(), "workload.gst", NULL);
    log = source_test_record_workload(path);
  }
  return g_bytes_ref(log);
}

static char *write_temp(const char *name, const void *bytes, gsize n) {
  char *path = g_build_filename(source_test_dir(), name, NULL);
  g_autoptr(GError) error = NULL;
  g_file_set_contents(path, bytes, (gssize)n, &error);
  g_assert_no_error(error);
  return path;
}

static void test_read_whole(void) {
  g_autoptr(GBytes) log = workload_log();
  gsize n;
  const guint8 *bytes = g_bytes_get_data(log, &n);
  g_autofree char *path = write_temp("whole.gst", bytes, n);

  source_run run = {.source = gs_trace_source_new_file(path, FALSE)};
  g_assert_cmpint(gs_trace_source_get_kind(run.source), ==, GS_TRACE_SOURCE_FILE);
  g_assert_cmpstr(gs_trace_source_get_description(run.source), ==, path);
  g_assert_cmpint(gs_trace_source_get_state(run.source), ==, GS_TRACE_SOURCE_LOADING);
  g_assert_true(source_run_until(&run, NULL, NULL, 10000));

  g_assert_cmpint(gs_trace_source_get_state(run.source), ==, GS_TRACE_SOURCE_ENDED);
  source_test_assert_message(run.source, "The whole log was read.");
  g_assert_cmpfloat(gs_trace_source_get_progress(run.source), ==, 1.0);
  g_assert_nonnull(run.model);
  g_assert_cmpuint(gs_trace_model_n_events(run.model), ==, source_test_count_events(bytes, n));
  g_assert_cmpuint(gs_trace_model_n_events(run.model), >, 400);
  g_assert_null(gs_trace_source_take_model(run.source)); /* handed over once */
  source_run_clear(&run);
}

/* Appends a log to a file in odd pieces, pausing between them, like a program that writes
 * chunks with several write() calls. */
typedef struct appender {
  char *path;
  const guint8 *bytes;
  gsize from, to;
} appender;

static gpointer append_in_pieces(gpointer data) {
  appender *a = data;
  int fd = open(a->path, O_WRONLY | O_APPEND | O_CLOEXEC);
  g_assert_cmpint(fd, >=, 0);
  static const gsize sizes[] = {1, 7, 64, 333, 5, 1000, 90, 2, 517};
  for (gsize at = a->from, i = 0; at < a->to; i++) {
    gsize n = MIN(sizes[i % G_N_ELEMENTS(sizes)], a->to - at);
    g_assert_cmpint(write(fd, a->bytes + at, n), ==, (gssize)n);
    at += n;
    /* 6 ms a piece: with format 2.0's smaller log (about half the bytes, so half the pieces)
     * the appending still spans many of the source's 10 ms polls */
    g_usleep(6000);
  }
  close(fd);
  return NULL;
}

static gboolean reached(source_run *run, gpointer data) {
  return run->events >= *(guint64 *)data;
}

/* Writes bytes[0, from) to a new file, follows it until those events are in, then starts a
 * thread appending bytes[from, to) in pieces (join a->thread). */
typedef struct appender_run {
  appender a;
  GThread *thread;
  guint64 first; /* events in bytes[0, from) */
} appender_run;

static void follow_then_append(source_run *run, appender_run *ar, const char *name,
                               const guint8 *bytes, gsize from, gsize to) {
  ar->a = (appender){.path = write_temp(name, bytes, from), .bytes = bytes, .from = from,
                     .to = to};
  run->source = gs_trace_source_new_file(ar->a.path, TRUE);
  ar->first = source_test_count_events(bytes, from);
  g_assert_true(source_run_until(run, reached, &ar->first, 10000));
  g_assert_cmpuint(run->events, ==, ar->first);
  g_assert_cmpint(gs_trace_source_get_state(run->source), ==, GS_TRACE_SOURCE_LIVE);
  ar->thread = g_thread_new("appender", append_in_pieces, &ar->a);
}

/* The file starts with a third of the log (cut inside a chunk), so the loaded model ends
 * mid-chunk and the followed bytes must complete that chunk in the same model. */
static void test_follow_growing_file(void) {
  g_autoptr(GBytes) log = workload_log();
  gsize n;
  const guint8 *bytes = g_bytes_get_data(log, &n);
  gsize start = n / 3;
  source_run run = {0};
  appender_run ar;
  follow_then_append(&run, &ar, "follow.gst", bytes, start, n);
  guint growths_before = run.growths;
  guint64 total = source_test_count_events(bytes, n);
  g_assert_true(source_run_until(&run, reached, &total, 20000));
  g_thread_join(ar.thread);
  g_free(ar.a.path);
  /* The events came in several batches as the file grew, never as one at the end. */
  g_assert_cmpuint(run.growths - growths_before, >=, 3);
  g_assert_cmpuint(run.events, ==, total);
  g_assert_cmpint(gs_trace_source_get_state(run.source), ==, GS_TRACE_SOURCE_LIVE);
  g_assert_cmpuint(gs_trace_source_get_bytes_received(run.source), ==, n - start);
  /* The model keeps none of the log's bytes: every event, loaded or followed, is decoded again
   * from the file. */
  g_assert_cmpuint(gs_trace_model_bytes_kept(run.model), ==, 0);
  for (guint64 i = 0; i < total; i++) {
    gs_trace_event e;
    g_assert_true(gs_trace_model_event(run.model, i, &e));
    g_assert_cmpint(e.kind, ==, gs_trace_model_kind_at(run.model, i));
  }

  /* Stopping ends the source and keeps the events. */
  gs_trace_source_stop(run.source);
  g_assert_true(source_run_until(&run, NULL, NULL, 5000));
  source_test_assert_final(&run, GS_TRACE_SOURCE_ENDED, "Stopped. Everything received", total);
  source_run_clear(&run);
}

/* A log big enough that loading it takes many frames, recorded by this process. */
static char *record_big_log(const char *name, guint iterations) {
  char *path = g_build_filename(source_test_dir(), name, NULL);
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  const int64_t shape[] = {4};
  for (guint i = 0; i < iterations; i++)
    gs_dispose(gs_ones(GS_F32, shape, 1)); /* alloc, create, dispose, free */
  gs_trace_close();
  return path;
}

typedef struct load_watch {
  GArray *progress;        /* every value notified */
  guint frames_mid_load;   /* frames that ran with the load begun and not over */
} load_watch;

static void on_progress(GObject *source, GParamSpec *pspec, gpointer data) {
  (void)pspec;
  double p = gs_trace_source_get_progress(GS_TRACE_SOURCE(source));
  g_array_append_val(((load_watch *)data)->progress, p);
}

/* Counts the frames the main loop ran while the worker was part way through the file. */
static gboolean loaded_watching_frames(source_run *run, gpointer data) {
  load_watch *w = data;
  double p = gs_trace_source_get_progress(run->source);
  if (!run->model && p > 0 && p < 1)
    w->frames_mid_load++;
  return source_run_is_final(run, NULL);
}

/* Loading happens on the worker: frames keep coming, progress rises through values
 * between 0 and 1, and the model handed over has every event. */
static void test_big_file_loads_off_the_ui_thread(void) {
  g_autofree char *path = record_big_log("big.gst", 400000);
  g_autofree char *bytes = NULL;
  gsize n = 0;
  g_assert_true(g_file_get_contents(path, &bytes, &n, NULL));
  g_assert_cmpuint(n, >, 4u << 20);
  guint64 total = source_test_count_events(bytes, n);
  g_assert_cmpuint(total, >=, 1600000);

  load_watch w = {.progress = g_array_new(FALSE, FALSE, sizeof(double))};
  source_run run = {.source = gs_trace_source_new_file(path, FALSE)};
  g_signal_connect(run.source, "notify::progress", G_CALLBACK(on_progress), &w);
  g_assert_true(source_run_until(&run, loaded_watching_frames, &w, 60000));
  source_test_assert_final(&run, GS_TRACE_SOURCE_ENDED, "The whole log was read.", total);

  gboolean between = FALSE;
  for (guint i = 0; i < w.progress->len; i++) {
    double p = g_array_index(w.progress, double, i);
    between |= p > 0 && p < 1;
    if (i > 0)
      g_assert_cmpfloat(p, >=, g_array_index(w.progress, double, i - 1));
  }
  g_assert_true(between);
  g_assert_cmpfloat(g_array_index(w.progress, double, w.progress->len - 1), ==, 1.0);
  /* The main loop went on between the load's start and its end (a load on this thread
   * would deliver its progress after it). How long a frame waits is bench-open's
   * open_ui_stall_ms: a time, so a benchmark's, not a test's. */
  g_assert_cmpuint(w.frames_mid_load, >=, 2);
  g_array_free(w.progress, TRUE);
  source_run_clear(&run);
}

static gboolean is_live(source_run *run, gpointer data) {
  (void)data;
  return run->model && gs_trace_source_get_state(run->source) == GS_TRACE_SOURCE_LIVE;
}

/* A pump takes what fits its budget and leaves the rest queued for the next frames. */
static void test_pump_keeps_to_its_budget(void) {
  g_autofree char *big = record_big_log("budget-source.gst", 100000);
  g_autofree char *bytes = NULL;
  gsize n = 0;
  g_assert_true(g_file_get_contents(big, &bytes, &n, NULL));
  guint64 total = source_test_count_events(bytes, n);
  g_autofree char *path = write_temp("budget.gst", "", 0);

  source_run run = {.source = gs_trace_source_new_file(path, TRUE)};
  g_assert_true(source_run_until(&run, is_live, NULL, 10000));
  g_assert_cmpuint(run.events, ==, 0);
  int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
  g_assert_cmpint(write(fd, bytes, n), ==, (gssize)n);
  close(fd);
  gint64 until = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
  while (gs_trace_source_get_bytes_pending(run.source) < n && g_get_monotonic_time() < until)
    g_main_context_iteration(NULL, FALSE); /* the worker queues the file; nothing pumps */
  g_assert_cmpuint(gs_trace_source_get_bytes_pending(run.source), ==, n);

  /* With no budget, each pump still takes one piece (so the log always moves on), and the
   * first events come long before the last. */
  guint64 added = 0, left = n;
  while (added == 0) {
    added = gs_trace_source_pump(run.source, run.model, 0);
    guint64 now_left = gs_trace_source_get_bytes_pending(run.source);
    g_assert_cmpuint(now_left, <, left);
    left = now_left;
  }
  g_assert_cmpuint(added, <, total / 10);
  g_assert_cmpuint(left, >, n / 2);
  run.events = added;
  g_assert_true(source_run_until(&run, reached, &total, 20000));
  g_assert_cmpuint(gs_trace_source_get_bytes_pending(run.source), ==, 0);
  g_assert_cmpint(gs_trace_source_get_state(run.source), ==, GS_TRACE_SOURCE_LIVE);
  source_run_clear(&run);
}

/* A file cut by a crash: everything before the cut, then broken, saying where. */
static void test_cut_tail(void) {
  g_autoptr(GBytes) log = workload_log();
  gsize n;
  const guint8 *bytes = g_bytes_get_data(log, &n);
  g_autofree char *path = write_temp("cut.gst", bytes, n - 5);

  source_run run = {.source = gs_trace_source_new_file(path, FALSE)};
  g_assert_true(source_run_until(&run, NULL, NULL, 10000));
  g_assert_cmpint(gs_trace_source_get_state(run.source), ==, GS_TRACE_SOURCE_BROKEN);
  source_test_assert_message(run.source, "The log ends in the middle of a chunk at byte ");
  guint64 kept = source_test_count_events(bytes, n - 5);
  g_assert_cmpuint(kept, >, 0);
  g_assert_cmpuint(kept, <, source_test_count_events(bytes, n));
  g_assert_cmpuint(gs_trace_model_n_events(run.model), ==, kept);
  source_run_clear(&run);
}

static guint8 *damaged_copy(const guint8 *bytes, gsize n, gsize at) {
  guint8 *copy = g_memdup2(bytes, n);
  copy[at] ^= 0x5a;
  return copy;
}

static void test_damage_in_loaded_part(void) {
  g_autoptr(GBytes) log = workload_log();
  gsize n;
  const guint8 *bytes = g_bytes_get_data(log, &n);
  g_autofree guint8 *bad = damaged_copy(bytes, n, n / 2);
  g_autofree char *path = write_temp("damaged.gst", bad, n);

  source_run run = {.source = gs_trace_source_new_file(path, TRUE)};
  g_assert_true(source_run_until(&run, NULL, NULL, 10000));
  source_test_assert_final(&run, GS_TRACE_SOURCE_BROKEN, "The log is damaged: ",
                           source_test_count_events(bad, n));
  g_assert_cmpuint(gs_trace_model_n_events(run.model), >, 0);
  source_run_clear(&run);
}

/* Damage that arrives while following: found by a pump, which stops the source. */
static void test_damage_while_following(void) {
  g_autoptr(GBytes) log = workload_log();
  gsize n;
  const guint8 *bytes = g_bytes_get_data(log, &n);
  g_autofree guint8 *bad = damaged_copy(bytes, n, n - 40);
  source_run run = {0};
  appender_run ar;
  follow_then_append(&run, &ar, "damaged-later.gst", bad, n / 2, n);
  guint64 first = ar.first;
  g_assert_true(source_run_until(&run, NULL, NULL, 20000));
  g_thread_join(ar.thread);
  g_free(ar.a.path);
  source_test_assert_final(&run, GS_TRACE_SOURCE_BROKEN, "The log is damaged: ",
                           source_test_count_events(bad, n));
  g_assert_cmpuint(gs_trace_model_n_events(run.model), >, first);
  source_run_clear(&run);
}

static void test_missing_file(void) {
  g_autofree char *path = g_build_filename(source_test_dir(), "no-such.gst", NULL);
  source_run run = {.source = gs_trace_source_new_file(path, TRUE)};
  g_assert_true(source_run_until(&run, NULL, NULL, 5000));
  g_assert_cmpint(gs_trace_source_get_state(run.source), ==, GS_TRACE_SOURCE_BROKEN);
  source_test_assert_message(run.source, "Cannot open ");
  source_test_assert_message(run.source, "no-such.gst");
  g_assert_null(run.model);
  source_run_clear(&run);

  run.source = gs_trace_source_new_file(source_test_dir(), FALSE);
  g_assert_true(source_run_until(&run, NULL, NULL, 5000));
  g_assert_cmpint(gs_trace_source_get_state(run.source), ==, GS_TRACE_SOURCE_BROKEN);
  source_test_assert_message(run.source, "it is a folder");
  source_run_clear(&run);
}

/* A file that holds no log gets the sentence every command gives, read once or followed: an
 * empty one says so, any other says it is not a Gradscope log and shows its first bytes. */
static void test_not_a_log(void) {
  g_autofree char *junk = g_build_filename(source_test_dir(), "junk.txt", NULL);
  g_autofree char *empty = g_build_filename(source_test_dir(), "empty.gst", NULL);
  g_assert_true(g_file_set_contents(junk, "hello, not a log at all", -1, NULL));
  g_assert_true(g_file_set_contents(empty, "", 0, NULL));
  for (int follow = 0; follow < 2; follow++) {
    source_run run = {.source = gs_trace_source_new_file(junk, follow)};
    g_assert_true(source_run_until(&run, NULL, NULL, 5000));
    g_assert_cmpint(gs_trace_source_get_state(run.source), ==, GS_TRACE_SOURCE_BROKEN);
    source_test_assert_message(run.source, "junk.txt is not a Gradscope log (no GRADSCOP "
                                           "header: it starts with the bytes 68 65 6c 6c");
    source_run_clear(&run);
  }
  source_run run = {.source = gs_trace_source_new_file(empty, FALSE)};
  g_assert_true(source_run_until(&run, NULL, NULL, 5000));
  g_assert_cmpint(gs_trace_source_get_state(run.source), ==, GS_TRACE_SOURCE_BROKEN);
  source_test_assert_message(run.source, "empty.gst is empty: a Gradscope log starts with a "
                                         "64-byte GRADSCOP header");
  source_run_clear(&run);
}

/* Follows a whole log, lets change() do something to the file, and expects the source to
 * break saying part, with every event it had kept. */
static void follow_then(const char *name, void (*change)(const char *path, GBytes *log),
                        const char *part) {
  g_autoptr(GBytes) log = workload_log();
  gsize n;
  const guint8 *bytes = g_bytes_get_data(log, &n);
  g_autofree char *path = write_temp(name, bytes, n);
  source_run run = {.source = gs_trace_source_new_file(path, TRUE)};
  guint64 total = source_test_count_events(bytes, n);
  g_assert_true(source_run_until(&run, reached, &total, 10000));
  change(path, log);
  g_assert_true(source_run_until(&run, NULL, NULL, 5000));
  source_test_assert_final(&run, GS_TRACE_SOURCE_BROKEN, part, total);
  source_run_clear(&run);
}

static void truncate_to_64(const char *path, GBytes *log) {
  (void)log;
  g_assert_cmpint(truncate(path, 64), ==, 0);
}

static void replace_by_rename(const char *path, GBytes *log) {
  /* g_file_set_contents writes a new file and renames it over path. */
  g_assert_true(g_file_set_contents(path, g_bytes_get_data(log, NULL),
                                    (gssize)g_bytes_get_size(log), NULL));
}

/* A program restarted with the same log path truncates it: not a continuation. */
static void test_truncated_under_follower(void) {
  follow_then("restarted.gst", truncate_to_64, "The file was truncated to 64 bytes while ");
}

/* A file written elsewhere and renamed over the followed one is a different log. */
static void test_replaced_under_follower(void) {
  follow_then("replaced.gst", replace_by_rename, "was replaced by another file");
}

/* Threads of this process now. */
static guint count_threads(void) {
  GDir *dir = g_dir_open("/proc/self/task", 0, NULL);
  g_assert_nonnull(dir);
  guint n = 0;
  while (g_dir_read_name(dir))
    n++;
  g_dir_close(dir);
  return n;
}

/* Dropping a source that is following stops its worker: the thread is gone when the unref
 * returns (a worker left polling would hold the file and the model). */
static void test_unref_while_following(void) {
  g_autoptr(GBytes) log = workload_log();
  gsize n;
  const guint8 *bytes = g_bytes_get_data(log, &n);
  g_autofree char *path = write_temp("dropped.gst", bytes, n);
  guint threads_before = count_threads();
  source_run run = {.source = gs_trace_source_new_file(path, TRUE)};
  guint64 total = source_test_count_events(bytes, n);
  g_assert_true(source_run_until(&run, reached, &total, 10000));
  g_assert_cmpuint(count_threads(), ==, threads_before + 1); /* its worker, following */
  source_run_clear(&run);
  g_assert_cmpuint(count_threads(), ==, threads_before);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/source/file/read-whole", test_read_whole);
  g_test_add_func("/source/file/follow-growing-file", test_follow_growing_file);
  g_test_add_func("/source/file/big-file-loads-off-the-ui-thread",
                  test_big_file_loads_off_the_ui_thread);
  g_test_add_func("/source/file/pump-keeps-to-its-budget", test_pump_keeps_to_its_budget);
  g_test_add_func("/source/file/cut-tail", test_cut_tail);
  g_test_add_func("/source/file/damage-in-loaded-part", test_damage_in_loaded_part);
  g_test_add_func("/source/file/damage-while-following", test_damage_while_following);
  g_test_add_func("/source/file/missing-file", test_missing_file);
  g_test_add_func("/source/file/not-a-log", test_not_a_log);
  g_test_add_func("/source/file/truncated-under-follower", test_truncated_under_follower);
  g_test_add_func("/source/file/replaced-under-follower", test_replaced_under_follower);
  g_test_add_func("/source/file/unref-while-following", test_unref_while_following);
  int status = g_test_run();
  source_test_cleanup();
  return status;
}
