/* digits.c: see digits.h. */
#include "digits.h"

#include <stdio.h>
#include <time.h>

double digits_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

bool digits_load(const char *program, const char *path, float *x, int64_t *y) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "%s: cannot open %s (pass the path to digits.csv)\n", program, path);
    return false;
  }
  for (int r = 0; r < ROWS; r++) {
    for (int c = 0; c <= PIXELS; c++) {
      int v;
      if (fscanf(f, "%d,", &v) != 1) {
        fprintf(stderr, "%s: %s: expected %d rows of 65 numbers, row %d is short\n", program, path,
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

/* Unbiased std, as torch's; pixels that never vary keep std 1. */
gs_tensor digits_standardise(gs_tensor x) {
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

digits_data digits_tensors(const float *pixels, const int64_t *labels) {
  digits_data d;
  d.x_all = digits_standardise(gs_from_data(GS_F32, (int64_t[]){ROWS, PIXELS}, 2, pixels));
  d.y_all = gs_from_data(GS_I64, (int64_t[]){ROWS}, 1, labels);
  d.x_train = gs_narrow(d.x_all, 0, 0, TRAIN), d.y_train = gs_narrow(d.y_all, 0, 0, TRAIN);
  d.x_test = gs_narrow(d.x_all, 0, TRAIN, ROWS - TRAIN);
  d.y_test = gs_narrow(d.y_all, 0, TRAIN, ROWS - TRAIN);
  return d;
}

void digits_data_dispose(digits_data *d) {
  gs_tensor handles[] = {d->x_all, d->y_all, d->x_train, d->y_train, d->x_test, d->y_test};
  for (size_t i = 0; i < sizeof handles / sizeof *handles; i++)
    gs_dispose(handles[i]);
}

digits_mlp digits_mlp_new(gs_rng *rng) {
  gs_module fc1 = gs_linear_new(PIXELS, HIDDEN, true, rng);
  gs_module fc2 = gs_linear_new(HIDDEN, CLASSES, true, rng);
  return (digits_mlp){gs_sequential_new((gs_module[]){fc1, gs_relu_new(), fc2}, 3)};
}

/* "0.weight", "0.bias", "2.weight", "2.bias", as PyTorch's named_parameters() */
int digits_mlp_parameters(const digits_mlp *m, gs_tensor params[4], bool print) {
  const char *names[4];
  int n_params = gs_module_named_parameters(m->net, params, names, 4);
  for (int i = 0; i < n_params && print; i++) {
    printf("%s%s", i ? ", " : "parameters: ", names[i]);
    for (int d = 0; d < gs_ndim(params[i]); d++)
      printf("%c%lld", d ? 'x' : ' ', (long long)gs_size(params[i], d));
  }
  if (print)
    printf("\n");
  return n_params;
}

gs_tensor digits_forward(const digits_mlp *m, gs_tensor x) {
  return gs_module_forward(m->net, x); /* only the logits are left, in the step's scope */
}

double digits_accuracy(const digits_mlp *m, gs_tensor x, gs_tensor y) {
  gs_scope s = gs_scope_begin("evaluate");
  gs_no_grad_begin();
  gs_tensor logits = digits_forward(m, x);
  gs_tensor predicted = gs_argmax(logits, 1, false);
  gs_tensor hits = gs_eq(predicted, y);
  gs_tensor total = gs_sum(hits, NULL, 0, false);
  double acc = gs_item(total) / (double)gs_size(y, 0);
  gs_no_grad_end();
  gs_scope_end(s);
  return acc;
}
