/* conv-impl.h: conv.c's convolution kernels for the other ops built on them (conv-transpose.c,
 * conv1d.c).
 *
 * A transposed convolution is a convolution's input gradient, and its own gradients are that
 * convolution's forward pass and weight gradient, so it runs conv.c's im2col/col2im and gemm
 * loops on the convolution it is the transpose of, described by gs__conv_shape. A 1-D
 * convolution is the 2-D one of height 1. */
#pragma once

#include "ops-impl.h"

/* A convolution of x [n, c, h, w] with weight [o, c / groups, kh, kw] giving [n, o, oh, ow]. */
typedef struct gs__conv_shape {
  int64_t n, c, h, w, o, kh, kw, groups;
  int64_t sh, sw, ph, pw, dh, dw;
  int64_t oh, ow;
} gs__conv_shape;

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
/* False (after reporting) when a convolution of shape s is too large for BLAS's int sizes. */
bool gs__conv_fits_blas(const gs__conv_shape *s, const char *fn);
