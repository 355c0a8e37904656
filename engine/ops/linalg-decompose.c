/* linalg-decompose.c: the symmetric factorisations torch.linalg programs differentiate most,
 * each with one differentiable output: cholesky (LAPACK potrf) and eigvalsh (syevd), and
 * eigh, whose two outputs each record a node (their gradients add up, as torch's one formula
 * is the sum of the two shares),
 * batched over the leading dims as linalg.c's ops (column-major copies, one LAPACK call per
 * matrix).
 *
 * Backward formulas, as torch 1.13's:
 *   cholesky  L:  gA = L^-T Phi(L^T g) L^-1, Phi(X) the symmetric matrix with X's strict lower
 *                 triangle mirrored and half X's diagonal (written with solve, so it
 *                 differentiates again);
 *   eigvalsh  w:  gA = V diag(g) V^T, V the eigenvectors;
 *   eigh      V:  gA = V (skew(V^T g) / (L[j] - L[i])) V^T (eigh_vectors_backward).
 * (svdvals and the SVD's other users are in linalg-svd.c.)
 * The others save the vectors or values as values with no history, so their formulas are not
 * differentiable again (a double backward through them is refused).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linalg-impl.h"

/* LAPACK entry points in libopenblas. potrf is OpenBLAS's own C; syevd is reference LAPACK
 * (Fortran), so its hidden string lengths are passed. */
void dpotrf_(const char *uplo, const blasint *n, double *a, const blasint *lda, blasint *info);
void spotrf_(const char *uplo, const blasint *n, float *a, const blasint *lda, blasint *info);
void dsyevd_(const char *jobz, const char *uplo, const blasint *n, double *a, const blasint *lda,
             double *w, double *work, const blasint *lwork, blasint *iwork, const blasint *liwork,
             blasint *info, size_t jobz_len, size_t uplo_len);
void ssyevd_(const char *jobz, const char *uplo, const blasint *n, float *a, const blasint *lda,
             float *w, float *work, const blasint *lwork, blasint *iwork, const blasint *liwork,
             blasint *info, size_t jobz_len, size_t uplo_len);
static void dispose_all(gs_tensor *ts, int n) {
  for (int i = 0; i < n; i++)
    gs_dispose(ts[i]);
}

gs_tensor gs__linalg_scaled_product(gs_tensor left, gs_tensor g, gs_tensor right) {
  gs_tensor row = gs__formula_temp(gs_unsqueeze(g, -2));
  return gs_matmul(gs__formula_temp(gs_mul(left, row)), right);
}

/* ---- cholesky ------------------------------------------------------------------------------ */

gs_tensor gs__linalg_triangle(int64_t n, gs_dtype dtype, double lower, double diag) {
  double *data = malloc(sizeof(double) * (size_t)(n * n > 0 ? n * n : 1));
  if (!data)
    return GS_NO_TENSOR;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++)
      data[i * n + j] = i > j ? lower : i == j ? diag : 0.0;
  gs_tensor t = gs_from_data(GS_F64, (int64_t[]){n, n}, 2, data);
  free(data);
  if (dtype == GS_F64 || !t.id)
    return t;
  gs_tensor converted = gs_to_dtype(t, dtype);
  gs_dispose(t);
  return converted;
}

/* Saved: L (0). */
static void cholesky_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor l = gs__saved(n, 0);
  int64_t size = n->inputs[0].shape[n->inputs[0].ndim - 1];
  gs_dtype dtype = gs_dtype_of(g);
  gs_tensor lt = gs__linalg_mT(l);
  gs_tensor x = gs__formula_temp(gs_matmul(lt, g));
  /* Phi(X) = (strict_lower(X) + strict_lower(X)^T + diag(X)) / 2 */
  gs_tensor strict =
      gs__formula_temp(gs_mul(x, gs__formula_temp(gs__linalg_triangle(size, dtype, 1, 0))));
  gs_tensor diag =
      gs__formula_temp(gs_mul(x, gs__formula_temp(gs__linalg_triangle(size, dtype, 0, 1))));
  gs_tensor both = gs__formula_temp(gs_add(strict, gs__linalg_mT(strict)));
  gs_tensor phi = gs__formula_temp(gs_mul_scalar(gs__formula_temp(gs_add(both, diag)), 0.5));
  gs_tensor left = gs__formula_temp(gs_linalg_solve(lt, phi));                  /* L^-T Phi */
  gs_tensor right = gs__formula_temp(gs_linalg_solve(lt, gs__linalg_mT(left))); /* its ^T L^-1 */
  grads[0] = gs__reduce_grad(n, 0, gs_transpose(right, -2, -1));
}
GS__BACKWARD_TWICE(LinalgCholeskyExBackward, cholesky_backward);

gs_tensor gs_linalg_cholesky(gs_tensor ha) {
  const char *fn = "linalg_cholesky";
  gs__tensor *a = gs__linalg_square(ha, fn);
  if (!a)
    return GS_NO_TENSOR;
  int nbatch = a->ndim - 2;
  blasint n = (blasint)a->shape[a->ndim - 1];
  int64_t count = gs__linalg_batch_count(a->shape, nbatch);
  gs__tensor *cm;
  /* The column-major copy of a symmetric A is A: potrf's lower triangle is A's. */
  gs_tensor hcm = gs__linalg_column_major(a, a->shape, nbatch, &cm, fn);
  if (!hcm.id)
    return GS_NO_TENSOR;
  char *data = gs__tensor_data(cm);
  size_t el = gs__elsize(a->dtype);
  for (int64_t i = 0; i < count && n > 0; i++) {
    char *m = data + el * (size_t)(i * n * n);
    blasint info = 0;
    if (a->dtype == GS_F64)
      dpotrf_("L", &n, (double *)m, &n, &info);
    else
      spotrf_("L", &n, (float *)m, &n, &info);
    if (info > 0) {
      char where[64];
      gs__linalg_batch_element(where, sizeof where, i, count);
      gs__error(GS_ERR_SINGULAR, fn,
                "expected a positive-definite matrix, got one%s whose leading minor of order %d "
                "is not positive-definite",
                where, (int)info);
      gs_dispose(hcm);
      return GS_NO_TENSOR;
    }
    /* the strict upper triangle still holds A's values: L is lower triangular */
    for (blasint col = 1; col < n; col++)
      memset(m + el * (size_t)(col * n), 0, el * (size_t)col);
  }
  gs_tensor r = gs__linalg_row_major(cm, nbatch, false, fn);
  gs_dispose(hcm);
  gs__node *node =
      r.id ? gs__record_result(&LinalgCholeskyExBackward, r, 1, (const gs__tensor *[]){a}, 1, fn)
           : NULL;
  if (node)
    gs__save(node, 0, gs__lookup(r, fn));
  return r;
}

/* ---- eigvalsh ------------------------------------------------------------------------------ */

/* Saved: the eigenvectors V (0), as columns. */
static void eigvalsh_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor v = gs__saved(n, 0);
  grads[0] = gs__reduce_grad(n, 0, gs__linalg_scaled_product(v, g, gs__linalg_mT(v)));
}
GS__BACKWARD(LinalgEighBackward, eigvalsh_backward);

/* syevd on matrix m (n x n, column-major): eigenvalues into w, eigenvectors over m. LAPACK's
 * info (> 0: no convergence). */
static blasint symmetric_eigen(gs_dtype dtype, char *m, blasint n, char *w) {
  blasint info = 0, lwork = -1, liwork = -1, iwork_size = 0;
  double work_size = 0;
  float work_size_f = 0;
  if (dtype == GS_F64)
    dsyevd_("V", "L", &n, (double *)m, &n, (double *)w, &work_size, &lwork, &iwork_size, &liwork,
            &info, 1, 1);
  else
    ssyevd_("V", "L", &n, (float *)m, &n, (float *)w, &work_size_f, &lwork, &iwork_size, &liwork,
            &info, 1, 1);
  lwork = (blasint)(dtype == GS_F64 ? work_size : (double)work_size_f) + 1;
  liwork = iwork_size > 0 ? iwork_size : 1;
  void *work = malloc(gs__elsize(dtype) * (size_t)lwork);
  blasint *iwork = malloc(sizeof(blasint) * (size_t)liwork);
  if (!work || !iwork) {
    free(work), free(iwork);
    return -1;
  }
  if (dtype == GS_F64)
    dsyevd_("V", "L", &n, (double *)m, &n, (double *)w, work, &lwork, iwork, &liwork, &info, 1, 1);
  else
    ssyevd_("V", "L", &n, (float *)m, &n, (float *)w, work, &lwork, iwork, &liwork, &info, 1, 1);
  free(work), free(iwork);
  return info;
}

/* Saved: the eigenvalues L (0, constant) and V (1, the output). The eigenvectors' share of
 * torch's formula: with S = (V^T g - g^T V) / 2 and E[i][j] = L[j] - L[i],
 * gA = V (S / E, 0 on the diagonal) V^T. */
static void eigh_vectors_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor l = gs__saved(n, 0), v = gs__saved(n, 1);
  gs_tensor vtg = gs__formula_temp(gs_matmul(gs__linalg_mT(v), g));
  gs_tensor skew =
      gs__formula_temp(gs_mul_scalar(gs__formula_temp(gs_sub(vtg, gs__linalg_mT(vtg))), 0.5));
  gs_tensor gaps = gs__formula_temp(
      gs_sub(gs__formula_temp(gs_unsqueeze(l, -2)), gs__formula_temp(gs_unsqueeze(l, -1))));
  int64_t size = n->inputs[0].shape[n->inputs[0].ndim - 1];
  gs_tensor eye = gs__formula_temp(gs_eye(size, size, gs_dtype_of(g)));
  gs_tensor safe = gs__formula_temp(gs_add(gaps, eye)); /* 1 on the diagonal, where S is 0 */
  gs_tensor inner = gs__formula_temp(gs_div(skew, safe));
  gs_tensor right = gs__formula_temp(gs_matmul(inner, gs__linalg_mT(v)));
  grads[0] = gs__reduce_grad(n, 0, gs_matmul(v, right));
}
GS__BACKWARD(LinalgEighVectorsBackward, eigh_vectors_backward);

/* Eigenvalues into *w and, when v is non-NULL, eigenvectors (as columns) into *v, both fresh
 * and with no history. false after reporting. */
static bool eigen_values(const gs__tensor *a, gs_tensor *hw, gs_tensor *v, const char *fn) {
  int nbatch = a->ndim - 2;
  blasint n = (blasint)a->shape[a->ndim - 1];
  int64_t count = gs__linalg_batch_count(a->shape, nbatch);
  gs__tensor *cm, *w;
  gs_tensor hcm = gs__linalg_column_major(a, a->shape, nbatch, &cm, fn);
  *hw = hcm.id ? gs__tensor_new(a->dtype, a->shape, nbatch + 1, fn, &w) : GS_NO_TENSOR;
  if (!hw->id) {
    gs_dispose(hcm);
    return false;
  }
  size_t el = gs__elsize(a->dtype);
  for (int64_t i = 0; i < count && n > 0; i++) {
    blasint info = symmetric_eigen(a->dtype, gs__tensor_data(cm) + el * (size_t)(i * n * n), n,
                                   gs__tensor_data(w) + el * (size_t)(i * n));
    if (info != 0) {
      char where[64];
      gs__linalg_batch_element(where, sizeof where, i, count);
      if (info < 0)
        gs__error(GS_ERR_OUT_OF_MEMORY, fn, "no memory for the eigensolver's workspace");
      else
        gs__error(GS_ERR_ARGUMENT, fn,
                  "expected a matrix whose eigenvalues converge, got one%s where %d did not", where,
                  (int)info);
      dispose_all((gs_tensor[]){hcm, *hw}, 2);
      return false;
    }
  }
  *v = gs__linalg_row_major(cm, nbatch, false, fn);
  gs_dispose(hcm);
  if (!v->id)
    gs_dispose(*hw);
  return v->id != 0;
}

/* Records the eigenvalues' node on w (saving v as a constant). */
static void record_eigenvalues(gs__tensor *a, gs_tensor w, gs_tensor v, const char *fn) {
  gs__node *node = gs__record_result(&LinalgEighBackward, w, 1, (const gs__tensor *[]){a}, 1, fn);
  if (node)
    gs__save_constant(node, 0, gs__lookup(v, fn));
}

gs_tensor gs_linalg_eigvalsh(gs_tensor ha) {
  const char *fn = "linalg_eigvalsh";
  gs__tensor *a = gs__linalg_square(ha, fn);
  gs_tensor w, v;
  if (!a || !eigen_values(a, &w, &v, fn))
    return GS_NO_TENSOR;
  record_eigenvalues(a, w, v, fn);
  gs_dispose(v);
  return w;
}

bool gs_linalg_eigh(gs_tensor ha, gs_tensor *eigenvalues, gs_tensor *eigenvectors) {
  const char *fn = "linalg_eigh";
  gs__tensor *a = gs__linalg_square(ha, fn);
  gs_tensor w, v;
  if (!a || !eigen_values(a, &w, &v, fn))
    return false;
  record_eigenvalues(a, w, v, fn);
  gs__node *node =
      gs__record_result(&LinalgEighVectorsBackward, v, 1, (const gs__tensor *[]){a}, 2, fn);
  if (node) {
    gs__save_constant(node, 0, gs__lookup(w, fn));
    gs__save(node, 1, gs__lookup(v, fn));
  }
  if (eigenvalues)
    *eigenvalues = w;
  else
    gs_dispose(w);
  if (eigenvectors)
    *eigenvectors = v;
  else
    gs_dispose(v);
  return true;
}
