/* test-event-numbers.c: the engine's event numbers are the same with the log on or off, so
 * that an error message cites the same event whether or not the run was traced, and the
 * log's event of that number is the one the message means. The test runs one workload in two
 * child processes, untraced and traced (GS_TRACE, read when the library loads; also kept in a
 * flight recorder's ring, GS_TRACE_RING, and switched on halfway with gs_trace_open, so that
 * the log opens with a snapshot), and compares what each printed: every error message and the event counter after each step. The workload
 * makes every kind of event a log holds: scopes, moves, a module and an optimizer, a dataset,
 * views, clones that share and then copy their bytes, names and marks, backward, in-place
 * writes, a version error and a stale handle. */
#include <glib.h>
#include <gradscope/gradscope.h>
#include <stdio.h>
#include <stdlib.h>
#include <glib/gstdio.h>
#include <string.h>

static void report(const char *what) {
  printf("%s: counter %llu", what, (unsigned long long)gs_event_counter());
  const char *error = gs_last_error();
  if (error && *error)
    printf(" error: %s", error);
  printf("\n");
  gs_clear_error();
}

static void workload(void) {
  gs_set_error_handler(gs_error_handler_return, NULL, NULL);
  const int64_t shape[] = {2, 3};
  gs_scope outer = gs_scope_begin("outer");
  gs_tensor x = gs_ones(GS_F64, shape, 2);
  gs_set_requires_grad(x, true);
  gs_trace_name(x, "x");
  gs_trace_mark("start");
  report("made x");

  gs_scope inner = gs_scope_begin("inner");
  gs_tensor h = gs_mul_scalar(x, 2.0);
  gs_tensor kept = gs_move_to_outer(gs_add_scalar(h, 1.0));
  gs_scope_end(inner);
  report("moved one out");
  const char *late = getenv("GS_TRACE_LATE"); /* tracing switched on in a running program */
  if (late)
    gs_trace_open(late);

  gs_tensor c = gs_clone(kept);      /* shares the bytes copy-on-write */
  gs_add_scalar_(c, 100.0);          /* copies them */
  gs_tensor v = gs_view(kept, (int64_t[]){6}, 1);
  gs_tensor d = gs_detach(kept);
  gs_tensor y = gs_sum(gs_mul(kept, kept), NULL, 0, false);
  gs_mul_scalar_(d, 10.0);           /* kept is saved by the mul: backward will refuse */
  gs_backward(y);
  report("version error");

  gs_module lin = gs_linear_new(3, 2, true, NULL);
  gs_tensor p = gs_module_parameter(lin, "weight");
  gs_optimizer opt = gs_sgd_new(&p, 1, NULL);
  gs_tensor in = gs_ones(GS_F32, shape, 2);
  gs_tensor out = gs_sum(gs_module_forward(lin, in), NULL, 0, false);
  gs_backward(out);
  gs_optimizer_step(opt);
  report("one step");

  gs_tensor fields[] = {gs_ones(GS_F32, (int64_t[]){4, 2}, 2), gs_zeros(GS_I64, (int64_t[]){4}, 1)};
  gs_dataset ds = gs_tensor_dataset(fields, 2);
  gs_dataset_release(&ds);
  report("a dataset");

  gs_tensor gone = gs_ones(GS_F32, (int64_t[]){3}, 1);
  gs_dispose(gone);
  gs_neg(gone);
  report("stale handle");
  (void)v;
  gs_optimizer_dispose(opt);
  gs_module_dispose(lin);
  gs_scope_end(outer);
  report("end");
}

/* trace_var: GS_TRACE, GS_TRACE_LATE (the workload opens it halfway), or NULL; ring: a
 * GS_TRACE_RING size, or NULL. */
static char *run_child(const char *self, const char *trace_var, const char *trace,
                       const char *ring) {
  g_auto(GStrv) env = g_get_environ();
  env = g_environ_unsetenv(env, "GS_TRACE");
  env = g_environ_unsetenv(env, "GS_TRACE_RING");
  if (trace)
    env = g_environ_setenv(env, trace_var, trace, TRUE);
  if (ring)
    env = g_environ_setenv(env, "GS_TRACE_RING", ring, TRUE);
  char *argv[] = {(char *)self, "--child", NULL};
  char *out = NULL;
  int status = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_sync(NULL, argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL, &status,
                             &error));
  g_assert_no_error(error);
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  return out;
}

static const char *self_path;

/* The kind of the log's event numbered seq (0 if none). */
static gs_trace_kind kind_of(const char *log, uint64_t seq) {
  g_autofree char *bytes = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(log, &bytes, &len, NULL));
  gs_trace_reader *r = gs_trace_reader_new();
  gs_trace_reader_feed(r, bytes, len);
  gs_trace_event e;
  gs_trace_kind kind = 0;
  while (gs_trace_reader_next(r, &e) == GS_TRACE_EVENT)
    if (e.seq == seq && !gs_trace_kind_is_table(e.kind) && !e.derived) {
      kind = e.kind;
      break;
    }
  gs_trace_reader_free(r);
  return kind;
}

/* How many events of kind the log holds. */
static guint count_kind(const char *log, gs_trace_kind kind) {
  g_autofree char *bytes = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(log, &bytes, &len, NULL));
  gs_trace_reader *r = gs_trace_reader_new();
  gs_trace_reader_feed(r, bytes, len);
  gs_trace_event e;
  guint n = 0;
  while (gs_trace_reader_next(r, &e) == GS_TRACE_EVENT)
    n += e.kind == kind;
  gs_trace_reader_free(r);
  return n;
}

/* The number after "marker" in text. */
static uint64_t number_after(const char *text, const char *marker) {
  const char *at = strstr(text, marker);
  g_assert_nonnull(at);
  return g_ascii_strtoull(at + strlen(marker), NULL, 10);
}

static void test_same_numbers_log_on_or_off(void) {
  g_autofree char *dir = g_dir_make_tmp("gradscope-numbers-XXXXXX", NULL);
  g_autofree char *log = g_build_filename(dir, "run.gstrace", NULL);
  g_autofree char *off = run_child(self_path, NULL, NULL, NULL);
  g_autofree char *on = run_child(self_path, "GS_TRACE", log, NULL);
  g_test_message("untraced:\n%s", off);
  g_assert_nonnull(strstr(off, "modified in place by mul_scalar_ (event "));
  /* The training step ran without an error (its line has none). */
  const char *step = strstr(off, "one step: ");
  g_assert_nonnull(step);
  g_autofree char *step_line = g_strndup(step, strcspn(step, "\n"));
  g_assert_null(strstr(step_line, "error"));
  g_assert_nonnull(strstr(off, "is stale"));
  g_assert_cmpstr(on, ==, off);
  /* And the log's events of those numbers are the ones the messages mean. */
  uint64_t written = number_after(on, "modified in place by mul_scalar_ (event ");
  uint64_t disposed = number_after(on, "disposed by gs_dispose at event ");
  g_assert_cmpstr(gs_trace_kind_name(kind_of(log, written)), ==, "inplace_write");
  g_assert_cmpstr(gs_trace_kind_name(kind_of(log, disposed)), ==, "tensor_dispose");
  g_unlink(log);

  /* The same numbers in a flight recorder's ring and in a log switched on halfway, which
   * opens with a snapshot (its events take no number). */
  g_autofree char *ring = run_child(self_path, "GS_TRACE", log, "64K");
  g_assert_cmpstr(ring, ==, off);
  g_assert_cmpstr(gs_trace_kind_name(kind_of(log, written)), ==, "inplace_write");
  g_assert_cmpstr(gs_trace_kind_name(kind_of(log, disposed)), ==, "tensor_dispose");
  g_unlink(log);
  g_autofree char *late = run_child(self_path, "GS_TRACE_LATE", log, NULL);
  g_assert_cmpstr(late, ==, off);
  g_assert_cmpstr(gs_trace_kind_name(kind_of(log, written)), ==, "inplace_write");
  g_assert_cmpstr(gs_trace_kind_name(kind_of(log, disposed)), ==, "tensor_dispose");
  g_assert_cmpint(kind_of(log, 1), ==, 0); /* the log began after event 1 */
  g_assert_cmpuint(count_kind(log, GS_TRACE_SNAPSHOT_BEGIN), ==, 1);
  g_assert_cmpuint(count_kind(log, GS_TRACE_SNAPSHOT_END), ==, 1);
  g_unlink(log);
  g_rmdir(dir);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--child") == 0) {
    workload();
    return 0;
  }
  self_path = argv[0];
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/event-numbers/same-log-on-or-off", test_same_numbers_log_on_or_off);
  return g_test_run();
}
