/* bench-training-log.c: the long training-like log the inspector benchmarks read (see the
 * header). */
#include "bench-training-log.h"

#include <gradscope/gradscope.h>
#include <stdio.h>
#include <stdlib.h>

/* Records steps until the log has at least target events (as counted by the recorder's
 * own sequence: one step's events, measured once, times the steps). */
void bench_record_training_log(const char *path, guint64 target) {
  if (gs_trace_open(path) != 0) {
    fprintf(stderr, "bench: cannot record to %s\n", path);
    exit(1);
  }
  const int64_t wshape[] = {32, 32}, xshape[] = {16, 32};
  gs_module fc1 = gs_module_new("Linear"), fc2 = gs_module_new("Linear");
  gs_tensor w1 = gs_parameter_new(gs_full(GS_F32, wshape, 2, 0.01), true);
  gs_tensor w2 = gs_parameter_new(gs_full(GS_F32, wshape, 2, 0.02), true);
  gs_module_register_parameter(fc1, "weight", w1);
  gs_module_register_parameter(fc2, "weight", w2);
  /* ~91 events per step. */
  guint64 steps = target / 90 + 1;
  for (guint64 step = 0; step < steps; step++) {
    if (step % 100 == 0) {
      char label[32];
      snprintf(label, sizeof label, "epoch %llu", (unsigned long long)(step / 100 + 1));
      gs_trace_mark(label);
    }
    gs_scope s = gs_scope_begin("train step");
    gs_tensor x = gs_full(GS_F32, xshape, 2, 1.0);
    gs_tensor h = gs_relu(gs_matmul(x, w1));
    gs_tensor y = gs_matmul(h, w2);
    gs_tensor loss = gs_sum(y, NULL, 0, false);
    gs_backward(loss);
    gs_zero_grad(w1);
    gs_zero_grad(w2);
    gs_scope_end(s);
  }
  gs_module_dispose(fc1);
  gs_module_dispose(fc2);
  gs_trace_close();
}
