/* bench-conv: one training step of a small CNN's convolutions on a digits-sized batch: 64
 * images of 1 x 8 x 8, conv 1 -> 16 (3x3, padding 1), relu, 2x2 max pooling, conv 16 -> 32
 * (3x3, padding 1), then backward of the sum into both weights and biases. Prints the median
 * step over several samples as `conv2d_step_ms=`, and the forward alone as
 * `conv2d_forward_ms=`. bench/compare-torch is where PyTorch's time for the same step
 * belongs. */
#include <gradscope/gradscope.h>

#include "bench-util.h"

#define SAMPLES 9
#define STEPS 50

typedef struct net {
  gs_tensor w1, b1, w2, b2;
} net;

static gs_tensor forward(const net *m, gs_tensor x) {
  gs_conv2d_options pad1 = {.padding = {1, 1}};
  gs_tensor c1 = gs_conv2d(x, m->w1, m->b1, &pad1);
  gs_tensor r1 = gs_relu(c1);
  gs_tensor p1 = gs_max_pool2d(r1, &(gs_pool2d_options){.kernel = {2}}, NULL);
  gs_tensor c2 = gs_conv2d(p1, m->w2, m->b2, &pad1);
  gs_tensor loss = gs_sum(c2, NULL, 0, false);
  gs_dispose(c1), gs_dispose(r1), gs_dispose(p1), gs_dispose(c2);
  return loss;
}

static double time_steps(const net *m, gs_tensor x, bool backward) {
  double t0 = bench_now_s();
  for (int i = 0; i < STEPS; i++) {
    gs_scope s = gs_scope_begin("step");
    gs_tensor loss = forward(m, x);
    if (backward)
      gs_backward(loss);
    gs_scope_end(s);
  }
  return (bench_now_s() - t0) / STEPS * 1e3;
}

int main(void) {
  bench_print_setup();
  gs_rng rng;
  gs_rng_seed(&rng, 1);
  net m = {
      gs_randn(GS_F32, (int64_t[]){16, 1, 3, 3}, 4, &rng),
      gs_randn(GS_F32, (int64_t[]){16}, 1, &rng),
      gs_randn(GS_F32, (int64_t[]){32, 16, 3, 3}, 4, &rng),
      gs_randn(GS_F32, (int64_t[]){32}, 1, &rng),
  };
  gs_tensor *params[] = {&m.w1, &m.b1, &m.w2, &m.b2};
  for (int i = 0; i < 4; i++)
    gs_set_requires_grad(*params[i], true);
  gs_tensor x = gs_randn(GS_F32, (int64_t[]){64, 1, 8, 8}, 4, &rng);
  time_steps(&m, x, true); /* warm the allocator and BLAS */
  double step[SAMPLES], fwd[SAMPLES];
  for (int i = 0; i < SAMPLES; i++) {
    step[i] = time_steps(&m, x, true);
    fwd[i] = time_steps(&m, x, false);
  }
  printf("# batch [64, 1, 8, 8]: conv 1->16 3x3 pad 1, relu, max_pool 2, conv 16->32 3x3 pad 1\n");
  bench_result("conv2d_forward_ms", bench_median(fwd, SAMPLES), "");
  bench_result("conv2d_step_ms", bench_median(step, SAMPLES), "");
  gs_dispose(x);
  for (int i = 0; i < 4; i++)
    gs_dispose(*params[i]);
  return 0;
}
