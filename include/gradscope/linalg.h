/* gradscope/linalg.h: linear algebra (torch.linalg): vector and matrix norms, and through an LU
 * factorisation (LAPACK's getrf/getrs, from OpenBLAS) solve, inv, det and slogdet; cholesky,
 * eigvalsh and svdvals (potrf, syevd, gesdd).
 *
 * Matrices are the last two dims; every dim before them is a batch dim (broadcast between the
 * operands of solve). f32 and f64 only. Through SVD (gesdd): svd, svdvals, pinv, matrix_rank;
 * through QR (geqrf, orgqr): qr; lstsq (gelsy) and cholesky_solve. Each op records one node, named
 * as torch 1.13 names it (LinalgVectorNormBackward, LinalgSolveExBackward, LinalgInvExBackward,
 * LinalgDetBackward, LinalgSlogdetBackward, LinalgCholeskyExBackward; eigvalsh and svdvals:
 * LinalgEighBackward, LinalgSvdBackward), with torch's backward formula written in ops (so, but for
 * the last two, it differentiates again). A singular matrix given to solve or inv is an error of
 * code GS_ERR_SINGULAR.
 */
#pragma once

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ord-norm of t over dims (ndims 0: all of them), as torch.linalg.vector_norm: ord 2 is
 * sqrt(sum x^2), INFINITY max |x|, -INFINITY min |x|, 0 the count of non-zeros, else
 * sum(|x|^ord)^(1/ord). */
GS_API gs_tensor gs_linalg_vector_norm(gs_tensor t, double ord, const int *dims, int ndims,
                                       bool keepdim);

/* Which matrix norm gs_linalg_matrix_norm computes (torch.linalg.matrix_norm's ord). */
typedef enum gs_matrix_norm_ord {
  GS_MATRIX_NORM_FRO,     /* 'fro': sqrt of the sum of squares */
  GS_MATRIX_NORM_ONE,     /* 1: the largest column sum of |a| */
  GS_MATRIX_NORM_NEG_ONE, /* -1: the smallest column sum of |a| */
  GS_MATRIX_NORM_INF,     /* inf: the largest row sum of |a| */
  GS_MATRIX_NORM_NEG_INF, /* -inf: the smallest row sum of |a| */
  GS_MATRIX_NORM_NUC,     /* 'nuc': the sum of the singular values */
  GS_MATRIX_NORM_TWO,     /* 2: the largest singular value */
  GS_MATRIX_NORM_NEG_TWO, /* -2: the smallest singular value */
} gs_matrix_norm_ord;

/* The ord-norm of the matrices whose rows and columns are dims dim0 and dim1 of t (torch:
 * dim=(-2, -1)). */
GS_API gs_tensor gs_linalg_matrix_norm(gs_tensor t, gs_matrix_norm_ord ord, int dim0, int dim1,
                                       bool keepdim);

/* X with a @ X = b, as torch.linalg.solve: a is [..., n, n]; b is [..., n, k], or a vector:
 * [n], or [..., n] when it has one dim fewer than a and a's shape without its last dim (then
 * X has b's shape). Batch dims broadcast. */
GS_API gs_tensor gs_linalg_solve(gs_tensor a, gs_tensor b);

/* The inverse of each matrix of a [..., n, n] (torch.linalg.inv). */
GS_API gs_tensor gs_linalg_inv(gs_tensor a);

/* The determinant of each matrix of a [..., n, n] (torch.linalg.det): shape [...]. Its
 * gradient is g det(a) a^-T, which needs a invertible (torch switches to an SVD there). */
GS_API gs_tensor gs_linalg_det(gs_tensor a);

/* The sign (-1, 0 or 1) and log |det| of each matrix of a [..., n, n] (torch.linalg.slogdet),
 * each [...], into *sign and *logabsdet (either may be NULL); the gradient flows through
 * logabsdet. A singular matrix gives sign 0 and logabsdet -inf. False after an error. */
GS_API bool gs_linalg_slogdet(gs_tensor a, gs_tensor *sign, gs_tensor *logabsdet);

/* ---- decompositions (linalg-decompose.c) ---- */

/* The lower-triangular L with L L^T = a for each matrix of a [..., n, n] (torch.linalg.cholesky;
 * only a's lower triangle is read). A matrix that is not positive-definite is an error of code
 * GS_ERR_SINGULAR naming the leading minor that is not. */
GS_API gs_tensor gs_linalg_cholesky(gs_tensor a);

/* The eigenvalues, ascending, of each symmetric matrix of a [..., n, n] (torch.linalg.eigvalsh,
 * reading the lower triangle): [..., n]. Recorded as LinalgEighBackward: gA = V diag(g) V^T
 * (not differentiable again). */
GS_API gs_tensor gs_linalg_eigvalsh(gs_tensor a);

/* The eigenvalues (ascending, [..., n]) and eigenvectors (as columns, [..., n, n]) of each
 * symmetric matrix of a (torch.linalg.eigh, reading the lower triangle), into *eigenvalues and
 * *eigenvectors (either may be NULL). Both are differentiable (once): the eigenvalues record
 * LinalgEighBackward, the eigenvectors LinalgEighVectorsBackward (torch's one node, split in
 * its two shares); the eigenvectors' gradient needs distinct eigenvalues and a loss that does
 * not depend on their signs. False after an error. */
GS_API bool gs_linalg_eigh(gs_tensor a, gs_tensor *eigenvalues, gs_tensor *eigenvectors);

/* ---- the SVD and what is built on it (linalg-svd.c) ---- */

/* The singular values, descending, of each matrix of a [..., m, n] (torch.linalg.svdvals):
 * [..., min(m, n)]. Recorded as LinalgSvdBackward: gA = U diag(g) V^T (not differentiable
 * again; well defined where the values are distinct). */
GS_API gs_tensor gs_linalg_svdvals(gs_tensor a);

/* a = U diag(S) Vh for each matrix of a [..., m, n] (torch.linalg.svd), with k = min(m, n):
 * S [..., k] descending; U [..., m, k] and Vh [..., k, n], or with full_matrices U [..., m, m]
 * and Vh [..., n, n]. The three are differentiable (once), each recording its share of
 * torch's formula (LinalgSvdUBackward, LinalgSvdBackward, LinalgSvdVhBackward; Python names
 * them all LinalgSvdBackward0): U's and Vh's need distinct singular values (and, for m != n,
 * non-zero ones) and a loss that does not depend on the vectors' signs; full_matrices' extra
 * columns get no gradient, as torch's. All three outputs are written; false after an error. */
GS_API bool gs_linalg_svd(gs_tensor a, bool full_matrices, gs_tensor *u, gs_tensor *s,
                          gs_tensor *vh);

/* The pseudo-inverse [..., n, m] of each matrix of a [..., m, n] (torch.linalg.pinv): singular
 * values at most max(atol, rtol * the largest) count as zero. NAN for atol means 0; NAN for
 * rtol means eps * max(m, n), or 0 when atol is given and positive (torch's defaults).
 * Recorded as LinalgPinvBackward (torch's pinv_backward; differentiable again). */
GS_API gs_tensor gs_linalg_pinv(gs_tensor a, double atol, double rtol);

/* The number of singular values of each matrix of a [..., m, n] above gs_linalg_pinv's
 * cut-off (torch.linalg.matrix_rank): an i64 tensor of shape [...]. */
GS_API gs_tensor gs_linalg_matrix_rank(gs_tensor a, double atol, double rtol);

/* ---- QR and the solvers (linalg-qr.c) ---- */

/* Which factors gs_linalg_qr computes (torch.linalg.qr's mode). */
typedef enum gs_qr_mode {
  GS_QR_REDUCED,  /* 'reduced': Q [..., m, k], R [..., k, n], k = min(m, n) */
  GS_QR_COMPLETE, /* 'complete': Q [..., m, m], R [..., m, n] */
  GS_QR_R,        /* 'r': R [..., k, n] only; Q is an empty tensor ([0]) */
} gs_qr_mode;

/* a = Q R for each matrix of a [..., m, n] (torch.linalg.qr; LAPACK's geqrf and orgqr, so R's
 * diagonal may be negative, as torch's). Q and R are differentiable (once) in modes 'reduced'
 * and, when m <= n, 'complete', each recording its share of torch's formula
 * (LinalgQrBackward, LinalgQrRBackward; Python names both LinalgQrBackward0); R needs a
 * non-zero diagonal. Not in mode 'r' nor 'complete' with m > n, where torch refuses it: no
 * node is recorded. False after an error. */
GS_API bool gs_linalg_qr(gs_tensor a, gs_qr_mode mode, gs_tensor *q, gs_tensor *r);

/* The X minimising |a X - b| for each matrix of a [..., m, n] (torch.linalg.lstsq with its CPU
 * driver, LAPACK gelsy, which handles any rank): b is [..., m, k] with as many dims as a, or
 * vectors [..., m] with one fewer (torch's lstsq rule, not solve's); batch dims broadcast.
 * rcond: singular values below rcond times the largest count as zero (NAN: eps * max(m, n),
 * torch's default). The rank of each matrix of a, i64 of a's batch shape, into *rank when
 * non-NULL. Recorded as LinalgLstsqBackward, torch's formula
 * through pinv(a) (right for a of full rank; differentiable again). */
GS_API gs_tensor gs_linalg_lstsq(gs_tensor a, gs_tensor b, double rcond, gs_tensor *rank);

/* X with A X = b for A = L L^T (upper: A = U^T U), given the Cholesky factor l [..., n, n] and
 * b [..., n, k] (torch.cholesky_solve; both of 2 or more dims, batch dims broadcast). Recorded
 * as CholeskySolveBackward (differentiable again). */
GS_API gs_tensor gs_cholesky_solve(gs_tensor b, gs_tensor l, bool upper);

#ifdef __cplusplus
}
#endif
