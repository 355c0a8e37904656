/* test-util.h: what every engine test shares: an error handler that fails the test unless an
 * error is expected, tensors in the layouts ops must handle (contiguous, transposed, sliced,
 * broadcast), and comparison of a tensor's values with a reference computed in plain loops. */
#pragma once

#include <glib.h>
#include <gradscope/gradscope.h>
#include <math.h>
#include <string.h>

typedef enum {
  LAYOUT_CONTIGUOUS,
  LAYOUT_TRANSPOSED, /* the last two dims are stored swapped (or reversed, for 1-D: same) */
  LAYOUT_SLICED,     /* every other element of a larger tensor, at an offset */
  LAYOUT_BROADCAST,  /* dim 0 expanded from size 1 (stride 0) */
  LAYOUT_COUNT
} test_layout;

const char *test_layout_name(test_layout layout);

/* Installs the failing handler; call first in main after g_test_init. */
void test_init(int *argc, char ***argv);

/* Registers fn as the test at path, run between two readings of the process's live tensor
 * count that must be equal: the leak check of every test that creates tensors only for itself,
 * made once here instead of in each test's first and last lines. */
void test_add_leak_checked(const char *path, void (*fn)(void));

/* Disposes each tensor listed, left to right. */
#define DISPOSE_ALL(...)                                                                           \
  test_dispose_n((const gs_tensor[]){__VA_ARGS__}, G_N_ELEMENTS(((gs_tensor[]){__VA_ARGS__})))
void test_dispose_n(const gs_tensor *tensors, size_t n);

/* Runs the statement expecting it to fail with a message containing substring. */
#define EXPECT_ERROR(stmt, substring)                                                        \
  do {                                                                                       \
    test_expect_error_begin();                                                               \
    stmt;                                                                                    \
    test_expect_error_end(substring, #stmt, __FILE__, __LINE__);                             \
  } while (0)
void test_expect_error_begin(void);
void test_expect_error_end(const char *substring, const char *stmt, const char *file, int line);

/* A tensor of dtype and logical shape, values from rng (small integers for i64, 0/1 for
 * bool, uniform in [lo, hi) for floats), stored in the given layout. */
gs_tensor test_make(gs_dtype dtype, const int64_t *shape, int ndim, test_layout layout,
                    double lo, double hi, gs_rng *rng);

/* t's values, row-major, as doubles (g_free the result). */
double *test_values(gs_tensor t);

/* Asserts t has the given shape and values within atol + rtol*|expected| (exact for integer
 * and bool dtypes when tolerances are 0). NaNs must match NaNs. */
void test_assert_values(gs_tensor t, const int64_t *shape, int ndim, const double *expected,
                        double atol, double rtol);

/* Names the case being checked (op, dtype, layout); printed when an assertion fails. */
void test_set_context(const char *fmt, ...) G_GNUC_PRINTF(1, 2);

/* Row-major multi-index of flat index i. */
void test_unravel(int64_t i, const int64_t *shape, int ndim, int64_t *index);
/* Flat row-major index of index broadcast into shape (dims of size 1 read index 0). */
int64_t test_ravel_broadcast(const int64_t *index, int ndim_index, const int64_t *shape,
                             int ndim);
int64_t test_numel(const int64_t *shape, int ndim);

/* A reader fed the whole log file at path (gs_trace_reader_free it). */
gs_trace_reader *test_read_log(const char *path);

/* How many entries a /proc directory lists (threads in /proc/self/task, descriptors in
 * /proc/self/fd: the latter counts the descriptor reading it), without "." and "..". */
int test_count_entries(const char *dir);
