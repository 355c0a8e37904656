/* bench-stops.c: how long things that must stop or answer "promptly" take: the times the unit
 * tests used to assert and now leave to a benchmark (tests/inspector/source/test-source-file.c,
 * test-source-spawn.c, test-loader-workers.c and test-trace-model-scopes.c check the same
 * behaviour by order and counted work).
 *
 * Prints stop_follow_ms (dropping a source that follows a file: its worker leaves and is
 * joined), stop_spawn_ms (dropping a source running `sleep 30`: the program is killed and
 * reaped), loader_hang_over_ms (a DataLoader worker that hangs with timeout_ms = 200: the time
 * to the error beyond those 200 ms), loader_reset_stuck_ms (reset of persistent workers, one
 * stuck, with timeout_ms = 200) and group_stats_us (one scope group's totals at an event,
 * over 100 k instances, the median of 2,000 at spread events). */
#include <gradscope/gradscope.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <unistd.h>

#include "bench-util.h"
#include "gs-trace-source.h"
#include "trace-model.h"

/* Runs the default main context until the source has a model and has read total bytes. */
static gs_trace_model *follow_until_read(GsTraceSource *source, guint64 total) {
  gs_trace_model *m = NULL;
  double until = bench_now_s() + 30;
  while (bench_now_s() < until) {
    while (g_main_context_iteration(NULL, FALSE))
      ;
    if (!m)
      m = gs_trace_source_take_model(source);
    if (m && gs_trace_source_get_bytes_received(source) + gs_trace_model_bytes_fed(m) >= total)
      return m;
    g_usleep(2000);
  }
  return m;
}

static double stop_follow_ms(const char *path, guint64 size) {
  GsTraceSource *source = gs_trace_source_new_file(path, TRUE);
  gs_trace_model *m = follow_until_read(source, size);
  double start = bench_now_s();
  g_object_unref(source);
  double ms = (bench_now_s() - start) * 1e3;
  if (m)
    gs_trace_model_free(m);
  return ms;
}

static double stop_spawn_ms(void) {
  const char *argv[] = {"sleep", "30", NULL};
  GsTraceSource *source = gs_trace_source_new_spawn(argv, NULL, -1, -1, NULL);
  if (!source)
    return -1;
  g_usleep(100 * 1000); /* running, not starting */
  double start = bench_now_s();
  g_object_unref(source);
  return (bench_now_s() - start) * 1e3;
}

/* A dataset of scalars whose sample `hang` never returns. */
static bool hanging_item(void *user, int64_t i, gs_tensor *out) {
  if (i == *(int64_t *)user)
    for (;;)
      pause();
  out[0] = gs_scalar(GS_F32, (double)i);
  return true;
}

static double loader_hang_over_ms(void) {
  int64_t hang = 4;
  gs_dataset ds = {.length = 16, .n_fields = 1, .get_item = hanging_item, .user = &hang};
  gs_data_loader *l = gs_data_loader_new(
      &ds, &(gs_loader_options){.batch_size = 2, .num_workers = 2, .timeout_ms = 200});
  gs_error_handler old = gs_set_error_handler(gs_error_handler_return, NULL, NULL);
  gs_tensor t;
  double start = bench_now_s(), failed_at = start;
  for (;;) {
    double before = bench_now_s();
    if (!gs_data_loader_next(l, &t)) {
      failed_at = bench_now_s();
      start = before; /* from the request that hung */
      break;
    }
    gs_dispose(t);
  }
  gs_set_error_handler(old, NULL, NULL);
  gs_clear_error();
  gs_data_loader_free(l);
  return (failed_at - start) * 1e3 - 200;
}

static double loader_reset_stuck_ms(void) {
  int64_t hang = 3; /* batch 1: worker 1's */
  gs_dataset ds = {.length = 16, .n_fields = 1, .get_item = hanging_item, .user = &hang};
  gs_data_loader *l = gs_data_loader_new(
      &ds, &(gs_loader_options){.batch_size = 2, .num_workers = 2, .timeout_ms = 200,
                                .persistent_workers = true});
  gs_tensor t;
  if (gs_data_loader_next(l, &t))
    gs_dispose(t);
  g_usleep(100 * 1000); /* worker 1 is inside the hanging sample by now */
  double start = bench_now_s();
  gs_data_loader_reset(l);
  double ms = (bench_now_s() - start) * 1e3;
  gs_data_loader_free(l);
  return ms;
}

/* 100 k "step" scopes under one epoch, every other one moving its tensor out. */
static void record_many_scopes(const char *path) {
  const int64_t shape[] = {2};
  gs_trace_open(path);
  gs_scope epoch = gs_scope_begin("epoch");
  for (int i = 0; i < 100000; i++) {
    gs_scope s = gs_scope_begin("step");
    gs_tensor t = gs_ones(GS_F32, shape, 1);
    if (i % 2)
      gs_move_to_outer(t);
    gs_scope_end(s);
  }
  gs_scope_end(epoch);
  gs_trace_close();
}

static double group_stats_us(const char *path) {
  gs_trace_model *m = gs_trace_model_load_file(path, NULL, NULL, NULL, NULL);
  if (!m)
    return -1;
  const gs_replay_scope *epoch = NULL;
  for (guint i = 0; i < gs_trace_model_n_scopes(m) && !epoch; i++)
    if (g_strcmp0(gs_trace_model_scope_at(m, i)->name, "epoch") == 0)
      epoch = gs_trace_model_scope_at(m, i);
  const GArray *groups = epoch ? gs_trace_model_scope_groups(m, epoch->id) : NULL;
  if (!groups || groups->len == 0) {
    gs_trace_model_free(m);
    return -1;
  }
  guint steps = g_array_index(groups, guint, 0);
  guint64 n = gs_trace_model_n_events(m);
  enum { QUERIES = 2000 };
  static double samples[QUERIES];
  for (guint q = 0; q < QUERIES; q++) {
    guint64 index = n * q / QUERIES;
    const gs_replay *state = gs_trace_model_seek(m, index);
    gs_scope_group_stats st;
    double start = bench_now_s();
    gs_trace_model_scope_group_stats(m, steps, state, index, &st);
    samples[q] = (bench_now_s() - start) * 1e6;
    bench_escape(&st);
  }
  gs_trace_model_free(m);
  return bench_median(samples, QUERIES);
}

int main(void) {
  char *dir = g_dir_make_tmp("bench-stops-XXXXXX", NULL);
  if (!dir)
    return 1;
  char *log = g_build_filename(dir, "scopes.gst", NULL);
  record_many_scopes(log);
  GStatBuf st;
  if (g_stat(log, &st) != 0)
    return 1;
  bench_result("stop_follow_ms", stop_follow_ms(log, (guint64)st.st_size), "ms");
  bench_result("stop_spawn_ms", stop_spawn_ms(), "ms");
  bench_result("loader_hang_over_ms", loader_hang_over_ms(), "ms");
  bench_result("loader_reset_stuck_ms", loader_reset_stuck_ms(), "ms");
  bench_result("group_stats_us", group_stats_us(log), "us");
  g_unlink(log);
  g_rmdir(dir);
  g_free(log);
  g_free(dir);
  return 0;
}
