/* conv-transpose.c: the 2-D and 3-D transposed convolutions (torch.nn.functional.
 * conv_transpose2d, conv_transpose3d), one set of code for both (a 2-D one has no depth).
 *
 * conv_transpose2d(x, w) is the input gradient of the convolution whose input has the
 * transposed output's shape and whose weight is w ([in, out / groups, kh, kw] read as a
 * convolution's [O, C / groups, kh, kw]): each input pixel spreads its weighted kernel onto
 * the output, adding where kernels overlap (col2im). Its gradients are that convolution's
 * other passes: the input's gradient is the convolution of the output gradient with w, the
 * weight's is the convolution's weight gradient with the roles of input and output gradient
 * swapped, the bias's the output gradient summed over all but channels. All three run
 * conv.c's kernels (conv-impl.h), or the public ops (conv-grad.c) when the backward creates a
 * graph, so they can be differentiated again.
 */
#include <stdlib.h>
#include <string.h>

#include "conv-impl.h"

/* A node's ints: groups, stride, padding, dilation (each depth, height, width) and the
 * output's depth, height and width; a 2-D node's depth entries are 1, 0, 1 and 1. */
enum { TRANSPOSE_NODE_INTS = 13 };

/* The convolution (conv-impl.h) whose input gradient is the transposed convolution of x
 * [n, in, (d,) h, w] (x_chw: its channels and spatial sizes) with w [in, out / groups, (kd,)
 * kh, kw] giving [n, out, (do,) ho, wo]; w_ndim 5: volumetric. */
static gs__conv_shape transposed_shape(int64_t n, const int64_t *x_chw, const int64_t *w_shape,
                                       int w_ndim, const int64_t *ints) {
  const bool vol = w_ndim == 5;
  const int64_t *k = w_shape + 2, *in = x_chw + 1;
  gs__conv_shape s = {
      .n = n,
      .o = x_chw[0],
      .oh = in[vol ? 1 : 0],
      .ow = in[vol ? 2 : 1],
      .kh = k[vol ? 1 : 0],
      .kw = k[vol ? 2 : 1],
      .groups = ints[0],
      .sh = ints[2],
      .sw = ints[3],
      .ph = ints[5],
      .pw = ints[6],
      .dh = ints[8],
      .dw = ints[9],
      .h = ints[11],
      .w = ints[12],
      .volumetric = vol,
  };
  if (vol) {
    s.od = in[0], s.kd = k[0], s.sd = ints[1], s.pd = ints[4], s.dd = ints[7], s.d = ints[10];
  }
  s.c = w_shape[1] * s.groups;
  return s;
}

/* Looks up a saved handle as a contiguous tensor of dt (retained or copied). */
static bool contiguous_saved(gs_tensor h, gs_dtype dt, gs__tensor *out, const char *fn) {
  gs__tensor *t = gs__lookup(h, fn);
  return t && gs__as_contiguous(t, dt, out, fn);
}

/* d convT(x, w) + b: dx = conv(g, w), dw = the convolution's weight gradient of input g and
 * output gradient x, db = g summed over N, H, W (saved: x in slot 0 when w needs a gradient,
 * w in slot 1 when x does). */
static void conv_transpose_backward(gs__node *n, gs_tensor hg, gs_tensor *grads) {
  const char *fn = n->kind->name;
  const gs__input_meta *xm = &n->inputs[0], *wm = &n->inputs[1];
  bool batched = xm->ndim == wm->ndim;
  gs__conv_shape s =
      transposed_shape(batched ? xm->shape[0] : 1, xm->shape + (xm->ndim - wm->ndim + 1), wm->shape,
                       wm->ndim, n->ints);
  if (gs__formula_creates_graph()) { /* the same with ops that record (double backward) */
    gs__conv_transpose_backward_ops(n, hg, &s, grads);
    return;
  }
  gs__tensor *gt = gs__lookup(hg, fn);
  if (!gt)
    return;
  gs_dtype dt = gt->dtype;
  gs__tensor gy, x = {0}, w = {0};
  if (!gs__as_contiguous(gt, dt, &gy, fn))
    return;
  bool want_x = gs__needs_grad(n, 0), want_w = gs__needs_grad(n, 1);
  bool want_b = n->n_inputs > 2 && gs__needs_grad(n, 2);
  bool ok = (!want_w || contiguous_saved(gs__saved(n, 0), dt, &x, fn)) &&
            (!want_x || contiguous_saved(gs__saved(n, 1), dt, &w, fn));
  gs__tensor *dx = NULL, *dw = NULL;
  gs_tensor hdx = GS_NO_TENSOR, hdw = GS_NO_TENSOR, hdb = GS_NO_TENSOR;
  if (ok && want_x) {
    hdx = gs__tensor_new(dt, xm->shape, xm->ndim, fn, &dx);
    ok = hdx.id != 0 && gs__conv_run_forward(dt, &s, gs__tensor_data(&gy), gs__tensor_data(&w),
                                             NULL, gs__tensor_data(dx), fn);
  }
  if (ok && want_w) {
    hdw = gs__tensor_new(dt, wm->shape, wm->ndim, fn, &dw);
    ok = hdw.id != 0 && gs__conv_run_backward(dt, &s, gs__tensor_data(&gy), NULL,
                                              gs__tensor_data(&x), NULL, gs__tensor_data(dw), fn);
  }
  if (ok && want_b) {
    hdb = gs__conv_bias_grad(dt, s.n, s.c, gs__conv_in_positions(&s), gs__tensor_data(&gy),
                             n->inputs[2].shape, n->inputs[2].ndim, fn);
    ok = hdb.id != 0;
  }
  gs__tensor_release(&gy);
  if (x.storage)
    gs__tensor_release(&x);
  if (w.storage)
    gs__tensor_release(&w);
  if (!ok) {
    gs_dispose(hdx), gs_dispose(hdw), gs_dispose(hdb);
    return;
  }
  if (want_x)
    grads[0] = gs__reduce_grad(n, 0, hdx);
  if (want_w)
    grads[1] = gs__reduce_grad(n, 1, hdw);
  if (want_b)
    grads[2] = gs__reduce_grad(n, 2, hdb);
}
GS__BACKWARD_TWICE(ConvTranspose2dBackward, conv_transpose_backward);
GS__BACKWARD_TWICE(ConvTranspose3dBackward, conv_transpose_backward);

static int64_t or_default(int64_t v, int64_t dflt) { return v == 0 ? dflt : v; }

/* A transposed convolution's options in three dims, depth first (a 2-D one's depth: stride 1,
 * padding 0, output padding 0, dilation 1), with its number of spatial dims. */
typedef struct transpose_args {
  int64_t stride[3], padding[3], output_padding[3], dilation[3], groups;
  int spatial;
} transpose_args;

/* ints (TRANSPOSE_NODE_INTS); false after reporting in PyTorch's words. */
static bool plan_transpose(const gs__tensor *x, const gs__tensor *w, const gs__tensor *b,
                           const transpose_args *a, int64_t *ints, const char *fn) {
  const int sp = a->spatial;
  char sx[GS__SHAPE_STR], sw[GS__SHAPE_STR], s1[GS__SHAPE_STR], s2[GS__SHAPE_STR],
      s3[GS__SHAPE_STR], s4[GS__SHAPE_STR];
  if (x->ndim != sp + 1 && x->ndim != sp + 2) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected a %d-D (unbatched) or %d-D (batched) input [N, C, %s], got %s", sp + 1,
              sp + 2, sp == 3 ? "D, H, W" : "H, W", gs__shape_str(sx, x->shape, x->ndim));
    return false;
  }
  if (w->ndim != sp + 2) {
    gs__error(GS_ERR_SHAPE, fn, "expected a %d-D weight [in, out / groups, %s], got %s", sp + 2,
              sp == 3 ? "kd, kh, kw" : "kh, kw", gs__shape_str(sw, w->shape, w->ndim));
    return false;
  }
  int64_t groups = or_default(a->groups, 1), st[3], dil[3];
  const int64_t *pad = a->padding, *outpad = a->output_padding;
  bool negative = groups < 0;
  for (int i = 0; i < 3; i++) {
    st[i] = or_default(a->stride[i], 1), dil[i] = or_default(a->dilation[i], 1);
    negative |= st[i] < 0 || dil[i] < 0 || pad[i] < 0 || outpad[i] < 0;
  }
  if (negative) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected positive stride, dilation and groups and non-negative padding and "
              "output_padding, got stride %s, padding %s, output_padding %s, dilation %s, "
              "groups %lld",
              gs__spatial_str(s1, st, sp, false), gs__spatial_str(s2, pad, sp, false),
              gs__spatial_str(s3, outpad, sp, false), gs__spatial_str(s4, dil, sp, false),
              (long long)groups);
    return false;
  }
  for (int i = 0; i < 3; i++)
    if (outpad[i] >= st[i] && outpad[i] >= dil[i]) {
      gs__error(GS_ERR_ARGUMENT, fn,
                "output padding must be smaller than either stride or dilation, but got "
                "output_padding %s, stride %s, dilation %s",
                gs__spatial_str(s1, outpad, sp, false), gs__spatial_str(s2, st, sp, false),
                gs__spatial_str(s3, dil, sp, false));
      return false;
    }
  const int64_t *in = x->shape + (x->ndim - sp - 1);
  if (w->shape[0] != in[0] || in[0] % groups != 0) {
    gs__error(GS_ERR_SHAPE, fn,
              "given groups=%lld, weight of size %s, expected input%s to have %lld channels "
              "(divisible by groups), but got %lld channels instead",
              (long long)groups, gs__shape_str(sw, w->shape, w->ndim),
              gs__shape_str(sx, x->shape, x->ndim), (long long)w->shape[0], (long long)in[0]);
    return false;
  }
  int64_t out_channels = w->shape[1] * groups;
  if (b && (b->ndim != 1 || b->shape[0] != out_channels)) {
    char sb[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn,
              "expected a bias of shape [%lld] (the weight's out channels per group times "
              "groups), got %s",
              (long long)out_channels, gs__shape_str(sb, b->shape, b->ndim));
    return false;
  }
  int64_t size[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, out[3];
  for (int i = 0; i < sp; i++)
    size[3 - sp + i] = in[1 + i], kernel[3 - sp + i] = w->shape[2 + i];
  for (int i = 0; i < 3; i++)
    out[i] = (size[i] - 1) * st[i] - 2 * pad[i] + dil[i] * (kernel[i] - 1) + outpad[i] + 1;
  if (out[0] <= 0 || out[1] <= 0 || out[2] <= 0) {
    gs__error(GS_ERR_SHAPE, fn,
              "given input%s, the output size would be %s: too small (padding too large for "
              "the kernel)",
              gs__shape_str(sx, x->shape, x->ndim), gs__spatial_str(s1, out, sp, true));
    return false;
  }
  int64_t v[TRANSPOSE_NODE_INTS] = {groups, st[0],  st[1],  st[2],  pad[0], pad[1], pad[2],
                                    dil[0], dil[1], dil[2], out[0], out[1], out[2]};
  memcpy(ints, v, sizeof v);
  return true;
}

/* conv_transpose2d and conv_transpose3d: checked, planned by a, run and recorded (kind). */
static gs_tensor conv_transpose_nd(gs_tensor hx, gs_tensor hw, gs_tensor hb,
                                   const transpose_args *a, const gs__node_kind *kind,
                                   const char *fn) {
  gs__tensor *x = gs__lookup(hx, fn);
  gs__tensor *w = x ? gs__lookup(hw, fn) : NULL;
  gs__tensor *b = w && hb.id ? gs__lookup(hb, fn) : NULL;
  if (!w || (hb.id && !b))
    return GS_NO_TENSOR;
  if (!gs_dtype_is_floating(x->dtype) || w->dtype != x->dtype || (b && b->dtype != x->dtype)) {
    gs__error(GS_ERR_DTYPE, fn,
              "expected input, weight and bias of one floating dtype (f32 or f64), got input "
              "%s, weight %s, bias %s",
              gs_dtype_name(x->dtype), gs_dtype_name(w->dtype),
              b ? gs_dtype_name(b->dtype) : "none");
    return GS_NO_TENSOR;
  }
  int64_t ints[TRANSPOSE_NODE_INTS];
  if (!plan_transpose(x, w, b, a, ints, fn))
    return GS_NO_TENSOR;
  const int sp = a->spatial;
  bool batched = x->ndim == sp + 2;
  gs__conv_shape s = transposed_shape(batched ? x->shape[0] : 1, x->shape + (x->ndim - sp - 1),
                                      w->shape, w->ndim, ints);
  if (!gs__conv_fits_blas(&s, fn))
    return GS_NO_TENSOR;
  gs_dtype dt = x->dtype;
  int64_t shape[5] = {s.n, s.c, s.d, s.h, s.w};
  if (sp == 2)
    shape[2] = s.h, shape[3] = s.w;
  int64_t positions = gs__conv_in_positions(&s);
  gs__tensor cx, cw, cb = {0};
  if (!gs__as_contiguous(x, dt, &cx, fn))
    return GS_NO_TENSOR;
  if (!gs__as_contiguous(w, dt, &cw, fn)) {
    gs__tensor_release(&cx);
    return GS_NO_TENSOR;
  }
  if (b && !gs__as_contiguous(b, dt, &cb, fn)) {
    gs__tensor_release(&cx), gs__tensor_release(&cw);
    return GS_NO_TENSOR;
  }
  gs__tensor *out;
  gs_tensor h = gs__tensor_new(dt, batched ? shape : shape + 1, x->ndim, fn, &out);
  if (h.id) {
    char *data = gs__tensor_data(out);
    memset(data, 0, (size_t)(s.n * s.c * positions) * gs__elsize(dt));
    if (!gs__conv_run_backward(dt, &s, NULL, gs__tensor_data(&cw), gs__tensor_data(&cx), data, NULL,
                               fn)) {
      gs_dispose(h);
      h = GS_NO_TENSOR;
    } else if (b) {
      gs__conv_per_channel(dt, s.n, s.c, positions, data, gs__tensor_data(&cb), NULL);
    }
  }
  gs__tensor_release(&cx), gs__tensor_release(&cw);
  if (b)
    gs__tensor_release(&cb);
  if (!h.id)
    return h;
  out = gs__lookup(h, fn);
  gs__node *n = b ? gs__record(kind, out, 3, (const gs__tensor *[]){x, w, b}, 2)
                  : gs__record(kind, out, 2, (const gs__tensor *[]){x, w}, 2);
  if (n) {
    memcpy(n->ints, ints, sizeof ints);
    if (gs__needs_grad(n, 1))
      gs__save(n, 0, x);
    if (gs__needs_grad(n, 0))
      gs__save(n, 1, w);
  }
  return h;
}

gs_tensor gs_conv_transpose2d(gs_tensor hx, gs_tensor hw, gs_tensor hb,
                              const gs_conv_transpose2d_options *opt) {
  static const gs_conv_transpose2d_options defaults = {{1, 1}, {0, 0}, {0, 0}, {1, 1}, 1};
  if (!opt)
    opt = &defaults;
  transpose_args a = {{1, opt->stride[0], opt->stride[1]},
                      {0, opt->padding[0], opt->padding[1]},
                      {0, opt->output_padding[0], opt->output_padding[1]},
                      {1, opt->dilation[0], opt->dilation[1]},
                      opt->groups,
                      2};
  return conv_transpose_nd(hx, hw, hb, &a, &ConvTranspose2dBackward, "conv_transpose2d");
}

gs_tensor gs_conv_transpose3d(gs_tensor hx, gs_tensor hw, gs_tensor hb,
                              const gs_conv_transpose3d_options *opt) {
  static const gs_conv_transpose3d_options defaults = {
      {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, 1};
  if (!opt)
    opt = &defaults;
  transpose_args a = {.groups = opt->groups, .spatial = 3};
  memcpy(a.stride, opt->stride, sizeof a.stride);
  memcpy(a.padding, opt->padding, sizeof a.padding);
  memcpy(a.output_padding, opt->output_padding, sizeof a.output_padding);
  memcpy(a.dilation, opt->dilation, sizeof a.dilation);
  return conv_transpose_nd(hx, hw, hb, &a, &ConvTranspose3dBackward, "conv_transpose3d");
}
