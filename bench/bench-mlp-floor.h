/* bench-mlp-floor.h: the GEMM floor of bench-mlp's step: the sgemm calls one training step of
 * an MLP of Linear layers makes, alone, on buffers of the same sizes. They are the calls the
 * engine makes (engine/ops/matmul.c, engine/nn/linear.c), in its order, with its shapes,
 * transposes, leading dimensions, alpha and beta:
 * - forward, per layer: y = b + x @ W^T as one addmm: the bias already fills y (beta 1), W
 *   [out, in] is read transposed in place;
 * - backward, last layer first: dx = g @ W (not for the first layer, whose input needs no
 *   gradient), then dW = g^T @ x, computed in W's own [out, in] layout.
 * For 784-512-512-10 at batch 128 that is 8 products. A product the engine computes with its
 * own small kernel instead (engine/ops/small-gemm.h: gs__small_sgemm_wins, which depends on
 * OpenBLAS's kernels and threads) is not an sgemm call of the step, and the floor leaves it
 * out: with OPENBLAS_CORETYPE=Haswell the last layer's two backward products (128x512x10 and
 * 10x512x128) go that way, and an LD_PRELOAD'd cblas_sgemm printing the engine's calls showed
 * 6 calls a step, the list the floor makes; with OpenBLAS's own choice of kernels on an
 * AVX-512 machine it showed all 8. Between the products the floor does nothing: the bias
 * fill, ReLU, loss, their backward, the gradient sums and the optimizer are what the step
 * costs above it. The forward outputs keep accumulating (beta 1 with no bias fill), which
 * changes no timing: values stay far from overflow and denormals over thousands of steps. */
#pragma once

#include <cblas.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "small-gemm.h"

enum { MLP_FLOOR_MAX_LAYERS = 8, MLP_FLOOR_MAX_CALLS = 3 * MLP_FLOOR_MAX_LAYERS };

/* One cblas_sgemm call, row-major: c = alpha * op(a) @ op(b) + beta * c (alpha is 1). */
typedef struct mlp_floor_call {
  enum CBLAS_TRANSPOSE ta, tb;
  int m, n, k, lda, ldb, ldc;
  const float *a, *b;
  float beta;
  float *c;
} mlp_floor_call;

typedef struct mlp_floor {
  int n_calls, n_buffers;
  int n_forward; /* the first n_forward calls are the forward's, the rest the backward's */
  double flops; /* per step */
  mlp_floor_call calls[MLP_FLOOR_MAX_CALLS];
  float *buffers[4 * MLP_FLOOR_MAX_LAYERS + 2];
} mlp_floor;

/* A rows x cols buffer of values uniform in [-scale, scale), owned by f. */
static inline float *mlp_floor_buffer(mlp_floor *f, int64_t rows, int64_t cols, float scale,
                                      uint64_t *seed) {
  float *p = malloc(sizeof(float) * (size_t)(rows * cols));
  if (!p)
    return NULL;
  for (int64_t i = 0; i < rows * cols; i++) {
    *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
    p[i] = scale * ((float)(*seed >> 40) / (float)(1 << 24) * 2.0f - 1.0f);
  }
  f->buffers[f->n_buffers++] = p;
  return p;
}

/* A call, its arguments in cblas_sgemm's order (alpha 1), unless the engine would compute
 * that product without sgemm (engine/ops/matmul.c asks gs__small_sgemm_wins the same). */
static inline void mlp_floor_add(mlp_floor *f, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb,
                                 int m, int n, int k, const float *a, int lda, const float *b,
                                 int ldb, float beta, float *c, int ldc) {
  if (gs__small_sgemm_wins(m, n, k, tb == CblasTrans))
    return;
  f->calls[f->n_calls++] = (mlp_floor_call){ta, tb, m, n, k, lda, ldb, ldc, a, b, beta, c};
  f->flops += 2.0 * m * n * k;
}

/* The calls of one step of Linear layers widths[0] -> widths[1] -> ... -> widths[layers] on
 * a batch of `batch` rows. False when out of memory. */
static inline bool mlp_floor_init(mlp_floor *f, int batch, const int *widths, int layers) {
  *f = (mlp_floor){0};
  if (layers < 1 || layers > MLP_FLOOR_MAX_LAYERS)
    return false;
  uint64_t seed = 42;
  float *act[MLP_FLOOR_MAX_LAYERS + 1], *weight[MLP_FLOOR_MAX_LAYERS];
  act[0] = mlp_floor_buffer(f, batch, widths[0], 1.0f, &seed);
  for (int l = 0; l < layers; l++) {
    int in = widths[l], out = widths[l + 1];
    /* As nn.Linear's init: uniform in +-1/sqrt(in). */
    weight[l] = mlp_floor_buffer(f, out, in, 1.0f / sqrtf((float)in), &seed);
    act[l + 1] = mlp_floor_buffer(f, batch, out, 0.0f, &seed);
    if (!act[l] || !weight[l] || !act[l + 1])
      return false;
    mlp_floor_add(f, CblasNoTrans, CblasTrans, batch, out, in, act[l], in, weight[l], in, 1.0f,
                  act[l + 1], out);
  }
  f->n_forward = f->n_calls;
  /* The loss's gradient, then each layer's input gradient feeds the layer below. */
  float *grad = mlp_floor_buffer(f, batch, widths[layers], 1.0f / (float)batch, &seed);
  for (int l = layers - 1; l >= 0 && grad; l--) {
    int in = widths[l], out = widths[l + 1];
    float *dx = l > 0 ? mlp_floor_buffer(f, batch, in, 0.0f, &seed) : NULL;
    float *dw = mlp_floor_buffer(f, out, in, 0.0f, &seed);
    if ((l > 0 && !dx) || !dw)
      return false;
    if (l > 0)
      mlp_floor_add(f, CblasNoTrans, CblasNoTrans, batch, in, out, grad, out, weight[l], in, 0.0f,
                    dx, in);
    mlp_floor_add(f, CblasTrans, CblasNoTrans, out, in, batch, grad, out, act[l], in, 0.0f, dw, in);
    grad = dx;
  }
  return true;
}

/* Calls [lo, hi) of one step: the forward's are [0, n_forward), the backward's the rest. */
static inline void mlp_floor_calls(const mlp_floor *f, int lo, int hi) {
  for (int i = lo; i < hi; i++) {
    const mlp_floor_call *c = &f->calls[i];
    cblas_sgemm(CblasRowMajor, c->ta, c->tb, c->m, c->n, c->k, 1.0f, c->a, c->lda, c->b, c->ldb,
                c->beta, c->c, c->ldc);
  }
}

static inline void mlp_floor_step(const mlp_floor *f) { mlp_floor_calls(f, 0, f->n_calls); }

static inline void mlp_floor_free(mlp_floor *f) {
  for (int i = 0; i < f->n_buffers; i++)
    free(f->buffers[i]);
  f->n_buffers = 0;
}
