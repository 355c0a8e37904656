/* cli-workload.c: a small training-like program for the `gradscope` CLI tests (test-cli.sh):
 * a module with named parameters, a module tree trained one step by SGD with momentum (module
 * children, an optimizer and its state in the log), three scoped steps with forward, backward and an SGD
 * update in a nested scope, marks, one error, one tensor leaked on purpose, and names full of
 * quotes, backslashes, newlines and control characters that every output must escape, and a
 * second thread with its own scope (its own track in a Chrome trace). Run it
 * under `gradscope record`; it exits 0 if the engine behaved. `cli-workload ring` is another
 * program, for the flight recorder (ring_run). */
#include <gradscope/gradscope.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* What user code may legally name things: every character a writer must escape. */
#define HOSTILE "evil \"name\" \\ back\\slash\nnew line\ttab\x01\x1b[31m red } ] //"

/* A data-loading thread: its scope and tensors are recorded on its own thread id. */
static void *load_batches(void *unused) {
  (void)unused;
  const int64_t shape[] = {16, 4};
  for (int i = 0; i < 2; i++) {
    gs_scope scope = gs_scope_begin("load batch");
    gs_tensor batch = gs_ones(GS_F32, shape, 2);
    gs_dispose(gs_mul_scalar(batch, 0.5));
    gs_scope_end(scope);
  }
  return NULL;
}

/* `cli-workload ring`, run with GS_TRACE_RING: a tensor made first and kept to the end (a leak
 * on purpose), then enough temporaries that a small ring keeps only the newest events, so the
 * log opens with a snapshot that re-creates the kept tensor. */
static int ring_run(void) {
  gs_tensor kept = gs_ones(GS_F32, (int64_t[]){5}, 1);
  gs_trace_name(kept, "alive before the window");
  for (int i = 0; i < 5000; i++)
    gs_dispose(gs_mul_scalar(kept, 2.0));
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "ring") == 0)
    return ring_run();
  gs_set_error_handler(gs_error_handler_return, NULL, NULL);
  gs_rng rng;
  gs_rng_seed(&rng, 7);

  pthread_t loader;
  pthread_create(&loader, NULL, load_batches, NULL);
  pthread_join(loader, NULL);

  gs_module linear = gs_module_new("Linear");
  const int64_t w_shape[] = {4, 3}, b_shape[] = {3}, x_shape[] = {8, 4};
  gs_tensor w = gs_parameter_new(gs_randn(GS_F32, w_shape, 2, &rng), true);
  gs_module_register_parameter(linear, "weight", w);
  gs_tensor b = gs_parameter_new(gs_zeros(GS_F32, b_shape, 1), true);
  gs_module_register_parameter(linear, "bias", b);
  gs_trace_name(b, HOSTILE);

  /* A tree ("head.0.weight"...) and an optimizer whose momentum buffers it holds. */
  gs_module net = gs_module_new("Net");
  gs_module head = gs_sequential_new((gs_module[]){gs_linear_new(4, 2, true, &rng), gs_tanh_new()}, 2);
  gs_module_register_child(net, "head", head);
  gs_tensor head_params[2];
  gs_module_named_parameters(net, head_params, NULL, 2);
  gs_sgd_options sgd_options = {.lr = 0.1, .momentum = 0.9};
  gs_optimizer sgd = gs_sgd_new(head_params, 2, &sgd_options);
  gs_scope head_step = gs_scope_begin("head step");
  gs_tensor head_in = gs_randn(GS_F32, x_shape, 2, &rng);
  gs_backward(gs_sum(gs_module_forward(head, head_in), NULL, 0, false));
  gs_optimizer_step(sgd);
  gs_scope_end(head_step);
  gs_optimizer_dispose(sgd);
  gs_module_dispose(net);

  for (int step = 0; step < 3; step++) {
    char label[32];
    snprintf(label, sizeof label, "step %d", step);
    gs_trace_mark(label);
    gs_scope scope = gs_scope_begin("train step");
    gs_tensor x = gs_randn(GS_F32, x_shape, 2, &rng);
    gs_trace_name(x, "batch");
    gs_tensor y = gs_add(gs_matmul(x, w), b);
    gs_tensor r = gs_relu(y);
    gs_tensor loss = gs_mean(gs_mul(r, r), NULL, 0, false);
    gs_trace_name(loss, "loss");
    gs_backward(loss);
    gs_no_grad_begin();
    gs_scope update = gs_scope_begin("sgd " HOSTILE);
    gs_sub_(w, gs_mul_scalar(gs_grad(w), 0.1));
    gs_sub_(b, gs_mul_scalar(gs_grad(b), 0.1));
    gs_scope_end(update);
    gs_no_grad_end();
    gs_zero_grad(w);
    gs_zero_grad(b);
    gs_scope_end(scope);
    gs_trace_flush(); /* a chunk per step, so a cut log still has whole chunks before the cut */
  }

  /* One error, recorded with its message (the handler returns, so the run goes on). */
  gs_scope errors = gs_scope_begin("errors");
  const int64_t two[] = {2}, five[] = {5};
  gs_tensor bad = gs_add(gs_ones(GS_F32, two, 1), gs_ones(GS_F32, five, 1));
  gs_scope_end(errors);

  /* A graph still alive at the end: its leaf and output stay undisposed (leaks, on purpose). */
  gs_tensor leaked = gs_ones(GS_F32, b_shape, 1);
  gs_set_requires_grad(leaked, true);
  gs_trace_name(leaked, "leaked on purpose");
  gs_tensor kept = gs_mul_scalar(leaked, 2.0);

  gs_module_dispose(linear);
  int ok = gs_tensor_is_none(bad) && !gs_tensor_is_none(kept);
  if (!ok)
    fprintf(stderr, "cli-workload: the engine did not behave as expected\n");
  return ok ? 0 : 1;
}
