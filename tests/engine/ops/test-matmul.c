/* test-matmul.c: gs_matmul and gs_addmm against plain reference loops, for every dtype,
 * every layout test_make produces and every operand-rank combination torch.matmul accepts;
 * transposed operands reaching BLAS without a copy; zero-size dims; the error messages. */
#include "test-util.h"

static const gs_dtype float_and_int_dtypes[] = {GS_F32, GS_F64, GS_I64};

/* Tolerances for a sum of k products of values in [-1, 1). */
static double atol_for(gs_dtype dtype, int64_t k) {
  return dtype == GS_F32 ? 1e-5 * (double)(k + 1) : dtype == GS_F64 ? 1e-12 * (double)(k + 1) : 0;
}

/* torch.matmul on row-major values, in double: a 1-D left operand is a row, a 1-D right
 * operand a column, batch dims broadcast. Fills the result's shape. */
static double *ref_matmul(const double *a, const int64_t *sa, int na, const double *b,
                          const int64_t *sb, int nb, int64_t *shape, int *ndim) {
  int64_t as[GS_MAX_DIMS], bs[GS_MAX_DIMS];
  int an = na, bn = nb;
  memcpy(as, sa, sizeof(int64_t) * (size_t)na);
  memcpy(bs, sb, sizeof(int64_t) * (size_t)nb);
  if (na == 1)
    as[0] = 1, as[1] = sa[0], an = 2;
  if (nb == 1)
    bs[0] = sb[0], bs[1] = 1, bn = 2;
  int64_t m = as[an - 2], k = as[an - 1], n = bs[bn - 1];
  int abatch = an - 2, bbatch = bn - 2;
  int nbatch = abatch > bbatch ? abatch : bbatch;
  int64_t batch[GS_MAX_DIMS];
  for (int d = 0; d < nbatch; d++) {
    int da = d - (nbatch - abatch), db = d - (nbatch - bbatch);
    int64_t x = da >= 0 ? as[da] : 1, y = db >= 0 ? bs[db] : 1;
    batch[d] = x == 1 ? y : x;
  }
  int64_t count = test_numel(batch, nbatch);
  double *out = g_new0(double, count * m * n + 1);
  for (int64_t bi = 0; bi < count; bi++) {
    int64_t index[GS_MAX_DIMS];
    test_unravel(bi, batch, nbatch, index);
    int64_t ia = test_ravel_broadcast(index, nbatch, as, abatch);
    int64_t ib = test_ravel_broadcast(index, nbatch, bs, bbatch);
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t l = 0; l < k; l++)
          s += a[ia * m * k + i * k + l] * b[ib * k * n + l * n + j];
        out[bi * m * n + i * n + j] = s;
      }
  }
  *ndim = nbatch;
  memcpy(shape, batch, sizeof(int64_t) * (size_t)nbatch);
  if (na > 1)
    shape[(*ndim)++] = m;
  if (nb > 1)
    shape[(*ndim)++] = n;
  return out;
}

/* A tensor over a malloc'd buffer exactly as long as shape and strides reach, so a read past
 * the operand (by BLAS too, which ASan does not instrument) is caught by valgrind. */
static void free_blob(void *data, void *user_data) {
  (void)user_data;
  g_free(data);
}

static gs_tensor exact_blob(gs_dtype dtype, const int64_t *shape, int ndim,
                            const int64_t *strides, gs_rng *rng) {
  int64_t extent = 1;
  for (int d = 0; d < ndim; d++)
    extent += (shape[d] - 1) * strides[d];
  size_t es = gs_dtype_size(dtype);
  char *data = g_malloc((size_t)extent * es);
  for (int64_t i = 0; i < extent; i++) {
    double v = gs_rng_uniform(rng) * 2 - 1;
    float f = (float)v;
    memcpy(data + i * (int64_t)es, dtype == GS_F32 ? (void *)&f : (void *)&v, es);
  }
  return gs_from_blob(dtype, shape, ndim, strides, data, free_blob, NULL);
}

/* Leaves NaN-filled buffers of the given shape's size class in the allocator's cache, so the
 * next results of that size reuse them: a result that is not fully written shows NaNs.
 * Several, because operand copies made before the result may take one. */
static void poison_cache(gs_dtype dtype, const int64_t *shape, int ndim) {
  gs_tensor t[4];
  for (int i = 0; i < 4; i++)
    t[i] = gs_full(dtype, shape, ndim, NAN);
  for (int i = 0; i < 4; i++)
    gs_dispose(t[i]);
}

static void check_matmul(gs_dtype dtype, const int64_t *sa, int na, test_layout la,
                         const int64_t *sb, int nb, test_layout lb, gs_rng *rng) {
  double lo = dtype == GS_I64 ? -5 : -1, hi = dtype == GS_I64 ? 5 : 1;
  gs_tensor a = test_make(dtype, sa, na, la, lo, hi, rng);
  gs_tensor b = test_make(dtype, sb, nb, lb, lo, hi, rng);
  double *va = test_values(a), *vb = test_values(b);
  int64_t shape[GS_MAX_DIMS];
  int ndim;
  double *expected = ref_matmul(va, sa, na, vb, sb, nb, shape, &ndim);
  int64_t version_a = gs_version(a), version_b = gs_version(b);
  poison_cache(dtype, shape, ndim); /* the result must not depend on its buffer's old bytes */
  gs_tensor c = gs_matmul(a, b);
  g_assert_false(gs_tensor_is_none(c));
  g_assert_cmpint(gs_dtype_of(c), ==, dtype);
  /* Empty results are skipped: engine/core's gs__is_contiguous calls a fresh [3, 0] tensor
   * (strides [1, 1]) non-contiguous. */
  g_assert_true(gs_numel(c) == 0 || gs_is_contiguous(c));
  g_assert_cmpint(gs_version(a), ==, version_a); /* operands are only read */
  g_assert_cmpint(gs_version(b), ==, version_b);
  int64_t k = sa[na - 1];
  test_assert_values(c, shape, ndim, expected, atol_for(dtype, k), dtype == GS_I64 ? 0 : 1e-6);
  g_free(va);
  g_free(vb);
  g_free(expected);
  DISPOSE_ALL(a, b, c);
}

typedef struct shape_pair {
  int na, nb;
  int64_t a[4], b[4];
} shape_pair;

/* Every rank combination of torch.matmul, with broadcast batch dims and size-1 M, N, K. */
static const shape_pair matmul_cases[] = {
    {1, 1, {5}, {5}},                       /* dot: 0-D result */
    {2, 2, {3, 4}, {4, 5}},                 /* mm */
    {1, 2, {4}, {4, 5}},                    /* vector @ matrix */
    {2, 1, {3, 4}, {4}},                    /* matrix @ vector */
    {3, 2, {2, 3, 4}, {4, 5}},              /* batch @ matrix: folds into one gemm */
    {4, 2, {2, 1, 3, 4}, {4, 5}},           /* folds across a size-1 batch dim */
    {3, 3, {2, 3, 4}, {2, 4, 5}},           /* batch @ batch */
    {4, 3, {2, 1, 3, 4}, {5, 4, 2}},        /* broadcast batch dims both ways */
    {3, 3, {1, 3, 4}, {2, 4, 5}},           /* a broadcast along the batch */
    {2, 3, {3, 4}, {2, 4, 5}},              /* matrix @ batch */
    {1, 3, {4}, {2, 4, 5}},                 /* vector @ batch */
    {3, 1, {2, 3, 4}, {4}},                 /* batch @ vector */
    {3, 2, {2, 1, 4}, {4, 3}},              /* M == 1 */
    {2, 2, {3, 4}, {4, 1}},                 /* N == 1 */
    {2, 2, {3, 1}, {1, 4}},                 /* K == 1: an outer product */
    {2, 2, {1, 1}, {1, 1}},
    {2, 2, {37, 70}, {70, 45}},             /* past BLAS's small-matrix blocks */
};

static void test_matmul_all_combinations(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 1);
  for (size_t di = 0; di < G_N_ELEMENTS(float_and_int_dtypes); di++)
    for (size_t ci = 0; ci < G_N_ELEMENTS(matmul_cases); ci++)
      for (int la = 0; la < LAYOUT_COUNT; la++)
        for (int lb = 0; lb < LAYOUT_COUNT; lb++) {
          const shape_pair *c = &matmul_cases[ci];
          check_matmul(float_and_int_dtypes[di], c->a, c->na, la, c->b, c->nb, lb, &rng);
        }
}

/* A contiguous [rows, cols] f32 tensor viewed through a slice of a wider one: rows are
 * ld apart (ld > cols), columns adjacent. */
static gs_tensor row_sliced(int64_t rows, int64_t cols, int64_t ld, gs_rng *rng) {
  int64_t big[2] = {rows, ld};
  gs_tensor base = gs_uniform(GS_F32, big, 2, -1, 1, rng);
  gs_tensor view = gs_slice(base, 1, 1, 1 + cols, 1);
  gs_dispose(base);
  return view;
}

/* Allocations made by a @ b (a 2-D); the result's buffer is poisoned first, so a result
 * left unwritten cannot pass for one computed earlier into the same reused buffer. */
static uint64_t allocations_during_matmul(gs_tensor a, gs_tensor b, gs_tensor *c) {
  gs_memory_stats before, after;
  int64_t rows = gs_size(a, 0) * gs_size(b, -1) * (gs_numel(b) / (gs_size(b, -2) * gs_size(b, -1)));
  poison_cache(gs_dtype_of(a), &rows, 1);
  gs_memory_get_stats(&before);
  *c = gs_matmul(a, b);
  gs_memory_get_stats(&after);
  return after.allocations - before.allocations;
}

/* Checks c == a @ b for 2-D operands. */
static void assert_product(gs_tensor a, gs_tensor b, gs_tensor c) {
  int64_t sa[2], sb[2], shape[GS_MAX_DIMS];
  int ndim;
  gs_shape(a, sa);
  gs_shape(b, sb);
  double *va = test_values(a), *vb = test_values(b);
  double *expected = ref_matmul(va, sa, 2, vb, sb, 2, shape, &ndim);
  test_assert_values(c, shape, ndim, expected, atol_for(gs_dtype_of(c), sa[1]), 1e-6);
  g_free(va);
  g_free(vb);
  g_free(expected);
}

/* Transposed and row-sliced operands go to BLAS as they are: the only allocation is the
 * result's. */
static void test_matmul_transposed_operands_are_not_copied(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 2);
  int64_t sa[2] = {24, 16}, sb[2] = {16, 20};
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++) {
      gs_tensor a = test_make(GS_F32, sa, 2, ta ? LAYOUT_TRANSPOSED : LAYOUT_CONTIGUOUS, -1, 1,
                              &rng);
      gs_tensor b = test_make(GS_F32, sb, 2, tb ? LAYOUT_TRANSPOSED : LAYOUT_CONTIGUOUS, -1, 1,
                              &rng);
      g_assert_cmpint(gs_is_contiguous(a), ==, !ta);
      gs_tensor c;
      g_assert_cmpuint(allocations_during_matmul(a, b, &c), ==, 1);
      assert_product(a, b, c);
      DISPOSE_ALL(a, b, c);
    }

  /* Rows ld apart (a slice of a wider matrix), and its transpose. */
  gs_tensor a = row_sliced(24, 16, 23, &rng);
  gs_tensor bt = row_sliced(20, 16, 31, &rng);
  gs_tensor b = gs_t(bt);
  g_assert_cmpint(gs_stride(a, 0), ==, 23);
  g_assert_cmpint(gs_stride(b, 1), ==, 31);
  gs_tensor c;
  g_assert_cmpuint(allocations_during_matmul(a, b, &c), ==, 1);
  assert_product(a, b, c);
  gs_dispose(c);

  /* f64 too. */
  gs_tensor a64 = gs_to_dtype(a, GS_F64), b64c = gs_to_dtype(bt, GS_F64);
  gs_tensor b64 = gs_t(b64c);
  g_assert_cmpuint(allocations_during_matmul(a64, b64, &c), ==, 1);
  assert_product(a64, b64, c);
  gs_dispose(c);

  /* A column-strided slice is a layout BLAS cannot read: it is copied (proving the counter
   * sees copies). */
  gs_tensor strided = gs_slice(a, 1, 0, 16, 2);
  gs_tensor b_short = gs_slice(b, 0, 0, 8, 1);
  g_assert_cmpuint(allocations_during_matmul(strided, b_short, &c), ==, 2);
  assert_product(strided, b_short, c);
  gs_dispose(c);

  DISPOSE_ALL(a, bt, b, a64, b64c, b64, strided, b_short);
}

/* Operands that end exactly where their memory does, in every layout BLAS reads directly:
 * BLAS must read no element beyond them (run under valgrind to see it). */
static void test_matmul_reads_stay_inside_operands(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 7);
  typedef struct {
    int na, nb;
    int64_t a[3], sa[3], b[3], sb[3];
  } blob_case;
  static const blob_case cases[] = {
      {2, 2, {5, 7}, {9, 1}, {7, 6}, {1, 8}},            /* row-sliced @ transposed */
      {2, 2, {5, 7}, {1, 6}, {7, 6}, {10, 1}},           /* transposed @ row-sliced */
      {3, 2, {3, 5, 7}, {50, 9, 1}, {7, 6}, {1, 7}},     /* strided batch (no fold) */
      {3, 2, {3, 5, 7}, {35, 7, 1}, {7, 6}, {6, 1}},     /* folded batch */
      {3, 3, {2, 5, 7}, {1, 10, 1}, {2, 7, 6}, {0, 1, 7}}, /* overlapping and broadcast batches */
      {1, 2, {7}, {3}, {7, 6}, {1, 7}},                  /* strided vector @ transposed */
      {2, 1, {5, 7}, {1, 5}, {7}, {2}},                  /* transposed @ strided vector */
      {1, 1, {7}, {2}, {7}, {3}},                        /* strided dot */
  };
  gs_dtype floats[] = {GS_F32, GS_F64};
  for (int di = 0; di < 2; di++)
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
      const blob_case *c = &cases[i];
      gs_tensor a = exact_blob(floats[di], c->a, c->na, c->sa, &rng);
      gs_tensor b = exact_blob(floats[di], c->b, c->nb, c->sb, &rng);
      gs_tensor r = gs_matmul(a, b);
      double *va = test_values(a), *vb = test_values(b);
      int64_t shape[GS_MAX_DIMS];
      int ndim;
      double *expected = ref_matmul(va, c->a, c->na, vb, c->b, c->nb, shape, &ndim);
      test_assert_values(r, shape, ndim, expected, atol_for(floats[di], 7), 1e-6);
      g_free(va);
      g_free(vb);
      g_free(expected);
      DISPOSE_ALL(a, b, r);
    }
}

/* Size-1 dims may carry any stride (here, from unsqueeze and expand) and still need no
 * copy; a stride-0 dim of size > 1 inside a matrix needs one. */
static void test_matmul_size_one_and_broadcast_strides(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 3);
  int64_t sv[1] = {16}, sm[2] = {16, 8};
  gs_tensor v = gs_uniform(GS_F32, sv, 1, -1, 1, &rng);
  gs_tensor m = gs_uniform(GS_F32, sm, 2, -1, 1, &rng);
  gs_tensor row = gs_unsqueeze(v, 0);   /* [1, 16] */
  gs_tensor col = gs_unsqueeze(v, 1);   /* [16, 1] */
  gs_tensor c;
  g_assert_cmpuint(allocations_during_matmul(row, m, &c), ==, 1);
  assert_product(row, m, c);
  gs_dispose(c);
  gs_tensor mt = gs_t(m); /* [8, 16] */
  g_assert_cmpuint(allocations_during_matmul(mt, col, &c), ==, 1);
  assert_product(mt, col, c);
  gs_dispose(c);

  /* A row made by expand has stride 0 along its single row: still no copy. */
  int64_t one_row[2] = {1, 16};
  gs_tensor row0 = gs_expand(v, one_row, 2);
  g_assert_cmpint(gs_stride(row0, 0), ==, 0);
  g_assert_cmpuint(allocations_during_matmul(row0, m, &c), ==, 1);
  assert_product(row0, m, c);
  gs_dispose(c);

  /* A column of one value expanded across rows: stride 0 along rows. */
  int64_t one[2] = {1, 8}, wide[2] = {16, 8};
  gs_tensor r = gs_uniform(GS_F32, one, 2, -1, 1, &rng);
  gs_tensor expanded = gs_expand(r, wide, 2);
  g_assert_cmpuint(allocations_during_matmul(mt, expanded, &c), ==, 2);
  assert_product(mt, expanded, c);
  gs_dispose(c);

  /* A batch broadcast with stride 0 reads the same matrix for every entry, uncopied. */
  int64_t batched[3] = {3, 16, 8};
  gs_tensor mb = gs_expand(m, batched, 3);
  g_assert_cmpuint(allocations_during_matmul(mt, mb, &c), ==, 1);
  double *vm = test_values(m), *vmt = test_values(mt);
  int64_t shape[GS_MAX_DIMS], smt[2] = {8, 16};
  int ndim;
  double *once = ref_matmul(vmt, smt, 2, vm, sm, 2, shape, &ndim);
  double expected[3 * 8 * 8];
  for (int i = 0; i < 3; i++)
    memcpy(expected + i * 64, once, sizeof(double) * 64);
  int64_t out_shape[3] = {3, 8, 8};
  test_assert_values(c, out_shape, 3, expected, 1e-4, 1e-6);
  g_free(vm);
  g_free(vmt);
  g_free(once);
  gs_dispose(c);

  /* A broadcast batch over a layout BLAS cannot read: the one matrix is copied once, not
   * once per batch entry. */
  int64_t many[3] = {50, 16, 8};
  gs_tensor mb_strided = gs_expand(expanded, many, 3);
  gs_memory_stats before, after;
  gs_memory_reset_peak();
  gs_memory_get_stats(&before);
  c = gs_matmul(mt, mb_strided);
  gs_memory_get_stats(&after);
  uint64_t result_bytes = gs_memory_size_class(50 * 8 * 8 * sizeof(float));
  uint64_t matrix_bytes = gs_memory_size_class(16 * 8 * sizeof(float));
  g_assert_cmpuint(after.peak_bytes_in_use - before.bytes_in_use, <=, result_bytes + matrix_bytes);
  gs_dispose(c);

  DISPOSE_ALL(v, m, row, col, mt, r, expanded, mb, row0, mb_strided);
}

static void test_matmul_zero_size(void) {
  static const shape_pair cases[] = {
      {2, 2, {0, 4}, {4, 5}},    {2, 2, {3, 0}, {0, 5}},    {2, 2, {3, 4}, {4, 0}},
      {3, 2, {0, 3, 4}, {4, 5}}, {3, 3, {2, 3, 0}, {2, 0, 4}}, {1, 1, {0}, {0}},
      {1, 2, {0}, {0, 3}},       {3, 3, {1, 3, 4}, {0, 4, 5}},
  };
  gs_rng rng;
  gs_rng_seed(&rng, 4);
  for (size_t di = 0; di < G_N_ELEMENTS(float_and_int_dtypes); di++)
    for (size_t ci = 0; ci < G_N_ELEMENTS(cases); ci++) {
      gs_dtype dtype = float_and_int_dtypes[di];
      const shape_pair *c = &cases[ci];
      /* check_matmul poisons the result's buffer: K == 0 results must be written zeros. */
      check_matmul(dtype, c->a, c->na, LAYOUT_CONTIGUOUS, c->b, c->nb, LAYOUT_TRANSPOSED, &rng);
    }
}

static void check_addmm(gs_dtype dtype, const int64_t *sbias, int nbias, test_layout lbias,
                        test_layout la, test_layout lb, double beta, double alpha,
                        bool nan_bias, int64_t k, gs_rng *rng) {
  double lo = dtype == GS_I64 ? -5 : -1, hi = dtype == GS_I64 ? 5 : 1;
  int64_t sa[2] = {4, k}, sb[2] = {k, 6}, so[2] = {4, 6};
  gs_tensor a = test_make(dtype, sa, 2, la, lo, hi, rng);
  gs_tensor b = test_make(dtype, sb, 2, lb, lo, hi, rng);
  gs_tensor bias = nan_bias ? gs_full(dtype, sbias, nbias, NAN)
                            : test_make(dtype, sbias, nbias, lbias, lo, hi, rng);
  poison_cache(dtype, so, 2);
  gs_tensor c = gs_addmm(bias, a, b, beta, alpha);
  g_assert_false(gs_tensor_is_none(c));
  double *va = test_values(a), *vb = test_values(b), *vbias = test_values(bias);
  double expected[24];
  for (int64_t i = 0; i < 4; i++)
    for (int64_t j = 0; j < 6; j++) {
      double s = 0;
      for (int64_t l = 0; l < k; l++)
        s += va[i * k + l] * vb[l * 6 + j];
      int64_t index[2] = {i, j};
      double addend = beta == 0 ? 0 : beta * vbias[test_ravel_broadcast(index, 2, sbias, nbias)];
      expected[i * 6 + j] = alpha * s + addend;
    }
  test_assert_values(c, so, 2, expected, atol_for(dtype, k) * 4, dtype == GS_I64 ? 0 : 1e-6);
  g_free(va);
  g_free(vb);
  g_free(vbias);
  DISPOSE_ALL(a, b, bias, c);
}

static void test_addmm(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 5);
  typedef struct {
    int n;
    int64_t s[2];
  } bias_shape;
  static const bias_shape biases[] = {{2, {4, 6}}, {1, {6}}, {2, {1, 6}}, {2, {4, 1}}, {0, {0}}};
  static const double coefficients[][2] = {{1, 1}, {0.5, 2}, {-3, 0.25}, {0, 1}, {2, 0}};
  for (size_t di = 0; di < G_N_ELEMENTS(float_and_int_dtypes); di++)
    for (size_t bi = 0; bi < G_N_ELEMENTS(biases); bi++)
      for (size_t ci = 0; ci < G_N_ELEMENTS(coefficients); ci++)
        for (int layout = 0; layout < LAYOUT_COUNT; layout++) {
          gs_dtype dtype = float_and_int_dtypes[di];
          double beta = coefficients[ci][0], alpha = coefficients[ci][1];
          if (dtype == GS_I64 && (beta != floor(beta) || alpha != floor(alpha)))
            continue;
          const bias_shape *s = &biases[bi];
          check_addmm(dtype, s->s, s->n, layout, layout, (layout + 1) % LAYOUT_COUNT, beta,
                      alpha, false, 5, &rng);
          /* K == 0: only beta * bias remains. */
          check_addmm(dtype, s->s, s->n, layout, LAYOUT_CONTIGUOUS, LAYOUT_CONTIGUOUS, beta,
                      alpha, false, 0, &rng);
        }
}

/* beta == 0 ignores the bias's values, NaNs included, as PyTorch (and BLAS) do; the
 * result's reused buffer is ignored too. */
static void test_addmm_beta_zero_ignores_nan_bias(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 6);
  int64_t sbias[2] = {4, 6};
  gs_dtype floats[] = {GS_F32, GS_F64};
  for (int i = 0; i < 2; i++)
    for (int64_t k = 0; k < 6; k += 5)
      check_addmm(floats[i], sbias, 2, LAYOUT_CONTIGUOUS, LAYOUT_TRANSPOSED, LAYOUT_SLICED, 0, 1.5,
                  true, k, &rng);
}

static void test_matmul_errors(void) {
  int64_t s34[2] = {3, 4}, s56[2] = {5, 6}, s3[1] = {3}, s4[1] = {4}, s45[2] = {4, 5};
  int64_t s234[3] = {2, 3, 4}, s546[3] = {5, 4, 6};
  gs_tensor a = gs_ones(GS_F32, s34, 2), b = gs_ones(GS_F32, s56, 2);
  gs_tensor v3 = gs_ones(GS_F32, s3, 1), v4 = gs_ones(GS_F32, s4, 1);
  gs_tensor b64 = gs_ones(GS_F64, s45, 2), bb = gs_ones(GS_BOOL, s34, 2);
  gs_tensor bt = gs_ones(GS_BOOL, s45, 2), scalar = gs_scalar(GS_F32, 2);
  gs_tensor x = gs_ones(GS_F32, s234, 3), y = gs_ones(GS_F32, s546, 3);
  gs_tensor r;

  EXPECT_ERROR(r = gs_matmul(a, b), "matmul: shapes [3, 4] and [5, 6] cannot be multiplied (4 != 5)");
  g_assert_true(gs_tensor_is_none(r));
  EXPECT_ERROR(r = gs_matmul(v3, v4), "matmul: shapes [3] and [4] cannot be multiplied (3 != 4)");
  EXPECT_ERROR(r = gs_matmul(a, v3), "matmul: shapes [3, 4] and [3] cannot be multiplied (4 != 3)");
  EXPECT_ERROR(r = gs_matmul(x, y),
               "matmul: shapes [2, 3, 4] and [5, 4, 6] cannot be multiplied: batch dims [2] "
               "and [5] do not broadcast");
  EXPECT_ERROR(r = gs_matmul(a, b64), "matmul: expected operands of the same dtype, got f32 and f64");
  EXPECT_ERROR(r = gs_matmul(bb, bt),
               "matmul: expected f32, f64 or integer (i64, i32, i16, i8, u8) operands, got bool");
  EXPECT_ERROR(r = gs_matmul(scalar, a),
               "matmul: expected operands of at least 1 dimension, got 0-D and 2-D");
  EXPECT_ERROR(r = gs_matmul(a, GS_NO_TENSOR), "matmul: expected a tensor, got the empty handle");

  gs_tensor gone = gs_ones(GS_F32, s45, 2);
  gs_dispose(gone);
  EXPECT_ERROR(r = gs_matmul(a, gone), "matmul: tensor");
  g_assert_true(gs_tensor_is_none(r));

  /* Sizes past BLAS's int: refused before anything is allocated (a stride-0 expand makes
   * the huge operand without memory). */
  int64_t one[2] = {1, 1}, tall[2] = {(int64_t)1 << 31, 1};
  gs_tensor unit = gs_ones(GS_F32, one, 2);
  gs_tensor huge = gs_expand(unit, tall, 2);
  EXPECT_ERROR(r = gs_matmul(huge, unit),
               "matmul: a product of 2147483648 x 1 and 1 x 1 matrices exceeds BLAS's size "
               "limit 2147483647");
  gs_dispose(huge);
  gs_dispose(unit);

  /* addmm */
  gs_tensor f45 = gs_ones(GS_F32, s45, 2), bias_bad = gs_ones(GS_F32, s3, 1);
  gs_tensor bias64 = gs_ones(GS_F64, s3, 1);
  gs_tensor i34 = gs_ones(GS_I64, s34, 2), i45 = gs_ones(GS_I64, s45, 2);
  EXPECT_ERROR(r = gs_addmm(v3, a, b, 1, 1),
               "addmm: shapes [3, 4] and [5, 6] cannot be multiplied (4 != 5)");
  EXPECT_ERROR(r = gs_addmm(bias_bad, a, f45, 1, 1),
               "addmm: bias of shape [3] cannot be broadcast to the product's shape [3, 5]");
  EXPECT_ERROR(r = gs_addmm(bias64, a, f45, 1, 1),
               "addmm: expected a bias of the operands' dtype f32, got f64");
  EXPECT_ERROR(r = gs_addmm(v3, v4, f45, 1, 1), "addmm: expected 2-D matrices a and b, got 1-D and 2-D");
  EXPECT_ERROR(r = gs_addmm(v3, a, b64, 1, 1), "addmm: expected operands of the same dtype, got f32 and f64");
  EXPECT_ERROR(r = gs_addmm(i34, i34, i45, 0.5, 1),
               "addmm: expected integral beta and alpha for i64 tensors, got beta 0.5 and alpha 1");
  EXPECT_ERROR(r = gs_addmm(i34, i34, i45, 1, NAN), "addmm: expected integral beta and alpha");
  g_assert_true(gs_tensor_is_none(r));

  DISPOSE_ALL(a, b, v3, v4, b64, bb, bt, scalar, x, y, f45, bias_bad, bias64, i34, i45);
}

/* The strict products (torch.mm, bmm, mv, dot): matmul's values, their own node names, and
 * every operand of the wrong dims refused naming both shapes; bmm does not broadcast. */
static void test_strict_products(void) {
  gs_tensor a = gs_from_data(GS_F64, (int64_t[]){2, 3}, 2, (double[]){1, 2, 3, 4, 5, 6});
  gs_tensor b = gs_from_data(GS_F64, (int64_t[]){3, 2}, 2, (double[]){1, -1, 2, 0, 0, 3});
  gs_tensor v = gs_from_data(GS_F64, (int64_t[]){3}, 1, (double[]){1, 2, -1});
  gs_tensor ba = gs_stack((gs_tensor[]){a, a}, 2, 0);
  gs_tensor bb = gs_stack((gs_tensor[]){b, b}, 2, 0);
  gs_set_requires_grad(a, true);
  gs_tensor mm = gs_mm(a, b), mv = gs_mv(a, v), dot = gs_dot(v, v), bmm = gs_bmm(ba, bb);
  test_assert_values(mm, (int64_t[]){2, 2}, 2, (double[]){5, 8, 14, 14}, 0, 0);
  test_assert_values(mv, (int64_t[]){2}, 1, (double[]){2, 8}, 0, 0);
  test_assert_values(dot, NULL, 0, (double[]){6}, 0, 0);
  test_assert_values(bmm, (int64_t[]){2, 2, 2}, 3, (double[]){5, 8, 14, 14, 5, 8, 14, 14}, 0, 0);
  g_assert_cmpstr(gs_grad_fn_name(mm), ==, "MmBackward");
  g_assert_cmpstr(gs_grad_fn_name(mv), ==, "MvBackward");

  gs_tensor r = GS_NO_TENSOR, c = gs_ones(GS_F64, (int64_t[]){3, 3, 2}, 3);
  EXPECT_ERROR(r = gs_mm(a, v),
               "mm: expected two 2-D matrices, got operands of shapes [2, 3] and [3]");
  EXPECT_ERROR(r = gs_mm(a, a), "mm: shapes [2, 3] and [2, 3] cannot be multiplied (3 != 2)");
  EXPECT_ERROR(r = gs_bmm(a, b), "bmm: expected two 3-D batches of matrices, got operands of "
                                 "shapes [2, 3] and [3, 2]");
  EXPECT_ERROR(r = gs_bmm(ba, c),
               "bmm: expected batches of the same size, got shapes [2, 2, 3] and [3, 3, 2] "
               "(2 != 3 matrices)");
  EXPECT_ERROR(r = gs_mv(v, a), "mv: expected a 2-D matrix and a 1-D vector, got operands of "
                                "shapes [3] and [2, 3]");
  EXPECT_ERROR(r = gs_dot(v, a),
               "dot: expected two 1-D vectors, got operands of shapes [3] and [2, 3]");
  g_assert_true(gs_tensor_is_none(r));
  DISPOSE_ALL(a, b, v, ba, bb, mm, mv, dot, bmm, c);
}

/* i64 products wrap on overflow, as PyTorch's CPU kernel does (and UBSan stays quiet). */
static void test_matmul_i64_wraps(void) {
  int64_t s[2] = {1, 2}, st[2] = {2, 1};
  int64_t av[2] = {INT64_MAX, 2}, bv[2] = {2, 3};
  gs_tensor a = gs_from_data(GS_I64, s, 2, av), b = gs_from_data(GS_I64, st, 2, bv);
  gs_tensor c = gs_matmul(a, b);
  int64_t got;
  gs_copy_to(c, &got, sizeof got);
  g_assert_cmpint(got, ==, (int64_t)((uint64_t)INT64_MAX * 2u + 6u));
  DISPOSE_ALL(a, b, c);
}

/* i32 products as torch.int32's on CPU: exact, wrapping at 32 bits, a transposed operand read
 * in place; i32 with i64 is refused as torch refuses it. */
static void test_matmul_i32(void) {
  gs_tensor a = gs_from_data(GS_I32, (int64_t[]){2, 2}, 2, (int32_t[]){1, 2, 3, 4});
  gs_tensor c = gs_matmul(a, a), at = gs_t(a), ct = gs_matmul(at, a);
  g_assert_cmpint(gs_dtype_of(c), ==, GS_I32);
  test_assert_values(c, (int64_t[]){2, 2}, 2, (double[]){7, 10, 15, 22}, 0, 0);
  test_assert_values(ct, (int64_t[]){2, 2}, 2, (double[]){10, 14, 14, 20}, 0, 0);
  gs_tensor big = gs_from_data(GS_I32, (int64_t[]){1, 2}, 2, (int32_t[]){INT32_MAX, 2});
  gs_tensor col = gs_from_data(GS_I32, (int64_t[]){2, 1}, 2, (int32_t[]){2, 3});
  gs_tensor w = gs_matmul(big, col);
  int32_t got;
  gs_copy_to(w, &got, sizeof got);
  g_assert_cmpint(got, ==, (int32_t)((uint32_t)INT32_MAX * 2u + 6u));
  gs_tensor wide = gs_to_dtype(a, GS_I64), r = GS_NO_TENSOR;
  EXPECT_ERROR(r = gs_matmul(a, wide),
               "matmul: expected operands of the same dtype, got i32 and i64");
  g_assert_true(gs_tensor_is_none(r));
  DISPOSE_ALL(a, c, at, ct, big, col, w, wide);
}

/* u8, i8 and i16 products wrap at their width as torch's (u8 [16, 16] @ [16, 1] is 512, so
 * 0); a transposed i16 operand is read in place; addmm's beta scales an i8 bias. */
static void test_matmul_small_ints(void) {
  gs_tensor a = gs_from_data(GS_U8, (int64_t[]){1, 2}, 2, (uint8_t[]){16, 16});
  gs_tensor b = gs_from_data(GS_U8, (int64_t[]){2, 1}, 2, (uint8_t[]){16, 17});
  gs_tensor c = gs_matmul(a, b);
  g_assert_cmpint(gs_dtype_of(c), ==, GS_U8);
  test_assert_values(c, (int64_t[]){1, 1}, 2, (double[]){16}, 0, 0); /* 528 - 512 */
  gs_tensor s = gs_from_data(GS_I16, (int64_t[]){2, 2}, 2, (int16_t[]){1, -2, 300, 4});
  gs_tensor st = gs_t(s), p = gs_matmul(st, s);
  test_assert_values(p, (int64_t[]){2, 2}, 2, (double[]){90001 - 65536, 1198, 1198, 20}, 0, 0);
  gs_tensor x = gs_from_data(GS_I8, (int64_t[]){2, 2}, 2, (int8_t[]){1, 2, 3, 4});
  gs_tensor bias = gs_from_data(GS_I8, (int64_t[]){2}, 1, (int8_t[]){100, -100});
  gs_tensor y = gs_addmm(bias, x, x, 2, 1);
  g_assert_cmpint(gs_dtype_of(y), ==, GS_I8);
  test_assert_values(y, (int64_t[]){2, 2}, 2,
                     (double[]){207 - 256, -190 + 256, 215 - 256, -178 + 256}, 0, 0);
  DISPOSE_ALL(a, b, c, s, st, p, x, bias, y);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  test_add_leak_checked("/matmul/i32", test_matmul_i32);
  test_add_leak_checked("/matmul/small-ints", test_matmul_small_ints);
  test_add_leak_checked("/matmul/all-combinations", test_matmul_all_combinations);
  test_add_leak_checked("/matmul/transposed-operands-are-not-copied",
                        test_matmul_transposed_operands_are_not_copied);
  test_add_leak_checked("/matmul/reads-stay-inside-operands",
                        test_matmul_reads_stay_inside_operands);
  test_add_leak_checked("/matmul/size-one-and-broadcast-strides",
                        test_matmul_size_one_and_broadcast_strides);
  test_add_leak_checked("/matmul/zero-size", test_matmul_zero_size);
  test_add_leak_checked("/matmul/i64-wraps", test_matmul_i64_wraps);
  test_add_leak_checked("/matmul/errors", test_matmul_errors);
  test_add_leak_checked("/matmul/strict-products", test_strict_products);
  test_add_leak_checked("/addmm/values", test_addmm);
  test_add_leak_checked("/addmm/beta-zero-ignores-nan-bias", test_addmm_beta_zero_ignores_nan_bias);
  return g_test_run();
}
