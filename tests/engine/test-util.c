/* test-util.c: shared helpers of the engine tests (see test-util.h). */
#include <dirent.h>
#include <stdarg.h>

#include "test-util.h"

static bool expecting_error;
static int errors_seen;
static char last_seen[1024];
static char context[256];

void test_set_context(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_vsnprintf(context, sizeof context, fmt, ap);
  va_end(ap);
}

const char *test_layout_name(test_layout layout) {
  static const char *names[] = {"contiguous", "transposed", "sliced", "broadcast"};
  return layout < LAYOUT_COUNT ? names[layout] : "?";
}

static void test_handler(const gs_error *error, void *user_data) {
  (void)user_data;
  if (!expecting_error) {
    g_printerr("unexpected gradscope error: %s\n", error->message);
    g_assert_not_reached();
  }
  errors_seen++;
  g_strlcpy(last_seen, error->message, sizeof last_seen);
}

void test_init(int *argc, char ***argv) {
  g_test_init(argc, argv, NULL);
  gs_set_error_handler(test_handler, NULL, NULL);
}

typedef struct leak_checked {
  void (*fn)(void);
} leak_checked;

static void run_leak_checked(gconstpointer data) {
  const leak_checked *test = data;
  uint64_t live = gs_live_tensor_count();
  test->fn();
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
}

void test_add_leak_checked(const char *path, void (*fn)(void)) {
  leak_checked *test = g_new(leak_checked, 1);
  test->fn = fn;
  g_test_add_data_func_full(path, test, run_leak_checked, g_free);
}

void test_dispose_n(const gs_tensor *tensors, size_t n) {
  for (size_t i = 0; i < n; i++)
    gs_dispose(tensors[i]);
}

void test_expect_error_begin(void) {
  expecting_error = true;
  errors_seen = 0;
  last_seen[0] = '\0';
  gs_clear_error();
}

void test_expect_error_end(const char *substring, const char *stmt, const char *file, int line) {
  expecting_error = false;
  if (errors_seen != 1) {
    g_printerr("%s:%d: expected exactly one error from `%s`, got %d\n", file, line, stmt,
               errors_seen);
    g_test_fail();
    return;
  }
  if (!strstr(last_seen, substring) || strcmp(gs_last_error(), last_seen) != 0) {
    g_printerr("%s:%d: `%s` failed with \"%s\", expected it to mention \"%s\"\n", file, line,
               stmt, last_seen, substring);
    g_test_fail();
  }
}

int64_t test_numel(const int64_t *shape, int ndim) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++)
    n *= shape[i];
  return n;
}

void test_unravel(int64_t i, const int64_t *shape, int ndim, int64_t *index) {
  for (int d = ndim - 1; d >= 0; d--) {
    index[d] = shape[d] ? i % shape[d] : 0;
    i = shape[d] ? i / shape[d] : 0;
  }
}

int64_t test_ravel_broadcast(const int64_t *index, int ndim_index, const int64_t *shape,
                             int ndim) {
  int64_t flat = 0;
  for (int d = 0; d < ndim; d++) {
    int64_t ix = index[ndim_index - ndim + d];
    flat = flat * shape[d] + (shape[d] == 1 ? 0 : ix);
  }
  return flat;
}

static double random_value(gs_dtype dtype, double lo, double hi, gs_rng *rng) {
  double u = gs_rng_uniform(rng);
  switch (dtype) {
  case GS_BOOL: return u < 0.5 ? 0.0 : 1.0;
  case GS_I64:
  case GS_I32:
  case GS_U8:
  case GS_I8:
  case GS_I16: return floor(lo + (hi - lo) * u);
  default: return lo + (hi - lo) * u;
  }
}

gs_tensor test_make(gs_dtype dtype, const int64_t *shape, int ndim, test_layout layout,
                    double lo, double hi, gs_rng *rng) {
  int64_t numel = test_numel(shape, ndim);
  double *vals = g_new(double, numel > 0 ? numel : 1);
  for (int64_t i = 0; i < numel; i++)
    vals[i] = random_value(dtype, lo, hi, rng);
  /* Build the logical values as f64, then lay them out as asked. */
  gs_tensor logical64 = gs_from_data(GS_F64, shape, ndim, vals);
  gs_tensor logical = gs_to_dtype(logical64, dtype);
  gs_dispose(logical64);
  g_free(vals);
  gs_tensor out = GS_NO_TENSOR;
  if (layout == LAYOUT_CONTIGUOUS || ndim == 0) {
    return logical;
  } else if (layout == LAYOUT_TRANSPOSED) {
    int a = ndim >= 2 ? ndim - 2 : 0, b = ndim - 1;
    gs_tensor view = gs_transpose(logical, a, b);
    gs_tensor swapped = gs_contiguous(view); /* stored with the last two dims swapped */
    out = gs_transpose(swapped, a, b);
    gs_dispose(view);
    gs_dispose(swapped);
  } else if (layout == LAYOUT_SLICED) {
    int64_t big[GS_MAX_DIMS];
    memcpy(big, shape, sizeof(int64_t) * (size_t)ndim);
    big[ndim - 1] = shape[ndim - 1] * 2 + 1;
    gs_tensor base = gs_full(dtype, big, ndim, 7.0);
    out = gs_slice(base, ndim - 1, 1, big[ndim - 1], 2);
    gs_dispose(base);
    gs_copy_(out, logical);
  } else { /* LAYOUT_BROADCAST: dim 0 of the logical values replaced by one row, expanded */
    gs_tensor row = gs_narrow(logical, 0, 0, shape[0] > 0 ? 1 : 0);
    gs_tensor row_c = gs_contiguous(row);
    out = gs_expand(row_c, shape, ndim);
    gs_dispose(row);
    gs_dispose(row_c);
  }
  gs_dispose(logical);
  return out;
}

double *test_values(gs_tensor t) {
  gs_tensor d = gs_to_dtype(t, GS_F64);
  int64_t n = gs_numel(d);
  double *out = g_new(double, n > 0 ? n : 1);
  gs_copy_to(d, out, (size_t)n * sizeof(double));
  gs_dispose(d);
  return out;
}

void test_assert_values(gs_tensor t, const int64_t *shape, int ndim, const double *expected,
                        double atol, double rtol) {
  int64_t got_shape[GS_MAX_DIMS];
  int got_ndim = gs_shape(t, got_shape);
  g_assert_cmpint(got_ndim, ==, ndim);
  for (int i = 0; i < ndim; i++)
    g_assert_cmpint(got_shape[i], ==, shape[i]);
  int64_t n = test_numel(shape, ndim);
  double *got = test_values(t);
  for (int64_t i = 0; i < n; i++) {
    double e = expected[i], g = got[i];
    bool ok = (isnan(e) && isnan(g)) || (e == g) || fabs(g - e) <= atol + rtol * fabs(e);
    if (!ok) {
      g_printerr("%s%svalue %lld: got %.17g, expected %.17g\n", context, context[0] ? ": " : "",
                 (long long)i, g, e);
      g_free(got);
      g_assert_not_reached();
    }
  }
  g_free(got);
}

gs_trace_reader *test_read_log(const char *path) {
  g_autofree char *bytes = NULL;
  gsize n = 0;
  g_assert_true(g_file_get_contents(path, &bytes, &n, NULL));
  gs_trace_reader *r = gs_trace_reader_new();
  gs_trace_reader_feed(r, bytes, n);
  return r;
}

int test_count_entries(const char *dir) {
  DIR *d = opendir(dir);
  g_assert_nonnull(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    n += e->d_name[0] != '.';
  closedir(d);
  return n;
}
