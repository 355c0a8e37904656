/* digits-ddp: examples/digits-mlp trained data-parallel over Open MPI, as PyTorch's
 * DistributedDataParallel with a DistributedSampler: run it as
 *   mpirun -np 2 digits-ddp [path/to/digits.csv]
 * Every rank builds the same MLP (DDP broadcasts rank 0's parameters anyway), reads its shard
 * of the 1437 training rows (reshuffled every epoch from one seed, padded as PyTorch pads),
 * and takes batches of 16: one step sees 16 x world rows, whose averaged gradient each rank
 * applies with Adam, so the ranks' parameters stay equal (checked every 50 steps). Rank 0
 * evaluates and ends with machine-readable lines: ddp_world_size=2, test_accuracy=0.9xxx.
 * Exits non-zero if training failed (train accuracy under 0.95) or tensors leaked. */
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
  if (!gs_dist_init(&argc, &argv))
    return 1;
  int rank = gs_dist_rank(), world = gs_dist_world_size();
  const char *path = argc > 1 ? argv[1] : DIGITS_CSV;
  static float pixels[ROWS * PIXELS];
  static int64_t labels[ROWS];
  if (!digits_load("digits-ddp", path, pixels, labels))
    return 1;
  double start = digits_now_s();
  gs_manual_seed(0);
  gs_rng rng;
  gs_rng_seed(&rng, 0);

  digits_data d = digits_tensors(pixels, labels);

  digits_mlp model = digits_mlp_new(&rng);
  gs_tensor params[4];
  int n_params = digits_mlp_parameters(&model, params, rank == 0);
  gs_ddp *ddp = gs_ddp_new(model.net, &(gs_ddp_options){.check_every = 50});
  if (!ddp)
    return 1;
  gs_adam_options opts = {.lr = LR, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8};
  gs_optimizer adam = gs_adam_new(params, n_params, &opts);

  /* Rows of the standardised training data, in a new seeded order each epoch. */
  gs_dataset train_set = gs_tensor_dataset((gs_tensor[]){d.x_train, d.y_train}, 2);
  gs_dist_sampler *sampler = gs_dist_sampler_new(&train_set, rank, world, true, 0);
  gs_dataset shard = gs_dist_sampler_dataset(sampler);
  gs_data_loader *loader =
      gs_data_loader_new(&shard, &(gs_loader_options){.batch_size = BATCH});
  if (!loader) {
    fprintf(stderr, "digits-ddp: cannot make the data loader: %s\n", gs_last_error());
    return 1;
  }
  for (int epoch = 1; epoch <= EPOCHS; epoch++) {
    char mark[32];
    snprintf(mark, sizeof mark, "epoch %d", epoch);
    gs_trace_mark(mark);
    gs_dist_sampler_set_epoch(sampler, epoch);
    gs_data_loader_reset(loader);
    double loss_sum = 0;
    int steps = 0;
    for (int64_t b = 0; b < gs_data_loader_num_batches(loader); b++) {
      gs_scope step = gs_scope_begin("train step");
      gs_batch batch = gs_data_loader_next_batch(loader); /* owned by the step's scope */
      gs_tensor xb = gs_batch_field(batch, 0), yb = gs_batch_field(batch, 1);
      gs_tensor logits = gs_ddp_forward(ddp, xb);
      gs_tensor loss = gs_cross_entropy(logits, yb, GS_REDUCTION_MEAN, LABEL_SMOOTHING);
      gs_backward(loss); /* its end waits for the averaged gradients */
      gs_optimizer_step(adam);
      gs_optimizer_zero_grad(adam);
      loss_sum += gs_item(loss);
      steps++;
      gs_scope_end(step); /* every tensor of this step goes here, and the batch */
    }
    if (rank == 0 && (epoch % 5 == 0 || epoch == 1))
      printf("epoch %2d  loss %.4f  train accuracy %.4f\n", epoch, loss_sum / steps,
             digits_accuracy(&model, d.x_train, d.y_train));
  }
  double test_acc = digits_accuracy(&model, d.x_test, d.y_test);
  double train_acc = digits_accuracy(&model, d.x_train, d.y_train);
  double seconds = digits_now_s() - start;

  gs_ddp_stats st = gs_ddp_get_stats(ddp);
  gs_ddp_free(ddp);
  gs_data_loader_free(loader);
  gs_dist_sampler_free(sampler);
  gs_dataset_release(&train_set);
  gs_optimizer_dispose(adam);
  gs_module_dispose(model.net); /* and its three children */
  digits_data_dispose(&d);
  bool ok = train_acc >= 0.95 && gs_live_tensor_count() == 0;
  if (rank == 0) {
    printf("ddp_world_size=%d\n", world);
    printf("ddp_buckets=%d\n", st.n_buckets);
    printf("ddp_steps=%llu\n", (unsigned long long)st.steps);
    printf("ddp_bytes_reduced=%llu\n", (unsigned long long)st.bytes_reduced);
    printf("digits_seconds=%.3f\n", seconds);
    printf("live_tensors=%llu\n", (unsigned long long)gs_live_tensor_count());
    printf("train_accuracy=%.4f\n", train_acc);
    printf("test_accuracy=%.4f\n", test_acc);
  }
  gs_dist_finalize();
  return ok ? 0 : 1;
}
