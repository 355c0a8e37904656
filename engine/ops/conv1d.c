/* conv1d.c: the 1-D convolution (torch.nn.functional.conv1d) as one node of its own.
 *
 * A 1-D convolution of x [N, C, L] with w [O, C / groups, K] is the 2-D one of height 1, so it
 * runs conv.c's kernels (conv-impl.h) on that shape; being one op, not conv2d between views,
 * its graph is torch's (one ConvolutionBackward0 over the input, weight and bias). The
 * backward formula is conv2d's: the input's gradient by col2im of W^T G, the weight's G
 * cols^T, the bias's g summed over N and L; with ops (conv-grad.c) when the backward creates
 * a graph, so it can be differentiated again.
 */
#include <stdlib.h>
#include <string.h>

#include "conv-impl.h"

/* The height-1 convolution of x [n, c, l] with w [o, cg, k]; ints: groups, stride, padding,
 * dilation, output length. */
static gs__conv_shape shape_1d(int64_t n, const int64_t *x_cl, const int64_t *w_shape,
                               const int64_t *ints) {
  return (gs__conv_shape){
      .n = n,
      .c = x_cl[0],
      .h = 1,
      .w = x_cl[1],
      .o = w_shape[0],
      .kh = 1,
      .kw = w_shape[2],
      .groups = ints[0],
      .sh = 1,
      .sw = ints[1],
      .ph = 0,
      .pw = ints[2],
      .dh = 1,
      .dw = ints[3],
      .oh = 1,
      .ow = ints[4],
  };
}

static bool contiguous_saved(gs_tensor h, gs_dtype dt, gs__tensor *out, const char *fn) {
  gs__tensor *t = gs__lookup(h, fn);
  return t && gs__as_contiguous(t, dt, out, fn);
}

/* d conv1d(x, w) + b (saved: x in slot 0 when w needs a gradient, w in slot 1 when x does) */
static void conv1d_backward(gs__node *n, gs_tensor hg, gs_tensor *grads) {
  const char *fn = n->kind->name;
  const gs__input_meta *xm = &n->inputs[0], *wm = &n->inputs[1];
  gs__conv_shape s =
      shape_1d(xm->ndim == 3 ? xm->shape[0] : 1, xm->shape + (xm->ndim - 2), wm->shape, n->ints);
  if (gs__formula_creates_graph()) { /* the same with ops that record (double backward) */
    gs__conv_backward_ops(n, hg, &s, grads);
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
    ok = hdx.id != 0;
    if (ok)
      memset(gs__tensor_data(dx), 0, (size_t)(s.n * s.c * s.w) * gs__elsize(dt));
  }
  if (ok && want_w) {
    hdw = gs__tensor_new(dt, wm->shape, wm->ndim, fn, &dw);
    ok = hdw.id != 0;
  }
  if (ok && (want_x || want_w)) {
    dx = want_x ? gs__lookup(hdx, fn) : NULL; /* the tensor table may have moved */
    ok = gs__conv_run_backward(dt, &s, want_w ? gs__tensor_data(&x) : NULL,
                               want_x ? gs__tensor_data(&w) : NULL, gs__tensor_data(&gy),
                               dx ? gs__tensor_data(dx) : NULL,
                               want_w ? gs__tensor_data(gs__lookup(hdw, fn)) : NULL, fn);
  }
  if (ok && want_b) {
    hdb = gs__conv_bias_grad(dt, s.n, s.o, s.ow, gs__tensor_data(&gy), n->inputs[2].shape,
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
GS__BACKWARD_TWICE(Conv1dBackward, conv1d_backward);

static int64_t or_default(int64_t v, int64_t dflt) { return v == 0 ? dflt : v; }

/* ints: groups, stride, padding, dilation and the output's length; false after reporting in
 * PyTorch's words. */
static bool plan_conv1d(const gs__tensor *x, const gs__tensor *w, const gs__tensor *b,
                        const gs_conv1d_options *opt, int64_t *ints, const char *fn) {
  static const gs_conv1d_options defaults = {1, 0, 1, 1};
  if (!opt)
    opt = &defaults;
  char sx[GS__SHAPE_STR], sw[GS__SHAPE_STR];
  if (x->ndim != 2 && x->ndim != 3) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected a 2-D (unbatched) or 3-D (batched) input [N, C, L], got %s",
              gs__shape_str(sx, x->shape, x->ndim));
    return false;
  }
  if (w->ndim != 3) {
    gs__error(GS_ERR_SHAPE, fn, "expected a 3-D weight [out, in / groups, k], got %s",
              gs__shape_str(sw, w->shape, w->ndim));
    return false;
  }
  int64_t groups = or_default(opt->groups, 1), stride = or_default(opt->stride, 1);
  int64_t dilation = or_default(opt->dilation, 1), padding = opt->padding;
  if (groups < 0 || stride < 0 || dilation < 0 || padding < 0) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected positive stride, dilation and groups and non-negative padding, got "
              "stride %lld, padding %lld, dilation %lld, groups %lld",
              (long long)stride, (long long)padding, (long long)dilation, (long long)groups);
    return false;
  }
  const int64_t *in = x->shape + (x->ndim - 2);
  if (w->shape[0] % groups != 0) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected the weight's out channels (%lld) to be divisible by groups (%lld)",
              (long long)w->shape[0], (long long)groups);
    return false;
  }
  if (w->shape[1] * groups != in[0]) {
    gs__error(GS_ERR_SHAPE, fn,
              "given groups=%lld, weight of size %s, expected input%s to have %lld channels, "
              "but got %lld channels instead",
              (long long)groups, gs__shape_str(sw, w->shape, w->ndim),
              gs__shape_str(sx, x->shape, x->ndim), (long long)(w->shape[1] * groups),
              (long long)in[0]);
    return false;
  }
  if (b && (b->ndim != 1 || b->shape[0] != w->shape[0])) {
    char sb[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn,
              "expected a bias of shape [%lld] (the weight's out channels), got %s",
              (long long)w->shape[0], gs__shape_str(sb, b->shape, b->ndim));
    return false;
  }
  int64_t span = dilation * (w->shape[2] - 1) + 1;
  if (in[1] + 2 * padding < span) {
    gs__error(GS_ERR_SHAPE, fn,
              "calculated padded input size per channel: (%lld); kernel size (%lld) (with "
              "dilation) cannot be greater than the actual input size",
              (long long)(in[1] + 2 * padding), (long long)span);
    return false;
  }
  int64_t v[5] = {groups, stride, padding, dilation, (in[1] + 2 * padding - span) / stride + 1};
  memcpy(ints, v, sizeof v);
  return true;
}

gs_tensor gs_conv1d(gs_tensor hx, gs_tensor hw, gs_tensor hb, const gs_conv1d_options *opt) {
  const char *fn = "conv1d";
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
  int64_t ints[5];
  if (!plan_conv1d(x, w, b, opt, ints, fn))
    return GS_NO_TENSOR;
  bool batched = x->ndim == 3;
  gs__conv_shape s = shape_1d(batched ? x->shape[0] : 1, x->shape + (x->ndim - 2), w->shape, ints);
  if (!gs__conv_fits_blas(&s, fn))
    return GS_NO_TENSOR;
  gs_dtype dt = x->dtype;
  int64_t shape[3] = {s.n, s.o, s.ow};
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
  gs_tensor h = gs__tensor_new(dt, batched ? shape : shape + 1, batched ? 3 : 2, fn, &out);
  if (h.id && !gs__conv_run_forward(dt, &s, gs__tensor_data(&cx), gs__tensor_data(&cw),
                                    b ? gs__tensor_data(&cb) : NULL, gs__tensor_data(out), fn)) {
    gs_dispose(h);
    h = GS_NO_TENSOR;
  }
  gs__tensor_release(&cx), gs__tensor_release(&cw);
  if (b)
    gs__tensor_release(&cb);
  if (!h.id)
    return h;
  out = gs__lookup(h, fn);
  gs__node *n = b ? gs__record(&Conv1dBackward, out, 3, (const gs__tensor *[]){x, w, b}, 2)
                  : gs__record(&Conv1dBackward, out, 2, (const gs__tensor *[]){x, w}, 2);
  if (n) {
    memcpy(n->ints, ints, sizeof ints);
    if (gs__needs_grad(n, 1))
      gs__save(n, 0, x);
    if (gs__needs_grad(n, 0))
      gs__save(n, 1, w);
  }
  return h;
}
