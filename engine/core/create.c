/* create.c: tensors made from sizes, constants, ranges, C arrays and wrapped memory. */
#include <math.h>
#include <string.h>

#include "core-impl.h"

/* Writes value into every element of a fresh contiguous tensor. */
static void fill_contiguous(gs__tensor *t, double value) {
  char *p = gs__tensor_data(t);
  int64_t n = t->numel;
  switch (t->dtype) {
  case GS_F32: {
    float v = (float)value, *o = (float *)p;
    for (int64_t i = 0; i < n; i++)
      o[i] = v;
    break;
  }
  case GS_F64: {
    double *o = (double *)p;
    for (int64_t i = 0; i < n; i++)
      o[i] = value;
    break;
  }
  case GS_I64: {
    int64_t v = gs__f64_to_i64(value), *o = (int64_t *)p;
    for (int64_t i = 0; i < n; i++)
      o[i] = v;
    break;
  }
  case GS_I32: {
    int32_t v = gs__f64_to_i32(value), *o = (int32_t *)p;
    for (int64_t i = 0; i < n; i++)
      o[i] = v;
    break;
  }
  case GS_I16: {
    int16_t v = gs__f64_to_i16(value), *o = (int16_t *)p;
    for (int64_t i = 0; i < n; i++)
      o[i] = v;
    break;
  }
  case GS_BOOL:
    memset(p, value != 0.0, (size_t)n);
    break;
  case GS_U8: memset(p, gs__f64_to_u8(value), (size_t)n); break;
  case GS_I8: memset(p, (uint8_t)gs__f64_to_i8(value), (size_t)n); break;
  }
}

static gs_tensor full(gs_dtype dtype, const int64_t *shape, int ndim, double value,
                      const char *fn) {
  gs__tensor *t;
  gs_tensor h = gs__tensor_new(dtype, shape, ndim, fn, &t);
  if (h.id)
    fill_contiguous(t, value);
  return h;
}

gs_tensor gs_empty(gs_dtype dtype, const int64_t *shape, int ndim) {
  return gs__tensor_new(dtype, shape, ndim, "empty", NULL);
}

gs_tensor gs_zeros(gs_dtype dtype, const int64_t *shape, int ndim) {
  return full(dtype, shape, ndim, 0.0, "zeros");
}

gs_tensor gs_ones(gs_dtype dtype, const int64_t *shape, int ndim) {
  return full(dtype, shape, ndim, 1.0, "ones");
}

gs_tensor gs_full(gs_dtype dtype, const int64_t *shape, int ndim, double value) {
  return full(dtype, shape, ndim, value, "full");
}

gs_tensor gs_scalar(gs_dtype dtype, double value) { return full(dtype, NULL, 0, value, "scalar"); }

static gs_tensor full_like(gs_tensor like, double value, const char *fn) {
  gs__tensor *t = gs__lookup(like, fn);
  if (!t)
    return GS_NO_TENSOR;
  int64_t shape[GS_MAX_DIMS];
  memcpy(shape, t->shape, sizeof shape);
  return full(t->dtype, shape, t->ndim, value, fn);
}

gs_tensor gs_zeros_like(gs_tensor t) { return full_like(t, 0.0, "zeros_like"); }
gs_tensor gs_ones_like(gs_tensor t) { return full_like(t, 1.0, "ones_like"); }
gs_tensor gs_full_like(gs_tensor t, double value) { return full_like(t, value, "full_like"); }

gs_tensor gs_arange(double start, double end, double step, gs_dtype dtype) {
  if (!(step != 0.0) || !isfinite(start) || !isfinite(end) || !isfinite(step)) {
    gs__error(GS_ERR_ARGUMENT, "arange",
              "expected finite start, end and a non-zero finite step, got start %g, end %g, "
              "step %g",
              start, end, step);
    return GS_NO_TENSOR;
  }
  if ((step > 0 && end < start) || (step < 0 && end > start)) {
    gs__error(GS_ERR_ARGUMENT, "arange",
              "step %g moves away from end: start %g, end %g would never be reached", step,
              start, end);
    return GS_NO_TENSOR;
  }
  if (dtype == GS_BOOL) {
    gs__error(GS_ERR_DTYPE, "arange", "expected a numeric dtype, got bool");
    return GS_NO_TENSOR;
  }
  double count = ceil((end - start) / step);
  if (count > 1e15) {
    gs__error(GS_ERR_OVERFLOW, "arange", "start %g, end %g, step %g give too many elements",
              start, end, step);
    return GS_NO_TENSOR;
  }
  int64_t n = (int64_t)count;
  gs__tensor *t;
  gs_tensor h = gs__tensor_new(dtype, &n, 1, "arange", &t);
  if (!h.id)
    return h;
  char *p = gs__tensor_data(t);
  size_t es = gs_dtype_size(dtype);
  for (int64_t i = 0; i < n; i++)
    gs__store_f64(p + (size_t)i * es, dtype, start + (double)i * step);
  return h;
}

gs_tensor gs_linspace(double start, double end, int64_t steps, gs_dtype dtype) {
  if (steps < 0) {
    gs__error(GS_ERR_ARGUMENT, "linspace", "expected steps >= 0, got %lld", (long long)steps);
    return GS_NO_TENSOR;
  }
  if (dtype == GS_BOOL) {
    gs__error(GS_ERR_DTYPE, "linspace", "expected a numeric dtype, got bool");
    return GS_NO_TENSOR;
  }
  gs__tensor *t;
  gs_tensor h = gs__tensor_new(dtype, &steps, 1, "linspace", &t);
  if (!h.id)
    return h;
  char *p = gs__tensor_data(t);
  size_t es = gs_dtype_size(dtype);
  double step = steps > 1 ? (end - start) / (double)(steps - 1) : 0.0;
  /* Fill symmetrically from both ends, as PyTorch does, so the last value is exactly end. */
  int64_t half = steps / 2;
  for (int64_t i = 0; i < steps; i++) {
    double v = steps == 1 ? start
               : i < half ? start + step * (double)i
                          : end - step * (double)(steps - 1 - i);
    gs__store_f64(p + (size_t)i * es, dtype, v);
  }
  return h;
}

gs_tensor gs_eye(int64_t n, int64_t m, gs_dtype dtype) {
  int64_t shape[2] = {n, m};
  gs_tensor h = gs_zeros(dtype, shape, 2);
  if (!h.id)
    return h;
  gs__tensor *t = gs__lookup(h, "eye");
  char *p = gs__tensor_data(t);
  size_t es = gs_dtype_size(dtype);
  for (int64_t i = 0; i < n && i < m; i++)
    gs__store_f64(p + (size_t)(i * m + i) * es, dtype, 1.0);
  return h;
}

gs_tensor gs_from_data(gs_dtype dtype, const int64_t *shape, int ndim, const void *data) {
  int64_t numel = 0;
  if (gs_dtype_size(dtype) && (numel = gs__checked_numel(shape, ndim, "from_data")) < 0)
    return GS_NO_TENSOR;
  if (!data && numel > 0) {
    gs__error(GS_ERR_ARGUMENT, "from_data", "expected %lld elements of data, got NULL",
              (long long)numel);
    return GS_NO_TENSOR;
  }
  gs__tensor *t;
  gs_tensor h = gs__tensor_new(dtype, shape, ndim, "from_data", &t);
  if (h.id && numel > 0)
    memcpy(gs__tensor_data(t), data, (size_t)t->numel * gs_dtype_size(dtype));
  return h;
}

gs_tensor gs_from_blob(gs_dtype dtype, const int64_t *shape, int ndim, const int64_t *strides,
                       void *data, gs_release_fn release, void *user_data) {
  const char *fn = "from_blob";
  if (gs_dtype_size(dtype) == 0) {
    gs__error(GS_ERR_DTYPE, fn,
              "expected a dtype (f32, f64, i64, bool, i32, u8, i8 or i16), got %d", (int)dtype);
    return GS_NO_TENSOR;
  }
  int64_t numel = gs__checked_numel(shape, ndim, fn);
  if (numel < 0)
    return GS_NO_TENSOR;
  if (!data) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected memory to wrap, got NULL");
    return GS_NO_TENSOR;
  }
  gs__tensor t;
  memset(&t, 0, sizeof t);
  t.dtype = dtype;
  t.ndim = ndim;
  t.numel = numel;
  if (ndim)
    memcpy(t.shape, shape, (size_t)ndim * sizeof(int64_t));
  /* The extent the strides reach bounds the bytes the storage claims. */
  int64_t extent = numel > 0 ? 1 : 0;
  if (strides) {
    for (int i = 0; i < ndim; i++) {
      if (strides[i] < 0) {
        gs__error(GS_ERR_ARGUMENT, fn, "expected strides >= 0, got %lld at dim %d",
                  (long long)strides[i], i);
        return GS_NO_TENSOR;
      }
      t.strides[i] = strides[i];
      if (numel > 0)
        extent += (shape[i] - 1) * strides[i];
    }
  } else {
    gs__contiguous_strides(t.shape, ndim, t.strides);
    extent = numel;
  }
  t.storage = gs__storage_wrap(data, (uint64_t)extent * gs_dtype_size(dtype), release,
                               user_data, GS_MEMORY_BLOB);
  if (!t.storage) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not allocate the storage record");
    return GS_NO_TENSOR;
  }
  return gs__register(&t, fn);
}
