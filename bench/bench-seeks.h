/* bench-seeks.h: the scrubber's seeks on a trace model, timed as bench-model and bench-seek
 * time them: random jumps, then single steps backwards from the middle, the worst of each in
 * wall and CPU time (a shared machine's wall time measures the neighbours too), and the
 * median jump's CPU time. */
#pragma once

#include <glib.h>
#include <time.h>

#include "bench-util.h"
#include "trace-model.h"

typedef struct bench_seek_times {
  double jump_ms, jump_cpu_ms, back_ms, back_cpu_ms;
  double jump_median_cpu_ms; /* half the jumps take at most this CPU time */
} bench_seek_times;

static inline void bench_time_seeks(gs_trace_model *m, int jumps, int steps, GRand *rand,
                                    bench_seek_times *out) {
  guint64 n = gs_trace_model_n_events(m);
  *out = (bench_seek_times){0};
  double *jump_cpu = g_new0(double, MAX(jumps, 1));
  for (int i = 0; i < jumps; i++) {
    guint64 at = (guint64)g_rand_double_range(rand, 0, (double)n);
    double s0 = bench_now_s(), c0 = bench_cpu_s();
    gs_trace_model_seek(m, at);
    jump_cpu[i] = (bench_cpu_s() - c0) * 1e3;
    out->jump_ms = MAX(out->jump_ms, (bench_now_s() - s0) * 1e3);
    out->jump_cpu_ms = MAX(out->jump_cpu_ms, jump_cpu[i]);
  }
  out->jump_median_cpu_ms = jumps ? bench_median(jump_cpu, jumps) : 0;
  g_free(jump_cpu);
  guint64 at = n / 2;
  gs_trace_model_seek(m, at);
  for (int i = 0; i < steps; i++) {
    double s0 = bench_now_s(), c0 = bench_cpu_s();
    gs_trace_model_seek(m, --at);
    out->back_ms = MAX(out->back_ms, (bench_now_s() - s0) * 1e3);
    out->back_cpu_ms = MAX(out->back_cpu_ms, (bench_cpu_s() - c0) * 1e3);
  }
}
