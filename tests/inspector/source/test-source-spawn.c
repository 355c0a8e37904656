/* test-source-spawn.c: programs run as sources: cli-workload's whole log through the pipe
 * with its exit status, a program's output and non-zero status, its output as lines (each
 * with its stream, in order, lines cut across reads, a last line with no newline, bytes that
 * are not UTF-8, a burst, a very long line) and echoed unchanged, a program killed after
 * writing half a chunk (its events kept, the signal and the cut both said), stopping a
 * program, dropping a source whose program runs on, and programs that cannot start. */
#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "source-test-util.h"

/* Every output line the source still keeps (it keeps them all below its bound). */
static GPtrArray *all_output(GsTraceSource *source) {
  guint64 first;
  GPtrArray *lines = gs_trace_source_get_output(source, 0, &first);
  g_assert_cmpuint(first, ==, 0);
  g_assert_cmpuint(lines->len, ==, gs_trace_source_get_n_output(source));
  return lines;
}

/* The lines of one stream, in the order they came, as a NULL-terminated vector. */
static char **stream_lines(GPtrArray *lines, GsOutputStream stream) {
  GStrvBuilder *builder = g_strv_builder_new();
  for (guint i = 0; i < lines->len; i++) {
    const GsOutputLine *line = g_ptr_array_index(lines, i);
    if (line->stream == stream)
      g_strv_builder_add(builder, line->text);
  }
  char **strv = g_strv_builder_end(builder);
  g_strv_builder_unref(builder);
  return strv;
}

static void assert_strv(char **got, const char *const *expected) {
  for (guint i = 0; expected[i] || got[i]; i++) {
    g_assert_nonnull(got[i]);
    g_assert_nonnull(expected[i]);
    g_assert_cmpstr(got[i], ==, expected[i]);
  }
}

/* The last line is the exit sentence, and the only one of its kind. */
static void assert_exit_line(GPtrArray *lines, const char *sentence) {
  g_assert_cmpuint(lines->len, >, 0);
  const GsOutputLine *last = g_ptr_array_index(lines, lines->len - 1);
  g_assert_cmpint(last->stream, ==, GS_OUTPUT_EXIT);
  g_assert_cmpstr(last->text, ==, sentence);
  g_auto(GStrv) exits = stream_lines(lines, GS_OUTPUT_EXIT);
  g_assert_cmpuint(g_strv_length(exits), ==, 1);
}

/* A run of a source spawning argv (gs_trace_source_new_spawn), which must start. */
static source_run spawn_run(const char *const *argv, const char *cwd, int out_fd, int err_fd) {
  g_autoptr(GError) error = NULL;
  source_run run = {.source = gs_trace_source_new_spawn(argv, cwd, out_fd, err_fd, &error)};
  g_assert_no_error(error);
  return run;
}

static void test_workload(void) {
  g_autofree char *log_path = g_build_filename(source_test_dir(), "reference.gst", NULL);
  g_autoptr(GBytes) reference = source_test_record_workload(log_path);
  guint64 expected = source_test_count_events(g_bytes_get_data(reference, NULL),
                                              g_bytes_get_size(reference));

  const char *argv[] = {source_test_workload(), NULL};
  source_run run = spawn_run(argv, source_test_dir(), -1, -1);
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
  source_run run = spawn_run(argv, NULL, -1, -1);
  g_assert_cmpstr(gs_trace_source_get_description(run.source), ==,
                  "/bin/sh -c 'echo to stdout; echo to stderr >&2; exit 3'");
  g_assert_true(source_run_until(&run, NULL, NULL, 10000));
  g_assert_cmpint(gs_trace_source_get_state(run.source), ==, GS_TRACE_SOURCE_ENDED);
  g_assert_cmpstr(gs_trace_source_get_message(run.source), ==,
                  "The program exited with status 3. No event log arrived.");
  g_assert_cmpint(gs_trace_source_get_exit_status(run.source), ==, 3);
  g_autoptr(GPtrArray) lines = all_output(run.source);
  g_auto(GStrv) out = stream_lines(lines, GS_OUTPUT_STDOUT);
  g_auto(GStrv) err = stream_lines(lines, GS_OUTPUT_STDERR);
  assert_strv(out, (const char *[]){"to stdout", NULL});
  assert_strv(err, (const char *[]){"to stderr", NULL});
  /* The pane's last line is how the program ended, without the source's remarks on the log. */
  assert_exit_line(lines, "The program exited with status 3.");
  g_assert_cmpuint(gs_trace_model_n_events(run.model), ==, 0);
  source_run_clear(&run);
}

/* The program's lines: each with its stream, in order within it, whole however the reads cut
 * them (mid-line, mid-character), the last one of each stream without its newline, CRLF and
 * CR-redrawn lines as a terminal shows them, and bytes that are not UTF-8 replaced, NULs too.
 * Pauses let each write arrive in a read of its own. */
static void test_output_lines(void) {
  const char *script =
      "printf 'one\\n'; printf 'err one\\n' >&2; sleep 0.1;"
      "printf 'two\\nthr'; sleep 0.1; printf 'ee\\n';"
      "printf '\\344\\270'; sleep 0.1; printf '\\255 split\\n';" /* U+4E2D in two reads */
      "printf 'bad \\377\\376 bytes\\n'; printf 'nul\\000here\\n';"
      "printf 'crlf\\r\\n'; printf 'progress 10%%\\rprogress 100%%\\n';"
      "printf 'err half' >&2; sleep 0.1; printf ' and last' >&2;"
      "printf 'no newline at the end'";
  const char *argv[] = {"/bin/sh", "-c", script, NULL};
  source_run run = spawn_run(argv, NULL, -1, -1);
  g_assert_true(source_run_until(&run, NULL, NULL, 10000));
  g_autoptr(GPtrArray) lines = all_output(run.source);
  g_auto(GStrv) out = stream_lines(lines, GS_OUTPUT_STDOUT);
  g_auto(GStrv) err = stream_lines(lines, GS_OUTPUT_STDERR);
  assert_strv(out, (const char *[]){"one", "two", "three", "\u4e2d split",
                                    "bad \ufffd\ufffd bytes", "nul\ufffdhere", "crlf",
                                    "progress 100%", "no newline at the end", NULL});
  assert_strv(err, (const char *[]){"err one", "err half and last", NULL});
  assert_exit_line(lines, "The program exited with status 0.");
  for (guint i = 0; i < lines->len; i++) {
    const GsOutputLine *line = g_ptr_array_index(lines, i);
    g_assert_true(g_utf8_validate(line->text, -1, NULL));
  }
  /* Paused between them, the streams' lines come in the program's order. */
  const GsOutputLine *first = g_ptr_array_index(lines, 0), *second = g_ptr_array_index(lines, 1);
  g_assert_cmpstr(first->text, ==, "one");
  g_assert_cmpstr(second->text, ==, "err one");
  source_run_clear(&run);
}

static char *read_back(int fd) {
  g_assert_cmpint(lseek(fd, 0, SEEK_SET), ==, 0);
  GString *text = g_string_new(NULL);
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;)
    g_string_append_len(text, buffer, n);
  return g_string_free(text, FALSE);
}

/* What the program prints is echoed as it came, byte for byte, stdout to one place and
 * stderr to the other (the inspector's own terminal, here two files). */
static void test_echo(void) {
  g_autofree char *out_path = g_build_filename(source_test_dir(), "echo-out", NULL);
  g_autofree char *err_path = g_build_filename(source_test_dir(), "echo-err", NULL);
  int out_fd = open(out_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  int err_fd = open(err_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  g_assert_cmpint(out_fd, >=, 0);
  g_assert_cmpint(err_fd, >=, 0);
  const char *argv[] = {"/bin/sh", "-c",
                        "printf 'out \\377\\r\\n'; printf 'err\\n' >&2; printf 'par';"
                        "sleep 0.1; printf 'tial'; printf 'no newline' >&2",
                        NULL};
  source_run run = spawn_run(argv, NULL, out_fd, err_fd);
  g_assert_true(source_run_until(&run, NULL, NULL, 10000));
  source_run_clear(&run);
  g_autofree char *out = read_back(out_fd);
  g_autofree char *err = read_back(err_fd);
  g_assert_cmpstr(out, ==, "out \377\r\npartial");
  g_assert_cmpstr(err, ==, "err\nno newline");
  close(out_fd);
  close(err_fd);
}

/* An echo that cannot be written (a terminal that went away) stops the echo, not the
 * program or the inspector: no SIGPIPE, and every line still arrives. */
static void test_echo_closed(void) {
  int fds[2];
  g_assert_true(g_unix_open_pipe(fds, FD_CLOEXEC, NULL));
  close(fds[0]); /* nobody reads: a write gets EPIPE (and SIGPIPE, unless blocked) */
  const char *argv[] = {"/bin/sh", "-c", "seq 1 2000", NULL};
  source_run run = spawn_run(argv, NULL, fds[1], fds[1]);
  g_assert_true(source_run_until(&run, NULL, NULL, 10000));
  g_assert_cmpuint(gs_trace_source_get_n_output(run.source), ==, 2001);
  g_autoptr(GPtrArray) lines = all_output(run.source);
  assert_exit_line(lines, "The program exited with status 0.");
  source_run_clear(&run);
  close(fds[1]);
}

typedef struct burst {
  guint64 next;    /* the number of the next line to take */
  guint64 taken;   /* lines taken */
  guint64 dropped; /* lines dropped before they were taken */
} burst;

/* Takes the lines that arrived, as the Output pane does each time the source changes, and
 * checks each is the number it should be (line n says n + 1, as seq prints). */
static gboolean take_burst(source_run *run, gpointer data) {
  burst *b = data;
  guint64 first;
  g_autoptr(GPtrArray) lines = gs_trace_source_get_output(run->source, b->next, &first);
  g_assert_cmpuint(first, >=, b->next);
  b->dropped += first - b->next;
  for (guint i = 0; i < lines->len; i++) {
    const GsOutputLine *line = g_ptr_array_index(lines, i);
    if (line->stream == GS_OUTPUT_EXIT)
      continue;
    g_autofree char *expected = g_strdup_printf("%" G_GUINT64_FORMAT, first + i + 1);
    g_assert_cmpstr(line->text, ==, expected);
    g_assert_cmpint(line->stream, ==, GS_OUTPUT_STDOUT);
  }
  b->taken += lines->len;
  b->next = first + lines->len;
  return source_run_is_final(run, NULL);
}

/* 200,000 lines at once: none split or out of order, the kept ones the last, and what was
 * dropped before it was taken counted, so kept + dropped is every line. */
static void test_burst(void) {
  const char *argv[] = {"seq", "1", "200000", NULL};
  source_run run = spawn_run(argv, NULL, -1, -1);
  burst b = {0};
  g_assert_true(source_run_until(&run, take_burst, &b, 20000));
  take_burst(&run, &b); /* anything after the final change */
  guint64 total = 200000 + 1; /* and the exit line */
  g_assert_cmpuint(gs_trace_source_get_n_output(run.source), ==, total);
  g_assert_cmpuint(b.next, ==, total);
  g_assert_cmpuint(b.taken + b.dropped, ==, total);

  /* The source itself keeps the last lines only. */
  guint64 first;
  g_autoptr(GPtrArray) kept = gs_trace_source_get_output(run.source, 0, &first);
  g_assert_cmpuint(kept->len, ==, GS_OUTPUT_KEPT_LINES);
  g_assert_cmpuint(first, ==, total - GS_OUTPUT_KEPT_LINES);
  const GsOutputLine *last_printed = g_ptr_array_index(kept, kept->len - 2);
  g_assert_cmpstr(last_printed->text, ==, "200000");
  assert_exit_line(kept, "The program exited with status 0.");
  source_run_clear(&run);
}

/* A line longer than GS_OUTPUT_LINE_MAX comes in pieces no longer than that, which put
 * together are the line, and a multi-byte character is not cut in two. */
static void test_long_line(void) {
  /* "x", then "é" (two bytes) 20,000 times: 40,001 bytes, so a cut at 16 KiB would fall
   * inside a character; no newline until the end. */
  const char *argv[] = {"/bin/sh", "-c",
                        "printf x; i=0; while [ $i -lt 200 ]; do"
                        " printf '%0100d' 0 | sed 's/0/\xc3\xa9/g'; i=$((i+1));"
                        "done; echo; echo after",
                        NULL};
  source_run run = spawn_run(argv, NULL, -1, -1);
  g_assert_true(source_run_until(&run, NULL, NULL, 20000));
  g_autoptr(GPtrArray) lines = all_output(run.source);
  g_auto(GStrv) out = stream_lines(lines, GS_OUTPUT_STDOUT);
  guint n = g_strv_length(out);
  g_assert_cmpuint(n, ==, 4); /* 16 KiB + 16 KiB + the rest, and "after" */
  g_autoptr(GString) joined = g_string_new(NULL);
  for (guint i = 0; i + 1 < n; i++) {
    g_assert_cmpuint(strlen(out[i]), <=, GS_OUTPUT_LINE_MAX);
    g_assert_true(g_utf8_validate(out[i], -1, NULL));
    g_assert_null(strstr(out[i], "\ufffd"));
    g_string_append(joined, out[i]);
  }
  g_assert_cmpuint(g_utf8_strlen(joined->str, -1), ==, 20001);
  g_assert_cmpstr(out[n - 1], ==, "after");
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
  source_run run = spawn_run(argv, NULL, -1, -1);
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
  source_run run = spawn_run(argv, NULL, -1, -1);
  int left_behind = 0;
  for (int i = 0; i < 500 && !left_behind; i++) { /* the trap is set once "ready" is out */
    g_autoptr(GPtrArray) lines = all_output(run.source);
    if (lines->len > 0) {
      const GsOutputLine *ready = g_ptr_array_index(lines, 0);
      g_assert_true(g_str_has_prefix(ready->text, "ready "));
      left_behind = atoi(ready->text + 6);
    }
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
  source_run run = spawn_run(argv, NULL, -1, -1);
  gs_trace_source_stop(run.source);
  g_assert_true(source_run_until(&run, NULL, NULL, 5000));
  /* Stopped on purpose: ended, not broken, and the message says how the program ended. */
  g_assert_cmpint(gs_trace_source_get_state(run.source), ==, GS_TRACE_SOURCE_ENDED);
  source_test_assert_message(run.source, "The program was killed by signal 15 (");
  source_run_clear(&run);
}

static gboolean file_has_content(source_run *run, gpointer path) {
  (void)run;
  g_autofree char *text = NULL;
  return g_file_get_contents(path, &text, NULL, NULL) && text[0];
}

/* Closing the inspector's view of a running program ends the program: it is gone by the time
 * the unref returns, not left running. (How long that takes: bench-live's.) */
static void test_unref_running(void) {
  g_autofree char *pid_file = g_build_filename(source_test_dir(), "sleeper.pid", NULL);
  g_autofree char *script = g_strdup_printf("echo $$ > '%s'; exec sleep 30", pid_file);
  const char *argv[] = {"sh", "-c", script, NULL};
  source_run run = spawn_run(argv, NULL, -1, -1);
  g_assert_true(source_run_until(&run, file_has_content, pid_file, 10000));
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(pid_file, &text, NULL, NULL));
  pid_t pid = (pid_t)atoi(text);
  g_assert_cmpint(pid, >, 0);
  g_assert_cmpint(kill(pid, 0), ==, 0); /* running */
  source_run_clear(&run);
  errno = 0;
  g_assert_cmpint(kill(pid, 0), ==, -1); /* ended and reaped */
  g_assert_cmpint(errno, ==, ESRCH);
}

static void test_cannot_start(void) {
  const char *missing[] = {"/no/such/program", NULL};
  g_autoptr(GError) error = NULL;
  GsTraceSource *source = gs_trace_source_new_spawn(missing, NULL, -1, -1, &error);
  g_assert_null(source);
  g_assert_nonnull(error);
  g_assert_nonnull(strstr(error->message, "/no/such/program"));
  g_clear_error(&error);

  const char *empty[] = {NULL};
  source = gs_trace_source_new_spawn(empty, NULL, -1, -1, &error);
  g_assert_null(source);
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull(strstr(error->message, "Expected a program to run"));
  g_clear_error(&error);

  const char *sh[] = {"/bin/sh", "-c", "true", NULL};
  source = gs_trace_source_new_spawn(sh, "/no/such/folder", -1, -1, &error);
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
  g_test_add_func("/source/spawn/output-lines", test_output_lines);
  g_test_add_func("/source/spawn/echo", test_echo);
  g_test_add_func("/source/spawn/echo-closed", test_echo_closed);
  g_test_add_func("/source/spawn/burst", test_burst);
  g_test_add_func("/source/spawn/long-line", test_long_line);
  g_test_add_func("/source/spawn/killed-mid-chunk", test_killed_mid_chunk);
  g_test_add_func("/source/spawn/stop", test_stop);
  g_test_add_func("/source/spawn/stop-twice", test_stop_twice);
  g_test_add_func("/source/spawn/unref-running", test_unref_running);
  g_test_add_func("/source/spawn/cannot-start", test_cannot_start);
  int status = g_test_run();
  source_test_cleanup();
  return status;
}
