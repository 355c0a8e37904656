/* test-small-gemm.c: the small f32 product (engine/ops/small-gemm-avx512.c) sums each output
 * in the order small-gemm.h promises, bit for bit, and within rounding of sgemm's, for every
 * layout matmul hands it (a and b each as rows or transposed,
 * leading dimensions past the sizes; a b read transposed both ways small-gemm.h describes),
 * with and without c's own values added, and leaves c's columns past n alone; and the sizes
 * it takes are the ones small-gemm.h promises. */
#include <cblas.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "ops-impl.h"
#include "small-gemm.h"
#include "test-util.h"

static bool have_avx512(void) {
  if (gs__cpu_level_get() >= GS__CPU_AVX512)
    return true;
  g_test_skip("this CPU (or GS_CPU_FEATURES) runs the portable code only");
  return false;
}

static float *random_floats(GRand *rng, int64_t count, double bound) {
  float *v = g_new(float, count);
  for (int64_t i = 0; i < count; i++)
    v[i] = (float)g_rand_double_range(rng, -bound, bound);
  return v;
}

/* The sum each output must be, bit for bit: one FMA chain from zero in l order, then c's
 * own value added (small-gemm.h); and how far sgemm (which sums in other orders on some
 * paths: dot products over l for a b read transposed, other kernels for odd columns) may be
 * from it: a few float roundings of the sum of |a b| terms. */
static float fma_chain(int64_t k, const float *a, int64_t ars, int64_t acs, const float *b,
                       int64_t brs, int64_t bcs, float *magnitude) {
  float acc = 0.0f;
  double mag = 0.0;
  for (int64_t l = 0; l < k; l++) {
    acc = fmaf(a[l * acs], b[l * brs], acc);
    mag += fabs((double)a[l * acs] * (double)b[l * brs]);
  }
  (void)ars, (void)bcs;
  *magnitude = (float)mag;
  return acc;
}

/* The digits example's products (16-row batches, 64-128-10) and sizes around the block edges
 * (4 rows, 16 and 64 columns), with k up to the path's limit. */
static void test_small_product_is_an_fma_chain(void) {
  if (!have_avx512())
    return;
  GRand *rng = g_rand_new_with_seed(3);
  const int64_t ms[] = {1, 3, 4, 5, 10, 16, 128}, ns[] = {1, 10, 16, 17, 64, 65, 128, 200},
                ks[] = {1, 10, 16, 64, 128, 256};
  int checked = 0;
  for (size_t mi = 0; mi < G_N_ELEMENTS(ms); mi++)
    for (size_t ni = 0; ni < G_N_ELEMENTS(ns); ni++)
      for (size_t ki = 0; ki < G_N_ELEMENTS(ks); ki++)
        for (int mode = 0; mode < 18; mode++) { /* a, b transposed x no addend, c, one row */
          int64_t m = ms[mi], n = ns[ni], k = ks[ki];
          if (!gs__small_sgemm_fits(m, n, k))
            continue;
          /* modes 12-17: b transposed, always multiplied as c^T = b @ a^T (modes 0-11 take the
           * way gs__small_sgemm picks for the shape: both ways occur) */
          int way = mode >= 12, q = mode - 12;
          int bits = way ? (q >> 1) << 2 | 2 | (q & 1) : mode;
          bool at = bits & 1, bt = bits & 2;
          int add_kind = bits >> 2; /* 0: none, 1: c's own values (beta 1), 2: a bias row */
          int64_t lda = (at ? m : k) + 3, ldb = (bt ? k : n) + 2, ldc = n + 1;
          int64_t ars = at ? 1 : lda, acs = at ? lda : 1, brs = bt ? 1 : ldb, bcs = bt ? ldb : 1;
          float *a = random_floats(rng, (at ? k : m) * lda, 1);
          float *b = random_floats(rng, (bt ? n : k) * ldb, 1);
          float *c = random_floats(rng, m * ldc, 4), *row = random_floats(rng, n, 4);
          if (add_kind == 2) /* what sgemm with beta 1 adds: the row copied into every row */
            for (int64_t i = 0; i < m; i++)
              memcpy(&c[i * ldc], row, sizeof(float) * (size_t)n);
          float *blas = g_memdup2(c, sizeof(float) * (size_t)(m * ldc));
          float *before = g_memdup2(c, sizeof(float) * (size_t)(m * ldc));
          cblas_sgemm(CblasRowMajor, at ? CblasTrans : CblasNoTrans, bt ? CblasTrans : CblasNoTrans,
                      (blasint)m, (blasint)n, (blasint)k, 1.0f, a, (blasint)lda, b, (blasint)ldb,
                      add_kind ? 1.0f : 0.0f, blas, (blasint)ldc);
          if (add_kind == 2) /* the row read in place, c's values not: scribble over them */
            for (int64_t i = 0; i < m; i++)
              for (int64_t j = 0; j < n; j++)
                c[i * ldc + j] = NAN;
          const float *add = add_kind == 1 ? c : add_kind == 2 ? row : NULL;
          int64_t ldadd = add_kind == 1 ? ldc : 0;
          if (way == 0)
            gs__small_sgemm(m, n, k, a, lda, at, b, ldb, bt, add, ldadd, c, ldc);
          else /* b read transposed, multiplied as c^T = b @ a^T whatever it costs */
            gs__small_sgemm_transposed(m, n, k, a, lda, at, b, ldb, add, ldadd, c, ldc);
          for (int64_t i = 0; i < m; i++) {
            for (int64_t j = 0; j < n; j++) {
              float mag, want = fma_chain(k, a + i * ars, ars, acs, b + j * bcs, brs, bcs, &mag);
              if (add_kind)
                want = before[i * ldc + j] + want;
              float got = c[i * ldc + j];
              if (memcmp(&got, &want, sizeof got) != 0)
                g_error("m %" PRId64 " n %" PRId64 " k %" PRId64 " mode %d: c[%" PRId64 "][%" PRId64
                        "] is %a, expected %a",
                        m, n, k, mode, i, j, (double)got, (double)want);
              double bound = 4 * FLT_EPSILON * (mag + fabsf(before[i * ldc + j]));
              if (fabs((double)got - (double)blas[i * ldc + j]) > bound)
                g_error("m %" PRId64 " n %" PRId64 " k %" PRId64 " mode %d: c[%" PRId64 "][%" PRId64
                        "] is %a, sgemm gives %a (more than %g apart)",
                        m, n, k, mode, i, j, (double)got, (double)blas[i * ldc + j], bound);
            }
            g_assert_cmpmem(&c[i * ldc + n], sizeof(float), &before[i * ldc + n],
                            sizeof(float)); /* the column past n is left alone */
          }
          g_free(a), g_free(b), g_free(c), g_free(row), g_free(blas), g_free(before);
          checked++;
        }
  g_assert_cmpint(checked, >=, 6 * 8 * 6 * 18); /* all but some of m = 128 fit */
  g_rand_free(rng);
}

/* Past the limits the product goes to sgemm: k beyond the limit (sgemm splits k in blocks
 * there), too much work, or nothing to do. */
static void test_small_product_limits(void) {
  if (!have_avx512())
    return;
  g_assert_true(gs__small_sgemm_fits(16, 128, GS__SMALL_GEMM_MAX_K));
  g_assert_false(gs__small_sgemm_fits(16, 128, GS__SMALL_GEMM_MAX_K + 1));
  g_assert_true(gs__small_sgemm_fits(1024, 1024, 16));
  g_assert_false(gs__small_sgemm_fits(1024, 1024, 64));
  g_assert_false(gs__small_sgemm_fits(0, 16, 16));
  g_assert_false(gs__small_sgemm_fits(16, 16, 0));
  /* matmul takes it for the digits example's first forward product; for the others only where
   * OpenBLAS's kernels pack every product (no small-matrix path: Haswell's, Zen's) */
  g_assert_true(gs__small_sgemm_wins(16, 128, 64, true));
  const char *core = openblas_get_corename();
  bool packs = !(core && (!strcasecmp(core, "SkylakeX") || !strcasecmp(core, "Cooperlake") ||
                          !strcasecmp(core, "SapphireRapids")));
  g_test_message("OpenBLAS core %s", core ? core : "(none)");
  g_assert_true(gs__small_sgemm_wins(16, 10, 128, true) == packs);
  g_assert_true(gs__small_sgemm_wins(4, 256, 256, true) == packs);
  g_assert_true(gs__small_sgemm_wins(128, 64, 16, false) == packs);
  g_assert_true(gs__small_sgemm_wins(16, 128, 10, false) == packs);
  /* past 2^20 multiply-adds only at one OpenBLAS thread (the digits example's evaluation) */
  bool one_thread = openblas_get_num_threads() == 1;
  g_test_message("OpenBLAS threads %d", openblas_get_num_threads());
  g_assert_true(gs__small_sgemm_wins(1437, 128, 64, true) == (packs && one_thread));
  g_assert_true(gs__small_sgemm_wins(1024, 1024, 16, false) == (packs && one_thread));
  g_assert_false(gs__small_sgemm_wins(16, 128, GS__SMALL_GEMM_MAX_K + 1, true));
}

static void assert_close(const float *got, const float *want, int count, const char *what) {
  for (int i = 0; i < count; i++)
    if (fabsf(got[i] - want[i]) > 1e-5f * (1.0f + fabsf(want[i])))
      g_error("%s[%d] is %a, sgemm gives %a", what, i, (double)got[i], (double)want[i]);
}

/* Through the public ops: the digits example's linear layer forward and backward (bias
 * added, the weight read transposed, gradients of both operands) agree with the same products
 * written with sgemm, to rounding. */
static void test_linear_uses_products_equal_to_sgemm(void) {
  enum { M = 16, K = 64, N = 128 };
  GRand *rng = g_rand_new_with_seed(9);
  float *x = random_floats(rng, M * K, 2), *w = random_floats(rng, N * K, 0.2),
        *bias = random_floats(rng, N, 0.2), *g = random_floats(rng, M * N, 1);
  gs_tensor hx = gs_from_data(GS_F32, (int64_t[]){M, K}, 2, x);
  gs_tensor hw = gs_from_data(GS_F32, (int64_t[]){N, K}, 2, w);
  gs_tensor hb = gs_from_data(GS_F32, (int64_t[]){N}, 1, bias);
  gs_tensor hg = gs_from_data(GS_F32, (int64_t[]){M, N}, 2, g);
  gs_set_requires_grad(hx, true);
  gs_set_requires_grad(hw, true);
  gs_tensor y = gs_linear(hx, hw, hb);
  gs_backward_with(y, hg, false);

  float want_y[M * N], want_dx[M * K], want_dw[N * K];
  for (int i = 0; i < M; i++)
    memcpy(want_y + i * N, bias, sizeof(float) * N);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, x, K, w, K, 1.0f, want_y, N);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, K, N, 1.0f, g, N, w, K, 0.0f, want_dx,
              K);
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, N, K, M, 1.0f, g, N, x, K, 0.0f, want_dw, K);
  float got[N * K];
  gs_tensor yc = gs_contiguous(y);
  gs_copy_to(yc, got, sizeof(float) * M * N);
  assert_close(got, want_y, M * N, "y");
  gs_copy_to(gs_grad(hx), got, sizeof(float) * M * K);
  assert_close(got, want_dx, M * K, "dx");
  gs_copy_to(gs_grad(hw), got, sizeof(float) * N * K);
  assert_close(got, want_dw, N * K, "dw");
  DISPOSE_ALL(yc, y, hx, hw, hb, hg);
  g_free(x), g_free(w), g_free(bias), g_free(g);
  g_rand_free(rng);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/small-gemm/fma-chain", test_small_product_is_an_fma_chain);
  g_test_add_func("/small-gemm/limits", test_small_product_limits);
  test_add_leak_checked("/small-gemm/linear-equals-sgemm",
                        test_linear_uses_products_equal_to_sgemm);
  return g_test_run();
}
