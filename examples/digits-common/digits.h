/* digits.h: what the digits examples share (digits-mlp, and digits-ddp, which trains the same
 * model data-parallel): the bundled 8x8 digits read from their CSV and standardised, and the
 * MLP (64-128-10, ReLU) with its accuracy. */
#pragma once

#include <gradscope/gradscope.h>
#include <stdbool.h>
#include <stdint.h>

/* The data set: the first TRAIN rows for training, the rest for testing. */
enum { ROWS = 1797, PIXELS = 64, TRAIN = 1437, HIDDEN = 128, CLASSES = 10 };

typedef struct digits_mlp {
  gs_module net; /* Sequential: Linear(64, 128), ReLU, Linear(128, 10) */
} digits_mlp;

/* Seconds on the monotonic clock. */
double digits_now_s(void);

/* Reads the CSV at path (64 pixels 0-16 and a label per line) into x (ROWS x PIXELS) and y;
 * on failure says why on stderr, naming the program, and returns false. */
bool digits_load(const char *program, const char *path, float *x, int64_t *y);

/* (x - mean) / std per pixel, with the training rows' statistics. Consumes x. */
gs_tensor digits_standardise(gs_tensor x);

/* The data set as tensors: the pixels standardised and the labels, and their training and
 * test rows as views. */
typedef struct digits_data {
  gs_tensor x_all, y_all, x_train, y_train, x_test, y_test;
} digits_data;

/* pixels and labels as digits_load read them. */
digits_data digits_tensors(const float *pixels, const int64_t *labels);
void digits_data_dispose(digits_data *d);

/* A new MLP, its weights drawn from rng. */
digits_mlp digits_mlp_new(gs_rng *rng);

/* Its parameters (into params, at most 4), printed with their shapes if print is true. */
int digits_mlp_parameters(const digits_mlp *m, gs_tensor params[4], bool print);

gs_tensor digits_forward(const digits_mlp *m, gs_tensor x);

/* Fraction of rows whose largest logit is the label. */
double digits_accuracy(const digits_mlp *m, gs_tensor x, gs_tensor y);
