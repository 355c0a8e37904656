/* dataset.c: datasets over whole tensors (gs_tensor_dataset) and their place in the event log.
 *
 * A tensor dataset reads its tensors without owning them (the caller disposes them), so the
 * log cannot tell them from any other caller-held tensor unless the dataset says so: it is
 * recorded as a composite of kind GS_OBJECT_DATASET whose parts are its tensors, and its
 * release as that composite's disposal (the tensors live on). The inspector files the bytes
 * of those tensors as data while the dataset lives. A dataset is no handle (gs_dataset is a
 * plain struct): its id only has to be unique among the log's objects. */
#include <stdlib.h>
#include <string.h>

#include "core-impl.h"
#include "gradscope/data.h"
#include "scope-impl.h"
#include "trace-writer.h"

/* Dataset ids carry this bit in their low half, as composites carry theirs: never a tensor's
 * (whose slot indices stay below it) nor a composite's (GS__COMPOSITE_ID_BIT). */
#define GS__DATASET_ID_BIT 0x40000000u
_Static_assert((GS__DATASET_ID_BIT & GS__COMPOSITE_ID_BIT) == 0,
               "datasets and composites need distinct id tags");
_Static_assert((uint64_t)(1u << GS__TENSOR_PAGE_SHIFT) * GS__POOL_MAX_PAGES <= GS__DATASET_ID_BIT,
               "a tensor's slot index must never carry the dataset tag");

typedef struct tensor_dataset {
  uint64_t id;
  int n;
  gs_tensor tensors[GS_DATASET_MAX_FIELDS];
} tensor_dataset;

static atomic_uint_fast64_t datasets_made;

/* The next dataset's id: a count below the tag, its overflow where a handle's generation is. */
static uint64_t dataset_id(void) {
  uint64_t n = atomic_fetch_add_explicit(&datasets_made, 1, memory_order_relaxed) + 1;
  return (n / GS__DATASET_ID_BIT) << 32 | GS__DATASET_ID_BIT | (n % GS__DATASET_ID_BIT);
}

static bool tensor_dataset_get(void *user, int64_t index, gs_tensor *fields_out) {
  const tensor_dataset *td = user;
  for (int f = 0; f < td->n; f++) {
    fields_out[f] = gs_select(td->tensors[f], 0, index);
    if (!fields_out[f].id) {
      for (int g = 0; g < f; g++)
        gs_dispose(fields_out[g]);
      return false;
    }
  }
  return true;
}

/* One row of t at its offset (dim 0 dropped), to copy or read rows by. */
static gs__tensor row_of(const gs__tensor *t) {
  gs__tensor row = *t;
  row.ndim = t->ndim - 1;
  memmove(row.shape, t->shape + 1, sizeof(int64_t) * (size_t)row.ndim);
  memmove(row.strides, t->strides + 1, sizeof(int64_t) * (size_t)row.ndim);
  row.numel = t->shape[0] ? t->numel / t->shape[0] : 0;
  return row;
}

/* Rows indices[0..count) of t, copied into a new tensor [count, row shape...]: what stacking
 * gs_select(t, 0, i) for each index gives, without a tensor per row. */
static gs_tensor gather_rows(gs_tensor h, const int64_t *indices, int64_t count, const char *fn) {
  const gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return GS_NO_TENSOR;
  for (int64_t i = 0; i < count; i++)
    if (indices[i] < 0 || indices[i] >= t->shape[0]) {
      gs__error(GS_ERR_INDEX, fn, "expected sample indices in [0, %lld), got %lld",
                (long long)t->shape[0], (long long)indices[i]);
      return GS_NO_TENSOR;
    }
  int64_t shape[GS_MAX_DIMS];
  memcpy(shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
  shape[0] = count;
  gs__tensor *out;
  gs_tensor r = gs__tensor_new(t->dtype, shape, t->ndim, fn, &out);
  if (!r.id)
    return r;
  gs__tensor src = row_of(t), dst = row_of(out);
  size_t row_bytes = (size_t)dst.numel * gs_dtype_size(t->dtype);
  bool rows_contiguous = gs__is_contiguous(&src);
  const char *from = gs__tensor_data(t);
  char *to = gs__tensor_data(out);
  for (int64_t i = 0; i < count; i++) {
    if (rows_contiguous) { /* the common case (rows of a matrix): one memcpy per row */
      memcpy(to + (size_t)i * row_bytes,
             from + indices[i] * t->strides[0] * (int64_t)gs_dtype_size(t->dtype), row_bytes);
      continue;
    }
    src.offset = t->offset + indices[i] * t->strides[0];
    dst.offset = out->offset + i * out->strides[0];
    gs__copy_into(&dst, &src);
  }
  return r;
}

static bool tensor_dataset_get_items(void *user, const int64_t *indices, int64_t count,
                                     gs_tensor *fields_out) {
  const tensor_dataset *td = user;
  for (int f = 0; f < td->n; f++) {
    fields_out[f] = gather_rows(td->tensors[f], indices, count, "tensor_dataset");
    if (!fields_out[f].id) {
      for (int g = 0; g < f; g++)
        gs_dispose(fields_out[g]);
      return false;
    }
  }
  return true;
}

/* Starts loading the rows of the samples asked for next into the cache (gs_dataset's
 * will_need): each field's rows where they are contiguous, every cache line of each. */
static void tensor_dataset_will_need(void *user, const int64_t *indices, int64_t count) {
  const tensor_dataset *td = user;
  for (int f = 0; f < td->n; f++) {
    const gs__tensor *t = gs__lookup_quiet(td->tensors[f].id);
    if (!t)
      continue;
    gs__tensor row = row_of(t);
    if (!gs__is_contiguous(&row))
      continue;
    size_t item = gs_dtype_size(t->dtype), row_bytes = (size_t)row.numel * item;
    const char *data = gs__tensor_data(t);
    for (int64_t i = 0; i < count; i++) {
      if (indices[i] < 0 || indices[i] >= t->shape[0])
        continue;
      const char *at = data + indices[i] * t->strides[0] * (int64_t)item;
      for (size_t b = 0; b < row_bytes; b += 64)
        __builtin_prefetch(at + b);
      if (row_bytes)
        __builtin_prefetch(at + row_bytes - 1); /* a row not aligned to a line ends in another */
    }
  }
}

/* The log says the dataset no longer reads its tensors; they stay the caller's. */
static void tensor_dataset_release(void *user) {
  tensor_dataset *td = user;
  if (gs__trace_on())
    gs__trace_tensor_dispose(gs__next_event(), td->id, "gs_dataset_release", 0);
  else
    gs__trace_skip(1);
  free(td);
}

gs_dataset gs_tensor_dataset(const gs_tensor *tensors, int n) {
  const char *fn = "tensor_dataset";
  gs_dataset none = {0};
  if (!tensors) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected an array of tensors, got NULL");
    return none;
  }
  if (n < 1 || n > GS_DATASET_MAX_FIELDS) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected 1 to %d tensors, got %d", GS_DATASET_MAX_FIELDS,
              n);
    return none;
  }
  int64_t length = 0;
  for (int i = 0; i < n; i++) {
    if (!gs_is_alive(tensors[i])) {
      gs__error(GS_ERR_STALE_HANDLE, fn, "tensor %d is not a live tensor", i);
      return none;
    }
    if (gs_ndim(tensors[i]) < 1) {
      gs__error(GS_ERR_SHAPE, fn, "tensor %d is 0-D: expected at least one dimension (the rows)",
                i);
      return none;
    }
    int64_t rows = gs_size(tensors[i], 0);
    if (i == 0) {
      length = rows;
    } else if (rows != length) {
      gs__error(GS_ERR_SHAPE, fn,
                "expected tensors with the same first size, got %lld (tensor 0) and %lld "
                "(tensor %d)",
                (long long)length, (long long)rows, i);
      return none;
    }
  }
  tensor_dataset *td = calloc(1, sizeof *td);
  if (!td) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "cannot allocate the dataset");
    return none;
  }
  td->id = dataset_id();
  td->n = n;
  memcpy(td->tensors, tensors, (size_t)n * sizeof *tensors);
  if (gs__trace_on())
    gs__trace_composite_create(td->id, GS_OBJECT_DATASET, tensors, n);
  else
    gs__trace_skip(1);
  return (gs_dataset){.length = length,
                      .n_fields = n,
                      .get_item = tensor_dataset_get,
                      .user = td,
                      .release = tensor_dataset_release,
                      .get_items = tensor_dataset_get_items,
                      .will_need = tensor_dataset_will_need};
}

void gs_dataset_release(gs_dataset *ds) {
  if (!ds)
    return;
  if (ds->release)
    ds->release(ds->user);
  memset(ds, 0, sizeof *ds);
}
