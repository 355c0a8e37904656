/* conv-grad.c: a convolution's gradients written with the public ops, for double backward.
 *
 * The convolution formulas (conv.c, conv1d.c, conv-transpose.c) run the im2col and BLAS
 * kernels, which record nothing. When a backward creates a graph they call these instead: the
 * same gradients out of ops that record their own nodes, so the result can be differentiated
 * again (as PyTorch's convolution_backward is). For a convolution of shape s:
 *   the input's gradient is the transposed convolution of g with w (the output padding takes
 *   back the rows the stride's floor dropped);
 *   the weight's gradient is, per group, the convolution of x with g with the roles of batch
 *   and channel swapped, stride and dilation exchanged, cut to the kernel's size.
 * All tensors are 4-D ([N, C, H, W]), or 5-D ([N, C, D, H, W]) for a volumetric shape; the
 * callers reshape their own.
 */
#include <stdlib.h>

#include "conv-impl.h"

/* The input gradient [n, c, (d,) h, w] of a convolution of shape s from g [n, o, (od,) oh, ow]
 * and its weight w [o, c / groups, (kd,) kh, kw]. */
gs_tensor gs__conv_input_grad_ops(gs_tensor g, gs_tensor w, const gs__conv_shape *s) {
  int64_t extra_h = s->h + 2 * s->ph - ((s->oh - 1) * s->sh + s->dh * (s->kh - 1) + 1);
  int64_t extra_w = s->w + 2 * s->pw - ((s->ow - 1) * s->sw + s->dw * (s->kw - 1) + 1);
  if (s->volumetric) {
    gs_conv_transpose3d_options t = {
        .stride = {s->sd, s->sh, s->sw},
        .padding = {s->pd, s->ph, s->pw},
        .output_padding = {s->d + 2 * s->pd - ((s->od - 1) * s->sd + s->dd * (s->kd - 1) + 1),
                           extra_h, extra_w},
        .dilation = {s->dd, s->dh, s->dw},
        .groups = s->groups,
    };
    return gs_conv_transpose3d(g, w, GS_NO_TENSOR, &t);
  }
  gs_conv_transpose2d_options t = {
      .stride = {s->sh, s->sw},
      .padding = {s->ph, s->pw},
      .output_padding = {extra_h, extra_w},
      .dilation = {s->dh, s->dw},
      .groups = s->groups,
  };
  return gs_conv_transpose2d(g, w, GS_NO_TENSOR, &t);
}

/* The convolution of s's geometry (conv2d, or conv3d when volumetric) with stride and
 * padding as given (spatial entries depth first; a 2-D one reads the last two). */
static gs_tensor conv_of(gs_tensor x, gs_tensor w, const gs__conv_shape *s, const int64_t *stride,
                         const int64_t *padding, const int64_t *dilation, int64_t groups) {
  if (s->volumetric) {
    gs_conv3d_options o = {.stride = {stride[0], stride[1], stride[2]},
                           .padding = {padding[0], padding[1], padding[2]},
                           .dilation = {dilation[0], dilation[1], dilation[2]},
                           .groups = groups};
    return gs_conv3d(x, w, GS_NO_TENSOR, &o);
  }
  gs_conv2d_options o = {.stride = {stride[1], stride[2]},
                         .padding = {padding[1], padding[2]},
                         .dilation = {dilation[1], dilation[2]},
                         .groups = groups};
  return gs_conv2d(x, w, GS_NO_TENSOR, &o);
}

/* One group's weight gradient [og, cg, (kd,) kh, kw]: dw[o, c, i, j] = sum over n and output
 * positions of g[n, o, p] x[n, c, p * stride - pad + (i, j) * dilation], the convolution of
 * x read as [c, n, h, w] with g read as [o, n, oh, ow] at stride `dilation` and dilation
 * `stride`. It may reach past the kernel (rows the forward's floor never used): cut to size. */
static gs_tensor group_weight_grad(gs_tensor x, gs_tensor g, const gs__conv_shape *s) {
  gs_tensor xt = gs_transpose(x, 0, 1), gt = gs_transpose(g, 0, 1);
  const int64_t stride[3] = {s->sd, s->sh, s->sw}, padding[3] = {s->pd, s->ph, s->pw};
  const int64_t dilation[3] = {s->dd, s->dh, s->dw};
  gs_tensor full = conv_of(xt, gt, s, dilation, padding, stride, 1); /* [cg, og, k'...] */
  gs_dispose(xt), gs_dispose(gt);
  if (!full.id)
    return full;
  const int64_t kernel[3] = {s->kd, s->kh, s->kw};
  const int sp = s->volumetric ? 3 : 2;
  gs_tensor cut = full;
  for (int i = 0; i < sp && cut.id; i++) {
    gs_tensor next = gs_narrow(cut, 2 + i, 0, kernel[3 - sp + i]);
    gs_dispose(cut);
    cut = next;
  }
  gs_tensor dw = cut.id ? gs_transpose(cut, 0, 1) : GS_NO_TENSOR;
  gs_dispose(cut);
  return dw;
}

/* The weight gradient [o, c / groups, (kd,) kh, kw] of a convolution of shape s from its input
 * x [n, c, (d,) h, w] and g [n, o, (od,) oh, ow]: each group on its own, joined along the out
 * channels. */
gs_tensor gs__conv_weight_grad_ops(gs_tensor x, gs_tensor g, const gs__conv_shape *s) {
  if (s->groups == 1)
    return group_weight_grad(x, g, s);
  int64_t cg = s->c / s->groups, og = s->o / s->groups;
  gs_tensor *parts = calloc((size_t)s->groups, sizeof *parts);
  if (!parts) {
    gs__error(GS_ERR_OUT_OF_MEMORY, "conv backward", "out of memory for %lld groups",
              (long long)s->groups);
    return GS_NO_TENSOR;
  }
  int made = 0;
  for (; made < s->groups; made++) {
    gs_tensor xg = gs_narrow(x, 1, made * cg, cg), gg = gs_narrow(g, 1, made * og, og);
    parts[made] = xg.id && gg.id ? group_weight_grad(xg, gg, s) : GS_NO_TENSOR;
    gs_dispose(xg), gs_dispose(gg);
    if (!parts[made].id)
      break;
  }
  gs_tensor dw = made == s->groups ? gs_cat(parts, made, 0) : GS_NO_TENSOR;
  for (int i = 0; i < made; i++)
    gs_dispose(parts[i]);
  free(parts);
  return dw;
}

/* A bias's gradient: g [n, o, (od,) oh, ow] summed over all but its channels. */
gs_tensor gs__conv_bias_grad_ops(gs_tensor g) {
  return gs_ndim(g) == 5 ? gs_sum(g, (const int[]){0, 2, 3, 4}, 4, false)
                         : gs_sum(g, (const int[]){0, 2, 3}, 3, false);
}

/* h (a saved tensor or a gradient of any of the node's layouts: unbatched, 1-D) as the tensor
 * [a, b, sizes...] (two or three sizes, depth first; volumetric: three), disposed when the
 * formula returns. */
static gs_tensor as_nd(gs_tensor h, int64_t a, int64_t b, bool volumetric, int64_t d, int64_t y,
                       int64_t x) {
  if (volumetric)
    return gs__formula_temp(gs_reshape(h, (int64_t[]){a, b, d, y, x}, 5));
  return gs__formula_temp(gs_reshape(h, (int64_t[]){a, b, y, x}, 4));
}

/* grads[i] = d (4-D or 5-D) in input i's own shape, when it could be made. */
static void set_grad(gs__node *n, int i, gs_tensor d, gs_tensor *grads) {
  if (!d.id)
    return;
  gs_tensor shaped = gs_reshape(d, n->inputs[i].shape, n->inputs[i].ndim);
  gs_dispose(d);
  if (shaped.id)
    grads[i] = gs__reduce_grad(n, i, shaped);
}

void gs__conv_backward_ops(gs__node *n, gs_tensor hg, const gs__conv_shape *s, gs_tensor *grads) {
  const bool v = s->volumetric;
  gs_tensor g = as_nd(hg, s->n, s->o, v, s->od, s->oh, s->ow);
  if (gs__needs_grad(n, 0)) {
    gs_tensor w = as_nd(gs__saved(n, 1), s->o, s->c / s->groups, v, s->kd, s->kh, s->kw);
    set_grad(n, 0, gs__conv_input_grad_ops(g, w, s), grads);
  }
  if (gs__needs_grad(n, 1)) {
    gs_tensor x = as_nd(gs__saved(n, 0), s->n, s->c, v, s->d, s->h, s->w);
    set_grad(n, 1, gs__conv_weight_grad_ops(x, g, s), grads);
  }
  if (n->n_inputs > 2 && gs__needs_grad(n, 2))
    grads[2] = gs__reduce_grad(n, 2, gs__conv_bias_grad_ops(g));
}

void gs__conv_transpose_backward_ops(gs__node *n, gs_tensor hg, const gs__conv_shape *s,
                                     gs_tensor *grads) {
  const bool v = s->volumetric;
  gs_tensor g = as_nd(hg, s->n, s->c, v, s->d, s->h, s->w); /* the convolution's input */
  if (gs__needs_grad(n, 0)) {
    gs_tensor w = as_nd(gs__saved(n, 1), s->o, s->c / s->groups, v, s->kd, s->kh, s->kw);
    const int64_t stride[3] = {s->sd, s->sh, s->sw}, padding[3] = {s->pd, s->ph, s->pw};
    const int64_t dilation[3] = {s->dd, s->dh, s->dw};
    set_grad(n, 0, conv_of(g, w, s, stride, padding, dilation, s->groups), grads);
  }
  if (gs__needs_grad(n, 1)) {
    gs_tensor x = as_nd(gs__saved(n, 0), s->n, s->o, v, s->od, s->oh, s->ow);
    set_grad(n, 1, gs__conv_weight_grad_ops(g, x, s), grads);
  }
  if (n->n_inputs > 2 && gs__needs_grad(n, 2))
    grads[2] = gs__reduce_grad(n, 2, gs__conv_bias_grad_ops(g));
}
