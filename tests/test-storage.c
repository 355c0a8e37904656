/* test-storage.c: what tensors share. Clone is a copy that costs O(1): bytes shared
 * copy-on-write until either side writes. Detach (and every view) shares the storage and
 * its version counter, which every in-place write bumps. And the caching allocator's
 * statistics: size classes, cache hits, peak, the cache limit and emptying the cache. */
#include "test-util.h"

static const int64_t shape[] = {4, 8};

static gs_memory_stats stats_now(void) {
  gs_memory_stats s;
  gs_memory_get_stats(&s);
  return s;
}

static void test_clone_is_copy_on_write(void) {
  gs_tensor a = gs_arange(0, 32, 1, GS_F32);
  uint64_t bytes = stats_now().bytes_in_use;
  gs_tensor c = gs_clone(a);
  g_assert_cmpuint(stats_now().bytes_in_use, ==, bytes); /* O(1): no bytes copied */
  g_assert_true(gs_is_copy_on_write(a) && gs_is_copy_on_write(c));
  g_assert_cmpuint(gs_storage_id(c), !=, gs_storage_id(a));
  const void *shared = gs_data(a);
  g_assert_true(gs_data(c) == shared);

  gs_add_scalar_(c, 1); /* the first write copies the bytes for c */
  g_assert_false(gs_is_copy_on_write(a) || gs_is_copy_on_write(c));
  g_assert_true(gs_data(a) == shared && gs_data(c) != shared);
  g_assert_cmpuint(stats_now().bytes_in_use, >, bytes);
  g_assert_cmpfloat(gs_get(a, (int64_t[]){5}), ==, 5);
  g_assert_cmpfloat(gs_get(c, (int64_t[]){5}), ==, 6);
  g_assert_cmpint(gs_version(a), ==, 0); /* the clone's version is its own */
  g_assert_cmpint(gs_version(c), ==, 1);
  gs_dispose(a), gs_dispose(c);
}

static void test_write_to_original_after_clone(void) {
  gs_tensor a = gs_ones(GS_F64, shape, 2);
  gs_tensor c = gs_clone(a);
  gs_fill_(a, 3); /* the original writes: the clone keeps the old values */
  g_assert_cmpfloat(gs_get(c, (int64_t[]){1, 1}), ==, 1);
  g_assert_cmpfloat(gs_get(a, (int64_t[]){1, 1}), ==, 3);
  gs_tensor c2 = gs_clone(c);
  gs_dispose(c); /* c2 is now the bytes' only user: writing needs no copy */
  const void *before = gs_data(c2);
  gs_zero_(c2);
  g_assert_true(gs_data(c2) == before);
  gs_dispose(a), gs_dispose(c2);
}

static void test_clone_of_view_keeps_geometry(void) {
  gs_tensor base = gs_arange(0, 32, 1, GS_F32);
  gs_tensor m = gs_view(base, shape, 2);
  gs_tensor col = gs_select(m, 1, 3);
  gs_tensor c = gs_clone(col);
  g_assert_cmpint(gs_stride(c, 0), ==, 8);
  gs_fill_(c, -1);
  test_assert_values(c, (int64_t[]){4}, 1, (double[]){-1, -1, -1, -1}, 0, 0);
  test_assert_values(col, (int64_t[]){4}, 1, (double[]){3, 11, 19, 27}, 0, 0);
  gs_dispose(base), gs_dispose(m), gs_dispose(col), gs_dispose(c);
}

static void test_detach_shares_storage_and_version(void) {
  gs_tensor a = gs_zeros(GS_F32, shape, 2);
  gs_tensor d = gs_detach(a);
  gs_tensor v = gs_transpose(a, 0, 1);
  g_assert_cmpuint(gs_storage_id(d), ==, gs_storage_id(a));
  g_assert_false(gs_is_copy_on_write(d));
  int64_t v0 = gs_version(a);
  gs_add_scalar_(d, 2); /* written through the detached alias */
  g_assert_cmpint(gs_version(a), ==, v0 + 1);
  g_assert_cmpint(gs_version(v), ==, v0 + 1);
  g_assert_cmpfloat(gs_get(a, (int64_t[]){0, 0}), ==, 2);
  gs_tensor sum = gs_add(a, d); /* out-of-place ops do not bump versions */
  g_assert_cmpint(gs_version(a), ==, v0 + 1);
  g_assert_cmpint(gs_version(sum), ==, 0);
  gs_dispose(a), gs_dispose(d), gs_dispose(v), gs_dispose(sum);
}

static void test_every_write_bumps_version(void) {
  gs_tensor t = gs_zeros(GS_F32, shape, 2);
  gs_tensor o = gs_ones(GS_F32, shape, 2);
  int64_t v = gs_version(t);
  gs_add_(t, o);
  gs_sub_(t, o);
  gs_mul_(t, o);
  gs_div_(t, o);
  gs_add_scalar_(t, 1);
  gs_mul_scalar_(t, 2);
  gs_fill_(t, 1);
  gs_zero_(t);
  gs_copy_(t, o);
  gs_clamp_(t, 0, 1);
  g_assert_cmpint(gs_version(t), ==, v + 10);
  float *p = gs_data_mut(t);
  g_assert_nonnull(p);
  g_assert_cmpint(gs_version(t), ==, v + 11);
  (void)gs_data(t); /* a read pointer is not a write */
  g_assert_cmpint(gs_version(t), ==, v + 11);
  gs_dispose(t), gs_dispose(o);
}

static void test_data_mut_materialises(void) {
  gs_tensor a = gs_ones(GS_I64, shape, 2);
  gs_tensor c = gs_clone(a);
  int64_t *p = gs_data_mut(c);
  p[0] = 42;
  g_assert_cmpfloat(gs_get(a, (int64_t[]){0, 0}), ==, 1);
  g_assert_cmpfloat(gs_get(c, (int64_t[]){0, 0}), ==, 42);
  gs_dispose(a), gs_dispose(c);
}

static void test_storage_freed_with_last_user(void) {
  uint64_t storages = stats_now().live_storages;
  gs_tensor a = gs_zeros(GS_F32, shape, 2);
  gs_tensor v = gs_slice(a, 1, 0, 4, 1), c = gs_clone(a);
  g_assert_cmpuint(stats_now().live_storages, ==, storages + 1); /* clone shares the bytes */
  gs_dispose(a);
  gs_dispose(c);
  g_assert_cmpuint(stats_now().live_storages, ==, storages + 1); /* the view holds it */
  gs_dispose(v);
  g_assert_cmpuint(stats_now().live_storages, ==, storages);
}

static void test_size_classes(void) {
  g_assert_cmpuint(gs_memory_size_class(0), ==, 64);
  g_assert_cmpuint(gs_memory_size_class(1), ==, 64);
  g_assert_cmpuint(gs_memory_size_class(65), ==, 128);
  g_assert_cmpuint(gs_memory_size_class(4096), ==, 4096);
  g_assert_cmpuint(gs_memory_size_class(4097), ==, 5120); /* quarters above 4 KiB */
  g_assert_cmpuint(gs_memory_size_class(1u << 20), ==, 1u << 20);
  g_assert_cmpuint(gs_memory_size_class((1u << 20) + 1), ==, (1u << 20) + (1u << 18));
  for (uint64_t n = 1; n < (1u << 24); n = n * 3 + 1) {
    uint64_t c = gs_memory_size_class(n);
    g_assert_cmpuint(c, >=, n);
    g_assert_cmpuint(c, <=, n < 4096 ? n + 63 : n + n / 4 + 1); /* at most 25% waste */
  }
}

static void test_cache_reuses_blocks(void) {
  const int64_t big[] = {1000, 100};
  gs_tensor warm = gs_empty(GS_F32, big, 2);
  gs_dispose(warm); /* its block is now cached */
  gs_memory_stats s0 = stats_now();
  for (int i = 0; i < 10; i++) {
    gs_tensor t = gs_empty(GS_F32, big, 2);
    gs_dispose(t);
  }
  gs_memory_stats s1 = stats_now();
  g_assert_cmpuint(s1.allocations - s0.allocations, ==, 10);
  g_assert_cmpuint(s1.cache_hits - s0.cache_hits, ==, 10);
  g_assert_cmpuint(s1.system_allocations, ==, s0.system_allocations);
  g_assert_cmpuint(s1.bytes_reserved, ==, s0.bytes_reserved);
}

static void test_peak_and_requested_bytes(void) {
  gs_memory_reset_peak();
  gs_memory_stats s0 = stats_now();
  g_assert_cmpuint(s0.peak_bytes_in_use, ==, s0.bytes_in_use);
  gs_tensor t = gs_empty(GS_F64, (int64_t[]){1000}, 1); /* 8000 bytes, class 8192 */
  gs_memory_stats s1 = stats_now();
  g_assert_cmpuint(s1.bytes_requested - s0.bytes_requested, ==, 8000);
  g_assert_cmpuint(s1.bytes_in_use - s0.bytes_in_use, ==, 8192);
  gs_dispose(t);
  gs_memory_stats s2 = stats_now();
  g_assert_cmpuint(s2.bytes_in_use, ==, s0.bytes_in_use);
  g_assert_cmpuint(s2.peak_bytes_in_use, ==, s0.bytes_in_use + 8192);
}

static void test_empty_cache_and_limit(void) {
  gs_tensor t = gs_empty(GS_F32, (int64_t[]){1 << 16}, 1);
  gs_dispose(t);
  gs_memory_stats s0 = stats_now();
  g_assert_cmpuint(s0.bytes_reserved, >, s0.bytes_in_use);
  gs_memory_empty_cache();
  gs_memory_stats s1 = stats_now();
  g_assert_cmpuint(s1.bytes_reserved, <, s0.bytes_reserved);

  gs_memory_set_cache_limit(0); /* nothing is kept: every allocation asks the system */
  uint64_t sys = stats_now().system_allocations;
  for (int i = 0; i < 3; i++) {
    gs_tensor x = gs_empty(GS_F32, (int64_t[]){1 << 16}, 1);
    gs_dispose(x);
  }
  g_assert_cmpuint(stats_now().system_allocations - sys, ==, 3);
  gs_memory_set_cache_limit(1ull << 30);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/storage/clone-is-copy-on-write", test_clone_is_copy_on_write);
  g_test_add_func("/storage/write-to-original-after-clone", test_write_to_original_after_clone);
  g_test_add_func("/storage/clone-of-view-keeps-geometry", test_clone_of_view_keeps_geometry);
  g_test_add_func("/storage/detach-shares-storage-and-version",
                  test_detach_shares_storage_and_version);
  g_test_add_func("/storage/every-write-bumps-version", test_every_write_bumps_version);
  g_test_add_func("/storage/data-mut-materialises", test_data_mut_materialises);
  g_test_add_func("/storage/storage-freed-with-last-user", test_storage_freed_with_last_user);
  g_test_add_func("/memory/size-classes", test_size_classes);
  g_test_add_func("/memory/cache-reuses-blocks", test_cache_reuses_blocks);
  g_test_add_func("/memory/peak-and-requested-bytes", test_peak_and_requested_bytes);
  g_test_add_func("/memory/empty-cache-and-limit", test_empty_cache_and_limit);
  return g_test_run();
}
