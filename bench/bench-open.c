/* bench-open.c: opening a big log through the inspector's file source, as the app does: the
 * model is loaded on the source's worker while the main loop keeps running frames.
 *
 * A child process records the log (tensors created and disposed: four events each), so the
 * parent's memory holds only the model. Prints the time from creating the source to the
 * "loaded" model in hand (open_10m_s at the default 10 M events, open_100m_s with `100m`:
 * issue 20's target <= 10 s at 100 M), the CPU time of this process meanwhile (a shared
 * machine's wall time measures the neighbours too), the longest the main loop went without a
 * frame (open_ui_stall_ms, target <= 16: what a user would see as a freeze; and the progress
 * shown when it ended, open_ui_stall_at_progress, 1 for the hand-over), how many progress
 * updates arrived, the anonymous resident memory the model added per event
 * (open_rss_bytes_per_event, target <= 16), the file pages resident in this process beyond
 * that (open_rss_file_mb: at most the pages of the log being read), and the peak RSS. The
 * CPU time of the busiest thread (open_busiest_thread_cpu_s, from /proc/self/task sampled every
 * fifth frame, so a thread that has ended may miss its last few milliseconds) is the loading
 * pipeline's critical path: the wall time on free cores, one per thread counted in
 * open_busy_threads (those with a tenth of the CPU time or more); the next busiest
 * (open_second_thread_cpu_s) says how evenly the load's two threads share the work.
 *
 * Usage: bench-open [EVENTS | 100m]. GS_BENCH_OPEN_LOG=path reuses (or keeps) the log there
 * instead of recording a temporary one, so repeated timings need one recording. */
#include <glib/gstdio.h>
#include <gradscope/gradscope.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench-record.h"
#include "bench-util.h"
#include "gs-trace-source.h"

/* A field of /proc/self/status in bytes. */
static double status_bytes(const char *field) {
  return (double)bench_proc_status_kib(field) * 1024.0;
}

/* This process's CPU time, user and system, in seconds. */
static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Tensors created and disposed: storage alloc, tensor create, dispose, free each. */
static void make_and_dispose(uint64_t events) {
  const int64_t shape[] = {4};
  for (uint64_t i = 0; i < events / 4; i++)
    gs_dispose(gs_ones(GS_F32, shape, 1));
}

/* Each thread's CPU time (user and system, seconds) into cpu (tid -> double*), the latest
 * seen: threads that have ended keep their last sample (at most a frame short). */
static void sample_threads(GHashTable *cpu) {
  GDir *dir = g_dir_open("/proc/self/task", 0, NULL);
  if (!dir)
    return;
  const char *tid;
  double tick = (double)sysconf(_SC_CLK_TCK);
  while ((tid = g_dir_read_name(dir))) {
    g_autofree char *path = g_strdup_printf("/proc/self/task/%s/stat", tid);
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
      continue;
    const char *p = strrchr(text, ')'); /* the name may hold spaces */
    unsigned long utime = 0, stime = 0;
    /* After the name: state, then fields 4-13, then utime (14) and stime (15). */
    if (!p ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2)
      continue;
    double *v = g_hash_table_lookup(cpu, GINT_TO_POINTER(atoi(tid)));
    if (!v) {
      v = g_new(double, 1);
      g_hash_table_insert(cpu, GINT_TO_POINTER(atoi(tid)), v);
    }
    *v = (double)(utime + stime) / tick;
  }
  g_dir_close(dir);
}

static void count_progress(GObject *source, GParamSpec *pspec, gpointer data) {
  (void)source, (void)pspec;
  (*(guint *)data)++;
}

int main(int argc, char **argv) {
  guint64 wanted = 10000000;
  if (argc > 1)
    wanted = g_ascii_strcasecmp(argv[1], "100m") == 0 ? 100000000
                                                       : g_ascii_strtoull(argv[1], NULL, 10);
  if (wanted < 4)
    return 1;
  const char *keep = g_getenv("GS_BENCH_OPEN_LOG");
  char *dir = keep ? NULL : g_dir_make_tmp("bench-open-XXXXXX", NULL);
  if (!keep && !dir)
    return 1;
  g_autofree char *path = keep ? g_strdup(keep) : g_build_filename(dir, "open.gst", NULL);
  if (!keep || !g_file_test(path, G_FILE_TEST_EXISTS)) {
    double t0 = bench_now_s();
    bench_record_in_child(path, make_and_dispose, wanted, "bench-open");
    printf("# recorded in %.1f s\n", bench_now_s() - t0);
  }
  GStatBuf st;
  g_stat(path, &st);

  double anon_before = status_bytes("RssAnon"), file_before = status_bytes("RssFile");
  double hwm_before = status_bytes("VmHWM");
  double start = bench_now_s(), cpu_start = cpu_s(), last_frame = start, longest_gap = 0;
  double longest_gap_at = 0;
  /* The busiest thread's CPU time is the pipeline's critical path: the wall time the open
   * would take with a free core per busy thread, which a loaded machine's wall time is not. */
  g_autoptr(GHashTable) threads_before = g_hash_table_new_full(NULL, NULL, NULL, g_free);
  g_autoptr(GHashTable) threads_after = g_hash_table_new_full(NULL, NULL, NULL, g_free);
  sample_threads(threads_before);
  guint64 frames = 0;
  guint progress_updates = 0;
  GsTraceSource *source = gs_trace_source_new_file(path, FALSE);
  g_signal_connect(source, "notify::progress", G_CALLBACK(count_progress), &progress_updates);
  gs_trace_model *model = NULL;
  while (!model && bench_now_s() - start < 600) {
    while (g_main_context_iteration(NULL, FALSE)) /* one frame */
      ;
    /* Every fifth frame: reading /proc costs the UI thread about 0.1 ms a time. */
    if (frames++ % 5 == 0)
      sample_threads(threads_after);
    model = gs_trace_source_take_model(source);
    double now = bench_now_s();
    if (now - last_frame > longest_gap) {
      longest_gap = now - last_frame;
      longest_gap_at = gs_trace_source_get_progress(source);
    }
    last_frame = now;
    g_usleep(4000); /* the rest of a frame: drawing, in the app */
  }
  double open_s = bench_now_s() - start, open_cpu_s = cpu_s() - cpu_start;
  if (!model) {
    fprintf(stderr, "bench-open: the log did not load: %s\n", gs_trace_source_get_message(source));
    return 1;
  }
  guint64 events = gs_trace_model_n_events(model);
  double busiest = 0, second = 0;
  guint busy_threads = 0;
  GHashTableIter it;
  gpointer tid, after;
  g_hash_table_iter_init(&it, threads_after);
  while (g_hash_table_iter_next(&it, &tid, &after)) {
    const double *before = g_hash_table_lookup(threads_before, tid);
    double used = *(const double *)after - (before ? *before : 0);
    second = MAX(second, MIN(busiest, used));
    busiest = MAX(busiest, used);
    busy_threads += used >= 0.1 * open_cpu_s;
  }
  double anon_after = status_bytes("RssAnon"), file_after = status_bytes("RssFile");
  double hwm_after = status_bytes("VmHWM");

  printf("# %" G_GUINT64_FORMAT " events, %.1f MB log; %s\n", events, (double)st.st_size / 1e6,
         gs_trace_source_get_message(source));
  const char *size = wanted == 100000000 ? "100m" : wanted == 10000000 ? "10m" : "n";
  g_autofree char *open_name = g_strdup_printf("open_%s_s", size);
  g_autofree char *cpu_name = g_strdup_printf("open_%s_cpu_s", size);
  bench_result(open_name, open_s, "s");
  bench_result(cpu_name, open_cpu_s, "s");
  bench_result("open_busiest_thread_cpu_s", busiest, "s");
  bench_result("open_second_thread_cpu_s", second, "s");
  bench_result("open_busy_threads", busy_threads, "");
  bench_result("open_ui_stall_ms", longest_gap * 1e3, "ms");
  bench_result("open_ui_stall_at_progress", longest_gap_at, "");
  bench_result("open_progress_updates", progress_updates, "");
  bench_result("open_rss_bytes_per_event", (anon_after - anon_before) / (double)events, "B");
  bench_result("open_rss_file_mb", (file_after - file_before) / 1e6, "MB");
  bench_result("open_peak_rss_growth_mb", (hwm_after - hwm_before) / 1e6, "MB");

  gs_trace_model_free(model);
  g_object_unref(source);
  if (!keep) {
    g_unlink(path);
    g_rmdir(dir);
  }
  g_free(dir);
  return 0;
}
