/* bench-ddp: data-parallel training and the allreduce under it, for
 * bench/compare-torch/run-ddp.sh (which runs it against PyTorch's DDP and a plain MPI program).
 *
 * Usage: bench-ddp mlp              the MLP 784-512-512-10 (ReLU), cross_entropy, SGD lr 0.01
 *                                   momentum 0.9 on a global batch of 256 f32 rows split over the
 *                                   ranks (256 / world each; different seeded rows per rank).
 *                                   With one process it trains without DDP (the baseline); with
 *                                   more, through gs_ddp. Prints rank 0's median step over 100
 *                                   steps after 20 warm-up: ddp_step_ms=, ddp_samples_per_s=,
 *                                   and where the time goes (ddp_backward_ms=, ddp_wait_ms=),
 *                                   and the CPU time (user + system) one rank spends per timed
 *                                   step, the mean and the largest over ranks
 *                                   (ddp_cpu_ms_per_rank_step=, ddp_cpu_ms_per_rank_step_max=):
 *                                   wall times mean little on a loaded machine.
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

static int bench_mlp(void) {
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
  gs_ddp *ddp = world > 1 ? gs_ddp_new(net, &ddp_opts) : NULL;
  if (world > 1 && !ddp)
    return 1;
  static double step[TIMED], backward[TIMED], wait[TIMED];
  double first_loss = 0, last_loss = 0, cpu_begin = 0;
  for (int i = 0; i < WARMUP + TIMED; i++) {
    if (i == WARMUP)
      cpu_begin = cpu_s();
    double t0 = bench_now_s();
    gs_scope scope = gs_scope_begin("step");
    gs_tensor logits = ddp ? gs_ddp_forward(ddp, x) : gs_module_forward(net, x);
    gs_tensor loss = gs_cross_entropy(logits, y, GS_REDUCTION_MEAN, 0.0);
    double t1 = bench_now_s();
    gs_backward(loss);
    double t2 = bench_now_s();
    gs_optimizer_step(sgd);
    gs_optimizer_zero_grad(sgd);
    last_loss = gs_item(loss);
    gs_scope_end(scope);
    double t3 = bench_now_s();
    if (i == 0)
      first_loss = last_loss;
    if (i >= WARMUP) {
      step[i - WARMUP] = t3 - t0;
      backward[i - WARMUP] = t2 - t1;
      wait[i - WARMUP] = ddp ? gs_ddp_get_stats(ddp).wait_s : 0;
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
  if (rank == 0) {
    double ms = bench_median(step, TIMED) * 1e3;
    printf("# MLP 784-512-512-10, global batch %d = %d x %lld, SGD momentum; %s; median of %d "
           "steps after %d warm-up; loss %.4f -> %.4f\n",
           GLOBAL_BATCH, world, (long long)local, ddp || world > 1 ? "DDP" : "one process", TIMED,
           WARMUP, first_loss, last_loss);
    printf("ddp_world_size=%d\n", world);
    printf("ddp_buckets=%d\n", buckets);
    printf("ddp_transport=%s\n", transport);
    printf("ddp_bucket_view=%d\n", ddp_opts.gradient_as_bucket_view ? 1 : 0);
    bench_result("ddp_step_ms", ms, "ms");
    bench_result("ddp_samples_per_s", GLOBAL_BATCH / (ms * 1e-3), "samples/s");
    bench_result("ddp_backward_ms", bench_median(backward, TIMED) * 1e3, "ms");
    bench_result("ddp_wait_ms", bench_median(wait, TIMED) * 1e3, "ms");
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
  if (argc < 2 || (strcmp(argv[1], "mlp") != 0 && strcmp(argv[1], "allreduce") != 0)) {
    fprintf(stderr, "usage: bench-ddp mlp | allreduce [N]\n");
    return 2;
  }
  if (!gs_dist_init(&argc, &argv))
    return 1;
  int rc = strcmp(argv[1], "mlp") == 0 ? bench_mlp()
                                       : bench_allreduce(argc > 2 ? atoll(argv[2]) : 669706);
  gs_dist_finalize();
  return rc;
}
