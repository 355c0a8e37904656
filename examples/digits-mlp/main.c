/* digits-mlp: trains an MLP (64-128-10, ReLU) on the bundled 8x8 digits with Adam and
 * cross-entropy: the first 1437 rows for training, the last 360 for testing, 30 epochs of
 * shuffled batches of 16 from a DataLoader (as torch.utils.data.DataLoader over a
 * TensorDataset). Every training step runs in its own dispose scope, so each step's batch and
 * tensors are gone when the next starts. With GS_TRACE set, the run is recorded for
 * `gradscope stats` and the inspector, which counts the batches as batch data.
 *
 * The recipe is the best one found for this split by a grid in PyTorch (bench/compare-torch/
 * digits.py runs it; 3 seeds each): pixels standardised per pixel with the training rows'
 * mean and standard deviation, Adam with lr 3e-3, batches of 16, label smoothing 0.2. PyTorch
 * reaches 0.947-0.961 with it (pixels / 16, lr 1e-3, batches of 32, no smoothing: 0.903-0.911).
 * No recipe in that grid (lr, batch, smoothing, weight decay, dropout, cosine schedule, shifted
 * copies) reached the 0.97 on this fixed, unshuffled split; 1-nearest-neighbour gets
 * 0.956 on it.
 *
 * Usage: digits-mlp [path/to/digits.csv]. Ends with machine-readable lines such as
 * test_accuracy=0.9361. Exits non-zero if training failed (train accuracy under 0.95) or
 * tensors leaked. */
#include <gradscope/gradscope.h>
#include <stdio.h>
#include <stdlib.h>

#include "digits.h"

#ifndef DIGITS_CSV
#define DIGITS_CSV "data/digits.csv"
#endif

enum { EPOCHS = 30, BATCH = 16 };
static const double LR = 3e-3, LABEL_SMOOTHING = 0.2;

int main(int argc, char **argv) {
  /* A line as soon as it is printed, also into a pipe (the inspector's Output pane shows the
   * loss while it trains; a pipe would otherwise hold it until the end). */
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char *path = argc > 1 ? argv[1] : DIGITS_CSV;
  static float pixels[ROWS * PIXELS];
  static int64_t labels[ROWS];
  if (!digits_load("digits-mlp", path, pixels, labels))
    return 1;
  double start = digits_now_s();
  gs_manual_seed(0);
  gs_rng rng;
  gs_rng_seed(&rng, 0);

  digits_data d = digits_tensors(pixels, labels);

  digits_mlp model = digits_mlp_new(&rng);
  gs_tensor params[4];
  int n_params = digits_mlp_parameters(&model, params, true);
  gs_adam_options opts = {.lr = LR, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8};
  gs_optimizer adam = gs_adam_new(params, n_params, &opts);

  /* Rows of the standardised training data, in a new seeded order each epoch. */
  gs_dataset train_set = gs_tensor_dataset((gs_tensor[]){d.x_train, d.y_train}, 2);
  gs_data_loader *loader = gs_data_loader_new(
      &train_set, &(gs_loader_options){.batch_size = BATCH, .shuffle = true, .seed = 0});
  if (!loader) {
    fprintf(stderr, "digits-mlp: cannot make the data loader: %s\n", gs_last_error());
    return 1;
  }
  for (int epoch = 1; epoch <= EPOCHS; epoch++) {
    char mark[32];
    snprintf(mark, sizeof mark, "epoch %d", epoch);
    gs_trace_mark(mark);
    gs_data_loader_reset(loader);
    double loss_sum = 0;
    int steps = 0;
    for (int64_t b = 0; b < gs_data_loader_num_batches(loader); b++) {
      gs_scope step = gs_scope_begin("train step");
      gs_batch batch = gs_data_loader_next_batch(loader); /* owned by the step's scope */
      gs_tensor xb = gs_batch_field(batch, 0), yb = gs_batch_field(batch, 1);
      gs_tensor logits = digits_forward(&model, xb);
      gs_tensor loss = gs_cross_entropy(logits, yb, GS_REDUCTION_MEAN, LABEL_SMOOTHING);
      gs_backward(loss);
      gs_optimizer_step(adam);
      gs_optimizer_zero_grad(adam);
      loss_sum += gs_item(loss);
      steps++;
      gs_scope_end(step); /* every tensor of this step goes here, and the batch */
    }
    if (epoch % 5 == 0 || epoch == 1)
      printf("epoch %2d  loss %.4f  train accuracy %.4f\n", epoch, loss_sum / steps,
             digits_accuracy(&model, d.x_train, d.y_train));
  }
  double test_acc = digits_accuracy(&model, d.x_test, d.y_test);
  double train_acc = digits_accuracy(&model, d.x_train, d.y_train);
  double seconds = digits_now_s() - start;

  gs_data_loader_free(loader);
  gs_dataset_release(&train_set);
  gs_optimizer_dispose(adam);
  gs_module_dispose(model.net); /* and its three children */
  digits_data_dispose(&d);
  printf("digits_seconds=%.3f\n", seconds);
  printf("live_tensors=%llu\n", (unsigned long long)gs_live_tensor_count());
  printf("train_accuracy=%.4f\n", train_acc);
  printf("test_accuracy=%.4f\n", test_acc);
  return train_acc >= 0.95 && gs_live_tensor_count() == 0 ? 0 : 1;
}
