/* test-source-spawn.c: programs run as sources: cli-workload's whole log through the pipe
 * with its exit status, a program's output and non-zero status, a program killed after
 * writing half a chunk (its events kept, the signal and the cut both said), stopping a
 * program, dropping a source whose program runs on, and programs that cannot start. */
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>

#include "source-test-util.h"

static void test_workload(void) {
  g_autofree char *log_path = g_build_filename(source_test_dir(), "reference.gst", NULL);
  g_autoptr(GBytes) reference = source_test_record_workload(log_path);
  guint64 expected = source_test_count_events(g_bytes_get_data(reference, NULL),
                                              g_bytes_get_size(reference));

  const char *argv[] = {source_test_workload(), NULL};
  g_autoptr(GError) error = NULL;
  source_run run = {.source = gs_trace_source_new_spawn(argv, source_test_dir(), &error)};
  g_assert_no_error(error);
  g_assert_cmpint(gs_trace_source_get_kind(run.source), ==, GS_TRACE_SOURCE_SPAWN);
  g_assert_cmpstr(gs_trace_source_get_description(run.source), ==, source_test_workload());
  g_assert_cmpint(gs_trace_source_get_state(run.source), ==, GS_TRACE_SOURCE_LIVE);

  g_assert_true(source_run_until(&run, NULL, NULL, 20000));
  source_test_assert_final(&run, GS_TRACE_SOURCE_ENDED, "The program exited with status 0.",
                           expected);
  g_assert_cmpint(gs_trace_source_get_exit_status(run.source), ==, 0);
  g_assert_cmpuint(gs_trace_source_get_bytes_received(run.source), >, 1000);
  g_assert_cmpuint(gs_trace_source_get_bytes_pending(run.source), ==, 0);
  /* The GS_TRACE the inspector itself was started with did not reach the program. */
  g_assert_false(g_file_test(g_getenv("GS_TRACE"), G_FILE_TEST_EXISTS));
  source_run_clear(&run);
}

static void test_output_and_status(void) {
  const char *argv[] = {"/bin/sh", "-c", "echo to stdout; echo to stderr >&2; exit 3", NULL};
  g_autoptr(GError) error = NULL;
  source_run run = {.source = gs_trace_source_new_spawn(argv, NULL, &error)};
  g_assert_no_error(error);
  g_assert_cmpstr(gs_trace_source_get_description(run.source), ==,
                  "/bin/sh -c 'echo to stdout; echo to stderr >&2; exit 3'");
  g_assert_true(source_run_until(&run, NULL, NULL, 10000));
  g_assert_cmpint(gs_trace_source_get_state(run.source), ==, GS_TRACE_SOURCE_ENDED);
  g_assert_cmpstr(gs_trace_source_get_message(run.source), ==,
                  "The program exited with status 3. No event log arrived.");
  g_assert_cmpint(gs_trace_source_get_exit_status(run.source), ==, 3);
  g_autofree char *output = gs_trace_source_dup_output(run.source);
  g_assert_nonnull(strstr(output, "to stdout\n"));
  g_assert_nonnull(strstr(output, "to stderr\n"));
  g_assert_cmpuint(gs_trace_model_n_events(run.model), ==, 0);
  source_run_clear(&run);
}

/* The program writes its log up to the middle of a chunk into GS_TRACE_FD, then dies. */
static void test_killed_mid_chunk(void) {
  guint64 kept;
  g_autoptr(GBytes) log = source_test_record_cut("to-cut.gst", 13, &kept);
  g_autofree char *log_path = g_build_filename(source_test_dir(), "to-cut.gst", NULL);
  gsize cut = g_bytes_get_size(log) - 13;

  g_autofree char *cut_text = g_strdup_printf("%zu", cut);
  const char *argv[] = {"/bin/sh", "-c", "head -c \"$1\" \"$0\" >&\"$GS_TRACE_FD\"; kill -9 $$",
                        log_path, cut_text, NULL};
  g_autoptr(GError) error = NULL;
  source_run run = {.source = gs_trace_source_new_spawn(argv, NULL, &error)};
  g_assert_no_error(error);
  g_assert_true(source_run_until(&run, NULL, NULL, 10000));
  source_test_assert_final(&run, GS_TRACE_SOURCE_BROKEN, "The program was killed by signal 9 (",
                           kept);
  source_test_assert_message(run.source, "). The log ends in the middle of a chunk at byte ");
  g_assert_cmpint(gs_trace_source_get_exit_status(run.source), ==, -1);
  source_run_clear(&run);
}

/* A program that ignores SIGTERM is killed when stop is asked for again. */
static void test_stop_twice(void) {
  /* Its child sleeps on with the program's pipes open, as helpers left behind do. */
  const char *argv[] = {"/bin/sh", "-c", "trap '' TERM; sleep 30 & echo \"ready $!\"; wait",
                        NULL};
  g_autoptr(GError) error = NULL;
  source_run run = {.source = gs_trace_source_new_spawn(argv, NULL, &error)};
  g_assert_no_error(error);
  int left_behind = 0;
  for (int i = 0; i < 500 && !left_behind; i++) { /* the trap is set once "ready" is out */
    g_autofree char *output = gs_trace_source_dup_output(run.source);
    const char *ready = strstr(output, "ready ");
    if (ready && strchr(ready, '\n'))
      left_behind = atoi(ready + 6);
    g_main_context_iteration(NULL, FALSE);
    g_usleep(10000);
  }
  g_assert_cmpint(left_behind, >, 0);
  gs_trace_source_stop(run.source);
  g_assert_false(source_run_until(&run, NULL, NULL, 300)); /* ignored */
  gs_trace_source_stop(run.source);
  g_assert_true(source_run_until(&run, NULL, NULL, 5000));
  g_assert_cmpint(gs_trace_source_get_state(run.source), ==, GS_TRACE_SOURCE_ENDED);
  source_test_assert_message(run.source, "The program was killed by signal 9 (");
  source_run_clear(&run);
  kill(left_behind, SIGKILL);
}

static void test_stop(void) {
  const char *argv[] = {"sleep", "30", NULL};
  g_autoptr(GError) error = NULL;
  source_run run = {.source = gs_trace_source_new_spawn(argv, NULL, &error)};
  g_assert_no_error(error);
  gs_trace_source_stop(run.source);
  g_assert_true(source_run_until(&run, NULL, NULL, 5000));
  /* Stopped on purpose: ended, not broken, and the message says how the program ended. */
  g_assert_cmpint(gs_trace_source_get_state(run.source), ==, GS_TRACE_SOURCE_ENDED);
  source_test_assert_message(run.source, "The program was killed by signal 15 (");
  source_run_clear(&run);
}

/* Closing the inspector's view of a running program ends the program, promptly. */
static void test_unref_running(void) {
  const char *argv[] = {"sleep", "30", NULL};
  g_autoptr(GError) error = NULL;
  GsTraceSource *source = gs_trace_source_new_spawn(argv, NULL, &error);
  g_assert_no_error(error);
  gint64 start = g_get_monotonic_time();
  g_object_unref(source);
  g_assert_cmpint(g_get_monotonic_time() - start, <, 5 * G_USEC_PER_SEC);
}

static void test_cannot_start(void) {
  const char *missing[] = {"/no/such/program", NULL};
  g_autoptr(GError) error = NULL;
  GsTraceSource *source = gs_trace_source_new_spawn(missing, NULL, &error);
  g_assert_null(source);
  g_assert_nonnull(error);
  g_assert_nonnull(strstr(error->message, "/no/such/program"));
  g_clear_error(&error);

  const char *empty[] = {NULL};
  source = gs_trace_source_new_spawn(empty, NULL, &error);
  g_assert_null(source);
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull(strstr(error->message, "Expected a program to run"));
  g_clear_error(&error);

  const char *sh[] = {"/bin/sh", "-c", "true", NULL};
  source = gs_trace_source_new_spawn(sh, "/no/such/folder", &error);
  g_assert_null(source);
  g_assert_nonnull(error);
}

int main(int argc, char **argv) {
  /* A GS_TRACE the user exported must not compete with the pipe (set before any thread,
   * and after the engine in this process read its own environment). */
  g_autofree char *stray = g_build_filename(source_test_dir(), "stray.gst", NULL);
  g_setenv("GS_TRACE", stray, TRUE);
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/source/spawn/workload", test_workload);
  g_test_add_func("/source/spawn/output-and-status", test_output_and_status);
  g_test_add_func("/source/spawn/killed-mid-chunk", test_killed_mid_chunk);
  g_test_add_func("/source/spawn/stop", test_stop);
  g_test_add_func("/source/spawn/stop-twice", test_stop_twice);
  g_test_add_func("/source/spawn/unref-running", test_unref_running);
  g_test_add_func("/source/spawn/cannot-start", test_cannot_start);
  int status = g_test_run();
  source_test_cleanup();
  return status;
}
