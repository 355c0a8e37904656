/* bench-scope: 10,000 steps of scoped work (open a scope, create and compute with a few
 * tensors, move one result out, end the scope, dispose the result), printing the live tensor
 * count, storages and RSS at the start and the end: all must be flat. Also the cost of a
 * scoped step against the same work without scopes. */
#include <gradscope/gradscope.h>
#include <string.h>

#include "bench-util.h"

/* Resident set size in KiB, from /proc/self/status. */
static long rss_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmRSS:", 6) == 0)
      kib = strtol(line + 6, NULL, 10);
  if (f)
    fclose(f);
  return kib;
}

static void step(gs_tensor w, bool scoped) {
  gs_scope s = scoped ? gs_scope_begin("step") : GS_NO_SCOPE;
  int64_t shape[2] = {64, 64};
  gs_tensor x = gs_ones(GS_F32, shape, 2);
  gs_tensor h = gs_matmul(x, w);
  gs_tensor a = gs_tanh(h);
  gs_tensor out = gs_sum(a, NULL, 0, false);
  if (scoped) {
    gs_move_to_outer(out); /* no outer scope: the caller owns it now */
    gs_scope_end(s);       /* disposes x, h, a */
  } else {
    gs_dispose(x), gs_dispose(h), gs_dispose(a);
  }
  gs_dispose(out);
}

int main(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 9);
  gs_tensor w = gs_randn(GS_F32, (int64_t[]){64, 64}, 2, &rng);
  const int steps = 10000;
  for (int i = 0; i < 100; i++) /* warm the allocator's cache and the slot table */
    step(w, true);
  gs_memory_stats m0, m1;
  gs_memory_get_stats(&m0);
  long rss0 = rss_kib();
  uint64_t live0 = gs_live_tensor_count();
  double t0 = bench_now_s();
  for (int i = 0; i < steps; i++)
    step(w, true);
  double scoped = (bench_now_s() - t0) / steps;
  long rss1 = rss_kib();
  uint64_t live1 = gs_live_tensor_count();
  gs_memory_get_stats(&m1);
  t0 = bench_now_s();
  for (int i = 0; i < steps; i++)
    step(w, false);
  double plain = (bench_now_s() - t0) / steps;
  gs_scope_stats st = gs_thread_scope_stats(GS_OBJECT_TENSOR);

  printf("# %d scoped steps: ones, matmul 64x64, tanh, sum; move the sum out; end the scope\n",
         steps);
  bench_result("live_tensors_start", (double)live0, "");
  bench_result("live_tensors_end", (double)live1, "");
  bench_result("live_storages_start", (double)m0.live_storages, "");
  bench_result("live_storages_end", (double)m1.live_storages, "");
  bench_result("rss_start_kib", (double)rss0, "KiB");
  bench_result("rss_end_kib", (double)rss1, "KiB");
  bench_result("scope_stats_live", (double)st.live, "");
  bench_result("scoped_step_us", scoped * 1e6, "us");
  bench_result("unscoped_step_us", plain * 1e6, "us");
  bench_result("scoped_vs_unscoped_ratio", scoped / plain, "");
  gs_dispose(w);
  bool flat = live1 == live0 && m1.live_storages == m0.live_storages && rss1 - rss0 < 1024;
  printf("flat=%s\n", flat ? "yes" : "no");
  return flat ? 0 : 1;
}
