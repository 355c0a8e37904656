/* linalg-impl.h: what the linear-algebra files share (linalg.c: LU ops and norms;
 * linalg-decompose.c: cholesky, eigvalsh, svdvals): checking a batch of square matrices and
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
