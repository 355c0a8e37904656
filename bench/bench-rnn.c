/* bench-rnn: one training step of a packed LSTM or GRU, the recurrent benchmark, run
 * in the same form by bench/compare-torch/rnn.py: input 64, hidden 128, one layer, batch 32,
 * lengths uniform in 5..50 (seeded, made once), packed with enforce_sorted false; the last
 * layer's final h -> Linear(128, 10) -> cross_entropy -> backward -> SGD (lr 0.01). Each step
 * runs in a dispose scope and packs the padded batch inside it. 5 warm-up steps, then the
 * median of 40 timed steps (wall and this process's CPU time: on a shared machine the wall
 * time counts the wait for a core), and the peak RSS.
 *
 * Usage: bench-rnn lstm|gru [packed|padded]   (padded: the same batch unpacked, every
 *        sequence running all 50 steps, as PyTorch's unpacked comparison)
 * Prints <mode>_<layout>_step_ms=, <mode>_<layout>_step_cpu_ms= and
 * <mode>_<layout>_peak_rss_mib=. */
#include <gradscope/gradscope.h>

#include "bench-util.h"

enum { BATCH = 32, IN = 64, HIDDEN = 128, CLASSES = 10, MIN_LEN = 5, MAX_LEN = 50 };
enum { WARMUP = 5, TIMED = 40 };

typedef struct net {
  gs_module rnn, fc;
  gs_optimizer sgd;
  gs_tensor x, lengths, y; /* x [MAX_LEN, BATCH, IN] padded with zeros */
  bool packed;
} net;

static void net_init(net *n, gs_rnn_mode mode, bool packed) {
  gs_rng rng;
  gs_rng_seed(&rng, 42);
  n->packed = packed;
  n->rnn = gs_rnn_new(mode, IN, HIDDEN, &(gs_rnn_options){1, true, false, 0.0, false, GS_F32, NULL});
  n->fc = gs_linear_new(HIDDEN, CLASSES, true, &rng);
  gs_tensor params[8];
  int count = gs_module_named_parameters(n->rnn, params, NULL, 4);
  params[count++] = gs_module_parameter(n->fc, "weight");
  params[count++] = gs_module_parameter(n->fc, "bias");
  gs_sgd_options opts = GS_SGD_OPTIONS_DEFAULT;
  opts.lr = 0.01;
  n->sgd = gs_sgd_new(params, count, &opts);
  n->lengths = gs_randint(MIN_LEN, MAX_LEN + 1, (int64_t[]){BATCH}, 1, &rng);
  n->x = gs_randn(GS_F32, (int64_t[]){MAX_LEN, BATCH, IN}, 3, &rng);
  /* Zero past each sequence's end, so the padded run sees what a padded batch holds. */
  float *x = gs_data_mut(n->x);
  const int64_t *len = gs_data(n->lengths);
  for (int64_t t = 0; t < MAX_LEN; t++)
    for (int64_t b = 0; b < BATCH; b++)
      if (t >= len[b])
        memset(x + (t * BATCH + b) * IN, 0, sizeof(float) * IN);
  n->y = gs_randint(0, CLASSES, (int64_t[]){BATCH}, 1, &rng);
}

static void net_free(net *n) {
  gs_optimizer_dispose(n->sgd);
  gs_module_dispose(n->rnn), gs_module_dispose(n->fc);
  gs_dispose(n->x), gs_dispose(n->lengths), gs_dispose(n->y);
}

/* One step; returns its loss. */
static double net_step(const net *n) {
  gs_scope scope = gs_scope_begin("step");
  gs_tensor h_n;
  if (n->packed) {
    gs_packed_sequence ps = gs_pack_padded_sequence(n->x, n->lengths, false, false);
    gs_rnn_forward_packed(n->rnn, ps, GS_NO_TENSOR, GS_NO_TENSOR, &h_n, NULL);
  } else {
    gs_rnn_forward(n->rnn, n->x, GS_NO_TENSOR, GS_NO_TENSOR, &h_n, NULL);
  }
  gs_tensor logits = gs_linear_forward(n->fc, gs_select(h_n, 0, 0));
  gs_tensor loss = gs_cross_entropy(logits, n->y, GS_REDUCTION_MEAN, 0.0);
  gs_backward(loss);
  gs_optimizer_step(n->sgd);
  gs_optimizer_zero_grad(n->sgd);
  double value = gs_item(loss);
  gs_scope_end(scope);
  return value;
}

int main(int argc, char **argv) {
  bool gru = argc > 1 && strcmp(argv[1], "gru") == 0;
  bool padded = argc > 2 && strcmp(argv[2], "padded") == 0;
  if (argc < 2 || (!gru && strcmp(argv[1], "lstm") != 0)) {
    fprintf(stderr, "usage: bench-rnn lstm|gru [packed|padded]\n");
    return 2;
  }
  bench_print_setup();
  net n;
  net_init(&n, gru ? GS_RNN_GRU : GS_RNN_LSTM, !padded);
  double first = net_step(&n), last = first;
  for (int i = 1; i < WARMUP; i++)
    net_step(&n);
  double samples[TIMED], cpu[TIMED];
  for (int i = 0; i < TIMED; i++) {
    double t0 = bench_now_s(), c0 = bench_cpu_s();
    last = net_step(&n);
    samples[i] = (bench_now_s() - t0) * 1e3;
    cpu[i] = (bench_cpu_s() - c0) * 1e3;
  }
  if (!(last < first)) {
    fprintf(stderr, "bench-rnn: the loss did not fall (%g at the first step, %g at the last)\n",
            first, last);
    return 1;
  }
  printf("# loss %.4f at step 1, %.4f at step %d\n", first, last, WARMUP + TIMED);
  char name[64];
  const char *prefix = gru ? "gru" : "lstm", *layout = padded ? "padded" : "packed";
  snprintf(name, sizeof name, "%s_%s_step_ms", prefix, layout);
  bench_result(name, bench_median(samples, TIMED), "ms");
  snprintf(name, sizeof name, "%s_%s_step_cpu_ms", prefix, layout);
  bench_result(name, bench_median(cpu, TIMED), "ms");
  snprintf(name, sizeof name, "%s_%s_peak_rss_mib", prefix, layout);
  bench_result(name, (double)bench_proc_status_kib("VmHWM") / 1024.0, "MiB");
  net_free(&n);
  return 0;
}
