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
 * All tensors are 4-D ([N, C, H, W]); the callers reshape their own.
 */
#include <stdlib.h>

#include "conv-impl.h"

/* The input gradient [n, c, h, w] of a convolution of shape s from g [n, o, oh, ow] and its
 * weight w [o, c / groups, kh, kw]. */
gs_tensor gs__conv_input_grad_ops(gs_tensor g, gs_tensor w, const gs__conv_shape *s) {
  gs_conv_transpose2d_options t = {
      .stride = {s->sh, s->sw},
      .padding = {s->ph, s->pw},
      .output_padding = {s->h + 2 * s->ph - ((s->oh - 1) * s->sh + s->dh * (s->kh - 1) + 1),
                         s->w + 2 * s->pw - ((s->ow - 1) * s->sw + s->dw * (s->kw - 1) + 1)},
      .dilation = {s->dh, s->dw},
      .groups = s->groups,
  };
  return gs_conv_transpose2d(g, w, GS_NO_TENSOR, &t);
}

/* One group's weight gradient [og, cg, kh, kw]: dw[o, c, i, j] = sum over n and output
 * positions of g[n, o, p] x[n, c, p * stride - pad + (i, j) * dilation], the convolution of
 * x read as [c, n, h, w] with g read as [o, n, oh, ow] at stride `dilation` and dilation
 * `stride`. It may reach past the kernel (rows the forward's floor never used): cut to size. */
static gs_tensor group_weight_grad(gs_tensor x, gs_tensor g, const gs__conv_shape *s) {
  gs_tensor xt = gs_transpose(x, 0, 1), gt = gs_transpose(g, 0, 1);
  gs_conv2d_options o = {
      .stride = {s->dh, s->dw}, .padding = {s->ph, s->pw}, .dilation = {s->sh, s->sw}, .groups = 1};
  gs_tensor full = gs_conv2d(xt, gt, GS_NO_TENSOR, &o); /* [cg, og, kh', kw'] */
  gs_dispose(xt), gs_dispose(gt);
  if (!full.id)
    return full;
  gs_tensor rows = gs_narrow(full, 2, 0, s->kh);
  gs_tensor cut = rows.id ? gs_narrow(rows, 3, 0, s->kw) : GS_NO_TENSOR;
  gs_tensor dw = cut.id ? gs_transpose(cut, 0, 1) : GS_NO_TENSOR;
  gs_dispose(full), gs_dispose(rows), gs_dispose(cut);
  return dw;
}

/* The weight gradient [o, c / groups, kh, kw] of a convolution of shape s from its input x
 * [n, c, h, w] and g [n, o, oh, ow]: each group on its own, joined along the out channels. */
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

/* A bias's gradient: g [n, o, oh, ow] summed over all but its channels. */
gs_tensor gs__conv_bias_grad_ops(gs_tensor g) {
  return gs_sum(g, (const int[]){0, 2, 3}, 3, false);
}

/* h (a saved tensor or a gradient of any of the node's layouts: unbatched, 1-D) as the 4-D
 * tensor [a, b, c, d], disposed when the formula returns. */
static gs_tensor as_4d(gs_tensor h, int64_t a, int64_t b, int64_t c, int64_t d) {
  return gs__formula_temp(gs_reshape(h, (int64_t[]){a, b, c, d}, 4));
}

/* grads[i] = d (4-D) in input i's own shape, when it could be made. */
static void set_grad(gs__node *n, int i, gs_tensor d, gs_tensor *grads) {
  if (!d.id)
    return;
  gs_tensor shaped = gs_reshape(d, n->inputs[i].shape, n->inputs[i].ndim);
  gs_dispose(d);
  if (shaped.id)
    grads[i] = gs__reduce_grad(n, i, shaped);
}

void gs__conv_backward_ops(gs__node *n, gs_tensor hg, const gs__conv_shape *s, gs_tensor *grads) {
  gs_tensor g = as_4d(hg, s->n, s->o, s->oh, s->ow);
  if (gs__needs_grad(n, 0)) {
    gs_tensor w = as_4d(gs__saved(n, 1), s->o, s->c / s->groups, s->kh, s->kw);
    set_grad(n, 0, gs__conv_input_grad_ops(g, w, s), grads);
  }
  if (gs__needs_grad(n, 1)) {
    gs_tensor x = as_4d(gs__saved(n, 0), s->n, s->c, s->h, s->w);
    set_grad(n, 1, gs__conv_weight_grad_ops(x, g, s), grads);
  }
  if (n->n_inputs > 2 && gs__needs_grad(n, 2))
    grads[2] = gs__reduce_grad(n, 2, gs__conv_bias_grad_ops(g));
}

void gs__conv_transpose_backward_ops(gs__node *n, gs_tensor hg, const gs__conv_shape *s,
                                     gs_tensor *grads) {
  gs_tensor g = as_4d(hg, s->n, s->c, s->h, s->w); /* the convolution's input */
  if (gs__needs_grad(n, 0)) {
    gs_tensor w = as_4d(gs__saved(n, 1), s->o, s->c / s->groups, s->kh, s->kw);
    gs_conv2d_options o = {.stride = {s->sh, s->sw},
                           .padding = {s->ph, s->pw},
                           .dilation = {s->dh, s->dw},
                           .groups = s->groups};
    set_grad(n, 0, gs_conv2d(g, w, GS_NO_TENSOR, &o), grads);
  }
  if (gs__needs_grad(n, 1)) {
    gs_tensor x = as_4d(gs__saved(n, 0), s->n, s->o, s->oh, s->ow);
    set_grad(n, 1, gs__conv_weight_grad_ops(g, x, s), grads);
  }
  if (n->n_inputs > 2 && gs__needs_grad(n, 2))
    grads[2] = gs__reduce_grad(n, 2, gs__conv_bias_grad_ops(g));
}
