/* bench-matmul: gs_matmul on square f32 matrices (64, 256, 1024) against cblas_sgemm called
 * directly on the same data, in GFLOP/s (2 n^3 flops per product). gs_matmul returns a new
 * tensor each call (disposed right after); sgemm writes into one preallocated output, the
 * best case. Both sides run interleaved in one process under the same OPENBLAS_* settings;
 * each figure is the median of several samples of enough calls to take ~50 ms.
 * A second case multiplies by a transposed view (gs_t(b)) against sgemm with CblasTrans: the
 * view must reach BLAS as a transposed layout, not as a copy.
 * Targets: ratio >= 0.95 at 1024 and >= 0.8 at 64. */
#include <cblas.h>
#include <gradscope/gradscope.h>
#include <math.h>

#include "bench-util.h"

#define REPS 7
#define SAMPLE_SECONDS 0.05

static double time_gs(gs_tensor a, gs_tensor b, int calls) {
  double t0 = bench_now_s();
  for (int i = 0; i < calls; i++) {
    gs_tensor c = gs_matmul(a, b);
    gs_dispose(c);
  }
  return (bench_now_s() - t0) / calls;
}

static double time_blas(const float *a, const float *b, float *c, int n, bool b_trans,
                        int calls) {
  double t0 = bench_now_s();
  for (int i = 0; i < calls; i++) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, b_trans ? CblasTrans : CblasNoTrans, n, n, n, 1.0f,
                a, n, b, n, 0.0f, c, n);
    bench_escape(c);
  }
  return (bench_now_s() - t0) / calls;
}

/* Runs one size, with b as stored or transposed; returns 0, or 1 if the two sides disagree. */
static int bench_size(int n, bool b_trans, gs_rng *rng) {
  int64_t shape[] = {n, n};
  gs_tensor a = gs_randn(GS_F32, shape, 2, rng), b_stored = gs_randn(GS_F32, shape, 2, rng);
  gs_tensor b = b_trans ? gs_t(b_stored) : gs_detach(b_stored);
  const float *ap = gs_data(a), *bp = gs_data(b_stored);
  float *c = malloc((size_t)n * (size_t)n * sizeof *c);
  if (!c)
    abort();

  /* Same data, same answer (up to summation order). */
  gs_tensor check = gs_matmul(a, b);
  time_blas(ap, bp, c, n, b_trans, 1);
  const float *g = gs_data(check);
  double worst = 0.0;
  for (int64_t i = 0; i < (int64_t)n * n; i++)
    worst = fmax(worst, fabs((double)g[i] - (double)c[i]));
  gs_dispose(check);
  if (!(worst <= 1e-3 * sqrt((double)n))) {
    fprintf(stderr, "bench-matmul: gs_matmul and sgemm differ by %g at n=%d\n", worst, n);
    return 1;
  }

  /* Warm up both, then pick a call count that makes one sample ~SAMPLE_SECONDS. */
  time_gs(a, b, 2);
  double once = time_blas(ap, bp, c, n, b_trans, 2);
  int calls = (int)ceil(SAMPLE_SECONDS / fmax(once, 1e-7));
  double gs_s[REPS], blas_s[REPS];
  for (int r = 0; r < REPS; r++) {
    gs_s[r] = time_gs(a, b, calls);
    blas_s[r] = time_blas(ap, bp, c, n, b_trans, calls);
  }
  double flops = 2.0 * n * (double)n * n;
  double gs_gflops = flops / bench_median(gs_s, REPS) * 1e-9;
  double blas_gflops = flops / bench_median(blas_s, REPS) * 1e-9;

  const char *kind = b_trans ? "_bt" : "";
  char name[64];
  snprintf(name, sizeof name, "matmul_%d%s_gflops", n, kind);
  bench_result(name, gs_gflops, "GFLOP/s");
  snprintf(name, sizeof name, "matmul_%d%s_sgemm_gflops", n, kind);
  bench_result(name, blas_gflops, "GFLOP/s");
  snprintf(name, sizeof name, "matmul_%d%s_vs_sgemm_ratio", n, kind);
  bench_result(name, gs_gflops / blas_gflops, "");

  gs_dispose(a);
  gs_dispose(b);
  gs_dispose(b_stored);
  free(c);
  return 0;
}

int main(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 1);
  printf("# square f32 matmul, gs_matmul vs cblas_sgemm on the same data, median of %d\n",
         REPS);
  bench_print_setup();
  const int sizes[] = {64, 256, 1024};
  int failed = 0;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    for (int b_trans = 0; b_trans <= 1; b_trans++)
      failed |= bench_size(sizes[i], b_trans, &rng);
  return failed;
}
