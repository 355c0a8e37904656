/* test-linalg.c: gradscope/linalg.h on matrices whose answers are worked out by hand: norms,
 * solve (matrix, vector and broadcast right-hand sides), inv, det and slogdet (both signs, a
 * singular matrix), cholesky, eigvalsh and svdvals, in f64 and f32, batched and of size zero;
 * svd, qr, lstsq, pinv, matrix_rank and cholesky_solve on small hand-solved systems;
 * and the errors a caller can make (singular and non-positive-definite matrices, shapes that
 * do not fit, integer dtypes). */
#include <math.h>

#include "test-util.h"

static gs_tensor f64(const int64_t *shape, int ndim, const double *values) {
  return gs_from_data(GS_F64, shape, ndim, values);
}

static gs_tensor as_dtype(gs_tensor t, gs_dtype dtype) {
  if (dtype == GS_F64)
    return t;
  gs_tensor converted = gs_to_dtype(t, dtype);
  gs_dispose(t);
  return converted;
}

/* [[4, 3], [6, 3]]: det -6, inverse [[-1/2, 1/2], [1, -2/3]] */
static const double A[] = {4, 3, 6, 3};

static void test_solve_inv_det(void) {
  gs_dtype dtypes[] = {GS_F64, GS_F32};
  for (size_t i = 0; i < G_N_ELEMENTS(dtypes); i++) {
    double tol = dtypes[i] == GS_F64 ? 1e-12 : 1e-5;
    test_set_context("%s", gs_dtype_name(dtypes[i]));
    gs_tensor a = as_dtype(f64((int64_t[]){2, 2}, 2, A), dtypes[i]);
    gs_tensor inv = gs_linalg_inv(a);
    test_assert_values(inv, (int64_t[]){2, 2}, 2, (double[]){-0.5, 0.5, 1, -2.0 / 3}, tol, tol);
    gs_tensor det = gs_linalg_det(a);
    test_assert_values(det, NULL, 0, (double[]){-6}, tol, tol);
    gs_tensor sign, logabs;
    g_assert_true(gs_linalg_slogdet(a, &sign, &logabs));
    test_assert_values(sign, NULL, 0, (double[]){-1}, 0, 0);
    test_assert_values(logabs, NULL, 0, (double[]){log(6.0)}, tol, tol);
    /* a vector b, and b as a column */
    gs_tensor b = as_dtype(f64((int64_t[]){2}, 1, (double[]){1, 2}), dtypes[i]);
    gs_tensor x = gs_linalg_solve(a, b);
    test_assert_values(x, (int64_t[]){2}, 1, (double[]){0.5, -1.0 / 3}, tol, tol);
    gs_tensor column = gs_unsqueeze(b, -1);
    gs_tensor xc = gs_linalg_solve(a, column);
    test_assert_values(xc, (int64_t[]){2, 1}, 2, (double[]){0.5, -1.0 / 3}, tol, tol);
    DISPOSE_ALL(a, inv, det, sign, logabs, b, x, column, xc);
  }
}

/* [A, 2 I] against one b, and against a batch of bs (batch dims broadcast). */
static void test_batched(void) {
  gs_tensor a = f64((int64_t[]){2, 2, 2}, 3, (double[]){4, 3, 6, 3, 2, 0, 0, 2});
  gs_tensor det = gs_linalg_det(a);
  test_assert_values(det, (int64_t[]){2}, 1, (double[]){-6, 4}, 1e-12, 1e-12);
  gs_tensor b = f64((int64_t[]){2}, 1, (double[]){1, 2});
  gs_tensor x = gs_linalg_solve(a, b);
  test_assert_values(x, (int64_t[]){2, 2}, 2, (double[]){0.5, -1.0 / 3, 0.5, 1}, 1e-12, 1e-12);
  gs_tensor bs = f64((int64_t[]){3, 1, 2, 1}, 4, (double[]){1, 2, 2, 4, 0, 0});
  gs_tensor xs = gs_linalg_solve(a, bs);
  test_assert_values(xs, (int64_t[]){3, 2, 2, 1}, 4,
                     (double[]){0.5, -1.0 / 3, 0.5, 1, 1, -2.0 / 3, 1, 2, 0, 0, 0, 0}, 1e-12,
                     1e-12);
  /* a transposed view: A^T is [[4, 6], [3, 3]], det -6 too, inverse the transpose */
  gs_tensor at = gs_transpose(a, -2, -1);
  gs_tensor inv = gs_linalg_inv(at);
  test_assert_values(inv, (int64_t[]){2, 2, 2}, 3,
                     (double[]){-0.5, 1, 0.5, -2.0 / 3, 0.5, 0, 0, 0.5}, 1e-12, 1e-12);
  DISPOSE_ALL(a, det, b, x, bs, xs, at, inv);
}

static void test_singular_determinants(void) {
  gs_tensor s = f64((int64_t[]){2, 2}, 2, (double[]){1, 2, 2, 4});
  gs_tensor det = gs_linalg_det(s);
  test_assert_values(det, NULL, 0, (double[]){0}, 0, 0);
  gs_tensor sign, logabs;
  g_assert_true(gs_linalg_slogdet(s, &sign, &logabs));
  test_assert_values(sign, NULL, 0, (double[]){0}, 0, 0);
  test_assert_values(logabs, NULL, 0, (double[]){-INFINITY}, 0, 0);
  DISPOSE_ALL(s, det, sign, logabs);
}

static void test_zero_size(void) {
  gs_tensor empty = gs_zeros(GS_F64, (int64_t[]){0, 0}, 2);
  gs_tensor det = gs_linalg_det(empty);
  test_assert_values(det, NULL, 0, (double[]){1}, 0, 0);
  gs_tensor inv = gs_linalg_inv(empty);
  test_assert_values(inv, (int64_t[]){0, 0}, 2, NULL, 0, 0);
  gs_tensor none = gs_zeros(GS_F64, (int64_t[]){0, 3, 3}, 3);
  gs_tensor dets = gs_linalg_det(none);
  test_assert_values(dets, (int64_t[]){0}, 1, NULL, 0, 0);
  gs_tensor b = gs_zeros(GS_F64, (int64_t[]){0, 3, 2}, 3);
  gs_tensor x = gs_linalg_solve(none, b);
  test_assert_values(x, (int64_t[]){0, 3, 2}, 3, NULL, 0, 0);
  gs_tensor l = gs_linalg_cholesky(empty);
  test_assert_values(l, (int64_t[]){0, 0}, 2, NULL, 0, 0);
  gs_tensor w = gs_linalg_eigvalsh(empty);
  test_assert_values(w, (int64_t[]){0}, 1, NULL, 0, 0);
  gs_tensor wide = gs_zeros(GS_F64, (int64_t[]){0, 3}, 2);
  gs_tensor s = gs_linalg_svdvals(wide);
  test_assert_values(s, (int64_t[]){0}, 1, NULL, 0, 0);
  DISPOSE_ALL(empty, det, inv, none, dets, b, x, l, w, wide, s);
}

static void test_decompositions(void) {
  gs_dtype dtypes[] = {GS_F64, GS_F32};
  for (size_t i = 0; i < G_N_ELEMENTS(dtypes); i++) {
    double tol = dtypes[i] == GS_F64 ? 1e-12 : 1e-5;
    test_set_context("%s", gs_dtype_name(dtypes[i]));
    /* [[4, 2], [2, 3]] = L L^T with L = [[2, 0], [1, sqrt 2]]; the upper 7 is not read */
    gs_tensor spd = as_dtype(f64((int64_t[]){2, 2}, 2, (double[]){4, 7, 2, 3}), dtypes[i]);
    gs_tensor l = gs_linalg_cholesky(spd);
    test_assert_values(l, (int64_t[]){2, 2}, 2, (double[]){2, 0, 1, sqrt(2.0)}, tol, tol);
    /* [[2, 1], [1, 2]]: eigenvalues 1 and 3 */
    gs_tensor sym = as_dtype(f64((int64_t[]){2, 2}, 2, (double[]){2, 1, 1, 2}), dtypes[i]);
    gs_tensor w = gs_linalg_eigvalsh(sym);
    test_assert_values(w, (int64_t[]){2}, 1, (double[]){1, 3}, tol, tol);
    /* [[3, 0], [0, -4], [0, 0]]: singular values 4 and 3 */
    gs_tensor tall = as_dtype(f64((int64_t[]){3, 2}, 2, (double[]){3, 0, 0, -4, 0, 0}), dtypes[i]);
    gs_tensor s = gs_linalg_svdvals(tall);
    test_assert_values(s, (int64_t[]){2}, 1, (double[]){4, 3}, tol, tol);
    gs_tensor tall_t = gs_transpose(tall, 0, 1);
    gs_tensor st = gs_linalg_svdvals(tall_t);
    test_assert_values(st, (int64_t[]){2}, 1, (double[]){4, 3}, tol, tol);
    DISPOSE_ALL(spd, l, sym, w, tall, s, tall_t, st);
  }
}

/* [[1, -2], [3, 4]]: column sums of |.| 4 and 6, row sums 3 and 7, Frobenius sqrt 30,
 * singular values sqrt(15 +- sqrt(125)) (sum of squares 30, product |det| 10). */
static void test_norms(void) {
  gs_tensor m = f64((int64_t[]){2, 2}, 2, (double[]){1, -2, 3, 4});
  struct {
    gs_matrix_norm_ord ord;
    double value;
  } cases[] = {
      {GS_MATRIX_NORM_FRO, sqrt(30.0)},
      {GS_MATRIX_NORM_ONE, 6},
      {GS_MATRIX_NORM_NEG_ONE, 4},
      {GS_MATRIX_NORM_INF, 7},
      {GS_MATRIX_NORM_NEG_INF, 3},
      {GS_MATRIX_NORM_TWO, sqrt(15 + sqrt(125.0))},
      {GS_MATRIX_NORM_NEG_TWO, sqrt(15 - sqrt(125.0))},
      {GS_MATRIX_NORM_NUC, sqrt(15 + sqrt(125.0)) + sqrt(15 - sqrt(125.0))},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    test_set_context("matrix norm %d", (int)cases[i].ord);
    gs_tensor r = gs_linalg_matrix_norm(m, cases[i].ord, -2, -1, false);
    test_assert_values(r, NULL, 0, (double[]){cases[i].value}, 1e-12, 1e-12);
    gs_tensor kept = gs_linalg_matrix_norm(m, cases[i].ord, 1, 0, true);
    g_assert_cmpint(gs_ndim(kept), ==, 2);
    DISPOSE_ALL(r, kept);
  }
  gs_tensor v = gs_linalg_vector_norm(m, 1.0, (int[]){0}, 1, false);
  test_assert_values(v, (int64_t[]){2}, 1, (double[]){4, 6}, 0, 0);
  gs_tensor vi = gs_linalg_vector_norm(m, -INFINITY, NULL, 0, false);
  test_assert_values(vi, NULL, 0, (double[]){1}, 0, 0);
  DISPOSE_ALL(m, v, vi);
}

static void test_errors(void) {
  gs_tensor singular = f64((int64_t[]){2, 2}, 2, (double[]){1, 2, 2, 4});
  gs_tensor b = f64((int64_t[]){2}, 1, (double[]){1, 1});
  EXPECT_ERROR(gs_linalg_solve(singular, b), "expected an invertible matrix, got a singular one");
  gs_tensor pair = gs_stack((gs_tensor[]){b, b}, 2, 0); /* [[1, 1], [1, 1]]: singular */
  gs_tensor eye = gs_eye(2, 2, GS_F64);
  gs_tensor batch = gs_stack((gs_tensor[]){eye, pair}, 2, 0);
  EXPECT_ERROR(gs_linalg_inv(batch), "(batch element 1)");
  gs_tensor indefinite = f64((int64_t[]){2, 2}, 2, (double[]){1, 2, 2, 1});
  EXPECT_ERROR(gs_linalg_cholesky(indefinite),
               "expected a positive-definite matrix, got one whose leading minor of order 2");
  gs_tensor wide = gs_zeros(GS_F64, (int64_t[]){3, 4}, 2);
  EXPECT_ERROR(gs_linalg_det(wide), "expected batches of square matrices, but they are 3 by 4");
  gs_tensor vec = gs_zeros(GS_F64, (int64_t[]){3}, 1);
  EXPECT_ERROR(gs_linalg_inv(vec), "expected a tensor with 2 or more dims");
  gs_tensor eye3 = gs_eye(3, 3, GS_F64);
  gs_tensor four = gs_zeros(GS_F64, (int64_t[]){4}, 1);
  EXPECT_ERROR(gs_linalg_solve(eye3, four), "expected B with 3 rows (A is 3x3), got B of 4x1");
  gs_tensor a23 = gs_zeros(GS_F64, (int64_t[]){2, 3, 3}, 3);
  gs_tensor b43 = gs_zeros(GS_F64, (int64_t[]){4, 3, 1}, 3);
  EXPECT_ERROR(gs_linalg_solve(a23, b43), "expected batch dims that broadcast, got A's [2]");
  gs_tensor f32 = gs_zeros(GS_F32, (int64_t[]){3}, 1);
  EXPECT_ERROR(gs_linalg_solve(eye3, f32), "expected A and B of the same floating dtype");
  gs_tensor ints = gs_zeros(GS_I64, (int64_t[]){2, 2}, 2);
  EXPECT_ERROR(gs_linalg_det(ints), "expected a floating tensor (f32 or f64), got i64");
  EXPECT_ERROR(gs_linalg_svdvals(ints), "expected a floating (f32 or f64) tensor");
  EXPECT_ERROR(gs_linalg_matrix_norm(eye3, GS_MATRIX_NORM_FRO, 1, -1, false), "two different dims");
  EXPECT_ERROR(gs_linalg_matrix_norm(vec, GS_MATRIX_NORM_ONE, 0, 1, false), "2 or more dims");
  DISPOSE_ALL(singular, b, pair, eye, batch, indefinite, wide, vec, eye3, four, a23, b43, f32,
              ints);
}

/* a @ b, for reconstructions. */
static gs_tensor product(gs_tensor a, gs_tensor b) { return gs_matmul(a, b); }

/* [[3, 0], [4, 5]]: A^T A = [[25, 20], [20, 25]], singular values sqrt(45) and sqrt(5); its QR
 * has |R| = [[5, 4], [0, 3]]. */
static void test_svd_qr_solvers(void) {
  gs_tensor a = f64((int64_t[]){2, 2}, 2, (double[]){3, 0, 4, 5});
  gs_tensor u, s, vh;
  g_assert_true(gs_linalg_svd(a, true, &u, &s, &vh));
  test_assert_values(s, (int64_t[]){2}, 1, (double[]){sqrt(45.0), sqrt(5.0)}, 1e-12, 1e-12);
  gs_tensor us = gs_mul(u, s); /* U diag(S): S broadcast over the rows */
  gs_tensor usv = product(us, vh);
  test_assert_values(usv, (int64_t[]){2, 2}, 2, (double[]){3, 0, 4, 5}, 1e-12, 1e-12);
  gs_tensor q, r;
  g_assert_true(gs_linalg_qr(a, GS_QR_REDUCED, &q, &r));
  gs_tensor qr = product(q, r), rabs = gs_abs(r);
  test_assert_values(qr, (int64_t[]){2, 2}, 2, (double[]){3, 0, 4, 5}, 1e-12, 1e-12);
  test_assert_values(rabs, (int64_t[]){2, 2}, 2, (double[]){5, 4, 0, 3}, 1e-12, 1e-12);
  gs_tensor q_none, r_only;
  g_assert_true(gs_linalg_qr(a, GS_QR_R, &q_none, &r_only));
  g_assert_cmpint(gs_numel(q_none), ==, 0);
  /* [[1, 0], [0, 1], [1, 1]] x = [1, 1, 0]: A^T A = [[2, 1], [1, 2]], A^T b = [1, 1] */
  gs_tensor tall = f64((int64_t[]){3, 2}, 2, (double[]){1, 0, 0, 1, 1, 1});
  gs_tensor b = f64((int64_t[]){3}, 1, (double[]){1, 1, 0});
  gs_tensor rank;
  gs_tensor x = gs_linalg_lstsq(tall, b, NAN, &rank);
  test_assert_values(x, (int64_t[]){2}, 1, (double[]){1.0 / 3, 1.0 / 3}, 1e-12, 1e-12);
  test_assert_values(rank, NULL, 0, (double[]){2}, 0, 0);
  /* [[2, 0], [0, 0], [0, 0]]: pinv [[1/2, 0, 0], [0, 0, 0]], rank 1 */
  gs_tensor low = f64((int64_t[]){3, 2}, 2, (double[]){2, 0, 0, 0, 0, 0});
  gs_tensor p = gs_linalg_pinv(low, NAN, NAN);
  test_assert_values(p, (int64_t[]){2, 3}, 2, (double[]){0.5, 0, 0, 0, 0, 0}, 1e-12, 1e-12);
  gs_tensor rank1 = gs_linalg_matrix_rank(low, NAN, NAN),
            rank0 = gs_linalg_matrix_rank(low, 3, NAN);
  test_assert_values(rank1, NULL, 0, (double[]){1}, 0, 0);
  test_assert_values(rank0, NULL, 0, (double[]){0}, 0, 0);
  /* L = [[2, 0], [1, 1]]: L L^T = [[4, 2], [2, 2]], whose x for b = [2, 2] is [0, 1] */
  gs_tensor l = f64((int64_t[]){2, 2}, 2, (double[]){2, 0, 1, 1});
  gs_tensor rhs = f64((int64_t[]){2, 1}, 2, (double[]){2, 2});
  gs_tensor cx = gs_cholesky_solve(rhs, l, false);
  test_assert_values(cx, (int64_t[]){2, 1}, 2, (double[]){0, 1}, 1e-12, 1e-12);
  gs_tensor lt = gs_transpose(l, 0, 1);
  gs_tensor cxu = gs_cholesky_solve(rhs, lt, true);
  test_assert_values(cxu, (int64_t[]){2, 1}, 2, (double[]){0, 1}, 1e-12, 1e-12);
  DISPOSE_ALL(a, u, s, vh, us, usv, q, r, qr, rabs, q_none, r_only, tall, b, rank, x, low, p, rank1,
              rank0, l, rhs, cx, lt, cxu);
}

/* The mistakes the new ops report, in torch's words where torch has them. */
static void test_svd_qr_solver_errors(void) {
  gs_tensor vec = gs_zeros(GS_F64, (int64_t[]){3}, 1), u, s, vh, q, r;
  EXPECT_ERROR(gs_linalg_svd(vec, false, &u, &s, &vh), "2 or more dims");
  gs_tensor m = gs_eye(3, 3, GS_F64);
  EXPECT_ERROR(gs_linalg_qr(m, (gs_qr_mode)7, &q, &r), "expected mode reduced, complete or r");
  gs_tensor b3 = gs_zeros(GS_F64, (int64_t[]){2, 3, 1}, 3);
  EXPECT_ERROR(gs_linalg_lstsq(m, b3, NAN, NULL), "input.dim() must be greater or equal");
  gs_tensor b4 = gs_zeros(GS_F64, (int64_t[]){4, 1}, 2);
  EXPECT_ERROR(gs_linalg_lstsq(m, b4, NAN, NULL), "input.size(-2) should match other.size(-2)");
  EXPECT_ERROR(gs_cholesky_solve(vec, m, false),
               "b should have at least 2 dimensions, but has 1 dimensions instead");
  EXPECT_ERROR(gs_cholesky_solve(b4, m, false),
               "each A matrix is 3 by 3 but each b matrix is 4 by 1");
  EXPECT_ERROR(gs_linalg_pinv(m, -1, NAN), "expected non-negative tolerances");
  DISPOSE_ALL(vec, m, b3, b4);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  test_add_leak_checked("/linalg/solve-inv-det", test_solve_inv_det);
  test_add_leak_checked("/linalg/batched", test_batched);
  test_add_leak_checked("/linalg/singular-determinants", test_singular_determinants);
  test_add_leak_checked("/linalg/zero-size", test_zero_size);
  test_add_leak_checked("/linalg/decompositions", test_decompositions);
  test_add_leak_checked("/linalg/norms", test_norms);
  test_add_leak_checked("/linalg/errors", test_errors);
  test_add_leak_checked("/linalg/svd-qr-solvers", test_svd_qr_solvers);
  test_add_leak_checked("/linalg/svd-qr-solver-errors", test_svd_qr_solver_errors);
  return g_test_run();
}
