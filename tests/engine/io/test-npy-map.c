/* test-npy-map.c: .npy files mapped instead of read (gs_npy_load_mode): the tensor's bytes are
 * the file's pages, writes go to a private copy or to the file as asked, a 1 GiB array maps
 * without being read, and what cannot be mapped is an error naming why. */
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "test-util.h"

static char *tmpdir;

static char *tmp_path(const char *name) { return g_build_filename(tmpdir, name, NULL); }

/* The file /proc/self/maps says holds the page at p, or NULL (g_free the result). */
static char *mapping_of(const void *p) {
  char *maps = NULL;
  g_assert_true(g_file_get_contents("/proc/self/maps", &maps, NULL, NULL));
  char *found = NULL;
  for (char *line = strtok(maps, "\n"); line && !found; line = strtok(NULL, "\n")) {
    unsigned long lo, hi;
    int name_at = 0;
    if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &name_at) < 2)
      continue;
    if ((uintptr_t)p >= lo && (uintptr_t)p < hi)
      found = g_strdup(name_at ? line + name_at : "");
  }
  g_free(maps);
  return found;
}

/* Resident set size in bytes (/proc/self/statm's second field, in pages). */
static uint64_t resident_bytes(void) {
  char *statm = NULL;
  g_assert_true(g_file_get_contents("/proc/self/statm", &statm, NULL, NULL));
  unsigned long size = 0, resident = 0;
  g_assert_cmpint(sscanf(statm, "%lu %lu", &size, &resident), ==, 2);
  g_free(statm);
  return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void assert_all(gs_tensor t, double value) {
  double *v = test_values(t);
  for (int64_t i = 0; i < gs_numel(t); i++)
    g_assert_cmpfloat(v[i], ==, value);
  g_free(v);
}

static void test_private_mapping_keeps_the_file(void) {
  char *path = tmp_path("private.npy");
  gs_tensor a = gs_arange(0, 4096, 1, GS_F32);
  g_assert_cmpint(gs_npy_save(path, a), ==, 0);

  gs_tensor m = gs_npy_load_mode(path, GS_NPY_MAP_PRIVATE);
  g_assert_cmpint(gs_numel(m), ==, 4096);
  g_assert_cmpfloat(gs_get(m, (int64_t[]){4095}), ==, 4095.0);
  gs_storage_info info;
  g_assert_cmpint(gs_storage_info_of(m, &info), ==, 0);
  g_assert_cmpint(info.origin, ==, GS_MEMORY_MAPPED);
  g_assert_false(info.writes_reach_file);
  g_assert_false(info.seen_outside);
  char *real = realpath(path, NULL);
  char *where = mapping_of(gs_data(m));
  g_assert_cmpstr(where, ==, real); /* the bytes are the file's pages, not a copy */
  g_free(where);

  gs_fill_(m, -1);
  assert_all(m, -1);
  gs_tensor again = gs_npy_load(path);
  g_assert_cmpfloat(gs_get(again, (int64_t[]){7}), ==, 7.0); /* the file never changed */
  gs_dispose(again);

  /* A view keeps the mapping; the last one unmaps it. */
  gs_tensor v = gs_slice(m, 0, 10, 20, 1);
  const void *p = gs_data(m);
  gs_dispose(m);
  g_assert_cmpfloat(gs_get(v, (int64_t[]){0}), ==, -1.0);
  gs_dispose(v);
  where = mapping_of(p);
  g_assert_true(where == NULL || strcmp(where, real) != 0);
  g_free(where);
  free(real);
  gs_dispose(a);
  g_free(path);
}

static void test_shared_mapping_writes_the_file(void) {
  char *path = tmp_path("shared.npy");
  gs_tensor a = gs_zeros(GS_I64, (int64_t[]){16, 8}, 2);
  g_assert_cmpint(gs_npy_save(path, a), ==, 0);

  gs_tensor m = gs_npy_load_mode(path, GS_NPY_MAP_SHARED);
  gs_tensor other = gs_npy_load_mode(path, GS_NPY_MAP_SHARED);
  gs_storage_info info;
  gs_storage_info_of(m, &info);
  g_assert_cmpint(info.origin, ==, GS_MEMORY_MAPPED);
  g_assert_true(info.writes_reach_file);
  g_assert_true(info.seen_outside);

  gs_tensor row = gs_select(m, 0, 3);
  gs_fill_(row, 5);
  /* Another mapping of the file sees it at once, and so does a plain read of the file. */
  g_assert_cmpfloat(gs_get(other, (int64_t[]){3, 7}), ==, 5.0);
  g_assert_cmpfloat(gs_get(other, (int64_t[]){4, 0}), ==, 0.0);
  gs_tensor read = gs_npy_load(path);
  g_assert_cmpfloat(gs_get(read, (int64_t[]){3, 2}), ==, 5.0);
  gs_dispose(read);

  /* A clone copies at once (the file is seen outside), so m stays over the file. */
  gs_tensor c = gs_clone(m);
  g_assert_false(gs_is_copy_on_write(m));
  gs_fill_(m, 9);
  g_assert_cmpfloat(gs_get(other, (int64_t[]){0, 0}), ==, 9.0);
  g_assert_cmpfloat(gs_get(c, (int64_t[]){0, 0}), ==, 0.0);
  int rc = 0;
  EXPECT_ERROR(rc = gs_share_memory_(m), "whose bytes are a file mapped for writing");
  g_assert_cmpint(rc, ==, -1);
  DISPOSE_ALL(c, row, m, other);

  read = gs_npy_load(path);
  assert_all(read, 9);
  gs_dispose(read);
  gs_dispose(a);
  g_free(path);
}

static void test_clone_of_private_mapping_is_copy_on_write(void) {
  char *path = tmp_path("cow.npy");
  gs_tensor a = gs_full(GS_F64, (int64_t[]){100}, 1, 2);
  g_assert_cmpint(gs_npy_save(path, a), ==, 0);
  gs_tensor m = gs_npy_load_mode(path, GS_NPY_MAP_PRIVATE);
  gs_tensor c = gs_clone(m);
  g_assert_true(gs_is_copy_on_write(m));
  gs_fill_(c, 3);
  assert_all(m, 2);
  assert_all(c, 3);
  gs_storage_info info;
  gs_storage_info_of(c, &info);
  g_assert_cmpint(info.origin, ==, GS_MEMORY_ENGINE);
  DISPOSE_ALL(c, m, a);
  g_free(path);
}

/* A .npy header as numpy writes it for a 1-D float32 array of n elements (64-byte data). */
static void write_sparse_npy(const char *path, int64_t n) {
  char dict[128];
  int len = snprintf(dict, sizeof dict,
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (%lld,), }",
                     (long long)n);
  char head[128];
  memset(head, ' ', sizeof head);
  memcpy(head, "\x93NUMPY\x01\x00", 8);
  int total = 64 * ((10 + len + 1 + 63) / 64);
  head[8] = (char)((total - 10) & 0xff);
  head[9] = (char)((total - 10) >> 8);
  memcpy(head + 10, dict, (size_t)len);
  head[total - 1] = '\n';
  int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  g_assert_cmpint(fd, >=, 0);
  g_assert_cmpint(write(fd, head, (size_t)total), ==, total);
  g_assert_cmpint(ftruncate(fd, total + n * 4), ==, 0); /* a hole: no disk, no page cache */
  close(fd);
}

static void test_gibibyte_maps_without_reading(void) {
  char *path = tmp_path("big.npy");
  const int64_t n = (1ll << 30) / 4;
  write_sparse_npy(path, n);
  uint64_t before = resident_bytes();
  gint64 t0 = g_get_monotonic_time();
  gs_tensor m = gs_npy_load_mode(path, GS_NPY_MAP_PRIVATE);
  gint64 t1 = g_get_monotonic_time();
  g_assert_cmpint(gs_numel(m), ==, n);
  g_test_message("mapped 1 GiB in %.3f ms", (double)(t1 - t0) / 1000.0);
  /* Pages come in as they are read: a few reads bring in a few pages, not the gibibyte. */
  g_assert_cmpfloat(gs_get(m, (int64_t[]){n - 1}), ==, 0.0);
  g_assert_cmpfloat(gs_get(m, (int64_t[]){n / 2}), ==, 0.0);
  float *w = gs_data_mut(m);
  w[n / 3] = 1.5f; /* private: one page copied */
  g_assert_cmpfloat(gs_get(m, (int64_t[]){n / 3}), ==, 1.5);
  uint64_t after = resident_bytes();
  g_assert_cmpuint(after, <, before + (16u << 20));
  gs_dispose(m);
  g_remove(path);
  g_free(path);
}

static void test_what_cannot_be_mapped(void) {
  char *path = tmp_path("bad.npy");
  gs_tensor r = {1};
  EXPECT_ERROR(r = gs_npy_load_mode(path, GS_NPY_MAP_PRIVATE), "cannot open");
  EXPECT_ERROR(r = gs_npy_load_mode(path, GS_NPY_MAP_SHARED), "for writing");
  EXPECT_ERROR(r = gs_npy_load_mode(path, (gs_npy_mode)7),
               "expected mode GS_NPY_READ, GS_NPY_MAP_PRIVATE or GS_NPY_MAP_SHARED, got 7");
  g_assert_cmpuint(r.id, ==, 0);

  /* A damaged header is the same error as reading it. */
  g_assert_true(g_file_set_contents(path, "\x93NUMPY\x03\x00\x00\x00", 10, NULL));
  EXPECT_ERROR(r = gs_npy_load_mode(path, GS_NPY_MAP_PRIVATE),
               "expected format version 1.0 or 2.0, found 3.0");

  /* A bool byte the engine cannot hold: reading normalises it, mapping refuses. */
  gs_tensor b = gs_full(GS_BOOL, (int64_t[]){5}, 1, 1);
  g_assert_cmpint(gs_npy_save(path, b), ==, 0);
  gsize len;
  char *bytes;
  g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
  bytes[len - 2] = 7;
  g_assert_true(g_file_set_contents(path, bytes, (gssize)len, NULL));
  uint64_t live = gs_live_tensor_count();
  EXPECT_ERROR(r = gs_npy_load_mode(path, GS_NPY_MAP_PRIVATE),
               "expected bool bytes 0 or 1 to map");
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
  r = gs_npy_load_mode(path, GS_NPY_READ);
  g_assert_cmpfloat(gs_get(r, (int64_t[]){3}), ==, 1.0);
  gs_dispose(r);

  /* Data not aligned to the element size (a hand-made header of odd length). */
  g_free(bytes);
  gs_tensor i = gs_zeros(GS_I64, (int64_t[]){5}, 1);
  g_assert_cmpint(gs_npy_save(path, i), ==, 0);
  g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
  /* Shorten the header by 4 spaces: the data then starts at offset 124. */
  unsigned hl = (unsigned char)bytes[8] | (unsigned)(unsigned char)bytes[9] << 8;
  GString *s = g_string_new_len(bytes, 10 + hl - 5);
  g_string_append_c(s, '\n');
  g_string_append_len(s, bytes + 10 + hl, (gssize)(len - 10 - hl));
  s->str[8] = (char)((hl - 4) & 0xff);
  s->str[9] = (char)((hl - 4) >> 8);
  g_assert_true(g_file_set_contents(path, s->str, (gssize)s->len, NULL));
  EXPECT_ERROR(r = gs_npy_load_mode(path, GS_NPY_MAP_PRIVATE),
               "expected the data at an offset aligned to 8 bytes to map it, found offset 124");
  r = gs_npy_load(path);
  g_assert_cmpint(gs_numel(r), ==, 5);
  gs_dispose(r);
  g_string_free(s, TRUE);
  g_free(bytes);
  gs_dispose(i);
  gs_dispose(b);
  g_free(path);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  tmpdir = g_dir_make_tmp("gs-npy-map-XXXXXX", NULL);
  g_test_add_func("/npy-map/private-mapping-keeps-the-file",
                  test_private_mapping_keeps_the_file);
  g_test_add_func("/npy-map/shared-mapping-writes-the-file",
                  test_shared_mapping_writes_the_file);
  g_test_add_func("/npy-map/clone-of-private-mapping-is-copy-on-write",
                  test_clone_of_private_mapping_is_copy_on_write);
  g_test_add_func("/npy-map/gibibyte-maps-without-reading", test_gibibyte_maps_without_reading);
  g_test_add_func("/npy-map/what-cannot-be-mapped", test_what_cannot_be_mapped);
  int rc = g_test_run();
  char *cmd = g_strdup_printf("rm -rf '%s'", tmpdir);
  (void)!system(cmd);
  g_free(cmd);
  g_free(tmpdir);
  return rc;
}
