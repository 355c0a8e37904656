/* bench-open.c: opening a 10 M-event log through the inspector's file source, as the app
 * does: the model is loaded on the source's worker while the main loop keeps running frames.
 *
 * A child process records the log (tensors created and disposed: four events each), so the
 * parent's memory holds only the model. Prints the time from creating the source to the
 * "loaded" model in hand (open_10m_s, target <= 3 s), the longest the main loop went without
 * a frame meanwhile (open_ui_stall_ms: what a user would see as a freeze), how many progress
 * updates arrived, and the resident memory the model added per event (open_rss_bytes_per_event,
 * target <= 32). Pass another event count as the first argument to try other sizes. */
#include <gradscope/gradscope.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "bench-record.h"
#include "bench-util.h"
#include "gs-trace-source.h"

/* Resident bytes of this process now. */
static double rss_bytes(void) {
  long pages_total = 0, pages_resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f)
    return 0;
  if (fscanf(f, "%ld %ld", &pages_total, &pages_resident) != 2)
    pages_resident = 0;
  fclose(f);
  return (double)pages_resident * (double)sysconf(_SC_PAGESIZE);
}

/* Tensors created and disposed: storage alloc, tensor create, dispose, free each. */
static void make_and_dispose(uint64_t events) {
  const int64_t shape[] = {4};
  for (uint64_t i = 0; i < events / 4; i++)
    gs_dispose(gs_ones(GS_F32, shape, 1));
}

static void count_progress(GObject *source, GParamSpec *pspec, gpointer data) {
  (void)source, (void)pspec;
  (*(guint *)data)++;
}

int main(int argc, char **argv) {
  guint64 wanted = argc > 1 ? g_ascii_strtoull(argv[1], NULL, 10) : 10000000;
  char *dir = g_dir_make_tmp("bench-open-XXXXXX", NULL);
  if (!dir || wanted < 4)
    return 1;
  g_autofree char *path = g_build_filename(dir, "open.gst", NULL);
  bench_record_in_child(path, make_and_dispose, wanted, "bench-open");
  GStatBuf st;
  g_stat(path, &st);

  double rss_before = rss_bytes();
  double start = bench_now_s(), last_frame = start, longest_gap = 0;
  guint progress_updates = 0;
  GsTraceSource *source = gs_trace_source_new_file(path, FALSE);
  g_signal_connect(source, "notify::progress", G_CALLBACK(count_progress), &progress_updates);
  gs_trace_model *model = NULL;
  while (!model && bench_now_s() - start < 120) {
    while (g_main_context_iteration(NULL, FALSE)) /* one frame */
      ;
    model = gs_trace_source_take_model(source);
    double now = bench_now_s();
    longest_gap = MAX(longest_gap, now - last_frame);
    last_frame = now;
    g_usleep(4000); /* the rest of a frame: drawing, in the app */
  }
  double open_s = bench_now_s() - start;
  if (!model) {
    fprintf(stderr, "bench-open: the log did not load: %s\n", gs_trace_source_get_message(source));
    return 1;
  }
  guint64 events = gs_trace_model_n_events(model);
  double rss_after = rss_bytes();

  printf("# %" G_GUINT64_FORMAT " events, %.1f MB log; %s\n", events, (double)st.st_size / 1e6,
         gs_trace_source_get_message(source));
  bench_result("open_10m_s", open_s, "s");
  bench_result("open_ui_stall_ms", longest_gap * 1e3, "ms");
  bench_result("open_progress_updates", progress_updates, "");
  bench_result("open_rss_bytes_per_event", (rss_after - rss_before) / (double)events, "B");

  gs_trace_model_free(model);
  g_object_unref(source);
  g_unlink(path);
  g_rmdir(dir);
  g_free(dir);
  return 0;
}
