/* bench-mlp: one training step of an MLP 784-512-512-10 (ReLU) on a batch of 128 f32 rows,
 * cross_entropy (mean) and SGD (lr 0.01, momentum 0.9): the MLP benchmark, run in the
 * same form by bench/compare-torch/mlp.py. Each step runs in a dispose scope: forward (with
 * the loss), backward, optimizer step and zero_grad. One random batch is made once (seeded);
 * 20 warm-up steps, then the medians of 200 timed steps, per phase and whole, and the peak RSS.
 *
 * Usage: bench-mlp               timing (mlp_step_ms=, mlp_forward_ms=, ..., mlp_peak_rss_mib=)
 *        bench-mlp --steps N     N steps, reporting RSS and live tensors/storages at step 100
 *                                and at the end (mlp_rss_growth_kib=, mlp_live_growth=): a
 *                                training loop's memory must stay flat.
 *        bench-mlp --floor       the step against its GEMM floor: the same sgemm calls the step
 *                                makes, alone (bench-mlp-floor.h), alternated with whole steps
 *                                (mlp_step_ms=, mlp_gemm_floor_ms=, mlp_over_gemm_floor=), and
 *                                each phase beside its products (mlp_forward_ms=,
 *                                mlp_gemm_floor_forward_ms=, ..., mlp_optimizer_ms=).
 * OpenBLAS threads: OPENBLAS_NUM_THREADS as the environment gives it (printed). */
#include <gradscope/gradscope.h>

#include "bench-mlp-floor.h"
#include "bench-util.h"

enum { BATCH = 128, IN = 784, HIDDEN = 512, CLASSES = 10, WARMUP = 20, TIMED = 200 };
enum { FLAT_BASELINE_STEP = 100 };

typedef struct mlp {
  gs_module fc1, fc2, fc3;
  gs_optimizer sgd;
  gs_tensor x, y;
} mlp;

/* The phases of one step, in seconds, and its loss. */
typedef struct step_times {
  double forward, backward, optimizer, total, loss;
} step_times;

static void mlp_init(mlp *m) {
  gs_rng rng;
  gs_rng_seed(&rng, 42);
  m->fc1 = gs_linear_new(IN, HIDDEN, true, &rng);
  m->fc2 = gs_linear_new(HIDDEN, HIDDEN, true, &rng);
  m->fc3 = gs_linear_new(HIDDEN, CLASSES, true, &rng);
  gs_module layers[3] = {m->fc1, m->fc2, m->fc3};
  gs_tensor params[6];
  for (int i = 0; i < 3; i++) {
    params[2 * i] = gs_module_parameter(layers[i], "weight");
    params[2 * i + 1] = gs_module_parameter(layers[i], "bias");
  }
  gs_sgd_options opts = GS_SGD_OPTIONS_DEFAULT;
  opts.lr = 0.01;
  opts.momentum = 0.9;
  m->sgd = gs_sgd_new(params, 6, &opts);
  m->x = gs_randn(GS_F32, (int64_t[]){BATCH, IN}, 2, &rng);
  m->y = gs_randint(0, CLASSES, (int64_t[]){BATCH}, 1, &rng);
}

static void mlp_free(mlp *m) {
  gs_optimizer_dispose(m->sgd);
  gs_module_dispose(m->fc1), gs_module_dispose(m->fc2), gs_module_dispose(m->fc3);
  gs_dispose(m->x), gs_dispose(m->y);
}

static step_times mlp_step(const mlp *m) {
  step_times t;
  double t0 = bench_now_s();
  gs_scope scope = gs_scope_begin("step");
  gs_tensor h1 = gs_relu(gs_linear_forward(m->fc1, m->x));
  gs_tensor h2 = gs_relu(gs_linear_forward(m->fc2, h1));
  gs_tensor logits = gs_linear_forward(m->fc3, h2);
  gs_tensor loss = gs_cross_entropy(logits, m->y, GS_REDUCTION_MEAN, 0.0);
  double t1 = bench_now_s();
  gs_backward(loss);
  double t2 = bench_now_s();
  gs_optimizer_step(m->sgd);
  gs_optimizer_zero_grad(m->sgd);
  t.loss = gs_item(loss);
  gs_scope_end(scope);
  double t3 = bench_now_s();
  t.forward = t1 - t0, t.backward = t2 - t1, t.optimizer = t3 - t2, t.total = t3 - t0;
  return t;
}

static int run_timing(mlp *m) {
  static double forward[TIMED], backward[TIMED], optimizer[TIMED], total[TIMED];
  step_times first = mlp_step(m);
  for (int i = 1; i < WARMUP; i++)
    mlp_step(m);
  step_times last = first;
  for (int i = 0; i < TIMED; i++) {
    last = mlp_step(m);
    forward[i] = last.forward, backward[i] = last.backward;
    optimizer[i] = last.optimizer, total[i] = last.total;
  }
  /* The batch is fixed, so the loss must fall: a check that the timed work is real training. */
  if (!(last.loss < first.loss)) {
    fprintf(stderr, "bench-mlp: the loss did not fall (%g at the first step, %g at the last)\n",
            first.loss, last.loss);
    return 1;
  }
  printf("# MLP 784-512-512-10 ReLU, batch %d, f32, cross_entropy, SGD lr 0.01 momentum 0.9; "
         "median of %d steps after %d warm-up\n", BATCH, TIMED, WARMUP);
  printf("# loss %.4f at step 1, %.4f at step %d\n", first.loss, last.loss, WARMUP + TIMED);
  bench_result("mlp_step_ms", bench_median(total, TIMED) * 1e3, "ms");
  bench_result("mlp_forward_ms", bench_median(forward, TIMED) * 1e3, "ms");
  bench_result("mlp_backward_ms", bench_median(backward, TIMED) * 1e3, "ms");
  bench_result("mlp_optimizer_ms", bench_median(optimizer, TIMED) * 1e3, "ms");
  bench_result("mlp_peak_rss_mib", (double)bench_proc_status_kib("VmHWM") / 1024.0, "MiB");
  return 0;
}

/* The step against its GEMM floor, in blocks of FLOOR_BLOCK floor steps then FLOOR_BLOCK
 * whole steps, FLOOR_ROUNDS times, so that both see the same machine; each step timed alone,
 * the medians compared. Wall time, and this process's CPU time (with 2 OpenBLAS threads it
 * counts what the pool's threads spend waiting for work too). */
enum { FLOOR_BLOCK = 5, FLOOR_ROUNDS = 40, FLOOR_TIMED = FLOOR_BLOCK * FLOOR_ROUNDS };

static int run_floor(const mlp *m) {
  static double step_ms[FLOOR_TIMED], step_cpu_ms[FLOOR_TIMED];
  static double floor_ms[FLOOR_TIMED], floor_cpu_ms[FLOOR_TIMED];
  /* Each phase's share, to say where the step's time above the floor goes: the forward (with
   * the loss) against the forward's products, the backward against the backward's, and the
   * optimizer step with zero_grad, which has no product. */
  static double step_fwd_ms[FLOOR_TIMED], step_bwd_ms[FLOOR_TIMED], step_opt_ms[FLOOR_TIMED];
  static double floor_fwd_ms[FLOOR_TIMED], floor_bwd_ms[FLOOR_TIMED];
  mlp_floor f;
  if (!mlp_floor_init(&f, BATCH, (const int[]){IN, HIDDEN, HIDDEN, CLASSES}, 3)) {
    fprintf(stderr, "bench-mlp: out of memory for the GEMM floor's buffers\n");
    mlp_floor_free(&f);
    return 1;
  }
  step_times first = mlp_step(m), last = first;
  for (int i = 1; i < WARMUP; i++)
    mlp_step(m);
  for (int i = 0; i < WARMUP; i++)
    mlp_floor_step(&f);
  for (int r = 0, n_floor = 0, n_step = 0; r < FLOOR_ROUNDS; r++) {
    for (int i = 0; i < FLOOR_BLOCK; i++, n_floor++) {
      double t0 = bench_now_s(), c0 = bench_cpu_s();
      mlp_floor_calls(&f, 0, f.n_forward);
      double t1 = bench_now_s();
      mlp_floor_calls(&f, f.n_forward, f.n_calls);
      floor_cpu_ms[n_floor] = (bench_cpu_s() - c0) * 1e3;
      double t2 = bench_now_s();
      floor_ms[n_floor] = (t2 - t0) * 1e3;
      floor_fwd_ms[n_floor] = (t1 - t0) * 1e3, floor_bwd_ms[n_floor] = (t2 - t1) * 1e3;
    }
    for (int i = 0; i < FLOOR_BLOCK; i++, n_step++) {
      double c0 = bench_cpu_s();
      last = mlp_step(m);
      step_cpu_ms[n_step] = (bench_cpu_s() - c0) * 1e3;
      step_ms[n_step] = last.total * 1e3;
      step_fwd_ms[n_step] = last.forward * 1e3, step_bwd_ms[n_step] = last.backward * 1e3;
      step_opt_ms[n_step] = last.optimizer * 1e3;
    }
  }
  if (!(last.loss < first.loss)) {
    fprintf(stderr, "bench-mlp: the loss did not fall (%g at the first step, %g at the last)\n",
            first.loss, last.loss);
    mlp_floor_free(&f);
    return 1;
  }
  double step = bench_median(step_ms, FLOOR_TIMED), floor = bench_median(floor_ms, FLOOR_TIMED);
  double step_cpu = bench_median(step_cpu_ms, FLOOR_TIMED);
  double floor_cpu = bench_median(floor_cpu_ms, FLOOR_TIMED);
  printf("# MLP 784-512-512-10 step (as bench-mlp) against its GEMM floor: the step's %d sgemm "
         "calls alone (%.1f MFLOP); medians of %d each, in blocks of %d alternated\n",
         f.n_calls, f.flops * 1e-6, FLOOR_TIMED, FLOOR_BLOCK);
  printf("# floor at %.1f GFLOP/s wall\n", f.flops / (floor * 1e-3) * 1e-9);
  bench_result("mlp_step_ms", step, "ms");
  bench_result("mlp_gemm_floor_ms", floor, "ms");
  bench_result("mlp_over_gemm_floor", step / floor, "");
  bench_result("mlp_step_cpu_ms", step_cpu, "ms");
  bench_result("mlp_gemm_floor_cpu_ms", floor_cpu, "ms");
  bench_result("mlp_over_gemm_floor_cpu", step_cpu / floor_cpu, "");
  bench_result("mlp_forward_ms", bench_median(step_fwd_ms, FLOOR_TIMED), "ms");
  bench_result("mlp_gemm_floor_forward_ms", bench_median(floor_fwd_ms, FLOOR_TIMED), "ms");
  bench_result("mlp_backward_ms", bench_median(step_bwd_ms, FLOOR_TIMED), "ms");
  bench_result("mlp_gemm_floor_backward_ms", bench_median(floor_bwd_ms, FLOOR_TIMED), "ms");
  bench_result("mlp_optimizer_ms", bench_median(step_opt_ms, FLOOR_TIMED), "ms");
  mlp_floor_free(&f);
  return 0;
}

/* What the flatness check compares between step 100 and the end. */
typedef struct memory_sample {
  long rss_kib;
  uint64_t live_tensors, live_storages, bytes_in_use;
  int64_t scope_live; /* this thread's live tensors by the scope statistics */
} memory_sample;

static memory_sample sample_memory(void) {
  gs_memory_stats stats;
  gs_memory_get_stats(&stats);
  return (memory_sample){bench_proc_status_kib("VmRSS"), gs_live_tensor_count(),
                         stats.live_storages, stats.bytes_in_use,
                         gs_thread_scope_stats(GS_OBJECT_TENSOR).live};
}

static void print_sample(const char *when, int step, memory_sample s) {
  printf("# %s (step %d): rss %ld KiB, live tensors %llu (scope statistics: %lld), live "
         "storages %llu, bytes in use %llu\n",
         when, step, s.rss_kib, (unsigned long long)s.live_tensors, (long long)s.scope_live,
         (unsigned long long)s.live_storages, (unsigned long long)s.bytes_in_use);
}

static int run_flatness(mlp *m, int steps) {
  memory_sample base = {0};
  double t0 = bench_now_s();
  for (int i = 1; i <= steps; i++) {
    mlp_step(m);
    if (i == FLAT_BASELINE_STEP) {
      base = sample_memory();
      print_sample("baseline", i, base);
    }
  }
  memory_sample end = sample_memory();
  print_sample("end", steps, end);
  printf("# %d steps in %.1f s\n", steps, bench_now_s() - t0);
  bench_result("mlp_rss_growth_kib", (double)(end.rss_kib - base.rss_kib), "KiB");
  bench_result("mlp_live_growth", (double)((int64_t)end.live_tensors - (int64_t)base.live_tensors),
               "");
  bench_result("mlp_live_storage_growth",
               (double)((int64_t)end.live_storages - (int64_t)base.live_storages), "");
  bench_result("mlp_peak_rss_mib", (double)bench_proc_status_kib("VmHWM") / 1024.0, "MiB");
  return 0;
}

int main(int argc, char **argv) {
  int steps = 0;
  bool floor = false;
  if (argc == 2 && strcmp(argv[1], "--floor") == 0) {
    floor = true;
  } else if (argc == 3 && strcmp(argv[1], "--steps") == 0) {
    char *end;
    long n = strtol(argv[2], &end, 10);
    if (*end || n <= FLAT_BASELINE_STEP || n > 100000000) {
      fprintf(stderr, "bench-mlp: --steps expects a whole number above %d, got '%s'\n",
              FLAT_BASELINE_STEP, argv[2]);
      return 2;
    }
    steps = (int)n;
  } else if (argc != 1) {
    fprintf(stderr,
            "usage: bench-mlp [--steps N | --floor]  (N > %d: memory flatness over N steps; "
            "--floor: the step against its sgemm calls alone)\n",
            FLAT_BASELINE_STEP);
    return 2;
  }
  bench_print_setup();
  mlp m;
  mlp_init(&m);
  int status = floor ? run_floor(&m) : steps ? run_flatness(&m, steps) : run_timing(&m);
  mlp_free(&m);
  if (gs_live_tensor_count() != 0) {
    fprintf(stderr, "bench-mlp: %llu tensors still alive at exit\n",
            (unsigned long long)gs_live_tensor_count());
    return 1;
  }
  return status;
}
