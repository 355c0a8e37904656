/* linalg-impl.h: what the linear-algebra files share (linalg.c: LU ops and norms;
 * linalg-decompose.c: cholesky, eigh; linalg-svd.c: svd, svdvals, pinv, matrix_rank;
 * linalg-qr.c: qr, lstsq, cholesky_solve): checking a batch of square matrices and
 * moving matrices between the engine's row-major tensors and LAPACK's column-major buffers. */
#pragma once

#include <cblas.h>

#include "ops-impl.h"

/* The largest size or leading dimension BLAS and LAPACK take (blasint is 32-bit in Debian's
 * OpenBLAS). */
#define BLAS_INT_MAX ((int64_t)(sizeof(blasint) == 4 ? INT32_MAX : INT64_MAX))

/* h, a floating batch of square matrices ([..., n, n]) of a size LAPACK takes, or NULL after
 * reporting as fn. */
gs__tensor *gs__linalg_square(gs_tensor h, const char *fn);
/* A fresh contiguous tensor of shape batch + [cols, rows] holding each matrix of t (broadcast
 * to the batch dims) transposed: the matrices in LAPACK's column-major order. *out is it. */
gs_tensor gs__linalg_column_major(const gs__tensor *t, const int64_t *batch, int nbatch,
                                  gs__tensor **out, const char *fn);
/* A fresh row-major tensor from x, a column-major batch [..., k, n] (of nbatch batch dims):
 * [..., n, k], or [..., n] when vector (k is 1). */
gs_tensor gs__linalg_row_major(const gs__tensor *x, int nbatch, bool vector, const char *fn);
/* The product of the first ndim sizes of shape: how many matrices a batch holds. */
int64_t gs__linalg_batch_count(const int64_t *shape, int ndim);
/* " (batch element 3)" into where when the batch holds more than one matrix, else "". */
void gs__linalg_batch_element(char *where, size_t size, int64_t element, int64_t count);
/* x with its last two dims swapped, inside a formula (a formula temporary). */
gs_tensor gs__linalg_mT(gs_tensor x);
/* left times g broadcast over the rows ([..., k] -> [..., 1, k]), then times right: the
 * U diag(g) V^T of the SVD's and eigh's formulas (left [..., m, k], right [..., k, n]). */
gs_tensor gs__linalg_scaled_product(gs_tensor left, gs_tensor g, gs_tensor right);
/* An n x n constant of dtype: lower below the diagonal, diag on it, 0 above (a mask for the
 * triangles torch's formulas take; a fresh handle). */
gs_tensor gs__linalg_triangle(int64_t n, gs_dtype dtype, double lower, double diag);
/* a, a floating tensor of 2 or more dims (batches of m x n matrices) of sizes LAPACK takes, or
 * NULL after reporting as fn. */
gs__tensor *gs__linalg_matrices(gs_tensor h, const char *fn);
/* The SVD of each matrix of a [..., m, n], with no history: the k = min(m, n) singular values
 * S [..., k], descending, into *s and, when u is non-NULL, U [..., m, k] and V^T [..., k, n]
 * (full: [..., m, m] and [..., n, n]) into *u and *vh, fresh row-major tensors (LAPACK gesdd).
 * false after reporting. */
bool gs__linalg_svd_factors(const gs__tensor *a, bool full, gs_tensor *u, gs_tensor *s,
                            gs_tensor *vh, const char *fn);
/* torch's pinv_backward: the gradient of A from g, the gradient of pinv = pinv(A) [..., n, m]
 * (A [..., m, n] with m and n its sizes), written in ops (a formula temporary). */
gs_tensor gs__linalg_pinv_grad(gs_tensor g, gs_tensor pinv, gs_tensor a, int64_t m, int64_t n);
