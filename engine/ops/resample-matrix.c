/* resample-matrix.c: the resampling ops that are a matmul against a fixed matrix: bicubic
 * resizing (F.interpolate's 'bicubic' mode: out = Wh x Ww^T, one matrix of cubic weights per
 * dim) and the affine sampling grid (F.affine_grid: the base grid of normalized positions
 * times theta^T).
 *
 * Each computes with matmul under no grad and records one node, as torch records the op
 * (UpsampleBicubic2DBackward1, AffineGridGeneratorBackward0), keeping only the sizes: the
 * formula makes the matrix again (torch's nodes save no tensor either, so a graph through them
 * may be walked again) and is the transposed matmul, so it differentiates again.
 */
#include <math.h>
#include <stdlib.h>

#include "ops-impl.h"

/* A new tensor of dtype from the rows x cols doubles m (freed here), or GS_NO_TENSOR. */
static gs_tensor matrix_tensor(double *m, int64_t rows, int64_t cols, gs_dtype dtype,
                               const char *fn) {
  if (!m) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory for a %lld x %lld matrix", (long long)rows,
              (long long)cols);
    return GS_NO_TENSOR;
  }
  gs_tensor f64 = gs_from_data(GS_F64, (int64_t[]){rows, cols}, 2, m);
  free(m);
  if (!f64.id || dtype == GS_F64)
    return f64;
  gs_tensor t = gs_to_dtype(f64, dtype);
  gs_dispose(f64);
  return t;
}

/* ---- bicubic resizing ------------------------------------------------------------------ */

/* The [out, in] matrix of torch's bicubic weights along one dim: output j reads 4 taps around
 * its source position (torch's area_pixel_compute_source_index for cubic: not clamped at 0),
 * each clamped into [0, in - 1] (a tap clamped onto another adds its weight there). */
static double *bicubic_matrix(int64_t in, int64_t out, double scale, bool align) {
  double *m = calloc((size_t)(in * out), sizeof(double));
  double s = align ? (out > 1 ? (double)(in - 1) / (double)(out - 1) : 0.0)
                   : (scale > 0 ? scale : (double)in / (double)out);
  const double a = -0.75;
  for (int64_t j = 0; m && j < out; j++) {
    double src = align ? s * (double)j : s * ((double)j + 0.5) - 0.5;
    double i0 = floor(src), t = src - i0, x1 = t + 1, x2 = 1 - t, x3 = x2 + 1;
    double w[4] = {((a * x1 - 5 * a) * x1 + 8 * a) * x1 - 4 * a,
                   ((a + 2) * t - (a + 3)) * t * t + 1, ((a + 2) * x2 - (a + 3)) * x2 * x2 + 1,
                   ((a * x3 - 5 * a) * x3 + 8 * a) * x3 - 4 * a};
    for (int k = 0; k < 4; k++) {
      int64_t at = (int64_t)i0 - 1 + k;
      at = at < 0 ? 0 : at > in - 1 ? in - 1 : at;
      m[j * in + at] += w[k];
    }
  }
  return m;
}

/* The weights of one resized dim as a [out, in] tensor of dtype (NULL scales: none given). */
static gs_tensor bicubic_weights(int64_t in, int64_t out, const double *scales, int i, bool align,
                                 gs_dtype dtype, const char *fn) {
  return matrix_tensor(bicubic_matrix(in, out, scales ? scales[i] : 0, align), out, in, dtype, fn);
}

/* d out = Wh^T g Ww, the matrices made again from the sizes (torch's node keeps no tensor
 * either, so its graph may be walked again); reals: the scales, ints[0]: align_corners */
static void bicubic_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  const char *fn = n->kind->name;
  const int64_t *in = n->inputs[0].shape;
  gs_dtype dt = gs_dtype_of(g);
  bool align = n->ints[0] != 0;
  gs_tensor wh =
      gs__formula_temp(bicubic_weights(in[2], gs_size(g, 2), n->reals, 0, align, dt, fn));
  gs_tensor ww =
      gs__formula_temp(bicubic_weights(in[3], gs_size(g, 3), n->reals, 1, align, dt, fn));
  gs_tensor wh_t = gs__formula_temp(gs_transpose(wh, 0, 1));
  gs_tensor rows = gs__formula_temp(gs_matmul(wh_t, g));
  grads[0] = gs__reduce_grad(n, 0, gs_matmul(rows, ww));
}
GS__BACKWARD_TWICE(UpsampleBicubic2dBackward, bicubic_backward);

gs_tensor gs_upsample_bicubic2d(gs_tensor h, const int64_t sizes[2], const double *scales,
                                bool align_corners) {
  const char *fn = "upsample_bicubic2d";
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return GS_NO_TENSOR;
  char st[GS__SHAPE_STR];
  if (!sizes || t->ndim != 4) {
    gs__error(GS_ERR_SHAPE, fn, "expected an input [N, C, H, W] and 2 output sizes, got %s%s",
              gs__shape_str(st, t->shape, t->ndim), sizes ? "" : " and no sizes");
    return GS_NO_TENSOR;
  }
  if (!gs_dtype_is_floating(t->dtype)) {
    gs__error(GS_ERR_DTYPE, fn, "expected a floating input (f32 or f64), got %s",
              gs_dtype_name(t->dtype));
    return GS_NO_TENSOR;
  }
  for (int i = 0; i < 2; i++)
    if (sizes[i] <= 0 || t->shape[2 + i] <= 0) {
      gs__error(GS_ERR_ARGUMENT, fn,
                "expected positive input and output sizes, got %lld to %lld along dim %d",
                (long long)t->shape[2 + i], (long long)sizes[i], 2 + i);
      return GS_NO_TENSOR;
    }
  gs_dtype dt = t->dtype;
  gs_tensor wh = bicubic_weights(t->shape[2], sizes[0], scales, 0, align_corners, dt, fn);
  gs_tensor ww = wh.id ? bicubic_weights(t->shape[3], sizes[1], scales, 1, align_corners, dt, fn)
                       : GS_NO_TENSOR;
  gs_tensor ww_t = ww.id ? gs_transpose(ww, 0, 1) : GS_NO_TENSOR;
  gs_no_grad_begin();
  gs_tensor rows = ww_t.id ? gs_matmul(wh, h) : GS_NO_TENSOR;
  gs_tensor out = rows.id ? gs_matmul(rows, ww_t) : GS_NO_TENSOR;
  gs_no_grad_end();
  t = gs__lookup(h, fn);
  gs__node *n =
      gs__record_result(&UpsampleBicubic2dBackward, out, 1, (const gs__tensor *[]){t}, 0, fn);
  if (n) {
    n->ints[0] = align_corners;
    n->reals[0] = scales && scales[0] > 0 ? scales[0] : 0;
    n->reals[1] = scales && scales[1] > 0 ? scales[1] : 0;
  }
  gs_tensor temps[] = {wh, ww, ww_t, rows};
  for (int i = 0; i < 4; i++)
    if (temps[i].id)
      gs_dispose(temps[i]);
  return out;
}

/* ---- the affine grid ------------------------------------------------------------------- */

/* torch's linspace_from_neg_one: steps positions over [-1, 1], drawn in to the pixel centers
 * without align_corners; one step is 0. */
static double grid_position(int64_t i, int64_t steps, bool align) {
  if (steps <= 1)
    return 0.0;
  double step = 2.0 / (double)(steps - 1);
  /* linspace's two halves: from the start, then back from the end (symmetric values) */
  double v = i < steps / 2 ? -1.0 + step * (double)i : 1.0 - step * (double)(steps - 1 - i);
  return align ? v : v * (double)(steps - 1) / (double)steps;
}

/* The base grid of size (nsize 4 or 5, already checked) as [P, k + 1] of dtype: row p is
 * (x, y[, z], 1), x running fastest over the last dim. */
static gs_tensor base_grid(const int64_t *size, int nsize, bool align, gs_dtype dtype,
                           const char *fn) {
  int k = nsize - 2;
  int64_t points = 1;
  for (int i = 2; i < nsize; i++)
    points *= size[i];
  double *base = malloc(sizeof(double) * (size_t)(points * (k + 1)));
  for (int64_t p = 0; base && p < points; p++) {
    int64_t rest = p;
    for (int d = 0; d < k; d++) { /* d = 0: x, over size[nsize - 1] */
      int64_t steps = size[nsize - 1 - d];
      base[p * (k + 1) + d] = grid_position(rest % steps, steps, align);
      rest /= steps;
    }
    base[p * (k + 1) + k] = 1.0;
  }
  return matrix_tensor(base, points, k + 1, dtype, fn);
}

/* d theta = (base^T g)^T per batch, the base made again from the size (ints: nsize, the size,
 * align_corners), as torch's node keeps no tensor; g [N, *, k] seen as [N, P, k] */
static void affine_grid_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  int nsize = (int)n->ints[0], k = nsize - 2;
  gs_tensor base = gs__formula_temp(
      base_grid(&n->ints[1], nsize, n->ints[6] != 0, gs_dtype_of(g), n->kind->name));
  gs_tensor flat = gs__formula_temp(gs_reshape(g, (int64_t[]){n->ints[1], -1, k}, 3));
  gs_tensor base_t = gs__formula_temp(gs_transpose(base, 0, 1));
  gs_tensor per = gs__formula_temp(gs_matmul(base_t, flat)); /* [N, k + 1, k] */
  grads[0] = gs__reduce_grad(n, 0, gs_transpose(per, 1, 2));
}
GS__BACKWARD_TWICE(AffineGridGeneratorBackward, affine_grid_backward);

gs_tensor gs_affine_grid(gs_tensor h, const int64_t *size, int nsize, bool align_corners) {
  const char *fn = "affine_grid_generator";
  gs__tensor *theta = gs__lookup(h, fn);
  if (!theta)
    return GS_NO_TENSOR;
  char st[GS__SHAPE_STR];
  if (!size || (nsize != 4 && nsize != 5)) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected a size of 4 (N, C, H, W) or 5 (N, C, D, H, W), got %d values", nsize);
    return GS_NO_TENSOR;
  }
  int k = nsize - 2; /* spatial dims */
  if (!gs_dtype_is_floating(theta->dtype)) {
    gs__error(GS_ERR_DTYPE, fn, "expected a floating theta (f32 or f64), got %s",
              gs_dtype_name(theta->dtype));
    return GS_NO_TENSOR;
  }
  if (theta->ndim != 3 || theta->shape[0] != size[0] || theta->shape[1] != k ||
      theta->shape[2] != k + 1) {
    gs__error(GS_ERR_SHAPE, fn, "expected theta [%lld, %d, %d] for a size of %d values, got %s",
              (long long)size[0], k, k + 1, nsize, gs__shape_str(st, theta->shape, theta->ndim));
    return GS_NO_TENSOR;
  }
  for (int i = 0; i < nsize; i++)
    if (size[i] <= 0) {
      gs__error(GS_ERR_ARGUMENT, fn, "expected positive sizes, got %lld at %d", (long long)size[i],
                i);
      return GS_NO_TENSOR;
    }
  gs_tensor hbase = base_grid(size, nsize, align_corners, theta->dtype, fn);
  int64_t shape[5] = {size[0]};
  for (int d = 0; d < k; d++)
    shape[1 + d] = size[2 + d];
  shape[1 + k] = k;
  gs_no_grad_begin();
  gs_tensor theta_t = hbase.id ? gs_transpose(h, 1, 2) : GS_NO_TENSOR;
  gs_tensor flat = theta_t.id ? gs_matmul(hbase, theta_t) : GS_NO_TENSOR; /* [N, P, k] */
  gs_tensor out = flat.id ? gs_reshape(flat, shape, k + 2) : GS_NO_TENSOR;
  gs_no_grad_end();
  theta = gs__lookup(h, fn);
  gs__node *n =
      gs__record_result(&AffineGridGeneratorBackward, out, 1, (const gs__tensor *[]){theta}, 0, fn);
  if (n) {
    n->ints[0] = nsize;
    for (int i = 0; i < nsize; i++)
      n->ints[1 + i] = size[i];
    n->ints[6] = align_corners;
  }
  gs_tensor temps[] = {hbase, theta_t, flat};
  for (int i = 0; i < 3; i++)
    if (temps[i].id)
      gs_dispose(temps[i]);
  return out;
}
