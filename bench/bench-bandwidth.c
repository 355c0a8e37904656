/* bench-bandwidth: memory bandwidth of a large elementwise op. A 16 Mi-element f32 add, as
 *   fresh:    c = a + b into a new tensor (gs_add + gs_dispose), against a C loop that
 *             mallocs c, adds and frees (and, for reference, one that reuses a buffer);
 *   in-place: a += b (gs_add_), against the C loop a[i] += b[i].
 * Bandwidth counts the bytes the op must move: every element read plus every element
 * written, 12 bytes per element for both forms (two f32 reads, one f32 write), the same
 * definition on both sides. Warm-up, then the median of interleaved repetitions.
 * Target: gradscope at >= 0.85 of the C loop's bandwidth. */
#include <gradscope/gradscope.h>
#include <string.h>

#include "bench-util.h"

#define N (16ll << 20)
#define REPS 9
#define WARMUP 2
#define BYTES_PER_ELEM 12.0

static double gbps(double seconds) { return (double)N * BYTES_PER_ELEM / seconds * 1e-9; }

static double time_gs_fresh(gs_tensor a, gs_tensor b) {
  double t0 = bench_now_s();
  gs_tensor c = gs_add(a, b);
  gs_dispose(c);
  return bench_now_s() - t0;
}

static double time_gs_inplace(gs_tensor x, gs_tensor b) {
  double t0 = bench_now_s();
  gs_add_(x, b);
  return bench_now_s() - t0;
}

static double time_c_fresh(const float *restrict a, const float *restrict b) {
  double t0 = bench_now_s();
  float *restrict c = malloc((size_t)N * sizeof *c);
  if (!c)
    abort();
  for (int64_t i = 0; i < N; i++)
    c[i] = a[i] + b[i];
  bench_escape(c);
  free(c);
  return bench_now_s() - t0;
}

static double time_c_prealloc(float *restrict c, const float *restrict a,
                              const float *restrict b) {
  double t0 = bench_now_s();
  for (int64_t i = 0; i < N; i++)
    c[i] = a[i] + b[i];
  bench_escape(c);
  return bench_now_s() - t0;
}

static double time_c_inplace(float *restrict x, const float *restrict b) {
  double t0 = bench_now_s();
  for (int64_t i = 0; i < N; i++)
    x[i] += b[i];
  bench_escape(x);
  return bench_now_s() - t0;
}

int main(void) {
  float *av = malloc((size_t)N * sizeof *av), *bv = malloc((size_t)N * sizeof *bv);
  float *xv = malloc((size_t)N * sizeof *xv), *cv = malloc((size_t)N * sizeof *cv);
  if (!av || !bv || !xv || !cv)
    return 1;
  for (int64_t i = 0; i < N; i++) {
    av[i] = (float)(i % 1000);
    bv[i] = 1.0f / 1024.0f; /* exact in f32: repeated adds stay exact and comparable */
    xv[i] = av[i];
    cv[i] = 0.0f;
  }
  int64_t shape[] = {N};
  gs_tensor a = gs_from_data(GS_F32, shape, 1, av);
  gs_tensor b = gs_from_data(GS_F32, shape, 1, bv);
  gs_tensor x = gs_from_data(GS_F32, shape, 1, av);

  double gs_fresh[REPS], gs_inplace[REPS], c_fresh[REPS], c_prealloc[REPS], c_inplace[REPS];
  for (int r = -WARMUP; r < REPS; r++) {
    double t1 = time_gs_fresh(a, b), t2 = time_c_fresh(av, bv);
    double t3 = time_c_prealloc(cv, av, bv);
    double t4 = time_gs_inplace(x, b), t5 = time_c_inplace(xv, bv);
    if (r >= 0) {
      gs_fresh[r] = t1, c_fresh[r] = t2, c_prealloc[r] = t3;
      gs_inplace[r] = t4, c_inplace[r] = t5;
    }
  }

  /* Both in-place sides added b the same number of times: their results must agree. */
  const float *xg = gs_data(x);
  if (memcmp(xg, xv, (size_t)N * sizeof *xv) != 0) {
    fprintf(stderr, "bench-bandwidth: gs_add_ and the C loop disagree\n");
    return 1;
  }

  double gf = gbps(bench_median(gs_fresh, REPS)), cf = gbps(bench_median(c_fresh, REPS));
  double cp = gbps(bench_median(c_prealloc, REPS));
  double gi = gbps(bench_median(gs_inplace, REPS)), ci = gbps(bench_median(c_inplace, REPS));
  gs_dispose(a);
  gs_dispose(b);
  gs_dispose(x);
  free(av), free(bv), free(xv), free(cv);

  printf("# 16 Mi-element f32 add, %g bytes counted per element (2 reads + 1 write), "
         "median of %d\n", BYTES_PER_ELEM, REPS);
  printf("# c_fresh mallocs (and so page-faults) a new 64 MiB output every time;\n"
         "# c_prealloc writes into one reused buffer, as gradscope's caching allocator does\n");
  bench_print_setup();
  bench_result("add_fresh_gbps", gf, "GB/s");
  bench_result("add_fresh_c_gbps", cf, "GB/s");
  bench_result("add_fresh_c_prealloc_gbps", cp, "GB/s");
  bench_result("add_inplace_gbps", gi, "GB/s");
  bench_result("add_inplace_c_gbps", ci, "GB/s");
  bench_result("add_fresh_vs_c_ratio", gf / cf, "");
  bench_result("add_fresh_vs_c_prealloc_ratio", gf / cp, "");
  bench_result("add_inplace_vs_c_ratio", gi / ci, "");
  return 0;
}
