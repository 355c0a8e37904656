/* bench-matmul.c: gs_matmul's cost against calling cblas_sgemm directly on the same data.
 *
 * The gap is gs_matmul's per-call overhead (handle lookups, validation, the result's
 * allocation from the cache, registration) plus whatever copies it makes; the target is a
 * ratio (direct time / gs_matmul time) of at least 0.8 at 64x64x64 and 0.95 at 1024.
 * Each timing is the best of several trials, as the machine may be shared.
 * Usage: bench-matmul [trials]   (set OPENBLAS_NUM_THREADS and OPENBLAS_CORETYPE to compare
 * like with like).
 */
#include <cblas.h>
#include <gradscope/gradscope.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Seconds per call, best of trials, each trial reps calls. */
static double time_direct(int64_t n, const float *a, const float *b, float *c, bool b_trans,
                          int reps, int trials) {
  double best = 1e30;
  for (int t = 0; t < trials; t++) {
    double start = now();
    for (int r = 0; r < reps; r++)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, b_trans ? CblasTrans : CblasNoTrans, (int)n,
                  (int)n, (int)n, 1.0f, a, (int)n, b, (int)n, 0.0f, c, (int)n);
    double per_call = (now() - start) / reps;
    best = per_call < best ? per_call : best;
  }
  return best;
}

static double time_gradscope(gs_tensor a, gs_tensor b, int reps, int trials) {
  double best = 1e30;
  for (int t = 0; t < trials; t++) {
    double start = now();
    for (int r = 0; r < reps; r++)
      gs_dispose(gs_matmul(a, b));
    double per_call = (now() - start) / reps;
    best = per_call < best ? per_call : best;
  }
  return best;
}

int main(int argc, char **argv) {
  int trials = argc > 1 ? atoi(argv[1]) : 7;
  static const int64_t sizes[] = {64, 256, 1024};
  printf("%6s %-10s %12s %12s %7s\n", "n", "b layout", "cblas (us)", "gs (us)", "ratio");
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    int64_t n = sizes[i], shape[2] = {n, n};
    double flops = 2.0 * (double)n * (double)n * (double)n;
    int reps = (int)(2e9 / flops) + 1; /* about 2 GFLOP per trial */
    gs_tensor a = gs_randn(GS_F32, shape, 2, NULL), b = gs_randn(GS_F32, shape, 2, NULL);
    gs_tensor bt = gs_t(b); /* the same bytes read as a transpose */
    float *c = malloc(sizeof(float) * (size_t)(n * n));
    const float *pa = gs_data(a), *pb = gs_data(b);
    for (int trans = 0; trans < 2; trans++) {
      double direct = time_direct(n, pa, pb, c, trans, reps, trials);
      double ours = time_gradscope(a, trans ? bt : b, reps, trials);
      printf("%6lld %-10s %12.2f %12.2f %7.3f\n", (long long)n,
             trans ? "transposed" : "contiguous", direct * 1e6, ours * 1e6, direct / ours);
    }
    free(c);
    gs_dispose(a);
    gs_dispose(b);
    gs_dispose(bt);
  }
  return 0;
}
