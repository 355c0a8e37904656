/* source-test-util.c: the source tests' shared pieces (see source-test-util.h). */
#include "source-test-util.h"

#include <glib/gstdio.h>
#include <gradscope/trace.h>

static char *test_dir;

const char *source_test_workload(void) {
  const char *path = g_getenv("GS_CLI_WORKLOAD");
  g_assert_nonnull(path); /* set by meson.build */
  return path;
}

GBytes *source_test_record_workload(const char *path) {
  const char *argv[] = {source_test_workload(), NULL};
  g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "GS_TRACE", path, TRUE);
  env = g_environ_unsetenv(env, "GS_TRACE_FD");
  g_autoptr(GError) error = NULL;
  int status = -1;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, env, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                             NULL, NULL, &status, &error));
  g_assert_no_error(error);
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  char *bytes = NULL;
  gsize n = 0;
  g_assert_true(g_file_get_contents(path, &bytes, &n, &error));
  g_assert_cmpuint(n, >, 1000);
  return g_bytes_new_take(bytes, n);
}

guint64 source_test_count_events(const void *bytes, gsize n) {
  gs_trace_reader *reader = gs_trace_reader_new();
  gs_trace_reader_feed(reader, bytes, n);
  guint64 count = 0;
  gs_trace_event event;
  while (gs_trace_reader_next(reader, &event) == GS_TRACE_EVENT)
    count += !gs_trace_kind_is_table(event.kind); /* string-table entries are not events to the model */
  gs_trace_reader_free(reader);
  return count;
}

void source_test_assert_message(GsTraceSource *source, const char *part) {
  const char *message = gs_trace_source_get_message(source);
  if (!message || !strstr(message, part))
    g_error("expected the message to contain \"%s\", got \"%s\"", part, message);
}

GBytes *source_test_record_cut(const char *name, gsize cut_back, guint64 *kept) {
  g_autofree char *path = g_build_filename(source_test_dir(), name, NULL);
  GBytes *log = source_test_record_workload(path);
  gsize n;
  const guint8 *bytes = g_bytes_get_data(log, &n);
  *kept = source_test_count_events(bytes, n - cut_back);
  g_assert_cmpuint(*kept, >, 0);
  g_assert_cmpuint(*kept, <, source_test_count_events(bytes, n));
  return log;
}

const char *source_test_dir(void) {
  if (!test_dir) {
    g_autoptr(GError) error = NULL;
    test_dir = g_dir_make_tmp("gs-source-XXXXXX", &error);
    g_assert_no_error(error);
  }
  return test_dir;
}

static void remove_tree(const char *path) {
  GDir *dir = g_dir_open(path, 0, NULL);
  if (dir) {
    const char *name;
    while ((name = g_dir_read_name(dir))) {
      g_autofree char *child = g_build_filename(path, name, NULL);
      remove_tree(child);
    }
    g_dir_close(dir);
  }
  g_remove(path);
}

void source_test_cleanup(void) {
  if (test_dir)
    remove_tree(test_dir);
  g_clear_pointer(&test_dir, g_free);
}

gboolean source_run_is_final(source_run *run, gpointer data) {
  (void)data;
  GsTraceSourceState state = gs_trace_source_get_state(run->source);
  return state == GS_TRACE_SOURCE_ENDED || state == GS_TRACE_SOURCE_BROKEN;
}

/* One frame: what the app's tick callback does. */
static void frame(source_run *run) {
  while (g_main_context_iteration(NULL, FALSE))
    ;
  if (!run->model) {
    run->model = gs_trace_source_take_model(run->source);
    if (!run->model && gs_trace_source_get_kind(run->source) != GS_TRACE_SOURCE_FILE)
      run->model = gs_trace_model_new();
  }
  if (!run->model)
    return; /* a file still loading */
  guint64 added = gs_trace_source_pump(run->source, run->model, 2000);
  if (added)
    run->growths++;
  run->events += added;
  g_assert_cmpuint(gs_trace_model_n_events(run->model), >=, run->events);
  run->events = gs_trace_model_n_events(run->model); /* a loaded model starts full */
}

gboolean source_run_until(source_run *run, source_run_done done, gpointer data, int timeout_ms) {
  if (!done)
    done = source_run_is_final;
  gint64 until = g_get_monotonic_time() + (gint64)timeout_ms * 1000;
  while (g_get_monotonic_time() < until) {
    frame(run);
    if (done(run, data))
      return TRUE;
    g_usleep(2000);
  }
  return FALSE;
}

void source_run_clear(source_run *run) {
  g_clear_object(&run->source);
  g_clear_pointer(&run->model, gs_trace_model_free);
}

void source_test_assert_final(source_run *run, GsTraceSourceState state, const char *part,
                              guint64 events) {
  g_assert_cmpint(gs_trace_source_get_state(run->source), ==, state);
  source_test_assert_message(run->source, part);
  g_assert_nonnull(run->model);
  g_assert_cmpuint(gs_trace_model_n_events(run->model), ==, events);
}
