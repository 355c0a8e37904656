/* test-trace-stats.c: the counts behind `gradscope stats` (inspector/model/analysis/
 * trace-stats.c) on a log with a backward pass nested in another, as reentrant checkpointing
 * records it: the time in backward is the outer pass's, counted once, and the run summary
 * lists both passes. */
#include "model-test-util.h"
#include "run-summary.h"
#include "trace-stats.h"

/* The function's backward recomputes x * w with grad mode on and runs a backward through it,
 * inside the outer pass. */
static bool recompute_backward(const gs_function_call *call) {
  gs_tensor w = *(const gs_tensor *)call->user_data;
  bool was = gs_set_grad_enabled(true);
  gs_tensor x = gs_detach(call->saved[0]);
  gs_set_requires_grad(x, true);
  gs_tensor y = gs_mul(x, w);
  gs_backward_with(y, call->grad_output, false);
  call->grad_inputs[0] = gs_clone(gs_grad(x));
  gs_dispose(y);
  gs_dispose(x);
  gs_set_grad_enabled(was);
  return true;
}

static void nested_workload(void) {
  const int64_t shape[] = {3};
  gs_tensor x = gs_ones(GS_F32, shape, 1), w = gs_ones(GS_F32, shape, 1);
  gs_set_requires_grad(x, true);
  gs_set_requires_grad(w, true);
  gs_tensor h = gs_exp(x);
  gs_no_grad_begin();
  gs_tensor y = gs_mul(h, w);
  gs_no_grad_end();
  gs_function fn = {.name = "CheckpointBackward",
                    .backward = recompute_backward,
                    .saved = &h,
                    .n_saved = 1,
                    .user_data = &w};
  g_assert_cmpint(gs_function_record(y, &h, 1, &fn), ==, 1);
  gs_tensor e = gs_exp(y), loss = gs_sum(e, NULL, 0, false);
  gs_backward(loss);
  gs_tensor all[] = {loss, e, y, h, w, x};
  for (guint i = 0; i < G_N_ELEMENTS(all); i++)
    gs_dispose(all[i]);
}

static void test_nested_pass_counts_once(void) {
  char *path = record_log(nested_workload);
  g_autoptr(GBytes) bytes = read_log_bytes(path);
  gs_trace_reader *reader = reader_of_bytes(bytes);
  g_autoptr(gs_trace_stats) stats = gs_trace_stats_new();
  gs_trace_event e;
  guint64 begins[2] = {0}, ends[2] = {0};
  int depth = 0, seen = 0;
  while (gs_trace_reader_next(reader, &e) == GS_TRACE_EVENT) {
    if (e.kind == GS_TRACE_BACKWARD_BEGIN) {
      g_assert_cmpint(depth, <, 2);
      begins[depth++] = e.time_ns;
      seen++;
    } else if (e.kind == GS_TRACE_BACKWARD_END) {
      g_assert_cmpint(depth, >, 0);
      ends[--depth] = e.time_ns;
    }
    gs_trace_stats_add(stats, &e, reader);
  }
  gs_trace_reader_free(reader);
  g_assert_cmpint(seen, ==, 2);
  g_assert_cmpint(depth, ==, 0);
  /* The outer pass's nodes around the inner pass take time of their own. */
  g_assert_cmpuint(ends[0] - begins[0], >, ends[1] - begins[1]);
  g_assert_cmpuint(stats->backward_ns, ==, ends[0] - begins[0]);
  g_assert_cmpuint(g_hash_table_size(stats->open_backward), ==, 0);
  g_assert_cmpuint(g_hash_table_size(stats->backward_depth), ==, 0);

  g_autoptr(GError) error = NULL;
  g_autoptr(gs_run_summary) summary = gs_run_summary_read(path, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(summary->passes->len, ==, 2);
  remove_log(path);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/trace-stats/nested-pass-counts-once", test_nested_pass_counts_once);
  return g_test_run();
}
