/* cases-decompose.c: gradcheck cases for the SVD, QR and the solvers built on them
 * (linalg-svd.c, linalg-qr.c): svd's U and Vh (reduced and full, tall and wide), pinv, qr's Q
 * and R (tall, wide, complete when wide), lstsq and cholesky_solve. Finite differences see
 * the vectors' signs as LAPACK picks them, which stay put for steps this small (as eigh's
 * cases); the drawn matrices have well-separated singular values. */
#include "grad-case.h"

#define FN(NAME, ...)                                                                              \
  static gs_tensor NAME(const gs_tensor *in, int n, void *u) {                                     \
    (void)n, (void)u;                                                                              \
    return __VA_ARGS__;                                                                            \
  }

/* One output of svd (0: U, 1: S, 2: Vh), the others kept for the case. */
static gs_tensor svd_part(gs_tensor a, bool full, int which) {
  gs_tensor out[3] = {GS_NO_TENSOR, GS_NO_TENSOR, GS_NO_TENSOR};
  if (!gs_linalg_svd(a, full, &out[0], &out[1], &out[2]))
    return GS_NO_TENSOR;
  for (int i = 0; i < 3; i++)
    if (i != which)
      gs__keep(out[i]);
  return out[which];
}

/* U and Vh together: U's first column plus Vh's first row (n = m here), one loss of both. */
static gs_tensor svd_both(gs_tensor a) {
  gs_tensor u = gs__keep(svd_part(a, false, 0));
  gs_tensor vh = gs__keep(svd_part(a, false, 2));
  gs_tensor col = gs__keep(gs_select(u, -1, 0));
  gs_tensor row = gs__keep(gs_select(vh, -2, 0));
  return gs_add(col, row);
}

static gs_tensor qr_part(gs_tensor a, gs_qr_mode mode, int which) {
  gs_tensor q = GS_NO_TENSOR, r = GS_NO_TENSOR;
  if (!gs_linalg_qr(a, mode, &q, &r))
    return GS_NO_TENSOR;
  gs__keep(which == 0 ? r : q);
  return which == 0 ? q : r;
}

/* x x^T + 3 I and its Cholesky factor (lower; upper: its transpose). */
static gs_tensor factor(gs_tensor x, bool upper) {
  gs_tensor gram = gs__keep(gs_matmul(x, gs__keep(gs_transpose(x, -2, -1))));
  gs_tensor eye = gs__keep(gs_mul_scalar(gs__keep(gs_eye(3, 3, GS_F64)), 3.0));
  gs_tensor l = gs__keep(gs_linalg_cholesky(gs__keep(gs_add(gram, eye))));
  return upper ? gs__keep(gs_transpose(l, -2, -1)) : l;
}

FN(f_svd_u, svd_part(in[0], false, 0))
/* A full factor's columns (rows) past k are any orthonormal completion, whose gradient torch
 * leaves out: the cases look at the first k only. */
FN(f_svd_u_full, gs_narrow(gs__keep(svd_part(in[0], true, 0)), -1, 0, 3))
FN(f_svd_s, svd_part(in[0], false, 1))
FN(f_svd_vh, svd_part(in[0], false, 2))
FN(f_svd_vh_full, gs_narrow(gs__keep(svd_part(in[0], true, 2)), -2, 0, 3))
FN(f_svd_both, svd_both(in[0]))
FN(f_pinv, gs_linalg_pinv(in[0], NAN, NAN))
FN(f_qr_q, qr_part(in[0], GS_QR_REDUCED, 0))
FN(f_qr_r, qr_part(in[0], GS_QR_REDUCED, 1))
FN(f_qr_q_complete, qr_part(in[0], GS_QR_COMPLETE, 0))
FN(f_qr_r_complete, qr_part(in[0], GS_QR_COMPLETE, 1))
FN(f_lstsq, gs_linalg_lstsq(in[0], in[1], NAN, NULL))
FN(f_cholesky_solve, gs_cholesky_solve(in[0], factor(in[1], false), false))
FN(f_cholesky_solve_upper, gs_cholesky_solve(in[0], factor(in[1], true), true))

const grad_case grad_cases_decompose[] = {
    {"LinalgSvdUBackward", "svd's U of a tall [4, 3]", f_svd_u, 1, {GI(2, 4, 3)}},
    {"LinalgSvdUBackward", "svd's U of a wide batch, transposed", f_svd_u, 1, {GI_T(3, 2, 3, 4)}},
    {"SliceBackward",
     "svd's full U of a tall [4, 3], its first 3 columns",
     f_svd_u_full,
     1,
     {GI(2, 4, 3)}},
    {"LinalgSvdBackward", "svd's S of [3, 4]", f_svd_s, 1, {GI_S(2, 3, 4)}},
    {"LinalgSvdVhBackward", "svd's Vh of a wide [3, 4]", f_svd_vh, 1, {GI(2, 3, 4)}},
    {"LinalgSvdVhBackward", "svd's Vh of a tall batch, sliced", f_svd_vh, 1, {GI_S(3, 2, 4, 3)}},
    {"SliceBackward",
     "svd's full Vh of a wide [3, 4], its first 3 rows",
     f_svd_vh_full,
     1,
     {GI(2, 3, 4)}},
    {"AddBackward", "svd's U and Vh together, square", f_svd_both, 1, {GI(2, 3, 3)}},
    {"LinalgPinvBackward", "pinv of a tall [4, 3]", f_pinv, 1, {GI(2, 4, 3)}},
    {"LinalgPinvBackward", "pinv of a wide batch, transposed", f_pinv, 1, {GI_T(3, 2, 3, 4)}},
    {"LinalgQrBackward", "qr's Q of a tall [4, 3]", f_qr_q, 1, {GI(2, 4, 3)}},
    {"LinalgQrBackward", "qr's Q of a wide [3, 4]", f_qr_q, 1, {GI(2, 3, 4)}},
    {"LinalgQrBackward", "qr's complete Q of a wide batch", f_qr_q_complete, 1, {GI_T(3, 2, 3, 4)}},
    {"LinalgQrRBackward", "qr's R of a tall batch, sliced", f_qr_r, 1, {GI_S(3, 2, 4, 3)}},
    {"LinalgQrRBackward", "qr's R of a wide [3, 5]", f_qr_r, 1, {GI(2, 3, 5)}},
    {"LinalgQrRBackward", "qr's complete R of a square [3, 3]", f_qr_r_complete, 1, {GI(2, 3, 3)}},
    {"LinalgLstsqBackward", "lstsq [5, 3] X = [5, 2]", f_lstsq, 2, {GI(2, 5, 3), GI(2, 5, 2)}},
    {"LinalgLstsqBackward",
     "lstsq of a batch [2, 4, 3] against vectors [2, 4]",
     f_lstsq,
     2,
     {GI_T(3, 2, 4, 3), GI(2, 2, 4)}},
    {"LinalgLstsqBackward",
     "lstsq [1, 4, 2] broadcast against B [2, 4, 3]",
     f_lstsq,
     2,
     {GI(3, 1, 4, 2), GI_S(3, 2, 4, 3)}},
    {"CholeskySolveBackward",
     "B [3, 2], L of x x^T + 3 I",
     f_cholesky_solve,
     2,
     {GI(2, 3, 2), GI(2, 3, 3)}},
    {"CholeskySolveBackward",
     "upper, B batch [2, 3, 2] against one U",
     f_cholesky_solve_upper,
     2,
     {GI_T(3, 2, 3, 2), GI(2, 3, 3)}},
};
const int grad_cases_decompose_count = sizeof grad_cases_decompose / sizeof grad_cases_decompose[0];
