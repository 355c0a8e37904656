/* graph-workloads.c: recorded programs for the graph tests (see graph-workloads.h). */
#include "graph-workloads.h"

#include <glib/gstdio.h>
#include <gradscope/gradscope.h>

void graph_workload_mlp_step(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 3);
  gs_module l1 = gs_linear_new(8, 16, true, &rng), l2 = gs_linear_new(16, 4, true, &rng);
  const int64_t xs[] = {5, 8}, ts[] = {5, 4};
  gs_scope step = gs_scope_begin("step");
  gs_tensor x = gs_randn(GS_F32, xs, 2, &rng), target = gs_randn(GS_F32, ts, 2, &rng);
  gs_trace_name(x, "batch");
  gs_tensor h = gs_relu(gs_linear_forward(l1, x));
  gs_tensor loss = gs_mse_loss(gs_linear_forward(l2, h), target, GS_REDUCTION_MEAN);
  gs_trace_name(loss, "loss");
  gs_backward(loss);
  gs_scope_end(step);
  gs_module_dispose(l1);
  gs_module_dispose(l2);
}

int graph_workload_leak_line;

void graph_workload_leaky_loop(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 7);
  gs_module model = gs_linear_new(32, 1, true, &rng);
  const int64_t xs[] = {64, 32};
  graph_workload_leak_line = __LINE__ + 3; /* the gs_randn line below */
  for (int step = 0; step < GRAPH_WORKLOAD_LEAK_STEPS; step++) {
    gs_scope s = gs_scope_begin("train step");
    gs_tensor batch = gs_detach_from_scopes(gs_randn(GS_F32, xs, 2, &rng)); /* leaked */
    gs_tensor loss = gs_move_to_outer(gs_sum(gs_module_forward(model, batch), NULL, 0, false));
    gs_backward(loss);
    gs_scope_end(s);
  }
  gs_trace_mark("end");
  gs_module_dispose(model);
}

void graph_workload_rnn(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 5);
  const int64_t ws[] = {4, 4}, hs[] = {1, 4};
  gs_tensor w = gs_randn(GS_F32, ws, 2, &rng);
  gs_set_requires_grad(w, true);
  gs_trace_name(w, "W");
  gs_tensor h = gs_zeros(GS_F32, hs, 2);
  gs_scope unroll = gs_scope_begin("unroll");
  for (int t = 0; t < GRAPH_WORKLOAD_RNN_STEPS; t++) {
    gs_scope step = gs_scope_begin("t");
    gs_tensor x = gs_randn(GS_F32, hs, 2, &rng);
    /* h leaves the step's scope: the next step needs it. */
    h = gs_move_to_outer(gs_tanh(gs_add(gs_matmul(h, w), x)));
    gs_scope_end(step);
  }
  gs_tensor loss = gs_sum(h, NULL, 0, false);
  gs_trace_name(loss, "loss");
  gs_trace_flush();
  gs_scope_end(unroll);
  (void)loss;
}

gs_trace_model *graph_workload_record(graph_workload_fn body, char **dir_out) {
  char *dir = g_dir_make_tmp("gradscope-graph-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "run.gstrace", NULL);
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  body();
  gs_trace_close();
  g_autoptr(GError) error = NULL;
  gs_trace_model *m = gs_trace_model_load_file(path, NULL, NULL, NULL, &error);
  g_assert_no_error(error);
  g_assert_nonnull(m);
  *dir_out = dir;
  return m;
}

void graph_workload_remove_dir(const char *dir) {
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name(d))) {
    g_autofree char *p = g_build_filename(dir, name, NULL);
    g_remove(p);
  }
  g_rmdir(dir);
}

guint64 graph_workload_find_kind(gs_trace_model *m, gs_trace_kind kind, guint nth) {
  for (guint64 i = 0; i < gs_trace_model_n_events(m); i++)
    if (gs_trace_model_kind_at(m, i) == kind && nth-- == 0)
      return i;
  g_assert_not_reached();
}
