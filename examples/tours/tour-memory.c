/* tour-memory: tour 7, a training step's memory. The forward pass saves activations for
 * backward (they stay alive after the step's temporaries could go); backward frees each
 * node's saved tensors as it passes the node; the step's peak comes where the saved
 * activations and the first gradients are alive together. */
#include "tour-common.h"

int main(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 1);
  gs_module fc1 = gs_linear_new(64, 256, true, &rng), fc2 = gs_linear_new(256, 10, true, &rng);
  gs_tensor params[4];
  int n = gs_module_named_parameters(fc1, params, NULL, 2);
  n += gs_module_named_parameters(fc2, params + n, NULL, 2);
  gs_sgd_options sgd = GS_SGD_OPTIONS_DEFAULT;
  sgd.lr = 0.1;
  gs_optimizer optimizer = gs_sgd_new(params, n, &sgd);
  int64_t batch_shape[] = {128, 64}, target_shape[] = {128};
  gs_tensor x = tour_named(gs_randn(GS_F32, batch_shape, 2, &rng), "batch");
  gs_tensor targets = tour_named(gs_zeros(GS_I64, target_shape, 1), "targets");

  tour_section("forward");
  gs_scope step = gs_scope_begin("step");
  gs_tensor hidden = tour_named(gs_linear_forward(fc1, x), "hidden");
  gs_tensor activation = tour_named(gs_relu(hidden), "activation"); /* saved by ReluBackward */
  gs_tensor logits = tour_named(gs_linear_forward(fc2, activation), "logits");
  gs_tensor loss = tour_named(gs_cross_entropy(logits, targets, GS_REDUCTION_MEAN, 0.0), "loss");

  tour_section("backward");
  gs_optimizer_zero_grad(optimizer);
  gs_backward(loss); /* frees each node's saved tensors as it goes */
  gs_optimizer_step(optimizer);
  printf("loss %g\n", gs_item(loss));
  CHECK(gs_item(loss) > 0.0);
  gs_scope_end(step); /* the step's temporaries go */

  gs_dispose(x), gs_dispose(targets);
  gs_optimizer_dispose(optimizer);
  gs_module_dispose(fc1), gs_module_dispose(fc2);
  CHECK(gs_live_tensor_count() == 0);
  printf("checks_failed=%d\n", tour_failures);
  return tour_failures ? 1 : 0;
}
