/* cases-lu.c: gradcheck cases for torch.linalg's ops (linalg.c, moments.c): vector_norm,
 * matrix_norm (with 'nuc' and 2 through svdvals), solve, inv, det and slogdet through LU,
 * cholesky, eigvalsh and svdvals. The matrices are the drawn inputs
 * plus a multiple of the identity large enough to make them diagonally dominant (entries in
 * [-2, 2), so 6 I leaves every 3 x 3 one well away from singular): finite differences of an
 * inverse need a well-conditioned matrix. -6 I gives negative determinants (3 x 3). Batched
 * cases broadcast a matrix against a batch of right-hand sides and the other way round. */
#include "grad-case.h"

/* x + diag I, kept for the case. */
static gs_tensor dominant(gs_tensor x, double diag) {
  gs_tensor eye = gs__keep(gs_mul_scalar(gs__keep(gs_eye(3, 3, GS_F64)), diag));
  return gs__keep(gs_add(x, eye));
}

#define FN(NAME, ...)                                                                              \
  static gs_tensor NAME(const gs_tensor *in, int n, void *u) {                                     \
    (void)n, (void)u;                                                                              \
    return __VA_ARGS__;                                                                            \
  }

/* x x^T + 3 I: symmetric positive-definite, as cholesky needs. */
static gs_tensor positive_definite(gs_tensor x) {
  gs_tensor gram = gs__keep(gs_matmul(x, gs__keep(gs_transpose(x, -2, -1))));
  return dominant(gram, 3.0);
}

/* x + x^T: symmetric, as eigvalsh reads it. */
static gs_tensor symmetric(gs_tensor x) {
  return gs__keep(gs_add(x, gs__keep(gs_transpose(x, -2, -1))));
}

static gs_tensor logabsdet(gs_tensor a) {
  gs_tensor l = GS_NO_TENSOR;
  gs_linalg_slogdet(a, NULL, &l);
  return l;
}

FN(f_vnorm_2, gs_linalg_vector_norm(in[0], 2.0, NULL, 0, false))
FN(f_vnorm_3_dim, gs_linalg_vector_norm(in[0], 3.0, (int[]){1}, 1, false))
FN(f_vnorm_inf_keep, gs_linalg_vector_norm(in[0], INFINITY, (int[]){-1}, 1, true))
FN(f_vnorm_1_dims, gs_linalg_vector_norm(in[0], 1.0, (int[]){0, 2}, 2, false))
FN(f_mnorm_fro, gs_linalg_matrix_norm(in[0], GS_MATRIX_NORM_FRO, -2, -1, false))
FN(f_mnorm_one, gs_linalg_matrix_norm(in[0], GS_MATRIX_NORM_ONE, -2, -1, false))
FN(f_mnorm_neg_inf_keep, gs_linalg_matrix_norm(in[0], GS_MATRIX_NORM_NEG_INF, 0, 2, true))
FN(f_solve, gs_linalg_solve(dominant(in[0], 6.0), in[1]))
FN(f_solve_vector, gs_linalg_solve(dominant(in[0], 6.0), in[1]))
FN(f_solve_broadcast, gs_linalg_solve(dominant(in[0], -6.0), in[1]))
FN(f_inv, gs_linalg_inv(dominant(in[0], 6.0)))
FN(f_det, gs_linalg_det(dominant(in[0], 6.0)))
FN(f_det_negative, gs_linalg_det(dominant(in[0], -6.0)))
FN(f_slogdet, logabsdet(dominant(in[0], 6.0)))
FN(f_slogdet_negative, logabsdet(dominant(in[0], -6.0)))
FN(f_cholesky, gs_linalg_cholesky(positive_definite(in[0])))
FN(f_eigvalsh, gs_linalg_eigvalsh(symmetric(in[0])))
FN(f_svdvals, gs_linalg_svdvals(in[0]))

/* eigh's eigenvectors, and its values plus twice the first row of vectors (both outputs at
 * once). Finite differences see the vectors' signs as LAPACK picks them, which stay put for
 * steps this small on these matrices (the case fails if one flips). */
static gs_tensor eigenvectors(gs_tensor a) {
  gs_tensor v = GS_NO_TENSOR;
  gs_linalg_eigh(a, NULL, &v);
  return v;
}
static gs_tensor eigh_both(gs_tensor a) {
  gs_tensor w = GS_NO_TENSOR, v = GS_NO_TENSOR;
  gs_linalg_eigh(a, &w, &v);
  gs__keep(w), gs__keep(v);
  gs_tensor row = gs__keep(gs_select(v, -2, 0));
  return gs_add(w, gs__keep(gs_mul_scalar(row, 2.0)));
}
FN(f_eigh_vectors, eigenvectors(symmetric(in[0])))
FN(f_eigh_both, eigh_both(symmetric(in[0])))
FN(f_mnorm_nuc, gs_linalg_matrix_norm(in[0], GS_MATRIX_NORM_NUC, -2, -1, false))
FN(f_mnorm_two_keep, gs_linalg_matrix_norm(in[0], GS_MATRIX_NORM_TWO, 0, 2, true))

const grad_case grad_cases_lu[] = {
    {"LinalgVectorNormBackward", "2-norm of everything", f_vnorm_2, 1, {GI_T(2, 3, 4)}},
    {"LinalgVectorNormBackward", "3-norm along dim 1", f_vnorm_3_dim, 1, {GI_S(2, 3, 4)}},
    {"LinalgVectorNormBackward", "inf-norm along -1, keepdim", f_vnorm_inf_keep, 1, {GI(2, 3, 4)}},
    {"LinalgVectorNormBackward", "1-norm over dims {0, 2}", f_vnorm_1_dims, 1, {GI(3, 2, 3, 4)}},
    {"LinalgVectorNormBackward", "matrix_norm 'fro' of a batch", f_mnorm_fro, 1, {GI(3, 2, 3, 4)}},
    {"MaxBackward", "matrix_norm ord 1 of a batch", f_mnorm_one, 1, {GI_T(3, 2, 3, 4)}},
    {"MinBackward",
     "matrix_norm ord -inf over dims (0, 2), keepdim",
     f_mnorm_neg_inf_keep,
     1,
     {GI(3, 3, 2, 4)}},
    {"LinalgSolveExBackward", "[3, 3] @ X = [3, 2]", f_solve, 2, {GI(2, 3, 3), GI(2, 3, 2)}},
    {"LinalgSolveExBackward",
     "batch [2, 3, 3] @ x = vector [2, 3]",
     f_solve_vector,
     2,
     {GI_T(3, 2, 3, 3), GI(2, 2, 3)}},
    {"LinalgSolveExBackward",
     "[3, 3] broadcast against B [2, 3, 4]",
     f_solve_broadcast,
     2,
     {GI_S(2, 3, 3), GI(3, 2, 3, 4)}},
    {"LinalgSolveExBackward",
     "batch [2, 3, 3] against one vector [3]",
     f_solve_vector,
     2,
     {GI(3, 2, 3, 3), GI(1, 3)}},
    {"LinalgInvExBackward", "[3, 3]", f_inv, 1, {GI(2, 3, 3)}},
    {"LinalgInvExBackward", "transposed batch [2, 3, 3]", f_inv, 1, {GI_T(3, 2, 3, 3)}},
    {"LinalgDetBackward", "[3, 3]", f_det, 1, {GI(2, 3, 3)}},
    {"LinalgDetBackward",
     "batch [2, 3, 3], negative determinants",
     f_det_negative,
     1,
     {GI_S(3, 2, 3, 3)}},
    {"LinalgSlogdetBackward", "[3, 3]", f_slogdet, 1, {GI_T(2, 3, 3)}},
    {"LinalgSlogdetBackward",
     "batch [2, 3, 3], negative determinants",
     f_slogdet_negative,
     1,
     {GI(3, 2, 3, 3)}},
    {"LinalgCholeskyExBackward", "of x x^T + 3 I", f_cholesky, 1, {GI(2, 3, 3)}},
    {"LinalgCholeskyExBackward", "batch, transposed", f_cholesky, 1, {GI_T(3, 2, 3, 3)}},
    {"LinalgEighBackward", "eigvalsh of x + x^T", f_eigvalsh, 1, {GI(2, 3, 3)}},
    {"LinalgEighBackward", "eigvalsh of a batch, sliced", f_eigvalsh, 1, {GI_S(3, 2, 3, 3)}},
    {"LinalgEighVectorsBackward", "eigh's vectors", f_eigh_vectors, 1, {GI(2, 3, 3)}},
    {"LinalgEighVectorsBackward",
     "eigh's vectors of a batch, transposed",
     f_eigh_vectors,
     1,
     {GI_T(3, 2, 3, 3)}},
    {"AddBackward", "eigh's values and vectors together", f_eigh_both, 1, {GI_S(3, 2, 3, 3)}},
    {"LinalgSvdBackward", "svdvals of [3, 4]", f_svdvals, 1, {GI(2, 3, 4)}},
    {"LinalgSvdBackward",
     "svdvals of a batch [2, 4, 3], transposed",
     f_svdvals,
     1,
     {GI_T(3, 2, 4, 3)}},
    {"SumBackward", "matrix_norm 'nuc'", f_mnorm_nuc, 1, {GI(3, 2, 3, 4)}},
    {"UnsqueezeBackward",
     "matrix_norm ord 2 over dims (0, 2), keepdim",
     f_mnorm_two_keep,
     1,
     {GI(3, 3, 2, 4)}},
};
const int grad_cases_lu_count = sizeof grad_cases_lu / sizeof grad_cases_lu[0];
