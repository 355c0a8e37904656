/* test-reduce.c: reductions (sum, mean, max, min, logsumexp, argmax, argmin, sum_to) and
 * softmax/log_softmax, checked against plain reference loops over every dtype each supports,
 * every layout of test_make, and dim sets with negative, repeated-free, all and keepdim
 * variants; plus 0-dim and size-0 inputs, NaN/inf rules, and the error messages. */
#include "test-util.h"

typedef enum { REF_SUM, REF_MEAN, REF_MAX, REF_MIN, REF_LOGSUMEXP, REF_ARGMAX, REF_ARGMIN } ref_op;

typedef struct {
  int ndim;
  int64_t shape[4];
} shape_case;

/* 0-dim, 1-D, 2-D, 3-D with a size-1 dim, size-0 dims, a 2-D case wide enough for several
 * 512-output chunks, and 4-D. */
static const shape_case shapes[] = {
    {0, {0}},       {1, {5}},       {2, {6, 5}},    {3, {2, 3, 4}},    {3, {4, 1, 3}},
    {3, {3, 0, 2}}, {1, {0}},       {2, {3, 1100}}, {4, {3, 4, 2, 5}},
};

typedef struct {
  int n;
  int dims[4];
} dim_set;

/* n == 0 reduces over every dim. Sets invalid for a shape's ndim are skipped there. */
static const dim_set dim_sets[] = {
    {0, {0}},    {1, {0}},     {1, {-1}},       {1, {1}},     {2, {0, 2}},
    {2, {-1, 0}}, {3, {2, 0, 1}}, {2, {1, -1}}, {2, {1, 3}},   {4, {3, 1, 0, 2}},
};

static const gs_dtype all_dtypes[] = {GS_F32, GS_F64, GS_I64, GS_BOOL,
                                      GS_I32, GS_U8,  GS_I8,  GS_I16};
static const gs_dtype float_dtypes[] = {GS_F32, GS_F64};

/* ---- reference loops ------------------------------------------------------------------ */

/* Marks the dims of ds for an ndim-D tensor; false if ds is out of range or repeats a dim. */
static bool dims_valid(const dim_set *ds, int ndim, bool *reduced) {
  int range = ndim > 0 ? ndim : 1;
  memset(reduced, 0, GS_MAX_DIMS * sizeof *reduced);
  if (ds->n == 0) {
    for (int d = 0; d < ndim; d++)
      reduced[d] = true;
    return true;
  }
  for (int k = 0; k < ds->n; k++) {
    int d = ds->dims[k];
    if (d < -range || d >= range)
      return false;
    d = d < 0 ? d + range : d;
    if (reduced[d])
      return false;
    reduced[d] = true;
  }
  return true;
}

/* The keepdim shape: reduced dims become 1. */
static void keepdim_shape(const int64_t *shape, int ndim, const bool *reduced, int64_t *out) {
  for (int d = 0; d < ndim; d++)
    out[d] = reduced[d] ? 1 : shape[d];
}

/* The output shape for keepdim or not; returns its ndim. */
static int result_shape(const int64_t *shape, int ndim, const bool *reduced, bool keepdim,
                        int64_t *out) {
  int n = 0;
  for (int d = 0; d < ndim; d++)
    if (!reduced[d])
      out[n++] = shape[d];
    else if (keepdim)
      out[n++] = 1;
  return n;
}

/* The reduction of row-major values v of shape over the reduced dims, one pass over the
 * input in row-major order (so "first" means first in row-major order). Outputs are
 * row-major over the keepdim shape. g_free the result. */
static double *reference(ref_op op, const double *v, const int64_t *shape, int ndim,
                         const bool *reduced) {
  int64_t oshape[GS_MAX_DIMS] = {0};
  keepdim_shape(shape, ndim, reduced, oshape);
  int64_t on = test_numel(oshape, ndim), n = test_numel(shape, ndim);
  double *acc = g_new0(double, on + 1);
  double *best = g_new0(double, on + 1);
  int64_t *seen = g_new0(int64_t, on + 1);
  int64_t idx[GS_MAX_DIMS];
  for (int64_t i = 0; i < n; i++) {
    test_unravel(i, shape, ndim, idx);
    int64_t o = 0, pos = 0;
    for (int d = 0; d < ndim; d++) {
      o = o * oshape[d] + (reduced[d] ? 0 : idx[d]);
      if (reduced[d])
        pos = pos * shape[d] + idx[d];
    }
    double x = v[i];
    bool first = seen[o]++ == 0;
    switch (op) {
    case REF_SUM:
    case REF_MEAN: acc[o] += x; break;
    case REF_LOGSUMEXP: acc[o] += exp(x); break;
    case REF_MAX:
    case REF_MIN:
      if (first)
        acc[o] = x;
      else if (isnan(x) || isnan(acc[o]))
        acc[o] = NAN;
      else
        acc[o] = op == REF_MAX ? (x > acc[o] ? x : acc[o]) : (x < acc[o] ? x : acc[o]);
      break;
    case REF_ARGMAX:
    case REF_ARGMIN: {
      bool better = op == REF_ARGMAX ? x > best[o] : x < best[o];
      if (first || (!isnan(best[o]) && (isnan(x) || better))) {
        best[o] = x;
        acc[o] = (double)pos;
      }
      break;
    }
    }
  }
  int64_t count = test_numel(shape, ndim) / (on > 0 ? on : 1);
  for (int d = 0; d < ndim; d++)
    if (reduced[d] && shape[d] == 0)
      count = 0;
  for (int64_t o = 0; o < on; o++) {
    if (op == REF_MEAN)
      acc[o] = acc[o] / (double)count;
    else if (op == REF_LOGSUMEXP)
      acc[o] = log(acc[o]);
  }
  g_free(best);
  g_free(seen);
  return acc;
}

static bool has_identity(ref_op op) {
  return op == REF_SUM || op == REF_MEAN || op == REF_LOGSUMEXP;
}

static gs_dtype expected_dtype(ref_op op, gs_dtype in) {
  if (op == REF_ARGMAX || op == REF_ARGMIN)
    return GS_I64;
  if (op == REF_SUM && !gs_dtype_is_floating(in))
    return GS_I64;
  return in;
}

static gs_tensor call_op(ref_op op, gs_tensor t, const dim_set *ds, bool keepdim) {
  switch (op) {
  case REF_SUM: return gs_sum(t, ds->dims, ds->n, keepdim);
  case REF_MEAN: return gs_mean(t, ds->dims, ds->n, keepdim);
  case REF_MAX: return gs_max(t, ds->dims, ds->n, keepdim);
  case REF_MIN: return gs_min(t, ds->dims, ds->n, keepdim);
  case REF_LOGSUMEXP: return gs_logsumexp(t, ds->dims, ds->n, keepdim);
  case REF_ARGMAX: return gs_argmax(t, ds->dims[0], keepdim);
  case REF_ARGMIN: return gs_argmin(t, ds->dims[0], keepdim);
  }
  return GS_NO_TENSOR;
}

static const char *op_name(ref_op op) {
  static const char *names[] = {"sum", "mean", "max", "min", "logsumexp", "argmax", "argmin"};
  return names[op];
}

/* Tolerances for comparing an output of dtype with a double reference. */
static void tolerances(gs_dtype dtype, double *atol, double *rtol) {
  *atol = dtype == GS_F32 ? 1e-5 : dtype == GS_F64 ? 1e-12 : 0.0;
  *rtol = dtype == GS_F32 ? 1e-6 : dtype == GS_F64 ? 1e-12 : 0.0;
}

/* One reduction of one input against the reference (or against the no-identity error). */
static void check_reduction(ref_op op, gs_dtype dtype, test_layout layout,
                            const shape_case *sc, const dim_set *ds, bool keepdim,
                            gs_rng *rng) {
  bool reduced[GS_MAX_DIMS];
  if (!dims_valid(ds, sc->ndim, reduced))
    return;
  if ((op == REF_ARGMAX || op == REF_ARGMIN) && ds->n != 1)
    return;
  gs_tensor t = test_make(dtype, sc->shape, sc->ndim, layout, -3.0, 3.0, rng);
  bool empty_reduced = false;
  for (int d = 0; d < sc->ndim; d++)
    empty_reduced |= reduced[d] && sc->shape[d] == 0;
  if (empty_reduced && !has_identity(op)) {
    gs_tensor r = GS_NO_TENSOR;
    EXPECT_ERROR(r = call_op(op, t, ds, keepdim), "(no identity)");
    g_assert_true(gs_tensor_is_none(r));
    gs_dispose(t);
    return;
  }
  if (g_test_verbose())
    g_test_message("%s %s %s ndim %d dims %d keepdim %d", op_name(op), gs_dtype_name(dtype),
                   test_layout_name(layout), sc->ndim, ds->n, keepdim);
  gs_tensor r = call_op(op, t, ds, keepdim);
  g_assert_cmpint(gs_dtype_of(r), ==, expected_dtype(op, dtype));
  /* (The core calls an empty tensor with a size-0 dim non-contiguous even when freshly
   * created, so contiguity is only asserted for outputs with elements.) */
  if (gs_numel(r) > 0)
    g_assert_true(gs_is_contiguous(r));
  double *v = test_values(t);
  double *expected = reference(op, v, sc->shape, sc->ndim, reduced);
  int64_t shape[GS_MAX_DIMS];
  int ndim = result_shape(sc->shape, sc->ndim, reduced, keepdim, shape);
  double atol, rtol;
  tolerances(gs_dtype_of(r), &atol, &rtol);
  test_assert_values(r, shape, ndim, expected, atol, rtol);
  g_free(v);
  g_free(expected);
  gs_dispose(r);
  gs_dispose(t);
}

static void check_op_everywhere(ref_op op, const gs_dtype *dtypes, size_t ndtypes) {
  uint64_t live = gs_live_tensor_count();
  gs_rng rng;
  gs_rng_seed(&rng, 42 + (uint64_t)op);
  for (size_t di = 0; di < ndtypes; di++)
    for (int layout = 0; layout < LAYOUT_COUNT; layout++)
      for (size_t si = 0; si < G_N_ELEMENTS(shapes); si++)
        for (size_t ki = 0; ki < G_N_ELEMENTS(dim_sets); ki++)
          for (int keep = 0; keep < 2; keep++)
            check_reduction(op, dtypes[di], (test_layout)layout, &shapes[si], &dim_sets[ki],
                            keep, &rng);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
}

static void test_sum_values(void) {
  check_op_everywhere(REF_SUM, all_dtypes, G_N_ELEMENTS(all_dtypes));
}
static void test_mean_values(void) { check_op_everywhere(REF_MEAN, float_dtypes, 2); }
static void test_max_values(void) {
  check_op_everywhere(REF_MAX, all_dtypes, G_N_ELEMENTS(all_dtypes));
}
static void test_min_values(void) {
  check_op_everywhere(REF_MIN, all_dtypes, G_N_ELEMENTS(all_dtypes));
}
static void test_logsumexp_values(void) {
  check_op_everywhere(REF_LOGSUMEXP, float_dtypes, 2);
}
static void test_argmax_values(void) {
  check_op_everywhere(REF_ARGMAX, all_dtypes, G_N_ELEMENTS(all_dtypes));
}
static void test_argmin_values(void) {
  check_op_everywhere(REF_ARGMIN, all_dtypes, G_N_ELEMENTS(all_dtypes));
}

/* argmax_all / argmin_all: the flat row-major index, 0-dim i64. */
static void test_arg_all_values(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 7);
  bool all[GS_MAX_DIMS];
  for (size_t di = 0; di < G_N_ELEMENTS(all_dtypes); di++)
    for (int layout = 0; layout < LAYOUT_COUNT; layout++)
      for (size_t si = 0; si < G_N_ELEMENTS(shapes); si++) {
        const shape_case *sc = &shapes[si];
        gs_tensor t = test_make(all_dtypes[di], sc->shape, sc->ndim, (test_layout)layout,
                                -3.0, 3.0, &rng);
        for (int d = 0; d < GS_MAX_DIMS; d++)
          all[d] = d < sc->ndim;
        for (int which = 0; which < 2; which++) {
          gs_tensor r = GS_NO_TENSOR;
          if (test_numel(sc->shape, sc->ndim) == 0) {
            EXPECT_ERROR(r = which ? gs_argmin_all(t) : gs_argmax_all(t),
                         "cannot reduce over dim");
            g_assert_true(gs_tensor_is_none(r));
            continue;
          }
          r = which ? gs_argmin_all(t) : gs_argmax_all(t);
          g_assert_cmpint(gs_dtype_of(r), ==, GS_I64);
          double *v = test_values(t);
          double *expected =
              reference(which ? REF_ARGMIN : REF_ARGMAX, v, sc->shape, sc->ndim, all);
          test_assert_values(r, NULL, 0, expected, 0, 0);
          g_free(v);
          g_free(expected);
          gs_dispose(r);
        }
        gs_dispose(t);
      }
}

/* ---- sum_to --------------------------------------------------------------------------- */

typedef struct {
  int ndim;
  int64_t shape[4];
  int target_ndim;
  int64_t target[4];
} sum_to_case;

static const sum_to_case sum_to_cases[] = {
    {3, {2, 3, 4}, 2, {3, 4}},    {3, {2, 3, 4}, 2, {1, 4}},    {3, {2, 3, 4}, 3, {2, 1, 4}},
    {3, {2, 3, 4}, 1, {4}},       {3, {2, 3, 4}, 1, {1}},       {3, {2, 3, 4}, 0, {0}},
    {3, {2, 3, 4}, 3, {2, 3, 4}}, {3, {2, 3, 4}, 3, {1, 1, 1}}, {3, {2, 3, 4}, 2, {3, 1}},
    {3, {2, 3, 4}, 3, {1, 3, 1}}, {1, {5}, 1, {1}},             {1, {5}, 1, {5}},
    {1, {5}, 0, {0}},             {0, {0}, 0, {0}},             {3, {3, 0, 2}, 2, {0, 2}},
    {3, {3, 0, 2}, 2, {1, 2}},    {3, {3, 0, 2}, 3, {3, 0, 1}}, {2, {3, 1100}, 1, {1100}},
    {2, {3, 1100}, 2, {3, 1}},    {4, {3, 4, 2, 5}, 3, {4, 1, 5}},
};

/* An i32 sum is an i64 (as torch's): it does not wrap at 32 bits. max and min stay i32. */
static void test_i32_sum_is_i64(void) {
  gs_tensor t =
      gs_from_data(GS_I32, (int64_t[]){2, 2}, 2, (int32_t[]){INT32_MAX, INT32_MAX, INT32_MIN, -1});
  gs_tensor all = gs_sum(t, NULL, 0, false), rows = gs_sum(t, (int[]){1}, 1, false);
  gs_tensor mx = gs_max(t, NULL, 0, false), cs = gs_cumsum(t, 1);
  g_assert_cmpint(gs_dtype_of(all), ==, GS_I64);
  int64_t r[2];
  gs_copy_to(rows, r, sizeof r);
  g_assert_cmpint(r[0], ==, 2 * (int64_t)INT32_MAX);
  g_assert_cmpint(r[1], ==, (int64_t)INT32_MIN - 1);
  g_assert_cmpfloat(gs_item(all), ==, (double)INT32_MAX - 2.0);
  g_assert_cmpint(gs_dtype_of(mx), ==, GS_I32);
  g_assert_cmpfloat(gs_item(mx), ==, INT32_MAX);
  g_assert_cmpint(gs_dtype_of(cs), ==, GS_I64);
  g_assert_cmpfloat(gs_get(cs, (int64_t[]){0, 1}), ==, 2.0 * INT32_MAX);
  DISPOSE_ALL(t, all, rows, mx, cs);
}

static void test_sum_to_values(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 11);
  for (size_t di = 0; di < G_N_ELEMENTS(all_dtypes); di++)
    for (int layout = 0; layout < LAYOUT_COUNT; layout++)
      for (size_t ci = 0; ci < G_N_ELEMENTS(sum_to_cases); ci++) {
        const sum_to_case *c = &sum_to_cases[ci];
        gs_tensor t = test_make(all_dtypes[di], c->shape, c->ndim, (test_layout)layout, -3.0,
                                3.0, &rng);
        /* What broadcasting from target stretched or created. */
        bool reduced[GS_MAX_DIMS] = {false};
        int lead = c->ndim - c->target_ndim;
        for (int d = 0; d < c->ndim; d++)
          reduced[d] = d < lead || c->target[d - lead] != c->shape[d];
        gs_tensor r = gs_sum_to(t, c->target, c->target_ndim);
        g_assert_cmpint(gs_dtype_of(r), ==, expected_dtype(REF_SUM, all_dtypes[di]));
        double *v = test_values(t);
        double *expected = reference(REF_SUM, v, c->shape, c->ndim, reduced);
        double atol, rtol;
        tolerances(gs_dtype_of(r), &atol, &rtol);
        test_assert_values(r, c->target, c->target_ndim, expected, atol, rtol);
        g_free(v);
        g_free(expected);
        gs_dispose(r);
        gs_dispose(t);
      }
}

/* sum_to over leading dims of a contiguous f32 or f64 tensor (a bias's gradient) adds each
 * column up on its own (engine/ops/reduce.c's leading_sum); its bits are the general walk's,
 * as gs_sum over the same dims computes them, for tall, wide and 3-D inputs, also where the
 * target keeps a leading 1. */
static void test_sum_to_leading_dims_is_the_walk(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 5);
  const struct {
    int ndim;
    int64_t shape[3];
    int target_ndim;
    int64_t target[3];
    int reduce_count;
  } cases[] = {{2, {16, 128}, 1, {128}, 1},
               {2, {1000, 10}, 1, {10}, 1},
               {2, {7, 3000}, 2, {1, 3000}, 1},
               {3, {5, 6, 7}, 1, {7}, 2},
               {2, {16, 5000}, 1, {5000}, 1}};
  const gs_dtype dtypes[] = {GS_F32, GS_F64};
  for (size_t di = 0; di < G_N_ELEMENTS(dtypes); di++)
    for (size_t ci = 0; ci < G_N_ELEMENTS(cases); ci++) {
      gs_tensor t = test_make(dtypes[di], cases[ci].shape, cases[ci].ndim, LAYOUT_CONTIGUOUS,
                              -100.0, 100.0, &rng);
      gs_tensor fast = gs_sum_to(t, cases[ci].target, cases[ci].target_ndim);
      gs_tensor walk = gs_sum(t, (int[]){0, 1}, cases[ci].reduce_count, false);
      g_assert_cmpint(gs_numel(fast), ==, gs_numel(walk));
      size_t bytes = (size_t)gs_numel(walk) * gs_dtype_size(dtypes[di]);
      char *a = g_malloc(bytes), *b = g_malloc(bytes);
      g_assert_cmpint(gs_copy_to(fast, a, bytes), ==, 0);
      g_assert_cmpint(gs_copy_to(walk, b, bytes), ==, 0);
      g_assert_cmpmem(a, bytes, b, bytes);
      g_free(a), g_free(b);
      DISPOSE_ALL(t, fast, walk);
    }
}

/* ---- softmax -------------------------------------------------------------------------- */

/* softmax or log_softmax of row-major v along dim, written plainly as exp(x) / sum(exp(x))
 * (the test values are small, so the unshifted form is exact enough). */
static double *reference_softmax(bool log_out, const double *v, const int64_t *shape, int ndim,
                                 int dim) {
  int64_t n = test_numel(shape, ndim);
  int64_t rshape[GS_MAX_DIMS];
  memcpy(rshape, shape, sizeof(int64_t) * (size_t)ndim);
  if (ndim > 0)
    rshape[dim] = 1;
  double *sums = g_new0(double, n + 1), *out = g_new0(double, n + 1);
  int64_t *row = g_new0(int64_t, n + 1);
  int64_t idx[GS_MAX_DIMS];
  for (int64_t i = 0; i < n; i++) {
    test_unravel(i, shape, ndim, idx);
    row[i] = test_ravel_broadcast(idx, ndim, rshape, ndim);
    sums[row[i]] += exp(v[i]);
  }
  for (int64_t i = 0; i < n; i++)
    out[i] = log_out ? v[i] - log(sums[row[i]]) : exp(v[i]) / sums[row[i]];
  g_free(sums);
  g_free(row);
  return out;
}

static void check_softmax_everywhere(bool log_out) {
  uint64_t live = gs_live_tensor_count();
  gs_rng rng;
  gs_rng_seed(&rng, log_out ? 5 : 6);
  for (size_t di = 0; di < G_N_ELEMENTS(float_dtypes); di++)
    for (int layout = 0; layout < LAYOUT_COUNT; layout++)
      for (size_t si = 0; si < G_N_ELEMENTS(shapes); si++) {
        const shape_case *sc = &shapes[si];
        int range = sc->ndim > 0 ? sc->ndim : 1;
        gs_tensor t = test_make(float_dtypes[di], sc->shape, sc->ndim, (test_layout)layout,
                                -4.0, 4.0, &rng);
        double *v = test_values(t);
        for (int dim = -range; dim < range; dim++) {
          gs_tensor r = log_out ? gs_log_softmax(t, dim) : gs_softmax(t, dim);
          g_assert_cmpint(gs_dtype_of(r), ==, float_dtypes[di]);
          if (gs_numel(r) > 0)
            g_assert_true(gs_is_contiguous(r));
          int d = dim < 0 ? dim + range : dim;
          double *expected = reference_softmax(log_out, v, sc->shape, sc->ndim, d);
          double atol, rtol;
          tolerances(float_dtypes[di], &atol, &rtol);
          test_assert_values(r, sc->shape, sc->ndim, expected, atol, rtol);
          g_free(expected);
          gs_dispose(r);
        }
        g_free(v);
        gs_dispose(t);
      }
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
}

static void test_softmax_values(void) { check_softmax_everywhere(false); }
static void test_log_softmax_values(void) { check_softmax_everywhere(true); }

/* ---- specific behaviours -------------------------------------------------------------- */

static gs_tensor from_doubles(gs_dtype dtype, const int64_t *shape, int ndim, const double *v) {
  gs_tensor d = gs_from_data(GS_F64, shape, ndim, v);
  gs_tensor t = gs_to_dtype(d, dtype);
  gs_dispose(d);
  return t;
}

/* softmax and log_softmax of rows whose elements are adjacent (the row kernel of softmax.c)
 * give the bits of the same rows read with a stride (the blocked kernel), NaN payloads
 * included: rows with NaNs of different payloads (the last one wins the max), infinities,
 * all -inf, huge and tiny values, and random ones. */
static void test_softmax_rows_same_bits_any_layout(void) {
  enum { ROWS = 9, C = 11 };
  /* payloads in the bits f32 keeps */
  static const uint64_t nan_a = 0x7ffc000000000000ull, nan_b = 0xfff9000000000000ull;
  double v[ROWS][C], vt[C][ROWS];
  GRand *rng = g_rand_new_with_seed(21);
  for (int i = 0; i < ROWS; i++)
    for (int c = 0; c < C; c++)
      v[i][c] = g_rand_double_range(rng, -30, 30);
  memcpy(&v[0][2], &nan_a, sizeof nan_a), memcpy(&v[0][7], &nan_b, sizeof nan_b);
  memcpy(&v[1][0], &nan_b, sizeof nan_b);
  v[2][3] = INFINITY, v[3][1] = -INFINITY, v[3][5] = INFINITY;
  for (int c = 0; c < C; c++)
    v[4][c] = -INFINITY;
  v[5][0] = 1e300, v[5][1] = -1e300, v[6][4] = 1e-310;
  for (int i = 0; i < ROWS; i++)
    for (int c = 0; c < C; c++)
      vt[c][i] = v[i][c];
  for (size_t di = 0; di < G_N_ELEMENTS(float_dtypes); di++) {
    gs_dtype dt = float_dtypes[di];
    gs_tensor rows = from_doubles(dt, (int64_t[]){ROWS, C}, 2, &v[0][0]);
    gs_tensor cols = from_doubles(dt, (int64_t[]){C, ROWS}, 2, &vt[0][0]);
    gs_tensor strided = gs_transpose(cols, 0, 1); /* [ROWS, C], elements ROWS apart */
    for (int log_out = 0; log_out < 2; log_out++) {
      gs_tensor a = log_out ? gs_log_softmax(rows, 1) : gs_softmax(rows, 1);
      gs_tensor b = log_out ? gs_log_softmax(strided, -1) : gs_softmax(strided, -1);
      g_assert_true(gs_is_contiguous(a) && gs_is_contiguous(b));
      if (memcmp(gs_data(a), gs_data(b), (size_t)(ROWS * C) * gs_dtype_size(dt)) != 0)
        g_error("%s of %s: adjacent and strided rows differ", log_out ? "log_softmax" : "softmax",
                gs_dtype_name(dt));
      DISPOSE_ALL(b, a);
    }
    DISPOSE_ALL(strided, cols, rows);
  }
  g_rand_free(rng);
}

/* i64 sums accumulate in i64: exact beyond 2^53, where a double accumulator would round. */
static void test_sum_integers_exact(void) {
  int64_t shape[] = {3};
  int64_t v[] = {(int64_t)1 << 53, 1, 1};
  gs_tensor t = gs_from_data(GS_I64, shape, 1, v);
  gs_tensor s = gs_sum(t, NULL, 0, false);
  g_assert_cmpint(gs_dtype_of(s), ==, GS_I64);
  g_assert_cmpint(*(const int64_t *)gs_data(s), ==, ((int64_t)1 << 53) + 2);
  gs_dispose(s);
  gs_dispose(t);

  /* bool sums count the trues, as i64 */
  bool b[] = {true, false, true, true, false, true};
  int64_t bshape[] = {2, 3};
  gs_tensor tb = gs_from_data(GS_BOOL, bshape, 2, b);
  int dim1 = 1;
  gs_tensor sb = gs_sum(tb, &dim1, 1, false);
  g_assert_cmpint(gs_dtype_of(sb), ==, GS_I64);
  const int64_t *got = gs_data(sb);
  g_assert_cmpint(got[0], ==, 2);
  g_assert_cmpint(got[1], ==, 2);
  gs_dispose(sb);
  gs_dispose(tb);
}

/* Empty reductions: sum 0, mean NaN, logsumexp -inf; keepdim keeps the size-1 dim. */
static void test_empty_reductions(void) {
  int64_t shape[] = {2, 0};
  gs_tensor t = gs_zeros(GS_F32, shape, 2);
  int dim1 = 1;
  gs_tensor s = gs_sum(t, &dim1, 1, true);
  gs_tensor m = gs_mean(t, &dim1, 1, false);
  gs_tensor l = gs_logsumexp(t, &dim1, 1, false);
  gs_tensor all = gs_sum(t, NULL, 0, false);
  int64_t keep_shape[] = {2, 1};
  double zeros[] = {0, 0}, nans[] = {NAN, NAN}, ninf[] = {-INFINITY, -INFINITY};
  test_assert_values(s, keep_shape, 2, zeros, 0, 0);
  test_assert_values(m, shape, 1, nans, 0, 0);
  test_assert_values(l, shape, 1, ninf, 0, 0);
  test_assert_values(all, NULL, 0, zeros, 0, 0);
  /* Reducing the non-empty dim leaves an empty result, which is not an error for max. */
  int dim0 = 0;
  gs_tensor mx = gs_max(t, &dim0, 1, false);
  int64_t empty_shape[] = {0};
  test_assert_values(mx, empty_shape, 1, NULL, 0, 0);
  DISPOSE_ALL(mx, s, m, l, all, t);
}

/* A 0-dim input reduces to itself over dim 0, -1 or all dims, keepdim or not. */
static void test_zero_dim(void) {
  gs_tensor t = gs_scalar(GS_F64, 2.5);
  int dims[] = {0, -1};
  for (int k = 0; k < 3; k++) {
    int n = k < 2 ? 1 : 0;
    const int *d = k < 2 ? &dims[k] : NULL;
    gs_tensor r[] = {gs_sum(t, d, n, true),   gs_mean(t, d, n, false), gs_max(t, d, n, true),
                     gs_min(t, d, n, false),  gs_logsumexp(t, d, n, true),
                     gs_argmax(t, dims[k % 2], true), gs_argmin(t, dims[k % 2], false),
                     gs_softmax(t, dims[k % 2]), gs_log_softmax(t, dims[k % 2])};
    double want[] = {2.5, 2.5, 2.5, 2.5, 2.5, 0, 0, 1, 0};
    for (size_t i = 0; i < G_N_ELEMENTS(r); i++) {
      test_assert_values(r[i], NULL, 0, &want[i], 1e-15, 0);
      gs_dispose(r[i]);
    }
  }
  gs_dispose(t);
}

/* max/min propagate NaN; argmax/argmin return the first NaN; ties go to the first. */
static void test_nan_and_ties(void) {
  int64_t shape[] = {2, 4};
  double v[] = {1, NAN, 5, NAN, 3, 7, 7, -INFINITY};
  for (size_t di = 0; di < G_N_ELEMENTS(float_dtypes); di++) {
    gs_tensor t = from_doubles(float_dtypes[di], shape, 2, v);
    int dim1 = 1;
    gs_tensor mx = gs_max(t, &dim1, 1, false), mn = gs_min(t, &dim1, 1, false);
    gs_tensor amx = gs_argmax(t, 1, false), amn = gs_argmin(t, -1, false);
    gs_tensor all_mx = gs_max(t, NULL, 0, false), lse = gs_logsumexp(t, &dim1, 1, false);
    double want_mx[] = {NAN, 7}, want_mn[] = {NAN, -INFINITY};
    double want_amx[] = {1, 1}, want_amn[] = {1, 3}, nan1[] = {NAN};
    int64_t out_shape[] = {2};
    test_assert_values(mx, out_shape, 1, want_mx, 0, 0);
    test_assert_values(mn, out_shape, 1, want_mn, 0, 0);
    test_assert_values(amx, out_shape, 1, want_amx, 0, 0);
    test_assert_values(amn, out_shape, 1, want_amn, 0, 0);
    test_assert_values(all_mx, NULL, 0, nan1, 0, 0);
    double lse1 = log(exp(3.0) + 2 * exp(7.0));
    double want_lse[] = {NAN, lse1};
    test_assert_values(lse, out_shape, 1, want_lse, 1e-6, 1e-6);
    gs_tensor amx_all = gs_argmax_all(t), amn_all = gs_argmin_all(t);
    double one[] = {1};
    test_assert_values(amx_all, NULL, 0, one, 0, 0);
    test_assert_values(amn_all, NULL, 0, one, 0, 0);
    DISPOSE_ALL(mx, mn, amx, amn, all_mx, lse, amx_all, amn_all, t);
  }
  /* Ties along dim 0, read through a transposed view: the first row wins. */
  int64_t ishape[] = {3, 2};
  int64_t iv[] = {4, 1, 9, 1, 9, 0};
  gs_tensor ti = gs_from_data(GS_I64, ishape, 2, iv);
  gs_tensor tt = gs_t(ti); /* [[4, 9, 9], [1, 1, 0]] */
  gs_tensor a1 = gs_argmax(tt, 1, true), a2 = gs_argmin(tt, 1, false);
  int64_t keep[] = {2, 1}, flat[] = {2};
  double want_a1[] = {1, 0}, want_a2[] = {0, 2};
  test_assert_values(a1, keep, 2, want_a1, 0, 0);
  test_assert_values(a2, flat, 1, want_a2, 0, 0);
  DISPOSE_ALL(a1, a2, tt, ti);
}

/* logsumexp subtracts the max: large values neither overflow nor underflow; infinite maxima
 * give themselves. */
static void test_logsumexp_stable(void) {
  int64_t shape[] = {4, 2};
  double v[] = {1000, 1000, -1000, -1000, -INFINITY, -INFINITY, INFINITY, 3};
  double want[] = {1000 + log(2.0), -1000 + log(2.0), -INFINITY, INFINITY};
  int64_t out_shape[] = {4};
  for (size_t di = 0; di < G_N_ELEMENTS(float_dtypes); di++) {
    gs_tensor t = from_doubles(float_dtypes[di], shape, 2, v);
    int dim = -1;
    gs_tensor l = gs_logsumexp(t, &dim, 1, false);
    test_assert_values(l, out_shape, 1, want, 1e-9, 1e-6);
    gs_dispose(l);
    gs_dispose(t);
  }
}

/* softmax/log_softmax stay finite on large logits; a row of -inf gives NaN as in PyTorch;
 * -inf entries in a finite row give 0 (and -inf for log_softmax). */
static void test_softmax_stable(void) {
  int64_t shape[] = {3, 2};
  double v[] = {1000, 1001, -INFINITY, -INFINITY, -INFINITY, 2};
  double e = exp(1.0);
  double want_soft[] = {1 / (1 + e), e / (1 + e), NAN, NAN, 0, 1};
  double want_log[] = {-log(1 + e), 1 - log(1 + e), NAN, NAN, -INFINITY, 0};
  for (size_t di = 0; di < G_N_ELEMENTS(float_dtypes); di++) {
    gs_tensor t = from_doubles(float_dtypes[di], shape, 2, v);
    gs_tensor s = gs_softmax(t, 1), l = gs_log_softmax(t, -1);
    test_assert_values(s, shape, 2, want_soft, 1e-6, 1e-6);
    test_assert_values(l, shape, 2, want_log, 1e-6, 1e-6);
    /* along dim 0 of the transpose: the same rows */
    gs_tensor tt = gs_t(t);
    gs_tensor st = gs_softmax(tt, 0), stt = gs_t(st);
    test_assert_values(stt, shape, 2, want_soft, 1e-6, 1e-6);
    DISPOSE_ALL(s, l, tt, st, stt, t);
  }
}

/* Long contiguous rows (max/min compare several lanes at once): a NaN or an infinity at any
 * position, in the lanes or in the tail, is found; other rows are unaffected. */
static void test_extremes_in_long_rows(void) {
  enum { ROWS = 3, LEN = 37 };
  int64_t shape[] = {ROWS, LEN};
  const double specials[] = {NAN, INFINITY, -INFINITY};
  bool reduced[GS_MAX_DIMS] = {false, true};
  for (size_t di = 0; di < G_N_ELEMENTS(float_dtypes); di++)
    for (size_t si = 0; si < G_N_ELEMENTS(specials); si++)
      for (int at = 0; at < LEN; at++) {
        double v[ROWS * LEN];
        for (int i = 0; i < ROWS * LEN; i++)
          v[i] = 3.0 * sin(0.7 * i);
        v[LEN + at] = specials[si]; /* row 1 only */
        gs_tensor t = from_doubles(float_dtypes[di], shape, 2, v);
        gs_tensor back = gs_to_dtype(t, GS_F64); /* the values as the dtype rounded them */
        gs_copy_to(back, v, sizeof v);
        int dim = 1;
        const ref_op ops[] = {REF_MAX, REF_MIN};
        for (size_t oi = 0; oi < G_N_ELEMENTS(ops); oi++) {
          gs_tensor r = ops[oi] == REF_MAX ? gs_max(t, &dim, 1, false) : gs_min(t, &dim, 1, false);
          double *expected = reference(ops[oi], v, shape, 2, reduced);
          int64_t out_shape[] = {ROWS};
          test_assert_values(r, out_shape, 1, expected, 0, 0);
          g_free(expected);
          gs_dispose(r);
        }
        gs_dispose(back);
        gs_dispose(t);
      }
}

/* Reductions through an arbitrary permutation (reduced dims far from memory order) and a
 * large [N, M] matrix over each dim: both fold orders (by rows and by runs) give the same
 * answers as the reference. */
static void test_permuted_and_large(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 3);
  int64_t base_shape[] = {3, 4, 5, 2};
  gs_tensor base = test_make(GS_F64, base_shape, 4, LAYOUT_CONTIGUOUS, -2, 2, &rng);
  int perm[] = {2, 0, 3, 1};
  gs_tensor p = gs_permute(base, perm, 4);
  int64_t pshape[GS_MAX_DIMS];
  int pn = gs_shape(p, pshape);
  double *v = test_values(p);
  for (size_t ki = 0; ki < G_N_ELEMENTS(dim_sets); ki++) {
    bool reduced[GS_MAX_DIMS];
    if (!dims_valid(&dim_sets[ki], pn, reduced))
      continue;
    const ref_op ops[] = {REF_SUM, REF_MAX, REF_ARGMIN};
    for (size_t oi = 0; oi < G_N_ELEMENTS(ops); oi++) {
      if (ops[oi] == REF_ARGMIN && dim_sets[ki].n != 1)
        continue;
      gs_tensor r = call_op(ops[oi], p, &dim_sets[ki], false);
      double *expected = reference(ops[oi], v, pshape, pn, reduced);
      int64_t shape[GS_MAX_DIMS];
      int ndim = result_shape(pshape, pn, reduced, false, shape);
      test_assert_values(r, shape, ndim, expected, 1e-12, 1e-12);
      g_free(expected);
      gs_dispose(r);
    }
  }
  g_free(v);
  gs_dispose(p);
  gs_dispose(base);

  int64_t big[] = {257, 1031};
  gs_tensor t = test_make(GS_F32, big, 2, LAYOUT_CONTIGUOUS, -1, 1, &rng);
  double *bv = test_values(t);
  for (int dim = 0; dim < 2; dim++) {
    bool reduced[GS_MAX_DIMS] = {false};
    reduced[dim] = true;
    dim_set ds = {1, {dim}};
    const ref_op ops[] = {REF_SUM, REF_MEAN, REF_MIN, REF_ARGMAX, REF_LOGSUMEXP};
    for (size_t oi = 0; oi < G_N_ELEMENTS(ops); oi++) {
      gs_tensor r = call_op(ops[oi], t, &ds, true);
      double *expected = reference(ops[oi], bv, big, 2, reduced);
      int64_t shape[GS_MAX_DIMS];
      int ndim = result_shape(big, 2, reduced, true, shape);
      test_assert_values(r, shape, ndim, expected, 1e-5, 1e-6);
      g_free(expected);
      gs_dispose(r);
    }
  }
  g_free(bv);
  gs_dispose(t);

  /* More outputs than one chunk of accumulators folded by rows (8192), and than one block of
   * softmax rows (256). */
  int64_t wide[] = {2, 9000};
  bool red0[GS_MAX_DIMS] = {true, false};
  gs_tensor w = test_make(GS_F32, wide, 2, LAYOUT_CONTIGUOUS, -1, 1, &rng);
  double *wv = test_values(w);
  dim_set d0 = {1, {0}};
  const ref_op wide_ops[] = {REF_SUM, REF_MAX, REF_ARGMIN, REF_LOGSUMEXP};
  for (size_t oi = 0; oi < G_N_ELEMENTS(wide_ops); oi++) {
    gs_tensor r = call_op(wide_ops[oi], w, &d0, false);
    double *expected = reference(wide_ops[oi], wv, wide, 2, red0);
    test_assert_values(r, &wide[1], 1, expected, 1e-5, 1e-6);
    g_free(expected);
    gs_dispose(r);
  }
  gs_tensor sm = gs_log_softmax(w, 0);
  double *expected = reference_softmax(true, wv, wide, 2, 0);
  test_assert_values(sm, wide, 2, expected, 1e-5, 1e-6);
  g_free(expected);
  gs_dispose(sm);
  g_free(wv);
  gs_dispose(w);
}

/* Results are new tensors: they share nothing with the input and leave it unchanged. */
static void test_outputs_are_new(void) {
  int64_t shape[] = {2, 3};
  double v[] = {1, 2, 3, 4, 5, 6};
  gs_tensor t = gs_from_data(GS_F64, shape, 2, v);
  int64_t version = gs_version(t);
  gs_tensor r[] = {gs_sum_to(t, shape, 2), gs_sum(t, NULL, 0, false), gs_softmax(t, 0)};
  for (size_t i = 0; i < G_N_ELEMENTS(r); i++) {
    g_assert_cmpuint(gs_storage_id(r[i]), !=, gs_storage_id(t));
    g_assert_false(gs_is_copy_on_write(r[i]));
    gs_dispose(r[i]);
  }
  g_assert_cmpint(gs_version(t), ==, version);
  test_assert_values(t, shape, 2, v, 0, 0);
  gs_dispose(t);
}

/* ---- errors --------------------------------------------------------------------------- */

static void test_errors(void) {
  int64_t shape[] = {2, 3, 4};
  gs_tensor f = gs_zeros(GS_F32, shape, 3);
  gs_tensor i = gs_zeros(GS_I64, shape, 3);
  gs_tensor b = gs_zeros(GS_BOOL, shape, 3);
  gs_tensor r = GS_NO_TENSOR;
  int bad[] = {3}, neg_bad[] = {-4}, repeated[] = {1, -2}, ok[] = {0};

  EXPECT_ERROR(r = gs_sum(f, bad, 1, false),
               "sum: expected a dimension in [-3, 2] for a 3-D tensor, got 3");
  EXPECT_ERROR(r = gs_max(f, neg_bad, 1, true), "max: expected a dimension in [-3, 2]");
  EXPECT_ERROR(r = gs_sum(f, repeated, 2, false),
               "sum: dim 1 appears more than once in the list of dims");
  EXPECT_ERROR(r = gs_logsumexp(f, repeated, 2, false), "dim 1 appears more than once");
  EXPECT_ERROR(r = gs_sum(f, NULL, 2, false), "sum: expected a list of dims");
  EXPECT_ERROR(r = gs_mean(f, ok, -1, false), "mean: expected a list of dims");
  EXPECT_ERROR(r = gs_mean(i, NULL, 0, false),
               "mean: expected a floating dtype (f32 or f64), got i64");
  EXPECT_ERROR(r = gs_mean(b, ok, 1, false), "mean: expected a floating dtype");
  EXPECT_ERROR(r = gs_logsumexp(i, ok, 1, false),
               "logsumexp: expected a floating dtype (f32 or f64), got i64");
  EXPECT_ERROR(r = gs_softmax(i, 0), "softmax: expected a floating dtype (f32 or f64), got i64");
  EXPECT_ERROR(r = gs_log_softmax(b, 0), "log_softmax: expected a floating dtype");
  EXPECT_ERROR(r = gs_softmax(f, 3), "softmax: expected a dimension in [-3, 2]");
  EXPECT_ERROR(r = gs_argmax(f, -4, false), "argmax: expected a dimension in [-3, 2]");
  EXPECT_ERROR(r = gs_argmin(f, 3, true), "argmin: expected a dimension in [-3, 2]");

  gs_tensor s = gs_scalar(GS_F32, 1.0);
  int one[] = {1}, both[] = {0, -1};
  EXPECT_ERROR(r = gs_sum(s, one, 1, false), "expected a dimension in [-1, 0] for a 0-D");
  EXPECT_ERROR(r = gs_sum(s, both, 2, false), "dim 0 appears more than once");

  int64_t empty_shape[] = {0, 3};
  gs_tensor e = gs_zeros(GS_F32, empty_shape, 2);
  EXPECT_ERROR(r = gs_max(e, ok, 1, false),
               "max: cannot reduce over dim 0 of size 0 (no identity)");
  EXPECT_ERROR(r = gs_min(e, NULL, 0, false),
               "min: cannot reduce over dim 0 of size 0 (no identity)");
  EXPECT_ERROR(r = gs_argmax(e, 0, false), "argmax: cannot reduce over dim 0 of size 0");
  EXPECT_ERROR(r = gs_argmin_all(e), "argmin_all: cannot reduce over dim 0 of size 0");

  int64_t incompatible[] = {3, 3}, too_many[] = {1, 2, 3, 4}, negative[] = {-1, 4};
  EXPECT_ERROR(r = gs_sum_to(f, incompatible, 2),
               "sum_to: expected a shape that broadcasts to [2, 3, 4], got [3, 3] (dim 1: "
               "size 3 is neither 1 nor 4)");
  EXPECT_ERROR(r = gs_sum_to(f, too_many, 4), "got [1, 2, 3, 4] (it has more dims)");
  EXPECT_ERROR(r = gs_sum_to(f, negative, 2), "sum_to: expected a shape that broadcasts");
  EXPECT_ERROR(r = gs_sum_to(f, NULL, 2), "sum_to: expected a shape of 0 to 8 sizes");
  int64_t one_size[] = {1};
  EXPECT_ERROR(r = gs_sum_to(s, one_size, 1), "expected a shape that broadcasts to [], got [1]");

  gs_tensor stale = gs_zeros(GS_F32, shape, 3);
  gs_dispose(stale);
  EXPECT_ERROR(r = gs_sum(stale, NULL, 0, false), "sum: tensor");
  EXPECT_ERROR(r = gs_softmax(stale, 0), "is stale");
  EXPECT_ERROR(r = gs_sum_to(GS_NO_TENSOR, shape, 3), "sum_to: expected a tensor");
  g_assert_true(gs_tensor_is_none(r));

  DISPOSE_ALL(e, s, f, i, b);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/reduce/sum/values", test_sum_values);
  g_test_add_func("/reduce/sum/i32-is-i64", test_i32_sum_is_i64);
  g_test_add_func("/reduce/mean/values", test_mean_values);
  g_test_add_func("/reduce/max/values", test_max_values);
  g_test_add_func("/reduce/min/values", test_min_values);
  g_test_add_func("/reduce/logsumexp/values", test_logsumexp_values);
  g_test_add_func("/reduce/argmax/values", test_argmax_values);
  g_test_add_func("/reduce/argmin/values", test_argmin_values);
  test_add_leak_checked("/reduce/arg-all/values", test_arg_all_values);
  test_add_leak_checked("/reduce/sum-to/values", test_sum_to_values);
  test_add_leak_checked("/reduce/sum-to/leading-dims-is-the-walk",
                        test_sum_to_leading_dims_is_the_walk);
  g_test_add_func("/reduce/softmax/values", test_softmax_values);
  g_test_add_func("/reduce/log-softmax/values", test_log_softmax_values);
  test_add_leak_checked("/reduce/sum/integers-exact", test_sum_integers_exact);
  test_add_leak_checked("/reduce/empty-reductions", test_empty_reductions);
  test_add_leak_checked("/reduce/zero-dim", test_zero_dim);
  test_add_leak_checked("/reduce/nan-and-ties", test_nan_and_ties);
  test_add_leak_checked("/reduce/logsumexp/stable", test_logsumexp_stable);
  test_add_leak_checked("/reduce/softmax/stable", test_softmax_stable);
  test_add_leak_checked("/reduce/softmax/rows-same-bits-any-layout",
                        test_softmax_rows_same_bits_any_layout);
  test_add_leak_checked("/reduce/extremes-in-long-rows", test_extremes_in_long_rows);
  test_add_leak_checked("/reduce/permuted-and-large", test_permuted_and_large);
  test_add_leak_checked("/reduce/outputs-are-new", test_outputs_are_new);
  test_add_leak_checked("/reduce/errors", test_errors);
  return g_test_run();
}
