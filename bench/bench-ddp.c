/* bench-ddp: data-parallel training and the allreduce under it, for
 * bench/compare-torch/run-ddp.sh (which runs it against PyTorch's DDP and a plain MPI program).
 *
 * Usage: bench-ddp mlp [--no-allreduce]
 *                                   the MLP 784-512-512-10 (ReLU), cross_entropy, SGD lr 0.01
 *                                   momentum 0.9 on a global batch of 256 f32 rows split over the
 *                                   ranks (256 / world each; different seeded rows per rank).
 *                                   With one process it trains without DDP (the baseline); with
 *                                   more, through gs_ddp. Prints rank 0's median step over 100
 *                                   steps after 20 warm-up: ddp_step_ms=, ddp_samples_per_s=,
 *                                   the median of each phase (ddp_forward_ms=, ddp_backward_ms=
 *                                   of which ddp_hook_ms= in DDP's gradient hooks and
 *                                   ddp_wait_ms= waiting for the allreduces, ddp_optimizer_ms=
 *                                   for step and zero_grad), the same phases in this thread's
 *                                   CPU time (ddp_forward_cpu_ms=, ...: what the work costs
 *                                   when other processes take the cores), and the CPU time
 *                                   (user + system) one rank spends per timed step, the mean
 *                                   and the largest over ranks (ddp_cpu_ms_per_rank_step=,
 *                                   ddp_cpu_ms_per_rank_step_max=).
 *                                   --no-allreduce (the ceiling): every rank trains its own
 *                                   share without DDP, the ranks starting each step together
 *                                   (a barrier outside the timed part), so the figures say what
 *                                   W ranks reach when nothing is communicated; ddp_step_ms= is
 *                                   then the slowest rank's median (ddp_no_allreduce=1).
 *                                   GS_BENCH_BUCKET_VIEW=1 constructs the DDP with
 *                                   gradient_as_bucket_view (ddp_bucket_view=1 says so).
 *        bench-ddp allreduce [N]    gs_dist_all_reduce (sum) of N f32 (default 669,706: the
 *                                   MLP's parameters) 200 times after 10 warm-up:
 *                                   allreduce_ms= (mean per call), allreduce_gbps= (the
 *                                   buffer's bytes over that time).
 * Run under mpirun -np W; OpenBLAS threads as the environment says (one per rank is fair). */
#include <gradscope/gradscope.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench-util.h"

enum { GLOBAL_BATCH = 256, IN = 784, HIDDEN = 512, CLASSES = 10, WARMUP = 20, TIMED = 100 };
enum { AR_WARMUP = 10, AR_ROUNDS = 200 };

/* This process's CPU time (user + system) so far, in seconds. */
static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/* This thread's CPU time so far, in seconds: a phase's work without the time the thread
 * was off its core. */
static double thread_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The largest over ranks of each of n values (each rank's own in v; v is overwritten). */
static bool max_over_ranks(double *v, int n) {
  int world = gs_dist_world_size(), rank = gs_dist_rank();
  if (world == 1)
    return true;
  gs_tensor all = gs_zeros(GS_F64, (int64_t[]){(int64_t)world * n}, 1);
  double *a = gs_data_mut(all);
  memcpy(a + (size_t)rank * (size_t)n, v, (size_t)n * sizeof *v);
  bool ok = gs_dist_all_reduce(all, GS_DIST_SUM);
  for (int k = 0; ok && k < n; k++) {
    v[k] = a[k];
    for (int r = 1; r < world; r++)
      v[k] =
          a[(size_t)r * (size_t)n + (size_t)k] > v[k] ? a[(size_t)r * (size_t)n + (size_t)k] : v[k];
  }
  gs_dispose(all);
  return ok;
}

/* The phases of a step, each timed on the wall clock and in this thread's CPU time. */
enum { PH_STEP, PH_FORWARD, PH_BACKWARD, PH_HOOK, PH_WAIT, PH_OPTIMIZER, PH_COUNT };
static const char *const phase_name[PH_COUNT] = {"step", "forward", "backward",
                                                 "hook", "wait",    "optimizer"};

static int bench_mlp(bool no_allreduce) {
  int rank = gs_dist_rank(), world = gs_dist_world_size();
  if (GLOBAL_BATCH % world) {
    fprintf(stderr, "bench-ddp: %d ranks do not divide the batch of %d\n", world, GLOBAL_BATCH);
    return 1;
  }
  int64_t local = GLOBAL_BATCH / world;
  gs_rng rng;
  gs_rng_seed(&rng, 42);
  gs_module net =
      gs_sequential_new((gs_module[]){gs_linear_new(IN, HIDDEN, true, &rng), gs_relu_new(),
                                      gs_linear_new(HIDDEN, HIDDEN, true, &rng), gs_relu_new(),
                                      gs_linear_new(HIDDEN, CLASSES, true, &rng)},
                        5);
  gs_tensor params[6];
  int n = gs_module_named_parameters(net, params, NULL, 6);
  gs_sgd_options opts = GS_SGD_OPTIONS_DEFAULT;
  opts.lr = 0.01;
  opts.momentum = 0.9;
  gs_optimizer sgd = gs_sgd_new(params, n, &opts);
  gs_rng_seed(&rng, 1000 + (uint64_t)rank); /* each rank its own rows */
  gs_tensor x = gs_randn(GS_F32, (int64_t[]){local, IN}, 2, &rng);
  gs_tensor y = gs_randint(0, CLASSES, (int64_t[]){local}, 1, &rng);
  const char *view = getenv("GS_BENCH_BUCKET_VIEW"); /* PyTorch's gradient_as_bucket_view */
  gs_ddp_options ddp_opts = {.gradient_as_bucket_view = view && strcmp(view, "1") == 0};
  gs_ddp *ddp = world > 1 && !no_allreduce ? gs_ddp_new(net, &ddp_opts) : NULL;
  if (world > 1 && !no_allreduce && !ddp)
    return 1;
  static double wall[PH_COUNT][TIMED], tcpu[PH_COUNT][TIMED];
  double first_loss = 0, last_loss = 0, cpu_begin = 0;
  if (world > 1)
    gs_dist_barrier();
  for (int i = 0; i < WARMUP + TIMED; i++) {
    if (no_allreduce && world > 1)
      gs_dist_barrier(); /* every rank's share of this step computed at once */
    if (i == WARMUP)
      cpu_begin = cpu_s();
    double t0 = bench_now_s(), c0 = thread_cpu_s();
    gs_scope scope = gs_scope_begin("step");
    gs_tensor logits = ddp ? gs_ddp_forward(ddp, x) : gs_module_forward(net, x);
    gs_tensor loss = gs_cross_entropy(logits, y, GS_REDUCTION_MEAN, 0.0);
    double t1 = bench_now_s(), c1 = thread_cpu_s();
    gs_backward(loss);
    double t2 = bench_now_s(), c2 = thread_cpu_s();
    gs_optimizer_step(sgd);
    gs_optimizer_zero_grad(sgd);
    last_loss = gs_item(loss);
    gs_scope_end(scope);
    double t3 = bench_now_s(), c3 = thread_cpu_s();
    if (i == 0)
      first_loss = last_loss;
    if (i >= WARMUP) {
      int j = i - WARMUP;
      gs_ddp_stats st = gs_ddp_get_stats(ddp);
      wall[PH_STEP][j] = t3 - t0, tcpu[PH_STEP][j] = c3 - c0;
      wall[PH_FORWARD][j] = t1 - t0, tcpu[PH_FORWARD][j] = c1 - c0;
      wall[PH_BACKWARD][j] = t2 - t1, tcpu[PH_BACKWARD][j] = c2 - c1;
      wall[PH_OPTIMIZER][j] = t3 - t2, tcpu[PH_OPTIMIZER][j] = c3 - c2;
      /* the hooks and the wait only on the wall clock (the engine times them so) */
      wall[PH_HOOK][j] = tcpu[PH_HOOK][j] = st.hook_s;
      wall[PH_WAIT][j] = tcpu[PH_WAIT][j] = st.wait_s;
    }
  }
  if (!(last_loss < first_loss)) {
    fprintf(stderr, "bench-ddp: rank %d: the loss did not fall (%g, then %g)\n", rank, first_loss,
            last_loss);
    return 1;
  }
  double cpu_ms = (cpu_s() - cpu_begin) / TIMED * 1e3;
  /* every rank's CPU time per step: [0] summed for the mean, [1..world] for the largest */
  gs_tensor cpu = gs_zeros(GS_F64, (int64_t[]){world + 1}, 1);
  double *cpu_data = gs_data_mut(cpu);
  cpu_data[0] = cpu_ms;
  cpu_data[1 + rank] = cpu_ms;
  if (world > 1 && !gs_dist_all_reduce(cpu, GS_DIST_SUM))
    return 1;
  double cpu_max = 0;
  for (int r = 0; r < world; r++)
    cpu_max = cpu_data[1 + r] > cpu_max ? cpu_data[1 + r] : cpu_max;
  double cpu_mean = cpu_data[0] / world;
  gs_dispose(cpu);
  int buckets = ddp ? gs_ddp_bucket_count(ddp) : 0;
  const char *transport = !ddp                                  ? "none"
                          : gs_ddp_get_stats(ddp).shared_memory ? "shared-memory"
                                                                : "mpi";
  gs_ddp_free(ddp);
  gs_optimizer_dispose(sgd);
  gs_module_dispose(net);
  gs_dispose(x), gs_dispose(y);
  double med[2 * PH_COUNT]; /* wall medians, then CPU medians */
  for (int k = 0; k < PH_COUNT; k++) {
    med[k] = bench_median(wall[k], TIMED) * 1e3;
    med[PH_COUNT + k] = bench_median(tcpu[k], TIMED) * 1e3;
  }
  /* Without DDP the ranks do not wait for each other, so the pair goes as fast as its slower
   * rank; with DDP they are in step and rank 0's figures are the pair's. */
  if (no_allreduce && !max_over_ranks(med, 2 * PH_COUNT))
    return 1;
  if (rank == 0) {
    double ms = med[PH_STEP];
    printf("# MLP 784-512-512-10, global batch %d = %d x %lld, SGD momentum; %s; median of %d "
           "steps after %d warm-up; loss %.4f -> %.4f\n",
           GLOBAL_BATCH, world, (long long)local,
           no_allreduce ? "no allreduce (each rank its own share, the ceiling)"
           : world > 1  ? "DDP"
                        : "one process",
           TIMED, WARMUP, first_loss, last_loss);
    printf("ddp_world_size=%d\n", world);
    printf("ddp_no_allreduce=%d\n", no_allreduce ? 1 : 0);
    printf("ddp_buckets=%d\n", buckets);
    printf("ddp_transport=%s\n", transport);
    printf("ddp_bucket_view=%d\n", ddp_opts.gradient_as_bucket_view ? 1 : 0);
    bench_result("ddp_step_ms", ms, "ms");
    bench_result("ddp_samples_per_s", GLOBAL_BATCH / (ms * 1e-3), "samples/s");
    char name[64];
    for (int k = PH_FORWARD; k < PH_COUNT; k++) {
      snprintf(name, sizeof name, "ddp_%s_ms", phase_name[k]);
      bench_result(name, med[k], "ms");
    }
    for (int k = PH_STEP; k < PH_COUNT; k++) {
      if (k == PH_HOOK || k == PH_WAIT)
        continue;
      snprintf(name, sizeof name, "ddp_%s_cpu_ms", phase_name[k]);
      bench_result(name, med[PH_COUNT + k], "ms");
    }
    bench_result("ddp_cpu_ms_per_rank_step", cpu_mean, "ms");
    bench_result("ddp_cpu_ms_per_rank_step_max", cpu_max, "ms");
  }
  return 0;
}

static int bench_allreduce(int64_t n) {
  gs_tensor t = gs_ones(GS_F32, (int64_t[]){n}, 1);
  for (int i = 0; i < AR_WARMUP; i++)
    if (!gs_dist_all_reduce(t, GS_DIST_SUM))
      return 1;
  gs_dist_barrier();
  double t0 = bench_now_s();
  for (int i = 0; i < AR_ROUNDS; i++)
    gs_dist_all_reduce(t, GS_DIST_SUM);
  double per_call = (bench_now_s() - t0) / AR_ROUNDS;
  gs_dispose(t);
  if (gs_dist_rank() == 0) {
    printf("# gs_dist_all_reduce of %lld f32 (%.2f MB) on %d ranks, mean of %d calls\n",
           (long long)n, (double)n * 4 / 1e6, gs_dist_world_size(), AR_ROUNDS);
    bench_result("allreduce_ms", per_call * 1e3, "ms");
    bench_result("allreduce_gbps", (double)n * 4 / per_call / 1e9, "GB/s");
  }
  return 0;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  bool mlp = argc >= 2 && strcmp(argv[1], "mlp") == 0;
  bool no_allreduce = mlp && argc == 3 && strcmp(argv[2], "--no-allreduce") == 0;
  if (argc < 2 || (mlp && argc > 2 && !no_allreduce) ||
      (!mlp && (strcmp(argv[1], "allreduce") != 0 || argc > 3))) {
    fprintf(stderr, "usage: bench-ddp mlp [--no-allreduce] | allreduce [N]\n");
    return 2;
  }
  if (!gs_dist_init(&argc, &argv))
    return 1;
  int rc = mlp ? bench_mlp(no_allreduce) : bench_allreduce(argc > 2 ? atoll(argv[2]) : 669706);
  gs_dist_finalize();
  return rc;
}
