/* conv-impl.h: what conv.c (im2col + BLAS, any geometry) shares with conv-direct.c (3x3,
 * unit stride, small images, no column buffer: a convolution's geometry, the bias gradient's
 * plane sum, and the direct path's entry points, which conv.c calls when the geometry fits) and
 * with the other ops built on its kernels (conv-transpose.c, conv1d.c).
 *
 * A transposed convolution is a convolution's input gradient, and its own gradients are that
 * convolution's forward pass and weight gradient, so it runs conv.c's loops on the convolution
 * it is the transpose of, described by gs__conv_shape. A 1-D convolution is the 2-D one of
 * height 1. */
#pragma once

#include "ops-impl.h"

/* Everything the loops need about one convolution, all sizes in elements. */
typedef struct conv_geom {
  int64_t n, c, d, h, w;  /* input [N, C, D, H, W] (an unbatched input has N = 1; 2-D: D = 1) */
  int64_t o, kd, kh, kw;  /* weight [O, C / groups, kd, kh, kw] (2-D: kd = 1) */
  int64_t groups, cg, og; /* channels per group, in and out */
  int64_t sd, sh, sw, pd, ph, pw, dd, dh, dw; /* 2-D: sd = dd = 1, pd = 0 */
  int64_t od, oh, ow;
  int64_t k; /* rows of a column: cg * kd * kh * kw */
  int64_t l; /* output positions per sample: od * oh * ow */
} conv_geom;

/* A convolution with no depth to walk (2-D, 1-D): what the planar fast paths require. */
static inline bool conv_is_planar(const conv_geom *g) {
  return g->d == 1 && g->kd == 1 && g->pd == 0;
}

/* A plane's sum for the bias's gradient, as gs_sum sums it: a run in eight double lanes (so
 * both paths give gs_sum's bits). */
#define CONV_PLANE_SUM(T)                                                                          \
  static inline double conv_plane_sum_##T(const T *p, int64_t l) {                                 \
    double lane[8] = {0}, total = 0.0;                                                             \
    int64_t k = 0;                                                                                 \
    for (; k + 8 <= l; k += 8)                                                                     \
      for (int x = 0; x < 8; x++)                                                                  \
        lane[x] += (double)p[k + x];                                                               \
    for (; k < l; k++)                                                                             \
      total += (double)p[k];                                                                       \
    return total + (((lane[0] + lane[1]) + (lane[2] + lane[3])) +                                  \
                    ((lane[4] + lane[5]) + (lane[6] + lane[7])));                                  \
  }
CONV_PLANE_SUM(float)
CONV_PLANE_SUM(double)

/* Whether the direct path takes this convolution: 3x3, unit stride and dilation, one group,
 * padding 0 or 1 on both sides, output and input rows at most 16 wide; f32 only with AVX-512
 * (a plain CPU check; elsewhere f32 keeps im2col and BLAS), f64 when the pass is small (its
 * plain loops are what the float64 gradchecks run; larger ones keep dgemm). */
bool gs__conv_direct_fits(gs_dtype dt, const conv_geom *g);
/* out [N, O, L] = conv(x, w) + bias (bias may be NULL); false after reporting. */
bool gs__conv_direct_forward(gs_dtype dt, const conv_geom *g, const char *x, const char *w,
                             const char *bias, char *out, const char *fn);
/* As conv.c's conv_backward: dx ([N, C, H, W], written whole), dw ([O, C, 3, 3]) and db (O
 * sums, zeroed, added to) from gy [N, O, L]; any output may be NULL. */
bool gs__conv_direct_backward(gs_dtype dt, const conv_geom *g, const char *x, const char *w,
                              const char *gy, char *dx, char *dw, double *db, const char *fn);

/* A convolution of x [n, c, h, w] with weight [o, c / groups, kh, kw] giving [n, o, oh, ow];
 * when volumetric, of x [n, c, d, h, w] with weight [o, c / groups, kd, kh, kw] giving
 * [n, o, od, oh, ow] (the depth fields are read only then). */
typedef struct gs__conv_shape {
  int64_t n, c, h, w, o, kh, kw, groups;
  int64_t sh, sw, ph, pw, dh, dw;
  int64_t oh, ow;
  bool volumetric;
  int64_t d, kd, sd, pd, dd, od;
} gs__conv_shape;

/* Positions per channel of the input (d h w) and of the output (od oh ow). */
static inline int64_t gs__conv_in_positions(const gs__conv_shape *s) {
  return (s->volumetric ? s->d : 1) * s->h * s->w;
}
static inline int64_t gs__conv_out_positions(const gs__conv_shape *s) {
  return (s->volumetric ? s->od : 1) * s->oh * s->ow;
}

/* out [n, o, oh, ow] = conv(x, w) (+ bias [o] when not NULL); operands contiguous, in dt.
 * False after reporting. */
bool gs__conv_run_forward(gs_dtype dt, const gs__conv_shape *s, const char *x, const char *w,
                          const char *bias, char *out, const char *fn);
/* From gy [n, o, oh, ow]: dx += the input gradient (dx zeroed by the caller) and dw = the
 * weight gradient; either may be NULL when not wanted (and then x for dw, w for dx too).
 * False after reporting. */
bool gs__conv_run_backward(gs_dtype dt, const gs__conv_shape *s, const char *x, const char *w,
                           const char *gy, char *dx, char *dw, const char *fn);
/* Adds bias [c] to every plane of planes [n, c, l] or, with bias NULL, adds each plane's sum
 * onto sums[channel] (a bias's gradient). */
void gs__conv_per_channel(gs_dtype dt, int64_t n, int64_t c, int64_t l, char *planes,
                          const char *bias, double *sums);
/* A bias's gradient: gy [n, c, l] summed over all but its channels, in a new tensor of the
 * bias's shape (shape, ndim) and dtype dt; GS_NO_TENSOR after reporting. */
gs_tensor gs__conv_bias_grad(gs_dtype dt, int64_t n, int64_t c, int64_t l, char *gy,
                             const int64_t *shape, int ndim, const char *fn);
/* False (after reporting) when a convolution of shape s is too large for BLAS's int sizes. */
bool gs__conv_fits_blas(const gs__conv_shape *s, const char *fn);

/* A convolution of shape s's gradients written with the public ops (conv-grad.c), for a
 * backward that creates a graph; 4-D operands (5-D when volumetric). GS_NO_TENSOR after
 * reporting. */
gs_tensor gs__conv_input_grad_ops(gs_tensor g, gs_tensor w, const gs__conv_shape *s);
gs_tensor gs__conv_weight_grad_ops(gs_tensor x, gs_tensor g, const gs__conv_shape *s);
gs_tensor gs__conv_bias_grad_ops(gs_tensor g);
/* A convolution node's formula (inputs x, w and maybe b; saved: x in slot 0 when w needs a
 * gradient, w in slot 1 when x does) with those ops: the gradients of shape s in each input's
 * own layout. */
void gs__conv_backward_ops(gs__node *n, gs_tensor g, const gs__conv_shape *s, gs_tensor *grads);
/* The same for a transposed convolution node, s the convolution it is the transpose of. */
void gs__conv_transpose_backward_ops(gs__node *n, gs_tensor g, const gs__conv_shape *s,
                                     gs_tensor *grads);
