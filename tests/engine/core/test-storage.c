/* test-storage.c: storages and the caching allocator: copy-on-write clones at storage level,
 * detach sharing storage and version, wrapped external memory, allocator reuse and counters. */
#include <inttypes.h>

#include "test-util.h"

static void test_clone_is_copy_on_write(void) {
  gs_tensor a = gs_arange(0, 6, 1, GS_F32);
  gs_memory_stats s0, s1;
  gs_memory_get_stats(&s0);
  gs_tensor c = gs_clone(a);
  gs_memory_get_stats(&s1);
  /* O(1): no bytes were allocated or copied. */
  g_assert_cmpuint(s1.allocations, ==, s0.allocations);
  g_assert_cmpuint(s1.bytes_in_use, ==, s0.bytes_in_use);
  g_assert_true(gs_is_copy_on_write(a));
  g_assert_true(gs_is_copy_on_write(c));
  g_assert_cmpuint(gs_storage_id(a), !=, gs_storage_id(c));
  g_assert_true(gs_data(a) == gs_data(c));

  /* The first write to the clone materialises it: one buffer allocated, the original kept. */
  gs_fill_(c, 9.0);
  gs_memory_get_stats(&s1);
  g_assert_cmpuint(s1.allocations, ==, s0.allocations + 1);
  g_assert_false(gs_is_copy_on_write(a));
  g_assert_false(gs_is_copy_on_write(c));
  g_assert_true(gs_data(a) != gs_data(c));
  double expect_a[6] = {0, 1, 2, 3, 4, 5}, expect_c[6] = {9, 9, 9, 9, 9, 9};
  test_assert_values(a, (int64_t[]){6}, 1, expect_a, 0, 0);
  test_assert_values(c, (int64_t[]){6}, 1, expect_c, 0, 0);
  g_assert_cmpint(gs_version(a), ==, 0);
  g_assert_cmpint(gs_version(c), ==, 1);
  gs_dispose(a);
  gs_dispose(c);
}

static void test_write_to_original_leaves_clone_unchanged(void) {
  gs_tensor a = gs_arange(0, 4, 1, GS_F64);
  gs_tensor view = gs_slice(a, 0, 1, 3, 1);
  gs_tensor c = gs_clone(a);
  /* Writing through a view of the original materialises the original's storage; the view
   * keeps seeing the original (it shares the storage, not the bytes). */
  gs_fill_(view, -1.0);
  double expect_a[4] = {0, -1, -1, 3}, expect_c[4] = {0, 1, 2, 3};
  test_assert_values(a, (int64_t[]){4}, 1, expect_a, 0, 0);
  test_assert_values(c, (int64_t[]){4}, 1, expect_c, 0, 0);
  g_assert_cmpint(gs_version(a), ==, 1);
  g_assert_cmpint(gs_version(view), ==, 1);
  g_assert_cmpint(gs_version(c), ==, 0);
  DISPOSE_ALL(view, a, c);
}

static void test_clone_outlives_original(void) {
  gs_tensor a = gs_full(GS_I64, (int64_t[]){3}, 1, 5);
  gs_tensor c = gs_clone(a);
  gs_dispose(a);
  g_assert_false(gs_is_copy_on_write(c)); /* the only user of the bytes now */
  gs_add_scalar_(c, 1);
  double expect[3] = {6, 6, 6};
  test_assert_values(c, (int64_t[]){3}, 1, expect, 0, 0);
  gs_dispose(c);
}

static void test_clone_of_transposed_view_keeps_layout(void) {
  int64_t shape[2] = {2, 3};
  gs_tensor flat = gs_arange(0, 6, 1, GS_F32);
  gs_tensor a = gs_reshape(flat, shape, 2);
  gs_dispose(flat);
  gs_tensor t = gs_t(a);
  gs_tensor c = gs_clone(t);
  g_assert_cmpint(gs_stride(c, 0), ==, 1);
  g_assert_cmpint(gs_stride(c, 1), ==, 3);
  gs_fill_(t, 0.0);
  double expect[6] = {0, 3, 1, 4, 2, 5};
  test_assert_values(c, (int64_t[]){3, 2}, 2, expect, 0, 0);
  DISPOSE_ALL(t, c, a);
}

static void test_detach_shares_storage_and_version(void) {
  gs_tensor a = gs_zeros(GS_F32, (int64_t[]){3}, 1);
  gs_tensor d = gs_detach(a);
  g_assert_cmpuint(gs_storage_id(a), ==, gs_storage_id(d));
  g_assert_false(gs_is_copy_on_write(d));
  gs_add_scalar_(d, 2.0);
  g_assert_cmpint(gs_version(a), ==, 1);
  double expect[3] = {2, 2, 2};
  test_assert_values(a, (int64_t[]){3}, 1, expect, 0, 0);
  gs_dispose(a);
  gs_dispose(d);
}

static int releases;
static void count_release(void *data, void *user_data) {
  g_assert_true(data == user_data);
  releases++;
}

static void test_from_blob_wraps_without_copy(void) {
  float data[6] = {1, 2, 3, 4, 5, 6};
  releases = 0;
  gs_memory_stats s0, s1;
  gs_memory_get_stats(&s0);
  gs_tensor t = gs_from_blob(GS_F32, (int64_t[]){2, 3}, 2, NULL, data, count_release, data);
  gs_memory_get_stats(&s1);
  g_assert_cmpuint(s1.bytes_in_use, ==, s0.bytes_in_use);
  g_assert_cmpuint(s1.live_storages, ==, s0.live_storages + 1);
  g_assert_true(gs_data(t) == data);
  gs_tensor col = gs_select(t, 1, 1);
  gs_fill_(col, 0.0);
  g_assert_cmpfloat(data[1], ==, 0.0);
  g_assert_cmpfloat(data[4], ==, 0.0);
  gs_dispose(t);
  g_assert_cmpint(releases, ==, 0); /* the view still uses the memory */
  gs_dispose(col);
  g_assert_cmpint(releases, ==, 1);
  gs_memory_get_stats(&s1);
  g_assert_cmpuint(s1.live_storages, ==, s0.live_storages);

  /* Strided wrap: every other element of the array. */
  gs_tensor strided = gs_from_blob(GS_F32, (int64_t[]){3}, 1, (int64_t[]){2}, data, NULL, NULL);
  double expect[3] = {1, 3, 0}; /* data[4] was zeroed through the column view */
  test_assert_values(strided, (int64_t[]){3}, 1, expect, 0, 0);
  gs_dispose(strided);
  EXPECT_ERROR(gs_from_blob(GS_F32, (int64_t[]){3}, 1, NULL, NULL, NULL, NULL),
               "from_blob: expected memory to wrap, got NULL");
}

static void test_allocator_reuses_blocks(void) {
  gs_memory_stats s0, s1, s2;
  gs_tensor warm = gs_empty(GS_F32, (int64_t[]){1000}, 1);
  gs_dispose(warm);
  gs_memory_get_stats(&s0);
  for (int i = 0; i < 100; i++) {
    gs_tensor t = gs_empty(GS_F32, (int64_t[]){1000}, 1);
    gs_dispose(t);
  }
  gs_memory_get_stats(&s1);
  g_assert_cmpuint(s1.allocations, ==, s0.allocations + 100);
  g_assert_cmpuint(s1.cache_hits, ==, s0.cache_hits + 100);
  g_assert_cmpuint(s1.system_allocations, ==, s0.system_allocations);
  g_assert_cmpuint(s1.bytes_in_use, ==, s0.bytes_in_use);
  g_assert_cmpuint(s1.bytes_reserved, ==, s0.bytes_reserved);

  gs_memory_reset_peak();
  gs_tensor big = gs_empty(GS_F64, (int64_t[]){100000}, 1);
  gs_memory_get_stats(&s2);
  g_assert_cmpuint(s2.bytes_in_use, >=, s1.bytes_in_use + 800000);
  g_assert_cmpuint(s2.peak_bytes_in_use, ==, s2.bytes_in_use);
  g_assert_cmpuint(s2.bytes_requested, ==, s1.bytes_requested + 800000);
  gs_dispose(big);
  gs_memory_get_stats(&s2);
  g_assert_cmpuint(s2.bytes_in_use, ==, s1.bytes_in_use);
  g_assert_cmpuint(s2.peak_bytes_in_use, >=, s1.bytes_in_use + 800000);
  g_assert_cmpuint(s2.bytes_reserved, >, s2.bytes_in_use); /* the block is cached */

  gs_memory_empty_cache();
  gs_memory_get_stats(&s2);
  g_assert_cmpuint(s2.bytes_reserved, <, s1.bytes_reserved + 800000);
}

/* Blocks of 64 KiB to 1 MiB are cut from shared 2 MiB chunks (allocator.c): many alive at
 * once never overlap, keep their values, and a chunk stays mapped while any block cut from it
 * lives, even when the others went back to the system. */
static void test_large_blocks_share_chunks(void) {
  enum { COUNT = 12 };
  const int64_t sizes[] = {16384, 20000, 50000, 100000, 180000, 200000}; /* floats */
  gs_memory_empty_cache();
  gs_memory_stats s0, s1;
  gs_memory_get_stats(&s0);
  gs_tensor t[COUNT];
  for (int i = 0; i < COUNT; i++) {
    t[i] = gs_empty(GS_F32, &sizes[i % 6], 1);
    gs_fill_(t[i], i + 1);
  }
  for (int i = 0; i < COUNT; i++) {
    const float *v = gs_data(t[i]);
    g_assert_cmpuint((uintptr_t)v % 64, ==, 0);
    for (int64_t e = 0; e < sizes[i % 6]; e++)
      if (v[e] != (float)(i + 1))
        g_error("block %d: element %" PRId64 " is %g, expected %d", i, e, (double)v[e], i + 1);
    for (int j = 0; j < i; j++) { /* disjoint from every block before it */
      const char *a = (const char *)v, *b = gs_data(t[j]);
      size_t na = (size_t)sizes[i % 6] * 4, nb = (size_t)sizes[j % 6] * 4;
      g_assert_true(a + na <= b || b + nb <= a);
    }
  }
  /* Every other block back to the system; the rest still hold their values. */
  for (int i = 0; i < COUNT; i += 2)
    gs_dispose(t[i]);
  gs_memory_empty_cache();
  for (int i = 1; i < COUNT; i += 2) {
    const float *v = gs_data(t[i]);
    for (int64_t e = 0; e < sizes[i % 6]; e++)
      g_assert_cmpfloat(v[e], ==, (float)(i + 1));
    gs_dispose(t[i]);
  }
  gs_memory_empty_cache();
  gs_memory_get_stats(&s1);
  g_assert_cmpuint(s1.bytes_reserved, ==, s0.bytes_reserved);
  /* and chunks are mapped again afterwards */
  gs_tensor again = gs_full(GS_F32, &sizes[5], 1, 7.0);
  g_assert_cmpfloat(((const float *)gs_data(again))[sizes[5] - 1], ==, 7.0f);
  gs_dispose(again);
}

static void test_cache_limit_returns_blocks(void) {
  gs_memory_stats s0, s1;
  gs_memory_empty_cache();
  gs_memory_set_cache_limit(0);
  gs_memory_get_stats(&s0);
  gs_tensor t = gs_empty(GS_F32, (int64_t[]){4096}, 1);
  gs_dispose(t);
  gs_memory_get_stats(&s1);
  g_assert_cmpuint(s1.bytes_reserved, ==, s0.bytes_reserved); /* nothing kept */
  gs_memory_set_cache_limit(1ull << 30);
}

static void test_size_classes(void) {
  g_assert_cmpuint(gs_memory_size_class(0), ==, 64);
  g_assert_cmpuint(gs_memory_size_class(1), ==, 64);
  g_assert_cmpuint(gs_memory_size_class(65), ==, 128);
  g_assert_cmpuint(gs_memory_size_class(4096), ==, 4096);
  g_assert_cmpuint(gs_memory_size_class(4097), ==, 5120);
  g_assert_cmpuint(gs_memory_size_class(8192), ==, 8192);
  g_assert_cmpuint(gs_memory_size_class(8193), ==, 10240);
  /* Never more than 25% rounding above 4 KiB. */
  for (uint64_t n = 4097; n < (1u << 26); n = n * 3 / 2 + 7)
    g_assert_cmpuint(gs_memory_size_class(n) * 4, <=, n * 5 + 4);
}

static void test_data_mut_materialises_and_bumps_version(void) {
  gs_tensor a = gs_ones(GS_F32, (int64_t[]){2}, 1);
  gs_tensor c = gs_clone(a);
  float *p = gs_data_mut(c);
  p[0] = 7.0f;
  g_assert_cmpint(gs_version(c), ==, 1);
  g_assert_cmpfloat(gs_get(a, (int64_t[]){0}), ==, 1.0);
  g_assert_cmpfloat(gs_get(c, (int64_t[]){0}), ==, 7.0);
  gs_dispose(a);
  gs_dispose(c);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/storage/clone-is-copy-on-write", test_clone_is_copy_on_write);
  g_test_add_func("/storage/write-to-original-leaves-clone-unchanged",
                  test_write_to_original_leaves_clone_unchanged);
  g_test_add_func("/storage/clone-outlives-original", test_clone_outlives_original);
  g_test_add_func("/storage/clone-of-transposed-view-keeps-layout",
                  test_clone_of_transposed_view_keeps_layout);
  g_test_add_func("/storage/detach-shares-storage-and-version",
                  test_detach_shares_storage_and_version);
  g_test_add_func("/storage/from-blob-wraps-without-copy", test_from_blob_wraps_without_copy);
  g_test_add_func("/storage/allocator-reuses-blocks", test_allocator_reuses_blocks);
  g_test_add_func("/storage/cache-limit-returns-blocks", test_cache_limit_returns_blocks);
  g_test_add_func("/storage/large-blocks-share-chunks", test_large_blocks_share_chunks);
  g_test_add_func("/storage/size-classes", test_size_classes);
  g_test_add_func("/storage/data-mut-materialises-and-bumps-version",
                  test_data_mut_materialises_and_bumps_version);
  return g_test_run();
}
