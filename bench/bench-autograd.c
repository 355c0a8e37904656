/* bench-autograd: the cost of recording and running a small graph. Per iteration, on
 * 16-element f32 tensors: y = ((x * w + b).tanh()).sum(); backward; clear the grads — the
 * issue's micro-benchmark (PyTorch from Python: about 65 us on these machines). Also prints
 * the same forward under no_grad, so the price of recording is visible on its own.
 * Target: <= 3 us per iteration. */
#include <gradscope/gradscope.h>

#include "bench-util.h"

#define REPS 9

static void step(gs_tensor x, gs_tensor w, gs_tensor b, bool with_backward) {
  gs_tensor xw = gs_mul(x, w);
  gs_tensor z = gs_add(xw, b);
  gs_tensor t = gs_tanh(z);
  gs_tensor y = gs_sum(t, NULL, 0, false);
  if (with_backward) {
    gs_backward(y);
    gs_zero_grad(x);
    gs_zero_grad(w);
    gs_zero_grad(b);
  }
  gs_dispose(xw), gs_dispose(z), gs_dispose(t), gs_dispose(y);
}

static double time_steps(gs_tensor x, gs_tensor w, gs_tensor b, bool with_backward, int n) {
  double t0 = bench_now_s();
  for (int i = 0; i < n; i++)
    step(x, w, b, with_backward);
  return (bench_now_s() - t0) / n;
}

int main(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 3);
  int64_t shape[1] = {16};
  gs_tensor x = gs_randn(GS_F32, shape, 1, &rng), w = gs_randn(GS_F32, shape, 1, &rng),
            b = gs_randn(GS_F32, shape, 1, &rng);
  gs_set_requires_grad(x, true);
  gs_set_requires_grad(w, true);
  gs_set_requires_grad(b, true);

  /* Check the gradient once: d/db sum(tanh(xw + b)) = 1 - tanh^2. */
  step(x, w, b, false);
  {
    gs_tensor xw = gs_mul(x, w), z = gs_add(xw, b), t = gs_tanh(z), y = gs_sum(t, NULL, 0, false);
    gs_backward(y);
    double worst = 0;
    for (int64_t i = 0; i < 16; i++) {
      double tv = gs_get(t, &i), g = gs_get(gs_grad(b), &i);
      double err = g - (1 - tv * tv);
      worst = err > worst ? err : -err > worst ? -err : worst;
    }
    if (worst > 1e-5) {
      fprintf(stderr, "bench-autograd: wrong gradient (off by %g)\n", worst);
      return 1;
    }
    gs_zero_grad(x), gs_zero_grad(w), gs_zero_grad(b);
    gs_dispose(xw), gs_dispose(z), gs_dispose(t), gs_dispose(y);
  }

  int n = 20000;
  time_steps(x, w, b, true, n / 10); /* warm up the allocator and the slot table */
  double full[REPS], forward_no_grad[REPS];
  for (int r = 0; r < REPS; r++) {
    full[r] = time_steps(x, w, b, true, n);
    gs_no_grad_begin();
    forward_no_grad[r] = time_steps(x, w, b, false, n);
    gs_no_grad_end();
  }
  printf("# 16-element f32: y = ((x*w + b).tanh()).sum(); backward; zero grads; median of %d\n",
         REPS);
  double us = bench_median(full, REPS) * 1e6, fwd = bench_median(forward_no_grad, REPS) * 1e6;
  bench_result("autograd_step_us", us, "us");
  bench_result("forward_no_grad_us", fwd, "us");
  bench_result("autograd_step_vs_forward_ratio", us / fwd, "");
  gs_dispose(x), gs_dispose(w), gs_dispose(b);
  return 0;
}
