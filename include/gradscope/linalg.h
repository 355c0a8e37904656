/* gradscope/linalg.h: linear algebra (torch.linalg): vector and matrix norms, and through an LU
 * factorisation (LAPACK's getrf/getrs, from OpenBLAS) solve, inv, det and slogdet; cholesky,
 * eigvalsh and svdvals (potrf, syevd, gesdd).
 *
 * Matrices are the last two dims; every dim before them is a batch dim (broadcast between the
 * operands of solve). f32 and f64 only. Each op records one node, named as torch 1.13 names it
 * (LinalgVectorNormBackward, LinalgSolveExBackward, LinalgInvExBackward, LinalgDetBackward,
 * LinalgSlogdetBackward, LinalgCholeskyExBackward; eigvalsh and svdvals: LinalgEighBackward,
 * LinalgSvdBackward), with torch's backward formula written in ops (so, but for the last two,
 * it differentiates again). A singular matrix given to solve or inv is an error of code
 * GS_ERR_SINGULAR.
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

/* The singular values, descending, of each matrix of a [..., m, n] (torch.linalg.svdvals):
 * [..., min(m, n)]. Recorded as LinalgSvdBackward: gA = U diag(g) V^T (not differentiable
 * again; well defined where the values are distinct). */
GS_API gs_tensor gs_linalg_svdvals(gs_tensor a);

#ifdef __cplusplus
}
#endif
