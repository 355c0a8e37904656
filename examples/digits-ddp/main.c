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
#include <time.h>

#ifndef DIGITS_CSV
#define DIGITS_CSV "data/digits.csv"
#endif

enum { ROWS = 1797, PIXELS = 64, TRAIN = 1437, HIDDEN = 128, CLASSES = 10, EPOCHS = 30, BATCH = 16 };
static const double LR = 3e-3, LABEL_SMOOTHING = 0.2;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Reads the CSV (64 pixels 0-16 and a label per line). */
static bool load_digits(const char *path, float *x, int64_t *y) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "digits-ddp: cannot open %s (pass the path to digits.csv)\n", path);
    return false;
  }
  for (int r = 0; r < ROWS; r++) {
    for (int c = 0; c <= PIXELS; c++) {
      int v;
      if (fscanf(f, "%d,", &v) != 1) {
        fprintf(stderr, "digits-ddp: %s: expected %d rows of 65 numbers, row %d is short\n", path,
                ROWS, r + 1);
        fclose(f);
        return false;
      }
      if (c < PIXELS)
        x[r * PIXELS + c] = (float)v;
      else
        y[r] = v;
    }
  }
  fclose(f);
  return true;
}

/* (x - mean) / std per pixel, with the training rows' statistics (unbiased std, as torch's;
 * pixels that never vary keep std 1). Consumes x. */
static gs_tensor standardise(gs_tensor x) {
  gs_scope s = gs_scope_begin("standardise");
  gs_tensor train = gs_narrow(x, 0, 0, TRAIN);
  gs_tensor mean = gs_mean(train, (int[]){0}, 1, true);
  gs_tensor centred = gs_sub(train, mean);
  gs_tensor var = gs_div_scalar(gs_sum(gs_mul(centred, centred), (int[]){0}, 1, true), TRAIN - 1);
  gs_tensor std = gs_sqrt(var);
  gs_tensor safe = gs_where(gs_eq_scalar(std, 0), gs_ones_like(std), std);
  gs_tensor out = gs_move_to_outer(gs_div(gs_sub(x, mean), safe));
  gs_scope_end(s);
  gs_dispose(x);
  return out;
}

typedef struct mlp {
  gs_module net; /* Sequential: Linear(64, 128), ReLU, Linear(128, 10) */
} mlp;

static gs_tensor forward(const mlp *m, gs_tensor x) {
  return gs_module_forward(m->net, x); /* only the logits are left, in the step's scope */
}

/* Fraction of rows whose largest logit is the label. */
static double accuracy(const mlp *m, gs_tensor x, gs_tensor y) {
  gs_scope s = gs_scope_begin("evaluate");
  gs_no_grad_begin();
  gs_tensor logits = forward(m, x);
  gs_tensor predicted = gs_argmax(logits, 1, false);
  gs_tensor hits = gs_eq(predicted, y);
  gs_tensor total = gs_sum(hits, NULL, 0, false);
  double acc = gs_item(total) / (double)gs_size(y, 0);
  gs_no_grad_end();
  gs_scope_end(s);
  return acc;
}

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
  if (!load_digits(path, pixels, labels))
    return 1;
  double start = now_s();
  gs_manual_seed(0);
  gs_rng rng;
  gs_rng_seed(&rng, 0);

  gs_tensor x_all = standardise(gs_from_data(GS_F32, (int64_t[]){ROWS, PIXELS}, 2, pixels));
  gs_tensor y_all = gs_from_data(GS_I64, (int64_t[]){ROWS}, 1, labels);
  gs_tensor x_train = gs_narrow(x_all, 0, 0, TRAIN), y_train = gs_narrow(y_all, 0, 0, TRAIN);
  gs_tensor x_test = gs_narrow(x_all, 0, TRAIN, ROWS - TRAIN);
  gs_tensor y_test = gs_narrow(y_all, 0, TRAIN, ROWS - TRAIN);

  gs_module fc1 = gs_linear_new(PIXELS, HIDDEN, true, &rng);
  gs_module fc2 = gs_linear_new(HIDDEN, CLASSES, true, &rng);
  mlp model = {gs_sequential_new((gs_module[]){fc1, gs_relu_new(), fc2}, 3)};
  /* "0.weight", "0.bias", "2.weight", "2.bias", as PyTorch's named_parameters() */
  gs_tensor params[4];
  const char *names[4];
  int n_params = gs_module_named_parameters(model.net, params, names, 4);
  for (int i = 0; i < n_params && rank == 0; i++) {
    printf("%s%s", i ? ", " : "parameters: ", names[i]);
    for (int d = 0; d < gs_ndim(params[i]); d++)
      printf("%c%lld", d ? 'x' : ' ', (long long)gs_size(params[i], d));
  }
  if (rank == 0)
    printf("\n");
  gs_ddp *ddp = gs_ddp_new(model.net, &(gs_ddp_options){.check_every = 50});
  if (!ddp)
    return 1;
  gs_adam_options opts = {.lr = LR, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8};
  gs_optimizer adam = gs_adam_new(params, n_params, &opts);

  /* Rows of the standardised training data, in a new seeded order each epoch. */
  gs_dataset train_set = gs_tensor_dataset((gs_tensor[]){x_train, y_train}, 2);
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
             accuracy(&model, x_train, y_train));
  }
  double test_acc = accuracy(&model, x_test, y_test);
  double train_acc = accuracy(&model, x_train, y_train);
  double seconds = now_s() - start;

  gs_ddp_stats st = gs_ddp_get_stats(ddp);
  gs_ddp_free(ddp);
  gs_data_loader_free(loader);
  gs_dist_sampler_free(sampler);
  gs_dataset_release(&train_set);
  gs_optimizer_dispose(adam);
  gs_module_dispose(model.net); /* and its three children */
  gs_tensor handles[] = {x_all, y_all, x_train, y_train, x_test, y_test};
  for (size_t i = 0; i < sizeof handles / sizeof *handles; i++)
    gs_dispose(handles[i]);
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
