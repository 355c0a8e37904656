/* tensor.c: tensor geometry helpers, construction of tensor records, and the read-only
 * accessors of the public API (dtype, shape, strides, storage id, version). */
#include <stdio.h>
#include <string.h>

#include "core-impl.h"
#include "trace-writer.h"

void gs__contiguous_strides(const int64_t *shape, int ndim, int64_t *strides) {
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i] > 0 ? shape[i] : 1;
  }
}

bool gs__is_contiguous(const gs__tensor *t) {
  if (t->numel == 0)
    return true; /* no element to lay out, as PyTorch says */
  int64_t expected = 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    if (t->shape[i] == 1)
      continue; /* the stride of a size-1 dim never matters */
    if (t->strides[i] != expected)
      return false;
    expected *= t->shape[i];
  }
  return true;
}

int64_t gs__checked_numel(const int64_t *shape, int ndim, const char *fn) {
  char buf[GS__SHAPE_STR];
  if (ndim < 0 || ndim > GS_MAX_DIMS) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected 0 to %d dimensions, got %d", GS_MAX_DIMS, ndim);
    return -1;
  }
  if (ndim > 0 && !shape) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a shape of %d sizes, got NULL", ndim);
    return -1;
  }
  int64_t n = 1;
  bool overflow = false;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0) {
      gs__error(GS_ERR_ARGUMENT, fn, "expected sizes >= 0, got %lld in shape %s",
                (long long)shape[i], gs__shape_str(buf, shape, ndim));
      return -1;
    }
    if (__builtin_mul_overflow(n, shape[i], &n))
      overflow = true;
  }
  /* Keep byte counts representable too: numel * 8 must fit. */
  if (overflow || n > (INT64_MAX / 8)) {
    gs__error(GS_ERR_OVERFLOW, fn, "shape %s has more elements than fit in 64 bits",
              gs__shape_str(buf, shape, ndim));
    return -1;
  }
  return n;
}

int gs__wrap_dim(int dim, int ndim, const char *fn) {
  int range = ndim > 0 ? ndim : 1; /* a scalar accepts dim 0 and -1, as in PyTorch */
  if (dim < -range || dim >= range) {
    gs__error(GS_ERR_DIM, fn, "expected a dimension in [%d, %d] for a %d-D tensor, got %d",
              -range, range - 1, ndim, dim);
    return -1;
  }
  return dim < 0 ? dim + range : dim;
}

bool gs__tensor_init(gs__tensor *t, gs_dtype dtype, const int64_t *shape, int ndim,
                     const char *fn) {
  if (gs_dtype_size(dtype) == 0) {
    gs__error(GS_ERR_DTYPE, fn,
              "expected a dtype (f32, f64, i64, bool, i32, u8, i8 or i16), got %d", (int)dtype);
    return false;
  }
  int64_t numel = gs__checked_numel(shape, ndim, fn);
  if (numel < 0)
    return false;
  uint64_t nbytes = (uint64_t)numel * gs_dtype_size(dtype);
  gs__storage *s = gs__storage_new(nbytes);
  if (!s) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not allocate %llu bytes",
              (unsigned long long)nbytes);
    return false;
  }
  memset(t, 0, sizeof *t);
  t->dtype = dtype;
  t->ndim = ndim;
  t->numel = numel;
  if (ndim > 0)
    memcpy(t->shape, shape, (size_t)ndim * sizeof(int64_t));
  gs__contiguous_strides(t->shape, ndim, t->strides);
  t->storage = s;
  return true;
}

gs_tensor gs__tensor_new(gs_dtype dtype, const int64_t *shape, int ndim, const char *fn,
                         gs__tensor **out) {
  gs__tensor t;
  if (!gs__tensor_init(&t, dtype, shape, ndim, fn))
    return GS_NO_TENSOR;
  gs_tensor h = gs__register(&t, fn);
  if (out)
    *out = h.id ? gs__lookup(h, fn) : NULL;
  return h;
}

gs_tensor gs__make_view(const gs__tensor *base, const int64_t *shape, const int64_t *strides,
                        int ndim, int64_t offset, const char *fn) {
  return gs__make_view_as(base, shape, strides, ndim, offset, GS__ORIGIN_VIEW, fn);
}

gs_tensor gs__make_view_as(const gs__tensor *base, const int64_t *shape, const int64_t *strides,
                           int ndim, int64_t offset, gs__origin origin, const char *fn) {
  gs__tensor v;
  memset(&v, 0, sizeof v);
  v.dtype = base->dtype;
  v.ndim = ndim;
  v.numel = 1;
  for (int i = 0; i < ndim; i++) {
    v.shape[i] = shape[i];
    v.strides[i] = strides[i];
    v.numel *= shape[i];
  }
  v.offset = offset;
  v.storage = base->storage;
  v.origin = origin; /* set before registering: the log records the tensor as registered */
  v.source = base->id;
  gs__tensor *root = NULL;
  if (origin == GS__ORIGIN_VIEW) { /* the root of the chain, and its history as of now */
    v.view_base = base->origin == GS__ORIGIN_VIEW && base->view_base ? base->view_base : base->id;
    root = v.view_base == base->id ? (gs__tensor *)base : gs__lookup_quiet(v.view_base);
    v.base_history = root ? root->ag.history : base->base_history;
  }
  gs__storage_retain(v.storage);
  gs_tensor h = gs__register(&v, fn);
  if (h.id && v.view_base) /* the pool's pages never move: h's record is found by its index */
    GS__LIFECYCLE_EACH(on_view, gs__lookup_quiet(h.id), root);
  return h;
}

void gs__tensor_release(gs__tensor *t) {
  gs__storage_release(t->storage);
  t->storage = NULL;
}

bool gs__begin_write(gs__tensor *t, bool operand_requires_grad, const char *op) {
  for (int i = 0; i < gs__lifecycle.n_on_write; i++)
    if (!gs__lifecycle.on_write[i](t, operand_requires_grad, op))
      return false;
  gs__storage *s = t->storage;
  if (!gs__storage_materialise(s)) {
    gs__error(GS_ERR_OUT_OF_MEMORY, op,
              "could not copy %llu copy-on-write bytes before writing",
              (unsigned long long)s->nbytes);
    return false;
  }
  gs__bump_version(t, op, true);
  return true;
}

void gs__bump_version(gs__tensor *t, const char *op, bool values_changed) {
  gs__storage *s = t->storage;
  atomic_fetch_add_explicit(&s->version, 1, memory_order_relaxed);
  s->last_write_op = op;
  s->last_write_event = gs__next_event();
  s->last_write_tensor = t->id;
  s->last_write_origin = t->origin;
  if (gs__trace_on()) {
    gs__trace_inplace_write(s->last_write_event, t->id, s->id,
                            (uint64_t)atomic_load(&s->version), op);
    /* With values recorded, the written tensor's new values follow (read once the op has
     * written them, before this thread's next event), as at creation: so a gradient added
     * into a .grad, or a tensor changed in place, shows what it holds now. */
    if (values_changed && gs__trace_values_limit() > 0)
      gs__trace_defer_values(t->id);
  }
}

/* Whether sizes and strides from storage_offset stay inside t's storage, as torch's setStorage
 * checks them; false after reporting as fn. */
bool gs__geometry_fits(const gs__tensor *t, const int64_t *shape, const int64_t *strides, int ndim,
                       int64_t storage_offset, const char *fn) {
  if (ndim < 0 || ndim > GS_MAX_DIMS || (ndim > 0 && (!shape || !strides))) {
    gs__error(GS_ERR_SHAPE, fn, "expected 0 to %d sizes and as many strides, got %d", GS_MAX_DIMS,
              ndim);
    return false;
  }
  char sizes[GS__SHAPE_STR], steps[GS__SHAPE_STR];
  for (int i = 0; i < ndim; i++)
    if (strides[i] < 0) {
      gs__error(GS_ERR_SHAPE, fn, /* PyTorch's RuntimeError, as its other geometry errors */
                "Negative strides are not supported at the moment, got strides: %s",
                gs__shape_str(steps, strides, ndim));
      return false;
    }
  if (storage_offset < 0) {
    gs__error(GS_ERR_SHAPE, fn, "invalid storage offset %lld", (long long)storage_offset);
    return false;
  }
  int64_t numel = gs__checked_numel(shape, ndim, fn);
  if (numel < 0)
    return false;
  int64_t size = gs__elsize(t->dtype);
  int64_t need = 0, need_bytes = 0; /* storage the view reaches, from 0 (overflow: too much) */
  bool overflow = false;
  if (numel > 0) {
    overflow = __builtin_add_overflow(storage_offset, 1, &need);
    for (int i = 0; i < ndim && !overflow; i++) {
      int64_t span;
      overflow = __builtin_mul_overflow(shape[i] - 1, strides[i], &span) ||
                 __builtin_add_overflow(need, span, &need);
    }
  }
  overflow = overflow || __builtin_mul_overflow(need, size, &need_bytes);
  if (overflow || (uint64_t)need_bytes > t->storage->nbytes) {
    gs__error(GS_ERR_SHAPE, fn,
              "setStorage: sizes %s, strides %s, storage offset %lld, and itemsize %lld "
              "requiring a storage size of %lld are out of bounds for storage of size %llu",
              gs__shape_str(sizes, shape, ndim), gs__shape_str(steps, strides, ndim),
              (long long)storage_offset, (long long)size,
              overflow ? (long long)INT64_MAX : (long long)need_bytes,
              (unsigned long long)t->storage->nbytes);
    return false;
  }
  return true;
}

/* ---- public accessors --------------------------------------------------------------- */

gs_dtype gs_dtype_of(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "dtype_of");
  return t ? t->dtype : GS_F32;
}

int gs_ndim(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "ndim");
  return t ? t->ndim : -1;
}

int64_t gs_size(gs_tensor h, int dim) {
  gs__tensor *t = gs__lookup(h, "size");
  if (!t)
    return -1;
  int d = gs__wrap_dim(dim, t->ndim, "size");
  if (d < 0)
    return -1;
  return t->ndim ? t->shape[d] : 1;
}

int64_t gs_stride(gs_tensor h, int dim) {
  gs__tensor *t = gs__lookup(h, "stride");
  if (!t)
    return -1;
  int d = gs__wrap_dim(dim, t->ndim, "stride");
  if (d < 0)
    return -1;
  return t->ndim ? t->strides[d] : 1;
}

int gs_shape(gs_tensor h, int64_t *shape_out) {
  gs__tensor *t = gs__lookup(h, "shape");
  if (!t)
    return -1;
  if (!shape_out) {
    gs__error(GS_ERR_ARGUMENT, "shape", "expected an output array, got NULL");
    return -1;
  }
  memcpy(shape_out, t->shape, (size_t)t->ndim * sizeof(int64_t));
  return t->ndim;
}

int gs_strides(gs_tensor h, int64_t *strides_out) {
  gs__tensor *t = gs__lookup(h, "strides");
  if (!t)
    return -1;
  if (!strides_out) {
    gs__error(GS_ERR_ARGUMENT, "strides", "expected an output array, got NULL");
    return -1;
  }
  memcpy(strides_out, t->strides, (size_t)t->ndim * sizeof(int64_t));
  return t->ndim;
}

int64_t gs_numel(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "numel");
  return t ? t->numel : -1;
}

int64_t gs_storage_offset(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "storage_offset");
  return t ? t->offset : -1;
}

gs_tensor gs_view_base(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "view_base");
  if (!t || t->origin != GS__ORIGIN_VIEW || !t->view_base)
    return GS_NO_TENSOR;
  gs_tensor base = {t->view_base};
  return gs__lookup(base, "view_base") ? base : GS_NO_TENSOR; /* stale: says who disposed it */
}

/* Quiet on a stale handle: bindings call these from their objects' finalizers. */
void gs_tensor_set_binding(gs_tensor h, void *object) {
  gs__tensor *t = gs__lookup_quiet(h.id);
  if (t)
    t->binding = object;
}

void *gs_tensor_binding(gs_tensor h) {
  gs__tensor *t = gs__lookup_quiet(h.id);
  return t ? t->binding : NULL;
}

bool gs_is_contiguous(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "is_contiguous");
  return t && gs__is_contiguous(t);
}

uint64_t gs_storage_id(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "storage_id");
  return t ? t->storage->id : 0;
}

int64_t gs_version(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "version");
  return t ? (int64_t)atomic_load(&t->storage->version) : -1;
}

bool gs_is_copy_on_write(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "is_copy_on_write");
  return t && gs__storage_is_cow(t->storage);
}

int gs_storage_info_of(gs_tensor h, gs_storage_info *info) {
  gs__tensor *t = gs__lookup(h, "storage_info_of");
  if (!t)
    return -1;
  if (!info) {
    gs__error(GS_ERR_ARGUMENT, "storage_info_of", "expected a gs_storage_info to fill, got NULL");
    return -1;
  }
  const gs__buffer *b = t->storage->buffer;
  info->id = t->storage->id;
  info->nbytes = t->storage->nbytes;
  info->data = b->data;
  info->origin = b->origin;
  info->seen_outside = b->seen_outside;
  info->writes_reach_file = b->writes_reach_file;
  info->peer_pid = b->peer_pid;
  return 0;
}

char *gs_describe(gs_tensor h, char *buf, size_t buf_size) {
  if (!buf || buf_size == 0)
    return buf;
  if (!gs_is_alive(h)) {
    snprintf(buf, buf_size, "(no tensor)");
    return buf;
  }
  gs__tensor *t = gs__lookup(h, "describe");
  char shape[GS__SHAPE_STR];
  snprintf(buf, buf_size, "%s %s", gs__shape_str(shape, t->shape, t->ndim),
           gs_dtype_name(t->dtype));
  return buf;
}
