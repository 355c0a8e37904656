/* conv-transpose.c: the 2-D transposed convolution (torch.nn.functional.conv_transpose2d).
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

/* The convolution (conv-impl.h) whose input gradient is the transposed convolution of x
 * [n, in, h, w] with w [in, out / groups, kh, kw] giving [n, out, ho, wo]. */
static gs__conv_shape transposed_shape(int64_t n, const int64_t *x_chw, const int64_t *w_shape,
                                       const int64_t *ints) {
  gs__conv_shape s = {
      .n = n,
      .o = x_chw[0],
      .oh = x_chw[1],
      .ow = x_chw[2],
      .kh = w_shape[2],
      .kw = w_shape[3],
      .groups = ints[0],
      .sh = ints[1],
      .sw = ints[2],
      .ph = ints[3],
      .pw = ints[4],
      .dh = ints[5],
      .dw = ints[6],
      .h = ints[7],
      .w = ints[8],
  };
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
static void conv_transpose2d_backward(gs__node *n, gs_tensor hg, gs_tensor *grads) {
  const char *fn = n->kind->name;
  const gs__input_meta *xm = &n->inputs[0], *wm = &n->inputs[1];
  bool batched = xm->ndim == 4;
  gs__conv_shape s =
      transposed_shape(batched ? xm->shape[0] : 1, xm->shape + (xm->ndim - 3), wm->shape, n->ints);
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
    hdb = gs__conv_bias_grad(dt, s.n, s.c, s.h * s.w, gs__tensor_data(&gy), n->inputs[2].shape,
                             n->inputs[2].ndim, fn);
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
GS__BACKWARD_TWICE(ConvTranspose2dBackward, conv_transpose2d_backward);

static int64_t or_default(int64_t v, int64_t dflt) { return v == 0 ? dflt : v; }

/* ints: groups, stride, padding, dilation (each [h, w]) and the output's height and width;
 * false after reporting in PyTorch's words. */
static bool plan_transpose(const gs__tensor *x, const gs__tensor *w, const gs__tensor *b,
                           const gs_conv_transpose2d_options *opt, int64_t *ints, const char *fn) {
  static const gs_conv_transpose2d_options defaults = {{1, 1}, {0, 0}, {0, 0}, {1, 1}, 1};
  if (!opt)
    opt = &defaults;
  char sx[GS__SHAPE_STR], sw[GS__SHAPE_STR];
  if (x->ndim != 3 && x->ndim != 4) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected a 3-D (unbatched) or 4-D (batched) input [N, C, H, W], got %s",
              gs__shape_str(sx, x->shape, x->ndim));
    return false;
  }
  if (w->ndim != 4) {
    gs__error(GS_ERR_SHAPE, fn, "expected a 4-D weight [in, out / groups, kh, kw], got %s",
              gs__shape_str(sw, w->shape, w->ndim));
    return false;
  }
  int64_t groups = or_default(opt->groups, 1);
  int64_t st[2] = {or_default(opt->stride[0], 1), or_default(opt->stride[1], 1)};
  int64_t dil[2] = {or_default(opt->dilation[0], 1), or_default(opt->dilation[1], 1)};
  const int64_t *pad = opt->padding, *outpad = opt->output_padding;
  if (groups < 0 || st[0] < 0 || st[1] < 0 || dil[0] < 0 || dil[1] < 0 || pad[0] < 0 ||
      pad[1] < 0 || outpad[0] < 0 || outpad[1] < 0) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected positive stride, dilation and groups and non-negative padding and "
              "output_padding, got stride [%lld, %lld], padding [%lld, %lld], output_padding "
              "[%lld, %lld], dilation [%lld, %lld], groups %lld",
              (long long)st[0], (long long)st[1], (long long)pad[0], (long long)pad[1],
              (long long)outpad[0], (long long)outpad[1], (long long)dil[0], (long long)dil[1],
              (long long)groups);
    return false;
  }
  for (int i = 0; i < 2; i++)
    if (outpad[i] >= st[i] && outpad[i] >= dil[i]) {
      gs__error(GS_ERR_ARGUMENT, fn,
                "output padding must be smaller than either stride or dilation, but got "
                "output_padding [%lld, %lld], stride [%lld, %lld], dilation [%lld, %lld]",
                (long long)outpad[0], (long long)outpad[1], (long long)st[0], (long long)st[1],
                (long long)dil[0], (long long)dil[1]);
      return false;
    }
  const int64_t *in = x->shape + (x->ndim - 3);
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
  int64_t ho = (in[1] - 1) * st[0] - 2 * pad[0] + dil[0] * (w->shape[2] - 1) + outpad[0] + 1;
  int64_t wo = (in[2] - 1) * st[1] - 2 * pad[1] + dil[1] * (w->shape[3] - 1) + outpad[1] + 1;
  if (ho <= 0 || wo <= 0) {
    gs__error(GS_ERR_SHAPE, fn,
              "given input%s, the output size would be (%lld x %lld): too small (padding too "
              "large for the kernel)",
              gs__shape_str(sx, x->shape, x->ndim), (long long)ho, (long long)wo);
    return false;
  }
  int64_t v[9] = {groups, st[0], st[1], pad[0], pad[1], dil[0], dil[1], ho, wo};
  memcpy(ints, v, sizeof v);
  return true;
}

gs_tensor gs_conv_transpose2d(gs_tensor hx, gs_tensor hw, gs_tensor hb,
                              const gs_conv_transpose2d_options *opt) {
  const char *fn = "conv_transpose2d";
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
  int64_t ints[9];
  if (!plan_transpose(x, w, b, opt, ints, fn))
    return GS_NO_TENSOR;
  bool batched = x->ndim == 4;
  gs__conv_shape s =
      transposed_shape(batched ? x->shape[0] : 1, x->shape + (x->ndim - 3), w->shape, ints);
  if (!gs__conv_fits_blas(&s, fn))
    return GS_NO_TENSOR;
  gs_dtype dt = x->dtype;
  int64_t shape[4] = {s.n, s.c, s.h, s.w};
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
  gs_tensor h = gs__tensor_new(dt, batched ? shape : shape + 1, batched ? 4 : 3, fn, &out);
  if (h.id) {
    char *data = gs__tensor_data(out);
    memset(data, 0, (size_t)(s.n * s.c * s.h * s.w) * gs__elsize(dt));
    if (!gs__conv_run_backward(dt, &s, NULL, gs__tensor_data(&cw), gs__tensor_data(&cx), data, NULL,
                               fn)) {
      gs_dispose(h);
      h = GS_NO_TENSOR;
    } else if (b) {
      gs__conv_per_channel(dt, s.n, s.c, s.h * s.w, data, gs__tensor_data(&cb), NULL);
    }
  }
  gs__tensor_release(&cx), gs__tensor_release(&cw);
  if (b)
    gs__tensor_release(&cb);
  if (!h.id)
    return h;
  out = gs__lookup(h, fn);
  gs__node *n = b ? gs__record(&ConvTranspose2dBackward, out, 3, (const gs__tensor *[]){x, w, b}, 2)
                  : gs__record(&ConvTranspose2dBackward, out, 2, (const gs__tensor *[]){x, w}, 2);
  if (n) {
    memcpy(n->ints, ints, sizeof ints);
    if (gs__needs_grad(n, 1))
      gs__save(n, 0, x);
    if (gs__needs_grad(n, 0))
      gs__save(n, 1, w);
  }
  return h;
}
