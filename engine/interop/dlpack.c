/* dlpack.c: DLPack in and out (dlpack/dlpack.h 0.6, Debian's libdlpack-dev).
 *
 * Out: the managed tensor's context retains the tensor's storage, so the bytes outlive every
 * handle until the consumer's deleter runs. In: the producer's managed tensor becomes the
 * release callback of an external storage, so its deleter runs when the storage's last view
 * goes. A managed tensor the engine made itself comes back as a view of its own storage (same
 * bytes, same version counter), and its deleter runs at once.
 */
#include <dlpack/dlpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core-impl.h"

/* DLPack 0.8 added kDLBool = 6 (one byte per element); Debian's 0.6 header does not name it. */
#define GS__DL_BOOL 6

typedef struct export_ctx {
  DLManagedTensor managed;
  gs__storage *storage; /* retained until the consumer's deleter */
  int64_t shape[GS_MAX_DIMS];
  int64_t strides[GS_MAX_DIMS];
} export_ctx;

static void export_deleter(DLManagedTensor *managed) {
  if (!managed)
    return;
  export_ctx *c = managed->manager_ctx;
  gs__storage_release(c->storage);
  free(c);
}

static DLDataType dl_dtype(gs_dtype d) {
  switch (d) {
  case GS_F32: return (DLDataType){kDLFloat, 32, 1};
  case GS_F64: return (DLDataType){kDLFloat, 64, 1};
  case GS_I64: return (DLDataType){kDLInt, 64, 1};
  case GS_BOOL: return (DLDataType){GS__DL_BOOL, 8, 1};
  case GS_I32: return (DLDataType){kDLInt, 32, 1};
  case GS_U8: return (DLDataType){kDLUInt, 8, 1};
  case GS_I8: return (DLDataType){kDLInt, 8, 1};
  case GS_I16: return (DLDataType){kDLInt, 16, 1};
  }
  return (DLDataType){0, 0, 0};
}

DLManagedTensor *gs_to_dlpack(gs_tensor h) {
  static const char fn[] = "to_dlpack";
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return NULL;
  if (t->ag.requires_grad) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a tensor that does not require grad (DLPack "
              "carries no graph; export gs_detach(t) instead), got one that requires grad");
    return NULL;
  }
  export_ctx *c = calloc(1, sizeof *c);
  /* The consumer may write: bytes shared copy-on-write with a clone must become this
   * storage's own first, and stay so (seen_outside stops later clones sharing them). */
  if (!c || !gs__storage_materialise(t->storage)) {
    free(c);
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    return NULL;
  }
  t->storage->buffer->seen_outside = true;
  gs__storage_retain(t->storage);
  c->storage = t->storage;
  memcpy(c->shape, t->shape, sizeof c->shape);
  memcpy(c->strides, t->strides, sizeof c->strides);
  c->managed.manager_ctx = c;
  c->managed.deleter = export_deleter;
  DLTensor *d = &c->managed.dl_tensor;
  d->data = t->storage->buffer->data;
  d->device = (DLDevice){kDLCPU, 0};
  d->ndim = t->ndim;
  d->dtype = dl_dtype(t->dtype);
  d->shape = c->shape;
  d->strides = c->strides;
  d->byte_offset = (uint64_t)t->offset * gs__elsize(t->dtype);
  return &c->managed;
}

static const char *device_name(int type) {
  switch (type) {
  case kDLCUDA: return "CUDA";
  case kDLCUDAHost: return "CUDA host";
  case kDLOpenCL: return "OpenCL";
  case kDLVulkan: return "Vulkan";
  case kDLMetal: return "Metal";
  case kDLVPI: return "VPI";
  case kDLROCM: return "ROCm";
  case kDLROCMHost: return "ROCm host";
  case kDLExtDev: return "external";
  case kDLCUDAManaged: return "CUDA managed";
  }
  return "unknown";
}

static bool engine_dtype(DLDataType t, gs_dtype *out) {
  if (t.lanes != 1)
    return false;
  if (t.code == kDLFloat && t.bits == 32)
    *out = GS_F32;
  else if (t.code == kDLFloat && t.bits == 64)
    *out = GS_F64;
  else if (t.code == kDLInt && t.bits == 64)
    *out = GS_I64;
  else if (t.code == kDLInt && t.bits == 32)
    *out = GS_I32;
  else if (t.code == kDLUInt && t.bits == 8)
    *out = GS_U8;
  else if (t.code == kDLInt && t.bits == 8)
    *out = GS_I8;
  else if (t.code == kDLInt && t.bits == 16)
    *out = GS_I16;
  else if (t.code == GS__DL_BOOL && t.bits == 8)
    *out = GS_BOOL;
  else
    return false;
  return true;
}

static void describe_dl_dtype(DLDataType t, char *buf, size_t size) {
  static const char *const codes[] = {"int", "uint", "float", "opaque handle", "bfloat",
                                      "complex", "bool"};
  if (t.code < sizeof codes / sizeof *codes)
    snprintf(buf, size, "%s%u", codes[t.code], (unsigned)t.bits);
  else
    snprintf(buf, size, "type code %u of %u bits", (unsigned)t.code, (unsigned)t.bits);
  if (t.lanes != 1)
    snprintf(buf + strlen(buf), size - strlen(buf), " x %u lanes", (unsigned)t.lanes);
}

/* The engine's view of a DLPack tensor, or why there is none. */
typedef struct import_plan {
  gs__tensor t;   /* geometry (no storage yet) */
  char *base;     /* where the storage's bytes start */
  uint64_t nbytes;
  gs_error_code code;
  char why[400];
} import_plan;

static bool refuse(import_plan *p, gs_error_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool refuse(import_plan *p, gs_error_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->why, sizeof p->why, fmt, ap);
  va_end(ap);
  p->code = code;
  return false;
}

static bool plan_import(const DLTensor *d, import_plan *p) {
  if (d->device.device_type != kDLCPU)
    return refuse(p, GS_ERR_ARGUMENT, "expected a CPU tensor (device type %d), got device "
                  "type %d (%s), id %d", kDLCPU, (int)d->device.device_type,
                  device_name((int)d->device.device_type), d->device.device_id);
  gs__tensor *t = &p->t;
  if (!engine_dtype(d->dtype, &t->dtype)) {
    char got[64];
    describe_dl_dtype(d->dtype, got, sizeof got);
    return refuse(p, GS_ERR_DTYPE,
                  "expected dtype float32, float64, int64, bool, int32, uint8, int8 or "
                  "int16 (one lane), got %s",
                  got);
  }
  if (d->ndim < 0 || d->ndim > GS_MAX_DIMS)
    return refuse(p, GS_ERR_SHAPE, "expected 0 to %d dimensions, got %d", GS_MAX_DIMS,
                  d->ndim);
  if (d->ndim > 0 && !d->shape)
    return refuse(p, GS_ERR_ARGUMENT, "expected a shape for %d dimensions, got NULL",
                  d->ndim);
  t->ndim = d->ndim;
  int64_t numel = 1;
  for (int i = 0; i < d->ndim; i++) {
    if (d->shape[i] < 0)
      return refuse(p, GS_ERR_SHAPE, "expected sizes >= 0, got %lld at dim %d",
                    (long long)d->shape[i], i);
    if (__builtin_mul_overflow(numel, d->shape[i], &numel))
      return refuse(p, GS_ERR_OVERFLOW, "expected a shape whose element count fits in 64 "
                    "bits, got size %lld at dim %d", (long long)d->shape[i], i);
    t->shape[i] = d->shape[i];
  }
  t->numel = numel;
  size_t elsize = gs__elsize(t->dtype);
  /* Elements past the first one the strides can reach; the bytes the storage claims. */
  int64_t reach = 0;
  if (d->strides) {
    for (int i = 0; i < d->ndim; i++) {
      int64_t st = d->strides[i], step;
      if (st < 0)
        return refuse(p, GS_ERR_ARGUMENT, "expected strides >= 0 (the engine's views cannot "
                      "run backwards), got %lld at dim %d", (long long)st, i);
      if (numel > 0 && (__builtin_mul_overflow(d->shape[i] - 1, st, &step) ||
                        __builtin_add_overflow(reach, step, &reach)))
        return refuse(p, GS_ERR_OVERFLOW, "expected strides whose extent fits in 64 bits, "
                      "got stride %lld at dim %d (size %lld)", (long long)st, i,
                      (long long)d->shape[i]);
      t->strides[i] = st;
    }
  } else {
    gs__contiguous_strides(t->shape, t->ndim, t->strides);
    reach = numel > 0 ? numel - 1 : 0;
  }
  /* The storage starts at data when byte_offset is whole elements (so a round trip gives the
   * producer's data pointer back), else at the first element. */
  bool whole = d->byte_offset % elsize == 0;
  uint64_t first = whole ? d->byte_offset / elsize : 0;
  p->base = (char *)d->data + (whole ? 0 : d->byte_offset);
  if (numel > 0 && !d->data)
    return refuse(p, GS_ERR_ARGUMENT, "expected data for %lld elements, got NULL",
                  (long long)numel);
  if ((uintptr_t)(p->base + first * elsize) % elsize != 0)
    return refuse(p, GS_ERR_ARGUMENT, "expected elements aligned to %zu bytes, got data %p "
                  "with byte_offset %llu", elsize, d->data, (unsigned long long)d->byte_offset);
  int64_t elements, bytes;
  if (first > (uint64_t)INT64_MAX ||
      __builtin_add_overflow((int64_t)first, numel > 0 ? reach + 1 : 0, &elements) ||
      __builtin_mul_overflow(elements, (int64_t)elsize, &bytes))
    return refuse(p, GS_ERR_OVERFLOW, "expected byte_offset %llu plus the strides' extent to "
                  "fit in 64 bits as bytes", (unsigned long long)d->byte_offset);
  t->offset = (int64_t)first;
  p->nbytes = (uint64_t)bytes;
  return true;
}

static void release_producer(void *data, void *user) {
  (void)data;
  DLManagedTensor *managed = user;
  if (managed->deleter)
    managed->deleter(managed);
}

gs_tensor gs_from_dlpack(DLManagedTensor *managed) {
  static const char fn[] = "from_dlpack";
  if (!managed) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a DLManagedTensor, got NULL");
    return GS_NO_TENSOR;
  }
  import_plan p;
  memset(&p, 0, sizeof p);
  if (!plan_import(&managed->dl_tensor, &p)) {
    /* The producer handed its tensor over: free it even though the engine cannot use it. */
    if (managed->deleter)
      managed->deleter(managed);
    gs__error(p.code, fn, "%s", p.why);
    return GS_NO_TENSOR;
  }
  if (managed->deleter == export_deleter) {
    /* One of ours coming home: view the storage itself, not a wrapper around its bytes. */
    gs__storage *s = ((export_ctx *)managed->manager_ctx)->storage;
    if (p.base == s->buffer->data && p.nbytes <= s->nbytes) {
      gs__storage_retain(s);
      p.t.storage = s;
      managed->deleter(managed);
      return gs__register(&p.t, fn);
    }
  }
  p.t.storage = gs__storage_wrap(p.base, p.nbytes, release_producer, managed,
                                 GS_MEMORY_DLPACK);
  if (!p.t.storage) {
    if (managed->deleter)
      managed->deleter(managed);
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not allocate the storage record");
    return GS_NO_TENSOR;
  }
  p.t.storage->buffer->seen_outside = true;
  return gs__register(&p.t, fn);
}
