/* test-checkpoint.c: safetensors and .npy files: round trips in every dtype and layout, exact
 * bytes of small known files, and rejection of damaged files with clear messages. */
#include <glib/gstdio.h>

#include "test-util.h"

static char *tmpdir;

static char *tmp_path(const char *name) { return g_build_filename(tmpdir, name, NULL); }

static void write_bytes(const char *path, const void *data, size_t len) {
  GError *err = NULL;
  g_assert_true(g_file_set_contents(path, data, (gssize)len, &err));
}

/* A safetensors file from a header JSON (unpadded) and data bytes. */
static void write_st(const char *path, const char *json, const void *data, size_t data_len) {
  size_t n = strlen(json);
  GByteArray *b = g_byte_array_new();
  for (int i = 0; i < 8; i++) {
    guint8 c = (guint8)((guint64)n >> (8 * i));
    g_byte_array_append(b, &c, 1);
  }
  g_byte_array_append(b, (const guint8 *)json, (guint)n);
  if (data_len)
    g_byte_array_append(b, data, (guint)data_len);
  write_bytes(path, b->data, b->len);
  g_byte_array_free(b, TRUE);
}

static void assert_same_tensor(gs_tensor a, gs_tensor b) {
  g_assert_cmpint(gs_dtype_of(a), ==, gs_dtype_of(b));
  int64_t shape[GS_MAX_DIMS];
  int ndim = gs_shape(a, shape);
  double *va = test_values(a);
  test_assert_values(b, shape, ndim, va, 0, 0);
  g_free(va);
}

static void test_round_trip(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 7);
  char *path = tmp_path("rt.safetensors");
  const gs_dtype dtypes[] = {GS_F32, GS_F64, GS_I64, GS_BOOL, GS_I32, GS_U8, GS_I8, GS_I16};
  gs_tensor ts[64];
  char names_buf[64][32];
  const char *names[64];
  int count = 0;
  for (int d = 0; d < GS_DTYPE_COUNT; d++) {
    for (test_layout l = LAYOUT_CONTIGUOUS; l < LAYOUT_COUNT; l++) {
      ts[count] = test_make(dtypes[d], (int64_t[]){3, 4}, 2, l, -5, 5, &rng);
      snprintf(names_buf[count], 32, "%s.%s", gs_dtype_name(dtypes[d]), test_layout_name(l));
      names[count] = names_buf[count];
      count++;
    }
  }
  ts[count] = gs_scalar(GS_F64, 3.25);
  names[count++] = "scalar";
  ts[count] = gs_zeros(GS_F32, (int64_t[]){0, 3}, 2);
  names[count++] = "empty";
  ts[count] = gs_arange(0, 5, 1, GS_I64);
  names[count++] = "name with \"quotes\", \\back\\slash, tab\t, caf\xc3\xa9 \xf0\x9f\x98\x80";
  const char *meta[] = {"format", "pt", "note", "a \"quoted\" value\n", NULL};
  g_assert_cmpint(gs_safetensors_save(path, names, ts, count, meta), ==, 0);

  g_assert_cmpint(gs_safetensors_load(path, NULL, NULL, 0), ==, count);
  char *lnames[64];
  gs_tensor lts[64];
  g_assert_cmpint(gs_safetensors_load(path, lnames, lts, 64), ==, count);
  for (int i = 0; i < count; i++) {
    test_set_context("tensor %s", names[i]);
    g_assert_cmpstr(lnames[i], ==, names[i]);
    g_assert_true(gs_is_contiguous(lts[i]));
    assert_same_tensor(ts[i], lts[i]);
    free(lnames[i]);
    gs_dispose(lts[i]);
  }
  /* max smaller than the count: only the first max are created. */
  g_assert_cmpint(gs_safetensors_load(path, lnames, lts, 2), ==, count);
  g_assert_cmpstr(lnames[0], ==, names[0]);
  g_assert_cmpstr(lnames[1], ==, names[1]);
  for (int i = 0; i < 2; i++) {
    free(lnames[i]);
    gs_dispose(lts[i]);
  }
  /* The header is padded with spaces to a multiple of 8 and holds the metadata escaped. */
  gchar *bytes;
  gsize len;
  g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
  guint64 n = 0;
  for (int i = 7; i >= 0; i--)
    n = (n << 8) | (guint8)bytes[i];
  g_assert_cmpuint(n % 8, ==, 0);
  gchar *json = g_strndup(bytes + 8, n);
  g_assert_nonnull(strstr(json, "\"__metadata__\":{\"format\":\"pt\",\"note\":\"a \\\"quoted\\\" value\\n\"}"));
  g_assert_nonnull(strstr(json, "\"i32.contiguous\":{\"dtype\":\"I32\",\"shape\":[3,4]"));
  g_assert_nonnull(strstr(json, "\"name with \\\"quotes\\\", \\\\back\\\\slash, tab\\t, caf\xc3\xa9"));
  g_free(json);
  g_free(bytes);
  for (int i = 0; i < count; i++)
    gs_dispose(ts[i]);
  g_free(path);
}

/* One F32 tensor "a" [2] = {1, 2}: the bytes exactly as the specification lays them out. */
static void test_known_bytes(void) {
  const char json[] = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}  ";
  g_assert_cmpuint(sizeof json - 1, ==, 56);
  guint8 expected[8 + 56 + 8] = {56, 0, 0, 0, 0, 0, 0, 0};
  memcpy(expected + 8, json, 56);
  const guint8 data[8] = {0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40};
  memcpy(expected + 64, data, 8);

  char *path = tmp_path("known.safetensors");
  gs_tensor a = gs_from_data(GS_F32, (int64_t[]){2}, 1, (float[]){1, 2});
  g_assert_cmpint(gs_safetensors_save(path, (const char *[]){"a"}, &a, 1, NULL), ==, 0);
  gchar *bytes;
  gsize len;
  g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
  g_assert_cmpmem(bytes, len, expected, sizeof expected);
  g_free(bytes);
  gs_dispose(a);

  /* A hand-written file in another layout (metadata last, spaces, escapes) loads too. */
  write_st(path, "{ \"\\u00e9\\ud83d\\ude00\\\"x\" : {\"shape\": [], \"dtype\": \"I64\", "
                 "\"data_offsets\": [0, 8]}, \"__metadata__\": {\"k\": \"v\"} }",
           (const guint8[]){42, 0, 0, 0, 0, 0, 0, 0}, 8);
  char *name;
  gs_tensor t;
  g_assert_cmpint(gs_safetensors_load(path, &name, &t, 1), ==, 1);
  g_assert_cmpstr(name, ==, "\xc3\xa9\xf0\x9f\x98\x80\"x");
  g_assert_cmpint(gs_ndim(t), ==, 0);
  g_assert_cmpfloat(gs_item(t), ==, 42);
  free(name);
  gs_dispose(t);
  /* An empty file: no tensors. */
  write_st(path, "{}", NULL, 0);
  g_assert_cmpint(gs_safetensors_load(path, NULL, NULL, 0), ==, 0);
  g_free(path);
}

static void expect_load_error(const char *path, const char *substring) {
  int rc = 0;
  uint64_t live = gs_live_tensor_count();
  char *names[4] = {NULL};
  gs_tensor ts[4] = {GS_NO_TENSOR};
  EXPECT_ERROR(rc = gs_safetensors_load(path, names, ts, 4), substring);
  g_assert_cmpint(rc, ==, -1);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
  for (int i = 0; i < 4; i++) {
    g_assert_null(names[i]);
    g_assert_cmpuint(ts[i].id, ==, 0);
  }
  /* Reading only the metadata checks the whole file just as strictly (its messages start
   * with its own name). */
  char *keys[2] = {NULL}, *values[2] = {NULL};
  const char *prefix = "safetensors_load: ";
  if (g_str_has_prefix(substring, prefix))
    substring += strlen(prefix);
  EXPECT_ERROR(rc = gs_safetensors_load_metadata(path, keys, values, 2), substring);
  g_assert_cmpint(rc, ==, -1);
  g_assert_null(keys[0]);
  g_assert_null(values[0]);
}

/* A model's parameters to a file and into a second model made differently: equal after; the
 * load refuses missing keys, unexpected keys and size mismatches, changing nothing then. */
static void test_module_state_dict(void) {
  char *path = tmp_path("model.safetensors");
  gs_rng a_rng, b_rng;
  gs_rng_seed(&a_rng, 1), gs_rng_seed(&b_rng, 2);
  gs_module a = gs_sequential_new(
      (gs_module[]){gs_linear_new(4, 3, true, &a_rng), gs_tanh_new(), gs_layer_norm_new(3, 1e-5)}, 3);
  gs_module b = gs_sequential_new(
      (gs_module[]){gs_linear_new(4, 3, true, &b_rng), gs_tanh_new(), gs_layer_norm_new(3, 1e-5)}, 3);
  g_assert_cmpint(gs_module_save_safetensors(a, path, (const char *[]){"format", "pt", NULL}), ==, 0);
  char *names[8];
  gs_tensor ts[8];
  g_assert_cmpint(gs_safetensors_load(path, names, ts, 8), ==, 4);
  g_assert_cmpstr(names[0], ==, "0.weight");
  g_assert_cmpstr(names[3], ==, "2.bias");
  for (int i = 0; i < 4; i++)
    free(names[i]), gs_dispose(ts[i]);
  gs_tensor b_weight = gs_module_parameter(b, "0.weight");
  g_assert_cmpint(gs_module_load_safetensors(b, path, true), ==, 0);
  gs_tensor pa[4], pb[4];
  gs_module_named_parameters(a, pa, NULL, 4);
  gs_module_named_parameters(b, pb, NULL, 4);
  for (int i = 0; i < 4; i++) {
    int64_t shape[GS_MAX_DIMS];
    int nd = gs_shape(pa[i], shape);
    double *want = test_values(pa[i]);
    test_assert_values(pb[i], shape, nd, want, 0, 0);
    g_free(want);
  }
  g_assert_cmpuint(gs_module_parameter(b, "0.weight").id, ==, b_weight.id); /* in place */

  /* A one-layer model's file lacks the "2.*" tensors of the others; a model whose Linear has
   * another shape cannot take it. */
  gs_module c = gs_sequential_new((gs_module[]){gs_linear_new(4, 3, true, &b_rng)}, 1);
  char *small = tmp_path("small.safetensors");
  g_assert_cmpint(gs_module_save_safetensors(c, small, NULL), ==, 0);
  double *before = test_values(gs_module_parameter(a, "0.weight"));
  int rc = 0;
  EXPECT_ERROR(rc = gs_module_load_safetensors(a, small, true),
               "holds no tensor \"2.weight\" (a parameter of module Sequential): missing key");
  g_assert_cmpint(rc, ==, -1);
  test_assert_values(gs_module_parameter(a, "0.weight"), (int64_t[]){3, 4}, 2, before, 0, 0);
  g_assert_cmpint(gs_module_load_safetensors(a, small, false), ==, 0); /* non-strict: 0.* only */
  double *from_c = test_values(gs_module_parameter(c, "0.weight"));
  test_assert_values(gs_module_parameter(a, "0.weight"), (int64_t[]){3, 4}, 2, from_c, 0, 0);
  EXPECT_ERROR(rc = gs_module_load_safetensors(c, path, true),
               "holds \"2.weight\", which is not a parameter of module Sequential: unexpected key");
  g_assert_cmpint(gs_module_load_safetensors(c, path, false), ==, 0);
  gs_module d = gs_sequential_new((gs_module[]){gs_linear_new(5, 3, true, &b_rng)}, 1);
  EXPECT_ERROR(rc = gs_module_load_safetensors(d, small, false),
               "size mismatch for \"0.weight\": expected [3, 5] (the parameter), found [3, 4]");
  EXPECT_ERROR(rc = gs_module_load_safetensors(d, "/nonexistent/x.safetensors", false),
               "cannot open");
  g_free(before), g_free(from_c);
  gs_module_dispose(a), gs_module_dispose(b), gs_module_dispose(c), gs_module_dispose(d);
  unlink(path), unlink(small);
  g_free(path), g_free(small);
}

static void test_metadata_round_trip(void) {
  char *path = tmp_path("meta.safetensors");
  gs_tensor x = gs_ones(GS_F32, (int64_t[]){3}, 1);
  const char *meta[] = {"format", "pt", "note", "a \"quoted\" value\n\t caf\xc3\xa9",
                        "", "empty key", "epoch", "", NULL};
  g_assert_cmpint(gs_safetensors_save(path, (const char *[]){"x"}, &x, 1, meta), ==, 0);
  g_assert_cmpint(gs_safetensors_load_metadata(path, NULL, NULL, 0), ==, 4);
  char *keys[8], *values[8];
  g_assert_cmpint(gs_safetensors_load_metadata(path, keys, values, 8), ==, 4);
  for (int i = 0; i < 4; i++) {
    g_assert_cmpstr(keys[i], ==, meta[2 * i]);
    g_assert_cmpstr(values[i], ==, meta[2 * i + 1]);
    free(keys[i]), free(values[i]);
  }
  /* A short buffer gets the first pairs; the count is still the total. */
  g_assert_cmpint(gs_safetensors_load_metadata(path, keys, values, 1), ==, 4);
  g_assert_cmpstr(keys[0], ==, "format");
  free(keys[0]), free(values[0]);
  /* No metadata, or an empty map: zero pairs. */
  g_assert_cmpint(gs_safetensors_save(path, (const char *[]){"x"}, &x, 1, NULL), ==, 0);
  g_assert_cmpint(gs_safetensors_load_metadata(path, keys, values, 8), ==, 0);
  write_st(path, "{\"__metadata__\":{}}", NULL, 0);
  g_assert_cmpint(gs_safetensors_load_metadata(path, keys, values, 8), ==, 0);
  /* Written by hand, as Python's safetensors lays it out (metadata first). */
  write_st(path, "{\"__metadata__\":{\"format\":\"np\"},\"a\":{\"dtype\":\"F32\",\"shape\":[2],"
                 "\"data_offsets\":[0,8]}}", (const guint8[8]){0}, 8);
  g_assert_cmpint(gs_safetensors_load_metadata(path, keys, values, 8), ==, 1);
  g_assert_cmpstr(keys[0], ==, "format");
  g_assert_cmpstr(values[0], ==, "np");
  free(keys[0]), free(values[0]);
  int rc = 0;
  EXPECT_ERROR(rc = gs_safetensors_load_metadata(path, NULL, NULL, -1), "expected max >= 0");
  EXPECT_ERROR(rc = gs_safetensors_load_metadata(path, NULL, NULL, 1), "keys and values");
  EXPECT_ERROR(rc = gs_safetensors_load_metadata(NULL, NULL, NULL, 0), "expected a path, got NULL");
  g_assert_cmpint(rc, ==, -1);
  gs_dispose(x);
  unlink(path);
  g_free(path);
}

static void test_damaged(void) {
  char *good = tmp_path("good.safetensors");
  char *bad = tmp_path("bad.safetensors");
  gs_tensor ts[2] = {gs_arange(0, 6, 1, GS_F32), gs_ones(GS_I64, (int64_t[]){2, 2}, 2)};
  g_assert_cmpint(gs_safetensors_save(good, (const char *[]){"x", "y"}, ts, 2, NULL), ==, 0);
  gs_dispose(ts[0]);
  gs_dispose(ts[1]);
  gchar *bytes;
  gsize len;
  g_assert_true(g_file_get_contents(good, &bytes, &len, NULL));
  guint64 n = (guint8)bytes[0];

  /* Truncated at several points. */
  write_bytes(bad, bytes, 0);
  expect_load_error(bad, "safetensors_load: expected an 8-byte header length, found a file of 0 bytes");
  write_bytes(bad, bytes, 5);
  expect_load_error(bad, "expected an 8-byte header length, found a file of 5 bytes");
  write_bytes(bad, bytes, 8 + 10);
  expect_load_error(bad, "found only 10 bytes after the header length");
  write_bytes(bad, bytes, 8 + n + 4);
  expect_load_error(bad, "expected data_offsets within the 4 data bytes");
  write_bytes(bad, bytes, len - 1);
  expect_load_error(bad, "tensor \"y\": expected data_offsets within the");
  /* Trailing bytes. */
  gchar *longer = g_malloc(len + 3);
  memcpy(longer, bytes, len);
  memset(longer + len, 0, 3);
  write_bytes(bad, longer, len + 3);
  expect_load_error(bad, "expected 56 data bytes after the header (the tensors' data_offsets), found 59");
  g_free(longer);
  /* Bad header length. */
  gchar *copy = g_memdup2(bytes, len);
  copy[7] = 0x10;
  write_bytes(bad, copy, len);
  expect_load_error(bad, "expected a header length of at most 100000000 bytes, found 1152921504606847");
  memcpy(copy, bytes, len);
  copy[0] = (char)(n - 3); /* the header ends inside the JSON */
  write_bytes(bad, copy, len);
  expect_load_error(bad, "header JSON at byte");
  g_free(copy);
  g_free(bytes);

  /* Bad JSON. */
  const guint8 d8[8] = {0};
  write_st(bad, "[1]", d8, 0);
  expect_load_error(bad, "header JSON at byte 8: expected '{' starting the header, found '['");
  write_st(bad, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],}}", d8, 8);
  expect_load_error(bad, "expected a key (\"dtype\", \"shape\" or \"data_offsets\"), found '}'");
  write_st(bad, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2.5],\"data_offsets\":[0,8]}}", d8, 8);
  expect_load_error(bad, "header JSON at byte 38: expected an integer (no fraction or exponent), found '.'");
  write_st(bad, "{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", d8, 8);
  expect_load_error(bad, "expected a non-negative integer, found '-'");
  write_st(bad, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}} x", d8, 8);
  expect_load_error(bad, "expected only spaces after the header object, found 'x'");
  write_st(bad, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]", d8, 8);
  expect_load_error(bad, "expected ',' or '}' in a tensor entry, found the end of the header");
  write_st(bad, "{\"a\\q\":{}}", d8, 8);
  expect_load_error(bad, "expected an escape");
  write_st(bad, "{\"\\ud800x\":{}}", d8, 8);
  expect_load_error(bad, "expected \\u and a low surrogate after a high surrogate");
  write_st(bad, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", d8, 8);
  expect_load_error(bad, "expected \"data_offsets\" in the tensor entry before '}'");
  write_st(bad, "{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\"}}", d8, 8);
  expect_load_error(bad, "expected each of \"dtype\", \"shape\", \"data_offsets\" once");
  write_st(bad, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", d8, 8);
  expect_load_error(bad, "expected unique tensor names");
  write_st(bad, "{\"__metadata__\":{\"k\":1}}", d8, 0);
  expect_load_error(bad, "expected a string value in __metadata__ (values must be strings), found '1'");
  write_st(bad, "{\"__metadata__\":{\"k\":\"v\",\"k\":\"w\"}}", d8, 0);
  expect_load_error(bad, "header JSON at byte 33: expected unique keys in __metadata__, found '\"'");
  write_st(bad, "{\"__metadata__\":[\"k\"]}", d8, 0);
  expect_load_error(bad, "expected '{' starting __metadata__, found '['");
  write_st(bad, "{\"__metadata__\":{\"k\":\"v\"},\"__metadata__\":{}}", d8, 0);
  expect_load_error(bad, "expected one \"__metadata__\"");
  write_st(bad, "{\"__metadata__\":{\"k\":\"v\" \"j\":\"w\"}}", d8, 0);
  expect_load_error(bad, "expected ',' or '}' in __metadata__, found '\"'");
  write_st(bad, "{\"__metadata__\":{\"k\":\"v\\x\"}}", d8, 0);
  expect_load_error(bad, "expected an escape");
  write_st(bad, "{\"a\":{\"dtype\":\"F32\",\"shape\":[99999999999999999999],\"data_offsets\":[0,8]}}", d8, 8);
  expect_load_error(bad, "expected an integer below 2^63");

  /* Dtype and shape mismatches. */
  write_st(bad, "{\"a\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[0,8]}}", d8, 8);
  expect_load_error(
      bad,
      "expected dtype F32, F64, I64, BOOL, I32, U8, I8 or I16 for tensor \"a\", found \"F16\"");
  write_st(bad, "{\"a\":{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[0,8]}}", d8, 8);
  expect_load_error(bad, "tensor \"a\": expected 16 bytes for F64 [2], found data_offsets [0, 8] (8 bytes)");
  write_st(bad, "{\"a\":{\"dtype\":\"F64\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}}", d8, 8);
  expect_load_error(bad, "tensor \"a\": expected a shape whose byte size fits in 64 bits, found [4294967296, 4294967296]");
  /* Offsets out of range, reversed, overlapping, with holes. */
  write_st(bad, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", d8, 8);
  expect_load_error(bad, "tensor \"a\": expected data_offsets within the 8 data bytes, found [8, 16]");
  write_st(bad, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", d8, 8);
  expect_load_error(bad, "expected data_offsets [begin, end] with begin <= end, found [8, 0]");
  write_st(bad, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", d8, 8);
  expect_load_error(bad, "tensor \"b\": expected data to start at offset 8 (it overlaps the previous tensor), found data_offsets [4, 8]");
  write_st(bad, "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", d8, 8);
  expect_load_error(bad, "tensor \"a\": expected data to start at offset 0 (there is a hole before it)");
  write_st(bad, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", d8, 8);
  expect_load_error(bad, "expected data_offsets with two integers [begin, end]");

  /* Missing file; bad save arguments create nothing. */
  expect_load_error("/nonexistent/dir/x.safetensors", "safetensors_load: cannot open");
  int rc = 0;
  gs_tensor x = gs_ones(GS_F32, (int64_t[]){2}, 1);
  char *p2 = tmp_path("never.safetensors");
  EXPECT_ERROR(rc = gs_safetensors_save(p2, (const char *[]){"x", "x"}, (gs_tensor[]){x, x}, 2, NULL),
               "safetensors_save: expected unique names, got \"x\" twice");
  g_assert_cmpint(rc, ==, -1);
  EXPECT_ERROR(rc = gs_safetensors_save(p2, (const char *[]){"__metadata__"}, &x, 1, NULL),
               "expected a non-empty name other than \"__metadata__\"");
  EXPECT_ERROR(rc = gs_safetensors_save(p2, (const char *[]){"x"}, &x, 1, (const char *[]){"k", NULL}),
               "expected a value for metadata key \"k\"");
  g_assert_false(g_file_test(p2, G_FILE_TEST_EXISTS));
  gs_dispose(x);
  EXPECT_ERROR(rc = gs_safetensors_save(p2, (const char *[]){"x"}, &x, 1, NULL), "safetensors_save");
  g_assert_false(g_file_test(p2, G_FILE_TEST_EXISTS));
  g_free(p2);
  g_free(good);
  g_free(bad);
}

static void test_npy(void) {
  char *path = tmp_path("t.npy");
  /* Known bytes: f32 [2, 3]. */
  gs_tensor a = gs_arange(0, 6, 1, GS_F32);
  gs_tensor a2 = gs_view(a, (int64_t[]){2, 3}, 2);
  g_assert_cmpint(gs_npy_save(path, a2), ==, 0);
  gchar *bytes;
  gsize len;
  g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
  const char dict[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  GString *exp = g_string_new_len("\x93NUMPY\x01\x00\x76\x00", 10);
  g_string_append(exp, dict);
  while ((exp->len + 1) % 64)
    g_string_append_c(exp, ' ');
  g_string_append_c(exp, '\n');
  g_assert_cmpuint(exp->len, ==, 128);
  for (int i = 0; i < 6; i++) {
    float v = (float)i;
    g_string_append_len(exp, (const char *)&v, 4);
  }
  g_assert_cmpmem(bytes, len, exp->str, exp->len);
  g_string_free(exp, TRUE);
  g_free(bytes);
  gs_dispose(a);
  gs_dispose(a2);

  /* Shape tuples: () and (5,). */
  gs_tensor s = gs_scalar(GS_I64, -3);
  g_assert_cmpint(gs_npy_save(path, s), ==, 0);
  g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
  g_assert_nonnull(g_strstr_len(bytes + 10, (gssize)len - 10, "'descr': '<i8', 'fortran_order': False, 'shape': (), }"));
  g_free(bytes);
  gs_dispose(s);
  gs_tensor v = gs_ones(GS_BOOL, (int64_t[]){5}, 1);
  g_assert_cmpint(gs_npy_save(path, v), ==, 0);
  g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
  g_assert_nonnull(g_strstr_len(bytes + 10, (gssize)len - 10, "'descr': '|b1', 'fortran_order': False, 'shape': (5,), }"));
  g_assert_cmpuint(len, ==, 128 + 5);
  g_free(bytes);
  gs_dispose(v);

  /* Round trips in every dtype and layout, and 0-dim. */
  gs_rng rng;
  gs_rng_seed(&rng, 3);
  const gs_dtype dtypes[] = {GS_F32, GS_F64, GS_I64, GS_BOOL, GS_I32, GS_U8, GS_I8, GS_I16};
  for (int d = 0; d < GS_DTYPE_COUNT; d++) {
    for (test_layout l = LAYOUT_CONTIGUOUS; l < LAYOUT_COUNT; l++) {
      test_set_context("npy %s %s", gs_dtype_name(dtypes[d]), test_layout_name(l));
      gs_tensor t = test_make(dtypes[d], (int64_t[]){3, 2, 4}, 3, l, -5, 5, &rng);
      g_assert_cmpint(gs_npy_save(path, t), ==, 0);
      gs_tensor r = gs_npy_load(path);
      assert_same_tensor(t, r);
      gs_dispose(t);
      gs_dispose(r);
    }
    gs_tensor z = gs_scalar(dtypes[d], 1);
    g_assert_cmpint(gs_npy_save(path, z), ==, 0);
    gs_tensor r = gs_npy_load(path);
    g_assert_cmpint(gs_ndim(r), ==, 0);
    assert_same_tensor(z, r);
    gs_dispose(z);
    gs_dispose(r);
  }

  /* i32 is numpy's '<i4'. */
  gs_tensor i32 = gs_from_data(GS_I32, (int64_t[]){2}, 1, (int32_t[]){-1, INT32_MAX});
  g_assert_cmpint(gs_npy_save(path, i32), ==, 0);
  gchar *npy_bytes;
  gsize npy_len;
  g_assert_true(g_file_get_contents(path, &npy_bytes, &npy_len, NULL));
  g_assert_cmpuint(npy_len, >, 10);
  g_assert_nonnull(g_strstr_len(npy_bytes + 10, (gssize)npy_len - 10, "'descr': '<i4'"));
  g_assert_cmpuint((npy_len - 8) % 64, ==, 0); /* the data, 64-byte aligned, then 2 x 4 bytes */
  int32_t last;
  memcpy(&last, npy_bytes + npy_len - 4, 4);
  g_assert_cmpint(last, ==, INT32_MAX);
  g_free(npy_bytes);
  gs_dispose(i32);

  /* Damaged files. */
  gs_tensor t = gs_arange(0, 4, 1, GS_F64);
  g_assert_cmpint(gs_npy_save(path, t), ==, 0);
  gs_dispose(t);
  g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
  char *bad = tmp_path("bad.npy");
  gs_tensor r = GS_NO_TENSOR;
  write_bytes(bad, bytes, 6);
  EXPECT_ERROR(r = gs_npy_load(bad), "npy_load: expected at least 10 bytes (magic, version, header length), found a file of 6 bytes");
  g_assert_cmpuint(r.id, ==, 0);
  write_bytes(bad, bytes, 40);
  EXPECT_ERROR(r = gs_npy_load(bad), "npy_load: expected a header of 118 bytes, found only 30 bytes");
  write_bytes(bad, bytes, len - 1);
  EXPECT_ERROR(r = gs_npy_load(bad), "npy_load: expected 32 data bytes for <f8 [4], found 31");
  gchar *copy = g_memdup2(bytes, len);
  copy[0] = 'X';
  write_bytes(bad, copy, len);
  EXPECT_ERROR(r = gs_npy_load(bad), "expected the magic");
  memcpy(copy, bytes, len);
  copy[6] = 3;
  write_bytes(bad, copy, len);
  EXPECT_ERROR(r = gs_npy_load(bad), "expected format version 1.0 or 2.0, found 3.0");
  memcpy(copy, bytes, len);
  memcpy(copy + 10 + 12, "<f2", 3);
  write_bytes(bad, copy, len);
  EXPECT_ERROR(
      r = gs_npy_load(bad),
      "expected descr '<f4', '<f8', '<i8', '|b1', '<i4', '|u1', '|i1' or '<i2', found '''");
  memcpy(copy, bytes, len);
  memcpy(copy + 10 + 35, "True, ", 6);
  write_bytes(bad, copy, len);
  EXPECT_ERROR(r = gs_npy_load(bad), "expected fortran_order False");
  memcpy(copy, bytes, len);
  copy[127] = ' ';
  write_bytes(bad, copy, len);
  EXPECT_ERROR(r = gs_npy_load(bad), "expected the header to end with a newline");
  g_assert_cmpuint(r.id, ==, 0);
  g_free(copy);
  g_free(bytes);
  g_free(bad);
  g_free(path);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  tmpdir = g_dir_make_tmp("gs-ckpt-XXXXXX", NULL);
  g_assert_nonnull(tmpdir);
  test_add_leak_checked("/checkpoint/safetensors-round-trip", test_round_trip);
  test_add_leak_checked("/checkpoint/safetensors-known-bytes", test_known_bytes);
  test_add_leak_checked("/checkpoint/safetensors-damaged", test_damaged);
  g_test_add_func("/checkpoint/safetensors-metadata-round-trip", test_metadata_round_trip);
  test_add_leak_checked("/checkpoint/module-state-dict", test_module_state_dict);
  test_add_leak_checked("/checkpoint/npy", test_npy);
  int rc = g_test_run();
  GDir *dir = g_dir_open(tmpdir, 0, NULL);
  const char *name;
  while (dir && (name = g_dir_read_name(dir))) {
    char *p = g_build_filename(tmpdir, name, NULL);
    g_remove(p);
    g_free(p);
  }
  if (dir)
    g_dir_close(dir);
  g_rmdir(tmpdir);
  g_free(tmpdir);
  return rc;
}
