/* bench-optim: gs_optimizer_step alone (engine/optim/fused-step.c's passes), over the
 * parameters of bench-mlp's MLP (784-512-512-10: 669,706 floats) and of the digits example's
 * (64-128-10: 9,610), each with a fixed gradient: SGD (momentum 0.9), Adam and AdamW (weight
 * decay 0.01). The MLP's steps are timed with the caches evicted first (a 64 MiB buffer read
 * between steps, as a training step's products evict them) and warm; the digits' warm. Each
 * result is the median of the steps, wall time and this process's CPU time (with a helper
 * thread sharing a pass, its time is in the CPU time, not the wall time).
 *
 * GS_CPU_FEATURES=avx2 / none runs the passes' lower copies (engine/ops/cpu-features.c), and
 * OPENBLAS_NUM_THREADS=2 lets a large parameter's pass share its work with a helper thread:
 * compare them run by run. Usage: bench-optim. */
#include <gradscope/gradscope.h>

#include "bench-util.h"

enum { WARMUP = 5, TIMED = 101, EVICT_BYTES = 64 << 20 };

typedef enum kind { KIND_SGD, KIND_ADAM, KIND_ADAMW, KIND_COUNT } kind;
static const char *const kind_names[KIND_COUNT] = {"sgd", "adam", "adamw"};

/* Parameters of Linear layers widths[0] -> ... -> widths[layers] (weight [out, in], bias),
 * each with a gradient. */
typedef struct model {
  gs_tensor params[8];
  int n;
} model;

static model model_new(const int64_t *widths, int layers, gs_rng *rng) {
  model m = {.n = 0};
  for (int l = 0; l < layers; l++) {
    int64_t shapes[2][2] = {{widths[l + 1], widths[l]}, {widths[l + 1], 1}};
    for (int k = 0; k < 2; k++) {
      gs_tensor p = gs_randn(GS_F32, shapes[k], k == 0 ? 2 : 1, rng);
      gs_set_requires_grad(p, true);
      gs_tensor c = gs_randn(GS_F32, shapes[k], k == 0 ? 2 : 1, rng);
      gs_scope s = gs_scope_begin("gradient");
      gs_backward(gs_sum(gs_mul(p, c), NULL, 0, false));
      gs_scope_end(s);
      gs_dispose(c);
      m.params[m.n++] = p;
    }
  }
  return m;
}

static void model_free(model *m) {
  for (int i = 0; i < m->n; i++)
    gs_dispose(m->params[i]);
}

static gs_optimizer optimizer_new(kind k, model *m) {
  if (k == KIND_SGD) {
    gs_sgd_options o = GS_SGD_OPTIONS_DEFAULT;
    o.lr = 0.01, o.momentum = 0.9;
    return gs_sgd_new(m->params, m->n, &o);
  }
  gs_adam_options o = GS_ADAM_OPTIONS_DEFAULT;
  o.lr = 1e-3;
  if (k == KIND_ADAMW) {
    o.weight_decay = 0.01;
    return gs_adamw_new(m->params, m->n, &o);
  }
  return gs_adam_new(m->params, m->n, &o);
}

static volatile unsigned char evict_sink;

/* Reads a buffer larger than the caches, line by line. */
static void evict(const unsigned char *buffer) {
  unsigned char x = 0;
  for (size_t i = 0; i < EVICT_BYTES; i += 64)
    x ^= buffer[i];
  evict_sink = x;
}

/* Times steps of optimizer kind k over m; prints NAME_ms and NAME_cpu_ms (or _us). */
static void time_steps(kind k, model *m, const unsigned char *evict_buffer, const char *name,
                       double scale, const char *unit) {
  static double wall[TIMED], cpu[TIMED];
  gs_optimizer o = optimizer_new(k, m);
  for (int i = 0; i < WARMUP; i++)
    gs_optimizer_step(o);
  for (int i = 0; i < TIMED; i++) {
    if (evict_buffer)
      evict(evict_buffer);
    double t0 = bench_now_s(), c0 = bench_cpu_s();
    gs_optimizer_step(o);
    cpu[i] = (bench_cpu_s() - c0) * scale;
    wall[i] = (bench_now_s() - t0) * scale;
  }
  gs_optimizer_dispose(o);
  char key[96];
  snprintf(key, sizeof key, "optim_%s_%s_%s", kind_names[k], name, unit);
  bench_result(key, bench_median(wall, TIMED), unit);
  snprintf(key, sizeof key, "optim_%s_%s_cpu_%s", kind_names[k], name, unit);
  bench_result(key, bench_median(cpu, TIMED), unit);
}

int main(void) {
  bench_print_setup();
  const char *cpu = getenv("GS_CPU_FEATURES");
  printf("# GS_CPU_FEATURES=%s\n", cpu ? cpu : "(unset)");
  unsigned char *buffer = malloc(EVICT_BYTES);
  if (!buffer) {
    fprintf(stderr, "bench-optim: out of memory for the eviction buffer\n");
    return 1;
  }
  for (size_t i = 0; i < EVICT_BYTES; i++)
    buffer[i] = (unsigned char)i;
  gs_rng rng;
  gs_rng_seed(&rng, 7);
  model mlp = model_new((const int64_t[]){784, 512, 512, 10}, 3, &rng);
  model digits = model_new((const int64_t[]){64, 128, 10}, 2, &rng);
  printf("# gs_optimizer_step, median of %d steps after %d: the MLP 784-512-512-10 (669,706 "
         "f32) with the caches evicted and warm, the digits MLP 64-128-10 (9,610) warm\n",
         TIMED, WARMUP);
  for (int k = 0; k < KIND_COUNT; k++) {
    time_steps((kind)k, &mlp, buffer, "mlp", 1e3, "ms");
    time_steps((kind)k, &mlp, NULL, "mlp_warm", 1e3, "ms");
    time_steps((kind)k, &digits, NULL, "digits", 1e6, "us");
  }
  model_free(&mlp);
  model_free(&digits);
  free(buffer);
  return 0;
}
