/* bench-overhead: the fixed cost of one small op. Times gs_add on two 16-element f32 tensors
 * plus gs_dispose of the result, against a hand-written C loop that mallocs the output, adds
 * and frees. Both sides run interleaved in one process; each timing is the median of several
 * repetitions. Target: small_add_ns <= 100. */
#include <gradscope/gradscope.h>
#include <string.h>

#include "bench-util.h"

#define N 16
#define ITERS 200000
#define REPS 15

static double time_gradscope(gs_tensor a, gs_tensor b) {
  double t0 = bench_now_s();
  for (int i = 0; i < ITERS; i++) {
    gs_tensor c = gs_add(a, b);
    gs_dispose(c);
  }
  return (bench_now_s() - t0) / ITERS * 1e9;
}

static double time_c(const float *a, const float *b) {
  double t0 = bench_now_s();
  for (int i = 0; i < ITERS; i++) {
    float *c = malloc(N * sizeof *c);
    for (int j = 0; j < N; j++)
      c[j] = a[j] + b[j];
    bench_escape(c);
    free(c);
  }
  return (bench_now_s() - t0) / ITERS * 1e9;
}

int main(void) {
  float av[N], bv[N];
  for (int i = 0; i < N; i++)
    av[i] = (float)i, bv[i] = 0.5f * (float)i;
  int64_t shape[] = {N};
  gs_tensor a = gs_from_data(GS_F32, shape, 1, av);
  gs_tensor b = gs_from_data(GS_F32, shape, 1, bv);

  /* Check once that both sides compute the same thing. */
  gs_tensor check = gs_add(a, b);
  for (int i = 0; i < N; i++)
    if (gs_get(check, (int64_t[]){i}) != (double)(av[i] + bv[i])) {
      fprintf(stderr, "bench-overhead: gs_add gave a wrong value at %d\n", i);
      return 1;
    }
  gs_dispose(check);

  time_gradscope(a, b); /* warm up: caches, allocator, branch predictors */
  time_c(av, bv);
  double gs_ns[REPS], c_ns[REPS];
  for (int r = 0; r < REPS; r++) {
    gs_ns[r] = time_gradscope(a, b);
    c_ns[r] = time_c(av, bv);
  }
  double gs_med = bench_median(gs_ns, REPS), c_med = bench_median(c_ns, REPS);
  gs_dispose(a);
  gs_dispose(b);

  printf("# per-op cost of a 16-element f32 add with a fresh output, median of %d x %d\n",
         REPS, ITERS);
  bench_print_setup();
  bench_result("small_add_ns", gs_med, "ns");
  bench_result("small_add_c_ns", c_med, "ns");
  bench_result("small_add_vs_c_ratio", gs_med / c_med, "");
  return 0;
}
