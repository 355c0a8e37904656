/* diff-workload.c: one small training loop in two versions, for `gradscope diff` and the
 * Compare view (test-cli-diff.sh, test-compare-view.c): `diff-workload before` has two bugs,
 * `diff-workload after` has both fixed.
 *  - a leak: each step keeps a record of its loss in a tensor made outside any scope and never
 *    disposes it (the fix disposes it);
 *  - a graph that is not cut: the regression target is computed by a second network and
 *    backward walks through it into that network's weight (the fix detaches the target, so
 *    its MmBackward, TanhBackward and AccumulateGrad nodes leave the graph).
 * Each step begins with a "step N" mark, so the two runs' passes are matched by step. Three
 * steps, or as many as a second argument says. */
#include <gradscope/gradscope.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  int steps = argc == 3 ? atoi(argv[2]) : 3;
  if (argc < 2 || argc > 3 || (strcmp(argv[1], "before") && strcmp(argv[1], "after")) ||
      steps < 1 || steps > 1000) {
    fprintf(stderr, "usage: diff-workload before|after [STEPS, 1 to 1000]\n");
    return 2;
  }
  const bool fixed = !strcmp(argv[1], "after");
  gs_rng rng;
  gs_rng_seed(&rng, 3);
  const int64_t w_shape[] = {4, 3}, x_shape[] = {8, 4}, record_shape[] = {1};
  gs_tensor w = gs_parameter_new(gs_randn(GS_F32, w_shape, 2, &rng), true);
  gs_tensor teacher = gs_parameter_new(gs_randn(GS_F32, w_shape, 2, &rng), true);
  gs_tensor records[1000];
  for (int step = 0; step < steps; step++) {
    char mark[32];
    snprintf(mark, sizeof mark, "step %d", step + 1);
    gs_trace_mark(mark);
    /* Made outside the step's scope: the caller owns it and must dispose it. */
    records[step] = gs_zeros(GS_F32, record_shape, 1);
    gs_scope scope = gs_scope_begin("step");
    gs_tensor x = gs_randn(GS_F32, x_shape, 2, &rng);
    gs_tensor target = gs_tanh(gs_matmul(x, teacher));
    if (fixed)
      target = gs_detach(target); /* the fix: no gradient into the teacher */
    gs_tensor error = gs_sub(gs_tanh(gs_matmul(x, w)), target);
    gs_backward(gs_sum(gs_mul(error, error), NULL, 0, false));
    gs_scope_end(scope);
    if (fixed)
      gs_dispose(records[step]);
  }
  gs_dispose(w);
  gs_dispose(teacher);
  return 0;
}
