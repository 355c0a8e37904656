/* bench-live.c: live latency, from a traced program writing an event to that event being in
 * the inspector's model, through the socket source and the followed-file source.
 *
 * A child process (the traced program) takes a timestamp, records one mark and flushes, a
 * few ms apart, many times; the timestamps go into memory shared with the parent. The parent
 * is the inspector: a source on the main context, pumped once per 60 Hz frame as the app's
 * frame clock does, and a sample counts as arrived at the end of the pump that put its event
 * into the model. The frame period is part of what a user waits, so it is in the numbers.
 *
 * Prints per path the median and max over the samples, then live_latency_ms (the worse
 * median) and live_latency_max_ms (the worse max). Target: <= 100 ms. */
#include <gradscope/gradscope.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-util.h"
#include "gs-trace-source.h"

#define SAMPLES 200
#define FRAME_US 16667

typedef struct shared {
  double sent_s[SAMPLES]; /* when the child recorded sample i (CLOCK_MONOTONIC) */
} shared;

static void wait_for_path(const char *path) {
  for (int i = 0; i < 5000 && !g_file_test(path, G_FILE_TEST_EXISTS); i++)
    g_usleep(1000);
}

/* The traced program: a warm-up mark (its string and itself), a pause so the inspector
 * sees where the samples start, then one mark per sample, each flushed at once. */
static G_NORETURN void traced_program(const char *dest, const char *wait_path, shared *sh) {
  if (wait_path)
    wait_for_path(wait_path);
  if (gs_trace_open(dest) != 0)
    _exit(2);
  gs_trace_mark("sample");
  gs_trace_flush();
  g_usleep(300 * 1000);
  guint32 seed = 12345;
  for (int i = 0; i < SAMPLES; i++) {
    sh->sent_s[i] = bench_now_s();
    gs_trace_mark("sample");
    gs_trace_flush();
    seed = seed * 1103515245u + 12345u;
    g_usleep(1000 + (seed >> 16) % 5000); /* 1-6 ms: not in step with the frames */
  }
  gs_trace_close();
  _exit(0);
}

typedef struct result {
  double median_ms, max_ms;
  gboolean ok;
} result;

/* The inspector side: pumps once per frame until every sample arrived. */
static result measure(GsTraceSource *source, shared *sh) {
  result r = {0};
  gs_trace_model *model = NULL;
  double latency_ms[SAMPLES];
  guint64 base = 0;
  int arrived = 0;
  double deadline = bench_now_s() + 30;
  while (arrived < SAMPLES && bench_now_s() < deadline) {
    double frame_start = bench_now_s();
    while (g_main_context_iteration(NULL, FALSE))
      ;
    if (!model) {
      model = gs_trace_source_take_model(source);
      if (!model && gs_trace_source_get_kind(source) != GS_TRACE_SOURCE_FILE)
        model = gs_trace_model_new();
    }
    if (model) {
      gs_trace_source_pump(source, model, 2000);
      double now = bench_now_s();
      guint64 events = gs_trace_model_n_events(model);
      if (base == 0 && events > 0)
        base = events; /* the warm-up: string and mark */
      else if (base > 0)
        for (; arrived < SAMPLES && base + (guint64)arrived < events; arrived++)
          latency_ms[arrived] = (now - sh->sent_s[arrived]) * 1e3;
    }
    GsTraceSourceState state = gs_trace_source_get_state(source);
    if (state == GS_TRACE_SOURCE_BROKEN) {
      fprintf(stderr, "bench-live: the source broke: %s\n", gs_trace_source_get_message(source));
      break;
    }
    double rest_us = FRAME_US - (bench_now_s() - frame_start) * 1e6;
    if (rest_us > 0)
      g_usleep((gulong)rest_us);
  }
  guint64 total = model ? gs_trace_model_n_events(model) : 0;
  if (arrived == SAMPLES && total != base + SAMPLES) {
    /* One event per sample is what makes the arrival times right: say so if it was not. */
    fprintf(stderr, "bench-live: expected %" G_GUINT64_FORMAT " events (warm-up %" G_GUINT64_FORMAT
            " + %d samples), the model has %" G_GUINT64_FORMAT "\n", base + SAMPLES, base,
            SAMPLES, total);
    arrived = -1;
  }
  if (arrived == SAMPLES) {
    r.max_ms = 0;
    for (int i = 0; i < SAMPLES; i++)
      r.max_ms = MAX(r.max_ms, latency_ms[i]);
    r.median_ms = bench_median(latency_ms, SAMPLES);
    r.ok = TRUE;
  } else {
    if (arrived >= 0)
      fprintf(stderr, "bench-live: %d of %d samples arrived\n", arrived, SAMPLES);
  }
  if (model)
    gs_trace_model_free(model);
  return r;
}

static result run_socket(const char *dir, shared *sh) {
  g_autofree char *path = g_build_filename(dir, "live.sock", NULL);
  g_autofree char *dest = g_strconcat("unix:", path, NULL);
  pid_t child = fork();
  if (child == 0)
    traced_program(dest, path, sh);
  g_autoptr(GError) error = NULL;
  GsTraceSource *source = gs_trace_source_new_listen(path, &error);
  if (!source) {
    fprintf(stderr, "bench-live: %s\n", error->message);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    return (result){0};
  }
  result r = measure(source, sh);
  int status;
  waitpid(child, &status, 0);
  g_object_unref(source);
  return r;
}

static result run_file(const char *dir, shared *sh) {
  g_autofree char *path = g_build_filename(dir, "live.gst", NULL);
  pid_t child = fork();
  if (child == 0)
    traced_program(path, NULL, sh);
  wait_for_path(path);
  GsTraceSource *source = gs_trace_source_new_file(path, TRUE);
  result r = measure(source, sh);
  int status;
  waitpid(child, &status, 0);
  g_object_unref(source);
  return r;
}

static void report(const char *path, result r) {
  char name[64];
  snprintf(name, sizeof name, "live_latency_%s_median_ms", path);
  bench_result(name, r.median_ms, "ms");
  snprintf(name, sizeof name, "live_latency_%s_max_ms", path);
  bench_result(name, r.max_ms, "ms");
}

int main(void) {
  bench_print_setup();
  printf("# %d samples per path, 1-6 ms apart; the inspector pumps once per %.1f ms frame\n",
         SAMPLES, FRAME_US / 1e3);
  shared *sh = mmap(NULL, sizeof(shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                    -1, 0);
  if (sh == MAP_FAILED)
    return 1;
  char *dir = g_dir_make_tmp("bench-live-XXXXXX", NULL);
  if (!dir)
    return 1;
  /* Each child is forked while no source worker is alive (unreferencing a source joins its
   * worker), so it starts from a process with one thread of ours. */
  result file = run_file(dir, sh);
  result sock = run_socket(dir, sh);
  g_autofree char *log_path = g_build_filename(dir, "live.gst", NULL);
  g_unlink(log_path);
  g_rmdir(dir);
  g_free(dir);
  if (!file.ok || !sock.ok)
    return 1;
  report("socket", sock);
  report("file", file);
  bench_result("live_latency_ms", MAX(sock.median_ms, file.median_ms), "ms");
  bench_result("live_latency_max_ms", MAX(sock.max_ms, file.max_ms), "ms");
  return 0;
}
