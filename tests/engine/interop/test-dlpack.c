/* test-dlpack.c: DLPack out of and into the engine: the managed tensor's fields, the storage
 * kept alive until the consumer's deleter, a producer's deleter called exactly once when the
 * last view goes, writes seen on both sides, round trips keeping the data pointer, and every
 * layout the engine refuses (with the deleter still honoured). */
#include <dlpack/dlpack.h>

#include "test-util.h"

/* ---- a foreign producer: memory the test owns and a deleter that counts ---------------- */

typedef struct producer {
  DLManagedTensor managed;
  int64_t shape[GS_MAX_DIMS + 1];
  int64_t strides[GS_MAX_DIMS + 1];
  int deletes;
  _Alignas(64) double data[64];
} producer;

static void producer_deleter(DLManagedTensor *m) {
  ((producer *)m->manager_ctx)->deletes++;
}

/* A 2-D float64 producer of rows x cols, row-major, values 0, 1, 2, ... */
static void producer_init(producer *p, int64_t rows, int64_t cols) {
  memset(p, 0, sizeof *p);
  for (int i = 0; i < 64; i++)
    p->data[i] = i;
  p->shape[0] = rows;
  p->shape[1] = cols;
  p->strides[0] = cols;
  p->strides[1] = 1;
  p->managed.manager_ctx = p;
  p->managed.deleter = producer_deleter;
  DLTensor *d = &p->managed.dl_tensor;
  d->data = p->data;
  d->device = (DLDevice){kDLCPU, 0};
  d->ndim = 2;
  d->dtype = (DLDataType){kDLFloat, 64, 1};
  d->shape = p->shape;
  d->strides = p->strides;
}

static uint64_t live_storages(void) {
  gs_memory_stats s;
  gs_memory_get_stats(&s);
  return s.live_storages;
}

/* ---- out ------------------------------------------------------------------------------ */

static void test_export_describes_the_view(void) {
  gs_tensor flat = gs_arange(0, 12, 1, GS_F32);
  gs_tensor m = gs_reshape(flat, (int64_t[]){3, 4}, 2);
  gs_tensor cols = gs_slice(m, 1, 1, 4, 2); /* [3, 2], strides (4, 2), offset 1 */
  gs_tensor v = gs_t(cols);                 /* [2, 3], strides (2, 4), offset 1 */
  DLManagedTensor *out = gs_to_dlpack(v);
  g_assert_nonnull(out);
  DLTensor *d = &out->dl_tensor;
  gs_storage_info info;
  g_assert_cmpint(gs_storage_info_of(v, &info), ==, 0);
  g_assert_true(d->data == info.data);
  g_assert_cmpint(d->device.device_type, ==, kDLCPU);
  g_assert_cmpint(d->ndim, ==, 2);
  g_assert_cmpint(d->dtype.code, ==, kDLFloat);
  g_assert_cmpint(d->dtype.bits, ==, 32);
  g_assert_cmpint(d->dtype.lanes, ==, 1);
  g_assert_cmpint(d->shape[0], ==, 2);
  g_assert_cmpint(d->shape[1], ==, 3);
  g_assert_cmpint(d->strides[0], ==, 2);
  g_assert_cmpint(d->strides[1], ==, 4);
  g_assert_cmpuint(d->byte_offset, ==, 4);
  /* Element (i, j) through DLPack's arithmetic is element (i, j) of the view. */
  const float *base = (const float *)((const char *)d->data + d->byte_offset);
  for (int64_t i = 0; i < 2; i++)
    for (int64_t j = 0; j < 3; j++)
      g_assert_cmpfloat(base[i * d->strides[0] + j * d->strides[1]], ==,
                        gs_get(v, (int64_t[]){i, j}));
  g_assert_true(info.seen_outside);
  out->deleter(out);
  DISPOSE_ALL(v, cols, m, flat);
}

static void test_export_outlives_every_handle(void) {
  gs_tensor t = gs_arange(0, 1000, 1, GS_F64);
  uint64_t before = live_storages();
  DLManagedTensor *out = gs_to_dlpack(t);
  gs_dispose(t);
  /* Still alive: the consumer's managed tensor holds the storage (ASan would see a read of
   * freed memory here otherwise). */
  g_assert_cmpuint(live_storages(), ==, before);
  const double *x = out->dl_tensor.data;
  g_assert_cmpfloat(x[999], ==, 999.0);
  out->deleter(out);
  g_assert_cmpuint(live_storages(), ==, before - 1);
}

static void test_export_writes_seen_both_ways(void) {
  gs_tensor t = gs_zeros(GS_I64, (int64_t[]){4}, 1);
  DLManagedTensor *out = gs_to_dlpack(t);
  int64_t *x = out->dl_tensor.data;
  x[2] = 42;
  g_assert_cmpfloat(gs_get(t, (int64_t[]){2}), ==, 42.0);
  gs_fill_(t, 7);
  g_assert_cmpint(x[0], ==, 7);
  g_assert_cmpint(x[3], ==, 7);
  out->deleter(out);
  gs_dispose(t);
}

static void test_export_copies_copy_on_write_bytes_first(void) {
  gs_tensor a = gs_arange(0, 4, 1, GS_F32);
  gs_tensor c = gs_clone(a);
  g_assert_true(gs_is_copy_on_write(a));
  DLManagedTensor *out = gs_to_dlpack(a);
  g_assert_false(gs_is_copy_on_write(a));
  g_assert_true(out->dl_tensor.data != gs_data(c));
  ((float *)out->dl_tensor.data)[0] = -1;
  g_assert_cmpfloat(gs_get(a, (int64_t[]){0}), ==, -1.0);
  g_assert_cmpfloat(gs_get(c, (int64_t[]){0}), ==, 0.0); /* the clone kept its value */
  out->deleter(out);
  gs_dispose(a);
  gs_dispose(c);
}

static void test_clone_of_exported_storage_copies_at_once(void) {
  gs_tensor a = gs_arange(0, 4, 1, GS_F32);
  DLManagedTensor *out = gs_to_dlpack(a);
  gs_tensor c = gs_clone(a);
  /* Sharing copy-on-write would move the first writer off the bytes DLPack sees. */
  g_assert_false(gs_is_copy_on_write(a));
  g_assert_true(gs_data(c) != out->dl_tensor.data);
  gs_fill_(a, 5);
  g_assert_cmpfloat(((float *)out->dl_tensor.data)[1], ==, 5.0);
  g_assert_cmpfloat(gs_get(c, (int64_t[]){1}), ==, 1.0);
  out->deleter(out);
  gs_dispose(a);
  gs_dispose(c);
}

static void test_export_bool_and_scalar(void) {
  gs_tensor b = gs_full(GS_BOOL, (int64_t[]){3}, 1, 1);
  DLManagedTensor *out = gs_to_dlpack(b);
  g_assert_cmpint(out->dl_tensor.dtype.code, ==, 6); /* DLPack's kDLBool */
  g_assert_cmpint(out->dl_tensor.dtype.bits, ==, 8);
  gs_tensor back = gs_from_dlpack(out);
  g_assert_cmpint(gs_dtype_of(back), ==, GS_BOOL);
  g_assert_cmpuint(gs_storage_id(back), ==, gs_storage_id(b));
  gs_dispose(back);
  gs_dispose(b);

  gs_tensor s = gs_scalar(GS_I64, 9);
  out = gs_to_dlpack(s);
  g_assert_cmpint(out->dl_tensor.ndim, ==, 0);
  g_assert_cmpint(*(int64_t *)out->dl_tensor.data, ==, 9);
  out->deleter(out);
  gs_dispose(s);
}

static void test_export_refuses_requires_grad(void) {
  gs_tensor w = gs_ones(GS_F32, (int64_t[]){2}, 1);
  gs_set_requires_grad(w, true);
  DLManagedTensor *out = (DLManagedTensor *)1;
  EXPECT_ERROR(out = gs_to_dlpack(w), "requires grad");
  g_assert_null(out);
  gs_tensor d = gs_detach(w);
  out = gs_to_dlpack(d);
  g_assert_nonnull(out);
  out->deleter(out);
  gs_dispose(d);
  gs_dispose(w);
  EXPECT_ERROR(out = gs_to_dlpack(w), "disposed");
  g_assert_null(out);
}

/* ---- in ------------------------------------------------------------------------------- */

static void test_import_wraps_without_copying(void) {
  producer p;
  producer_init(&p, 3, 4);
  gs_tensor t = gs_from_dlpack(&p.managed);
  g_assert_true(gs_data(t) == (const void *)p.data);
  g_assert_cmpint(gs_size(t, 0), ==, 3);
  g_assert_cmpint(gs_size(t, 1), ==, 4);
  g_assert_cmpfloat(gs_get(t, (int64_t[]){2, 3}), ==, 11.0);
  gs_storage_info info;
  gs_storage_info_of(t, &info);
  g_assert_cmpint(info.origin, ==, GS_MEMORY_DLPACK);
  g_assert_cmpstr(gs_memory_origin_name(info.origin), ==, "dlpack");
  /* Writes are seen on both sides. */
  p.data[0] = 100;
  g_assert_cmpfloat(gs_get(t, (int64_t[]){0, 0}), ==, 100.0);
  gs_fill_(t, 1.5);
  g_assert_cmpfloat(p.data[5], ==, 1.5);
  gs_dispose(t);
  g_assert_cmpint(p.deletes, ==, 1);
}

static void test_import_deleter_waits_for_the_last_view(void) {
  producer p;
  producer_init(&p, 4, 4);
  gs_tensor t = gs_from_dlpack(&p.managed);
  gs_tensor row = gs_select(t, 0, 2);
  gs_tensor tt = gs_t(t);
  gs_tensor c = gs_clone(t); /* copies at once: the producer may write */
  g_assert_true(gs_data(c) != (const void *)p.data);
  gs_dispose(t);
  gs_dispose(tt);
  g_assert_cmpint(p.deletes, ==, 0);
  g_assert_cmpfloat(gs_get(row, (int64_t[]){1}), ==, 9.0);
  gs_dispose(row);
  g_assert_cmpint(p.deletes, ==, 1);
  gs_dispose(c);
  g_assert_cmpint(p.deletes, ==, 1);
}

static void test_import_strided_and_offset(void) {
  producer p;
  producer_init(&p, 2, 3);
  p.strides[0] = 1; /* column-major 2 x 3 over 6 elements, starting at element 8 */
  p.strides[1] = 2;
  p.managed.dl_tensor.byte_offset = 8 * sizeof(double);
  gs_tensor t = gs_from_dlpack(&p.managed);
  g_assert_cmpint(gs_storage_offset(t), ==, 8);
  g_assert_cmpint(gs_stride(t, 0), ==, 1);
  g_assert_cmpint(gs_stride(t, 1), ==, 2);
  g_assert_cmpfloat(gs_get(t, (int64_t[]){1, 2}), ==, 8 + 1 + 4);
  gs_storage_info info;
  gs_storage_info_of(t, &info);
  g_assert_true(info.data == (const void *)p.data); /* the storage starts at the producer's data */
  gs_dispose(t);
  g_assert_cmpint(p.deletes, ==, 1);

  /* A byte_offset that is not whole elements (the data pointer itself unaligned): the storage
   * starts at the first element. */
  _Alignas(8) static char bytes[64];
  double *f = (double *)(bytes + 8);
  f[0] = 3;
  f[1] = 4;
  producer_init(&p, 1, 2);
  p.managed.dl_tensor.data = bytes + 4;
  p.managed.dl_tensor.byte_offset = 4;
  p.managed.dl_tensor.strides = NULL; /* DLPack 0.6: NULL means row-major */
  t = gs_from_dlpack(&p.managed);
  g_assert_cmpfloat(gs_get(t, (int64_t[]){0, 1}), ==, 4.0);
  g_assert_true(gs_data(t) == (const void *)f);
  g_assert_cmpint(gs_storage_offset(t), ==, 0);
  gs_dispose(t);
  g_assert_cmpint(p.deletes, ==, 1);
}

static void test_round_trip_foreign_keeps_pointer_and_defers_deleter(void) {
  producer p;
  producer_init(&p, 2, 2);
  gs_tensor t = gs_from_dlpack(&p.managed);
  DLManagedTensor *out = gs_to_dlpack(t);
  g_assert_true(out->dl_tensor.data == (void *)p.data);
  gs_dispose(t);
  g_assert_cmpint(p.deletes, ==, 0); /* our consumer still holds the storage */
  out->deleter(out);
  g_assert_cmpint(p.deletes, ==, 1);
}

static void test_round_trip_own_shares_the_storage(void) {
  gs_tensor a = gs_arange(0, 6, 1, GS_F64);
  gs_tensor v = gs_slice(a, 0, 2, 6, 2);
  const void *data = gs_data(v);
  DLManagedTensor *out = gs_to_dlpack(v);
  gs_tensor back = gs_from_dlpack(out); /* calls out's deleter: do not touch out again */
  g_assert_true(gs_data(back) == data);
  g_assert_cmpuint(gs_storage_id(back), ==, gs_storage_id(a));
  g_assert_cmpint(gs_stride(back, 0), ==, 2);
  g_assert_cmpint(gs_storage_offset(back), ==, 2);
  gs_add_scalar_(back, 10);
  g_assert_cmpint(gs_version(a), ==, gs_version(back)); /* one version counter */
  g_assert_cmpfloat(gs_get(a, (int64_t[]){4}), ==, 14.0);
  gs_storage_info info;
  gs_storage_info_of(back, &info);
  g_assert_cmpint(info.origin, ==, GS_MEMORY_ENGINE);
  gs_dispose(a);
  gs_dispose(v);
  g_assert_cmpfloat(gs_get(back, (int64_t[]){1}), ==, 14.0);
  gs_dispose(back);
}

/* i32 leaves as kDLInt of 32 bits, and a foreign kDLInt 32 tensor comes in as i32 without a
 * copy (PyTorch's int32 both ways). */
static void test_round_trip_i32(void) {
  gs_tensor t = gs_from_data(GS_I32, (int64_t[]){3}, 1, (int32_t[]){7, -2, INT32_MIN});
  DLManagedTensor *out = gs_to_dlpack(t);
  g_assert_nonnull(out);
  g_assert_cmpint(out->dl_tensor.dtype.code, ==, kDLInt);
  g_assert_cmpint(out->dl_tensor.dtype.bits, ==, 32);
  g_assert_cmpint(out->dl_tensor.dtype.lanes, ==, 1);
  g_assert_cmpint(((const int32_t *)out->dl_tensor.data)[2], ==, INT32_MIN);
  gs_tensor back = gs_from_dlpack(out);
  g_assert_cmpint(gs_dtype_of(back), ==, GS_I32);
  g_assert_cmpuint(gs_storage_id(back), ==, gs_storage_id(t));
  g_assert_cmpfloat(gs_get(back, (int64_t[]){1}), ==, -2.0);
  DISPOSE_ALL(t, back);

  producer p;
  producer_init(&p, 2, 4); /* 8 int32 values in the first 32 bytes */
  int32_t *ints = (int32_t *)p.data;
  for (int i = 0; i < 8; i++)
    ints[i] = i * 100 - 300;
  p.managed.dl_tensor.dtype = (DLDataType){kDLInt, 32, 1};
  gs_tensor in = gs_from_dlpack(&p.managed);
  g_assert_cmpint(gs_dtype_of(in), ==, GS_I32);
  g_assert_true(gs_data(in) == (const void *)p.data);
  g_assert_cmpfloat(gs_get(in, (int64_t[]){1, 3}), ==, 400.0);
  ints[7] = 5;
  g_assert_cmpfloat(gs_get(in, (int64_t[]){1, 3}), ==, 5.0);
  gs_dispose(in);
  g_assert_cmpint(p.deletes, ==, 1);
}

/* Each refused layout: the error names it, no tensor is made, the deleter runs once. */
static void expect_refused(producer *p, const char *substring) {
  gs_tensor t = {1};
  uint64_t live = gs_live_tensor_count();
  EXPECT_ERROR(t = gs_from_dlpack(&p->managed), substring);
  g_assert_cmpuint(t.id, ==, 0);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
  g_assert_cmpint(p->deletes, ==, 1);
}

static void test_refusals_still_call_the_deleter(void) {
  producer p;
  producer_init(&p, 2, 2);
  p.managed.dl_tensor.device = (DLDevice){kDLCUDA, 1};
  expect_refused(&p, "expected a CPU tensor (device type 1), got device type 2 (CUDA), id 1");

  producer_init(&p, 2, 2);
  p.managed.dl_tensor.dtype = (DLDataType){kDLFloat, 16, 1};
  expect_refused(
      &p, "expected dtype float32, float64, int64, bool, int32, uint8, int8 or int16 (one lane), "
          "got float16");
  producer_init(&p, 2, 2);
  p.managed.dl_tensor.dtype = (DLDataType){kDLUInt, 16, 1};
  expect_refused(&p, "got uint16");
  producer_init(&p, 2, 2);
  p.managed.dl_tensor.dtype = (DLDataType){kDLFloat, 32, 4};
  expect_refused(&p, "got float32 x 4 lanes");
  producer_init(&p, 2, 2);
  p.managed.dl_tensor.dtype = (DLDataType){kDLComplex, 64, 1};
  expect_refused(&p, "got complex64");

  producer_init(&p, 2, 2);
  p.strides[0] = -2;
  expect_refused(&p, "expected strides >= 0 (the engine's views cannot run backwards), got -2 "
                 "at dim 0");
  producer_init(&p, 2, 3);
  p.strides[1] = INT64_MAX / 2 + 1;
  expect_refused(&p, "expected strides whose extent fits in 64 bits");
  producer_init(&p, 2, 2);
  p.strides[1] = INT64_MAX / 4; /* the extent fits in elements, not in bytes */
  expect_refused(&p, "expected byte_offset 0 plus the strides' extent to fit in 64 bits as "
                 "bytes");
  producer_init(&p, 2, 2);
  p.shape[0] = -1;
  expect_refused(&p, "expected sizes >= 0, got -1 at dim 0");
  producer_init(&p, 2, 2);
  p.managed.dl_tensor.ndim = GS_MAX_DIMS + 1;
  expect_refused(&p, "expected 0 to 8 dimensions, got 9");
  producer_init(&p, 2, 2);
  p.managed.dl_tensor.data = NULL;
  expect_refused(&p, "expected data for 4 elements, got NULL");
  producer_init(&p, 2, 2);
  p.managed.dl_tensor.byte_offset = 3;
  expect_refused(&p, "expected elements aligned to 8 bytes");

  gs_tensor t = {1};
  EXPECT_ERROR(t = gs_from_dlpack(NULL), "expected a DLManagedTensor, got NULL");
  g_assert_cmpuint(t.id, ==, 0);
}

/* A producer without a deleter (allowed by DLPack) is wrapped and never called back. */
static void test_import_without_deleter(void) {
  producer p;
  producer_init(&p, 1, 3);
  p.managed.deleter = NULL;
  gs_tensor t = gs_from_dlpack(&p.managed);
  g_assert_cmpfloat(gs_get(t, (int64_t[]){0, 2}), ==, 2.0);
  gs_dispose(t);
  p.managed.dl_tensor.device.device_type = kDLCUDA;
  EXPECT_ERROR(t = gs_from_dlpack(&p.managed), "expected a CPU tensor");
  g_assert_cmpint(p.deletes, ==, 0);
}

/* u8 leaves as kDLUInt 8, i8 and i16 as kDLInt 8 and 16 (torch's uint8, int8, int16), and
 * each comes back as the same dtype sharing the storage; a foreign kDLUInt 8 comes in as u8. */
static void test_round_trip_small_ints(void) {
  const gs_dtype dtypes[3] = {GS_U8, GS_I8, GS_I16};
  const uint8_t codes[3] = {kDLUInt, kDLInt, kDLInt}, bits[3] = {8, 8, 16};
  for (int k = 0; k < 3; k++) {
    test_set_context("%s", gs_dtype_name(dtypes[k]));
    gs_tensor f = gs_from_data(GS_F64, (int64_t[]){3}, 1, (double[]){7, -2, 200});
    gs_tensor t = gs_to_dtype(f, dtypes[k]);
    DLManagedTensor *out = gs_to_dlpack(t);
    g_assert_nonnull(out);
    g_assert_cmpint(out->dl_tensor.dtype.code, ==, codes[k]);
    g_assert_cmpint(out->dl_tensor.dtype.bits, ==, bits[k]);
    gs_tensor back = gs_from_dlpack(out);
    g_assert_cmpint(gs_dtype_of(back), ==, dtypes[k]);
    g_assert_cmpuint(gs_storage_id(back), ==, gs_storage_id(t));
    g_assert_cmpfloat(gs_get(back, (int64_t[]){1}), ==, dtypes[k] == GS_U8 ? 254.0 : -2.0);
    g_assert_cmpfloat(gs_get(back, (int64_t[]){2}), ==, dtypes[k] == GS_I8 ? -56.0 : 200.0);
    DISPOSE_ALL(f, t, back);
  }
  producer p;
  producer_init(&p, 2, 4);
  uint8_t *bytes = (uint8_t *)p.data;
  for (int i = 0; i < 8; i++)
    bytes[i] = (uint8_t)(250 + i);
  p.managed.dl_tensor.dtype = (DLDataType){kDLUInt, 8, 1};
  gs_tensor in = gs_from_dlpack(&p.managed);
  g_assert_cmpint(gs_dtype_of(in), ==, GS_U8);
  g_assert_true(gs_data(in) == (const void *)p.data);
  g_assert_cmpfloat(gs_get(in, (int64_t[]){1, 1}), ==, 255.0);
  g_assert_cmpfloat(gs_get(in, (int64_t[]){1, 2}), ==, 0.0);
  gs_dispose(in);
  g_assert_cmpint(p.deletes, ==, 1);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/dlpack/export/describes-the-view", test_export_describes_the_view);
  g_test_add_func("/dlpack/export/outlives-every-handle", test_export_outlives_every_handle);
  g_test_add_func("/dlpack/export/writes-seen-both-ways", test_export_writes_seen_both_ways);
  g_test_add_func("/dlpack/export/copies-copy-on-write-bytes-first",
                  test_export_copies_copy_on_write_bytes_first);
  g_test_add_func("/dlpack/export/clone-of-exported-storage-copies-at-once",
                  test_clone_of_exported_storage_copies_at_once);
  g_test_add_func("/dlpack/export/bool-and-scalar", test_export_bool_and_scalar);
  g_test_add_func("/dlpack/export/refuses-requires-grad", test_export_refuses_requires_grad);
  g_test_add_func("/dlpack/import/wraps-without-copying", test_import_wraps_without_copying);
  g_test_add_func("/dlpack/import/deleter-waits-for-the-last-view",
                  test_import_deleter_waits_for_the_last_view);
  g_test_add_func("/dlpack/import/strided-and-offset", test_import_strided_and_offset);
  g_test_add_func("/dlpack/import/without-deleter", test_import_without_deleter);
  g_test_add_func("/dlpack/import/refusals-still-call-the-deleter",
                  test_refusals_still_call_the_deleter);
  g_test_add_func("/dlpack/round-trip/foreign-keeps-pointer-and-defers-deleter",
                  test_round_trip_foreign_keeps_pointer_and_defers_deleter);
  g_test_add_func("/dlpack/round-trip/i32", test_round_trip_i32);
  g_test_add_func("/dlpack/round-trip/small-ints", test_round_trip_small_ints);
  g_test_add_func("/dlpack/round-trip/own-shares-the-storage",
                  test_round_trip_own_shares_the_storage);
  return g_test_run();
}
