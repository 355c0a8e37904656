/* unfold.c: the sliding windows of an image as columns (F.unfold, torch's im2col): input
 * [N, C, H, W] or [C, H, W] to [N, C kh kw, L], L the number of windows.
 *
 * Computed with the engine's own ops with grad mode off (constant padding, then an
 * index_select of each window's positions in the flattened padded image) and recorded as one
 * node, Im2ColBackward0 as torch records it, whose formula adds g back at those positions
 * (index_add: a position in several windows gets each one's gradient) and crops the padding,
 * so it differentiates again.
 */
#include <stdlib.h>

#include "ops-impl.h"

/* d unfold(t) = g [*, C kh kw, L] as [*, C, kh kw L], added at the saved positions into the
 * flattened padded image [*, C, Hp Wp], which is then cropped to t (ints: padding h and w,
 * Hp, Wp) */
static void im2col_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  const gs__input_meta *m = &n->inputs[0];
  int nd = m->ndim;
  int64_t ph = n->ints[0], pw = n->ints[1], hp = n->ints[2], wp = n->ints[3];
  int64_t cols[GS_MAX_DIMS], image[GS_MAX_DIMS], padded[GS_MAX_DIMS];
  for (int d = 0; d < nd - 2; d++)
    cols[d] = image[d] = padded[d] = m->shape[d];
  cols[nd - 2] = -1, image[nd - 2] = hp * wp;
  padded[nd - 2] = hp, padded[nd - 1] = wp;
  gs_tensor per_channel = gs__formula_temp(gs_reshape(g, cols, nd - 1));
  gs_tensor zeros = gs__formula_temp(gs_zeros(gs_dtype_of(g), image, nd - 1));
  gs_tensor added =
      gs__formula_temp(gs_index_add(zeros, nd - 2, gs__saved(n, 0), per_channel, 1.0));
  gs_tensor full = gs__formula_temp(gs_reshape(added, padded, nd));
  grads[0] =
      gs__reduce_grad(n, 0, gs_constant_pad_nd(full, (int64_t[]){-pw, -pw, -ph, -ph}, 4, 0.0));
}
GS__BACKWARD_TWICE(Im2ColBackward, im2col_backward);

/* Each window's positions in the flattened padded image [Hp Wp], window element (ki, kj)
 * major, then the window (oi, oj): kh kw oh ow of them (malloc'd; NULL without memory). */
static int64_t *window_positions(const int64_t k[2], const int64_t dil[2], const int64_t st[2],
                                 int64_t wp, int64_t oh, int64_t ow) {
  int64_t *pos =
      malloc(sizeof(int64_t) * (size_t)(k[0] * k[1] * oh * ow > 0 ? k[0] * k[1] * oh * ow : 1));
  int64_t at = 0;
  for (int64_t ki = 0; pos && ki < k[0]; ki++)
    for (int64_t kj = 0; kj < k[1]; kj++)
      for (int64_t oi = 0; oi < oh; oi++)
        for (int64_t oj = 0; oj < ow; oj++)
          pos[at++] = (oi * st[0] + ki * dil[0]) * wp + oj * st[1] + kj * dil[1];
  return pos;
}

gs_tensor gs_unfold(gs_tensor h, const int64_t kernel[2], const int64_t dilation[2],
                    const int64_t padding[2], const int64_t stride[2]) {
  const char *fn = "unfold";
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return GS_NO_TENSOR;
  if (t->ndim != 3 && t->ndim != 4) {
    gs__error(GS_ERR_SHAPE, fn, "expected an input [N, C, H, W] or [C, H, W], got %d-D", t->ndim);
    return GS_NO_TENSOR;
  }
  if (!kernel || !dilation || !padding || !stride) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected kernel, dilation, padding and stride, got NULL");
    return GS_NO_TENSOR;
  }
  for (int i = 0; i < 2; i++)
    if (kernel[i] <= 0 || dilation[i] <= 0 || stride[i] <= 0 || padding[i] < 0) {
      gs__error(GS_ERR_ARGUMENT, fn,
                "expected kernel, dilation and stride > 0 and padding >= 0, got %lld, %lld, %lld "
                "and %lld (index %d)",
                (long long)kernel[i], (long long)dilation[i], (long long)stride[i],
                (long long)padding[i], i);
      return GS_NO_TENSOR;
    }
  int nd = t->ndim;
  int64_t hp = t->shape[nd - 2] + 2 * padding[0], wp = t->shape[nd - 1] + 2 * padding[1];
  int64_t oh = (hp - dilation[0] * (kernel[0] - 1) - 1) / stride[0] + 1;
  int64_t ow = (wp - dilation[1] * (kernel[1] - 1) - 1) / stride[1] + 1;
  if (hp - dilation[0] * (kernel[0] - 1) - 1 < 0 || wp - dilation[1] * (kernel[1] - 1) - 1 < 0) {
    gs__error(GS_ERR_SHAPE, fn,
              "the padded image %lld x %lld is smaller than a window (kernel %lld x %lld, "
              "dilation %lld x %lld)",
              (long long)hp, (long long)wp, (long long)kernel[0], (long long)kernel[1],
              (long long)dilation[0], (long long)dilation[1]);
    return GS_NO_TENSOR;
  }
  int64_t count = kernel[0] * kernel[1] * oh * ow;
  int64_t *pos = window_positions(kernel, dilation, stride, wp, oh, ow);
  if (!pos) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory for %lld window positions",
              (long long)count);
    return GS_NO_TENSOR;
  }
  gs_tensor index = gs_from_data(GS_I64, &count, 1, pos);
  free(pos);
  int64_t flat[GS_MAX_DIMS], cols[GS_MAX_DIMS];
  for (int d = 0; d < nd - 3; d++)
    flat[d] = cols[d] = t->shape[d];
  flat[nd - 3] = t->shape[nd - 3], flat[nd - 2] = hp * wp;
  cols[nd - 3] = t->shape[nd - 3] * kernel[0] * kernel[1], cols[nd - 2] = oh * ow;
  gs_no_grad_begin();
  gs_tensor padded =
      gs_constant_pad_nd(h, (int64_t[]){padding[1], padding[1], padding[0], padding[0]}, 4, 0.0);
  gs_tensor image = padded.id ? gs_reshape(padded, flat, nd - 1) : GS_NO_TENSOR;
  gs_tensor picked = image.id && index.id ? gs_index_select(image, nd - 2, index) : GS_NO_TENSOR;
  gs_tensor out = picked.id ? gs_reshape(picked, cols, nd - 1) : GS_NO_TENSOR;
  gs_no_grad_end();
  gs_tensor temps[] = {padded, image, picked};
  for (int i = 0; i < 3; i++)
    if (temps[i].id)
      gs_dispose(temps[i]);
  gs__node *n = gs__record_result(&Im2ColBackward, out, 1, (const gs__tensor *[]){t}, 1, fn);
  if (n) {
    gs__save(n, 0, gs__lookup(index, fn));
    n->ints[0] = padding[0], n->ints[1] = padding[1], n->ints[2] = hp, n->ints[3] = wp;
  }
  if (index.id)
    gs_dispose(index);
  return out;
}
