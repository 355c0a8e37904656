/* values.c: getting values into and out of tensors: dtype conversion, copying out, single
 * elements, raw data pointers and printing. */
#include <math.h>
#include <string.h>

#include "ops-impl.h"

/* d to_dtype(a) = g converted back to a's dtype (gs__reduce_grad casts). */
static void to_dtype_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad_through(n, 0, g);
}
GS__BACKWARD_TWICE(ToDtypeBackward, to_dtype_backward);

gs_tensor gs_to_dtype(gs_tensor h, gs_dtype dtype) {
  gs__tensor *t = gs__lookup(h, "to_dtype");
  if (!t)
    return GS_NO_TENSOR;
  if (gs_dtype_size(dtype) == 0) {
    gs__error(GS_ERR_DTYPE, "to_dtype",
              "expected a dtype (f32, f64, i64, bool, i32, u8, i8 or i16), got %d", (int)dtype);
    return GS_NO_TENSOR;
  }
  if (t->dtype == dtype)
    return gs_clone(h);
  gs__tensor *out;
  gs_tensor r = gs__tensor_new_like(dtype, t->shape, t->ndim, (const gs__tensor *[]){t}, 1,
                                    "to_dtype", &out); /* laid out as t is, as torch's */
  if (r.id) {
    gs__copy_into(out, t);
    if (gs_dtype_is_floating(dtype)) /* integer results have no gradient */
      gs__record(&ToDtypeBackward, out, 1, (const gs__tensor *[]){t}, 0);
  }
  return r;
}

int gs_copy_to(gs_tensor h, void *dst, size_t dst_bytes) {
  gs__tensor *t = gs__lookup(h, "copy_to");
  if (!t)
    return -1;
  size_t need = (size_t)t->numel * gs_dtype_size(t->dtype);
  if ((!dst && need > 0) || dst_bytes < need) {
    gs__error(GS_ERR_ARGUMENT, "copy_to",
              "expected a destination of at least %zu bytes (%lld %s elements), got %zu%s",
              need, (long long)t->numel, gs_dtype_name(t->dtype), dst ? dst_bytes : 0,
              dst ? " bytes" : " (NULL)");
    return -1;
  }
  gs__tensor view = *t;
  view.offset = 0;
  gs__contiguous_strides(view.shape, view.ndim, view.strides);
  gs__buffer fake_buffer = {.data = dst, .nbytes = need};
  gs__storage fake_storage = {.buffer = &fake_buffer, .nbytes = need};
  view.storage = &fake_storage;
  gs__copy_into(&view, t);
  return 0;
}

/* Offset in elements of a multi-index; -1 after reporting a bad index. */
static int64_t element_offset(const gs__tensor *t, const int64_t *index, const char *fn) {
  int64_t off = t->offset;
  if (t->ndim > 0 && !index) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected %d indices, got NULL", t->ndim);
    return -1;
  }
  for (int i = 0; i < t->ndim; i++) {
    int64_t ix = index[i];
    if (ix < -t->shape[i] || ix >= t->shape[i]) {
      gs__error(GS_ERR_INDEX, fn, "index %lld is out of range for dim %d of size %lld",
                (long long)ix, i, (long long)t->shape[i]);
      return -1;
    }
    if (ix < 0)
      ix += t->shape[i];
    off += ix * t->strides[i];
  }
  return off;
}

double gs_get(gs_tensor h, const int64_t *index) {
  gs__tensor *t = gs__lookup(h, "get");
  if (!t)
    return NAN;
  int64_t off = element_offset(t, index, "get");
  if (off < 0)
    return NAN;
  return gs__load_f64((char *)t->storage->buffer->data + off * (int64_t)gs_dtype_size(t->dtype),
                      t->dtype);
}

double gs_item(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "item");
  if (!t)
    return NAN;
  if (t->numel != 1) {
    char buf[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, "item", "expected a tensor with one element, got shape %s (%lld "
              "elements)", gs__shape_str(buf, t->shape, t->ndim), (long long)t->numel);
    return NAN;
  }
  return gs__load_f64(gs__tensor_data(t), t->dtype);
}

const void *gs_data(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "data");
  return t ? gs__tensor_data(t) : NULL;
}

void *gs_data_mut(gs_tensor h) { return gs__data_mut_as(h, "data_mut"); }

static void print_value(FILE *out, const gs__tensor *t, const char *p) {
  switch (t->dtype) {
  case GS_F32: fprintf(out, "%.6g", (double)*(const float *)p); break;
  case GS_F64: fprintf(out, "%.10g", *(const double *)p); break;
  case GS_I64: fprintf(out, "%lld", (long long)*(const int64_t *)p); break;
  case GS_BOOL: fputs(*(const bool *)p ? "true" : "false", out); break;
  case GS_I32: fprintf(out, "%d", (int)*(const int32_t *)p); break;
  case GS_U8: fprintf(out, "%d", (int)*(const uint8_t *)p); break;
  case GS_I8: fprintf(out, "%d", (int)*(const int8_t *)p); break;
  case GS_I16: fprintf(out, "%d", (int)*(const int16_t *)p); break;
  }
}

/* Prints dims from d inward, eliding the middle of long dims as "..." like PyTorch. */
static void print_dim(FILE *out, const gs__tensor *t, const char *p, int d, int indent) {
  const int64_t edge = 3;
  bool elide = t->numel > 1000 && t->shape[d] > 2 * edge;
  fputc('[', out);
  for (int64_t i = 0; i < t->shape[d]; i++) {
    if (elide && i == edge) {
      fputs(d == t->ndim - 1 ? "..., " : "...,\n", out);
      if (d != t->ndim - 1)
        fprintf(out, "%*s", indent + 1, "");
      i = t->shape[d] - edge - 1;
      continue;
    }
    const char *q = p + i * t->strides[d] * (int64_t)gs_dtype_size(t->dtype);
    if (d == t->ndim - 1)
      print_value(out, t, q);
    else
      print_dim(out, t, q, d + 1, indent + 1);
    if (i + 1 < t->shape[d]) {
      if (d == t->ndim - 1)
        fputs(", ", out);
      else
        fprintf(out, ",\n%*s", indent + 1, "");
    }
  }
  fputc(']', out);
}

void gs_print(FILE *out, gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "print");
  if (!t)
    return;
  if (!out) {
    gs__error(GS_ERR_ARGUMENT, "print", "expected a stream, got NULL");
    return;
  }
  char shape[GS__SHAPE_STR];
  fprintf(out, "tensor(");
  if (t->ndim == 0)
    print_value(out, t, gs__tensor_data(t));
  else
    print_dim(out, t, gs__tensor_data(t), 0, 7);
  fprintf(out, ", shape=%s, dtype=%s)\n", gs__shape_str(shape, t->shape, t->ndim),
          gs_dtype_name(t->dtype));
}
