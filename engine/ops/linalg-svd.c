/* linalg-svd.c: what torch.linalg builds on the singular value decomposition (LAPACK gesdd):
 * svdvals, svd (U, S, Vh, reduced or full), pinv and matrix_rank, batched over the leading
 * dims as linalg.c's ops (column-major copies, one LAPACK call per matrix).
 *
 * torch records one LinalgSvdBackward node for U, S and Vh; its formula is linear in the
 * three gradients, so the engine records one node per output, each with its share (as eigh),
 * and Python names all three LinalgSvdBackward0. With E[i][j] = S[j]^2 - S[i]^2 (1 on the
 * diagonal), skew(X) = X - X^T, k = min(m, n) and U, Vh cut to k columns / rows:
 *   S:   gA = U diag(gS) Vh;
 *   U:   gA = U ((skew(U^T gU) / E) S) Vh, plus (I - U U^T) (gU / S) Vh when m > n;
 *   Vh:  gA = U (S (skew(Vh gVh^T) / E)) Vh, plus U (gVh / S) (I - Vh^T Vh) when m < n.
 * They read the factors as constants, so they differentiate once (torch's would again); the
 * vectors' shares need distinct singular values, and a loss that does not depend on the
 * vectors' signs.
 *   pinv  P = pinv(A):  torch's pinv_backward (gs__linalg_pinv_grad), differentiable again.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linalg-impl.h"

void dgesdd_(const char *jobz, const blasint *m, const blasint *n, double *a, const blasint *lda,
             double *s, double *u, const blasint *ldu, double *vt, const blasint *ldvt,
             double *work, const blasint *lwork, blasint *iwork, blasint *info, size_t jobz_len);
void sgesdd_(const char *jobz, const blasint *m, const blasint *n, float *a, const blasint *lda,
             float *s, float *u, const blasint *ldu, float *vt, const blasint *ldvt, float *work,
             const blasint *lwork, blasint *iwork, blasint *info, size_t jobz_len);

static void dispose_all(gs_tensor *ts, int n) {
  for (int i = 0; i < n; i++)
    gs_dispose(ts[i]);
}

gs__tensor *gs__linalg_matrices(gs_tensor h, const char *fn) {
  gs__tensor *a = gs__lookup(h, fn);
  if (!a)
    return NULL;
  if (!gs_dtype_is_floating(a->dtype) || a->ndim < 2) {
    gs__error(a->ndim < 2 ? GS_ERR_SHAPE : GS_ERR_DTYPE, fn,
              "expected a floating (f32 or f64) tensor of 2 or more dims, got %s with %d dims",
              gs_dtype_name(a->dtype), a->ndim);
    return NULL;
  }
  int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1];
  if (m > BLAS_INT_MAX || n > BLAS_INT_MAX) {
    gs__error(GS_ERR_OVERFLOW, fn,
              "expected matrices of at most %lld rows and columns, got %lldx%lld",
              (long long)BLAS_INT_MAX, (long long)m, (long long)n);
    return NULL;
  }
  return a;
}

/* ---- gesdd --------------------------------------------------------------------------------- */

/* gesdd on matrix a (m x n, column-major, destroyed): k = min(m, n) singular values into s and,
 * by jobz, nothing else ('N'), U (m x k) and V^T (k x n) ('S') or U (m x m) and V^T (n x n)
 * ('A'), column-major. LAPACK's info (> 0: no convergence; -1 here: no memory). */
static blasint gesdd(gs_dtype dtype, char jobz, char *a, blasint m, blasint n, char *s, char *u,
                     char *vt) {
  blasint k = m < n ? m : n, info = 0, lwork = -1;
  blasint lda = m > 0 ? m : 1, ldu = lda, ldvt = jobz == 'A' ? (n > 0 ? n : 1) : (k > 0 ? k : 1);
  blasint *iwork = malloc(sizeof(blasint) * (size_t)(8 * (k > 0 ? k : 1)));
  if (!iwork)
    return -1;
  double work_size = 0;
  float work_size_f = 0;
  if (dtype == GS_F64)
    dgesdd_(&jobz, &m, &n, (double *)a, &lda, (double *)s, (double *)u, &ldu, (double *)vt, &ldvt,
            &work_size, &lwork, iwork, &info, 1);
  else
    sgesdd_(&jobz, &m, &n, (float *)a, &lda, (float *)s, (float *)u, &ldu, (float *)vt, &ldvt,
            &work_size_f, &lwork, iwork, &info, 1);
  lwork = (blasint)(dtype == GS_F64 ? work_size : (double)work_size_f) + 1;
  void *work = malloc(gs__elsize(dtype) * (size_t)lwork);
  if (!work) {
    free(iwork);
    return -1;
  }
  if (dtype == GS_F64)
    dgesdd_(&jobz, &m, &n, (double *)a, &lda, (double *)s, (double *)u, &ldu, (double *)vt, &ldvt,
            work, &lwork, iwork, &info, 1);
  else
    sgesdd_(&jobz, &m, &n, (float *)a, &lda, (float *)s, (float *)u, &ldu, (float *)vt, &ldvt, work,
            &lwork, iwork, &info, 1);
  free(work), free(iwork);
  return info;
}

/* Sets each matrix of t ([..., r, r], contiguous) to the identity: the full U or V of an empty
 * matrix, which gesdd is not called for. */
static void fill_identity(gs__tensor *t) {
  int64_t r = t->shape[t->ndim - 1], count = gs__linalg_batch_count(t->shape, t->ndim - 2);
  char *data = gs__tensor_data(t);
  size_t el = gs__elsize(t->dtype);
  if (count * r == 0)
    return;
  memset(data, 0, el * (size_t)(count * r * r));
  for (int64_t i = 0; i < count * r; i++) {
    char *one = data + el * (size_t)(i * r + i % r);
    if (t->dtype == GS_F64)
      *(double *)one = 1.0;
    else
      *(float *)one = 1.0f;
  }
}

bool gs__linalg_svd_factors(const gs__tensor *a, bool full, gs_tensor *hu, gs_tensor *hs,
                            gs_tensor *hvh, const char *fn) {
  int nbatch = a->ndim - 2;
  blasint m = (blasint)a->shape[nbatch], n = (blasint)a->shape[nbatch + 1], k = m < n ? m : n;
  bool vectors = hu != NULL;
  char jobz = !vectors ? 'N' : full ? 'A' : 'S';
  blasint ucols = full ? m : k, vrows = full ? n : k;
  int64_t count = gs__linalg_batch_count(a->shape, nbatch);
  int64_t shape[GS_MAX_DIMS];
  memcpy(shape, a->shape, sizeof(int64_t) * (size_t)nbatch);
  gs__tensor *cm, *s, *u = NULL, *vt = NULL;
  gs_tensor hcm = gs__linalg_column_major(a, a->shape, nbatch, &cm, fn);
  shape[nbatch] = k;
  *hs = hcm.id ? gs__tensor_new(a->dtype, shape, nbatch + 1, fn, &s) : GS_NO_TENSOR;
  gs_tensor hucm = GS_NO_TENSOR, hvtcm = GS_NO_TENSOR;
  bool ok = hs->id != 0;
  if (ok && vectors) {
    shape[nbatch] = ucols, shape[nbatch + 1] = m; /* U column-major: m x ucols */
    hucm = gs__tensor_new(a->dtype, shape, nbatch + 2, fn, &u);
    shape[nbatch] = n, shape[nbatch + 1] = vrows; /* V^T column-major: vrows x n */
    hvtcm = hucm.id ? gs__tensor_new(a->dtype, shape, nbatch + 2, fn, &vt) : GS_NO_TENSOR;
    ok = hvtcm.id != 0;
    if (ok && k == 0 && full)
      fill_identity(u), fill_identity(vt);
  }
  size_t el = gs__elsize(a->dtype);
  for (int64_t i = 0; ok && i < count && k > 0; i++) {
    blasint info = gesdd(a->dtype, jobz, gs__tensor_data(cm) + el * (size_t)(i * m * n), m, n,
                         gs__tensor_data(s) + el * (size_t)(i * k),
                         vectors ? gs__tensor_data(u) + el * (size_t)(i * m * ucols) : NULL,
                         vectors ? gs__tensor_data(vt) + el * (size_t)(i * vrows * n) : NULL);
    if (info != 0) {
      char where[64];
      gs__linalg_batch_element(where, sizeof where, i, count);
      if (info < 0)
        gs__error(GS_ERR_OUT_OF_MEMORY, fn, "no memory for the SVD's workspace");
      else
        gs__error(GS_ERR_ARGUMENT, fn,
                  "expected a matrix whose SVD converges, got one%s where it did not", where);
      ok = false;
    }
  }
  if (ok && vectors) {
    *hu = gs__linalg_row_major(u, nbatch, false, fn);
    *hvh = hu->id ? gs__linalg_row_major(vt, nbatch, false, fn) : GS_NO_TENSOR;
    if (!hvh->id)
      gs_dispose(*hu);
    ok = hvh->id != 0;
  }
  dispose_all((gs_tensor[]){hcm, hucm, hvtcm}, 3);
  if (!ok)
    gs_dispose(*hs);
  return ok;
}

/* ---- svdvals and svd ----------------------------------------------------------------------- */

/* Saved: U (0) [..., m, k] and V^T (1) [..., k, n]. */
static void svdvals_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, gs__linalg_scaled_product(gs__saved(n, 0), g, gs__saved(n, 1)));
}
GS__BACKWARD(LinalgSvdBackward, svdvals_backward);

/* E[i][j] = S[j]^2 - S[i]^2 with 1 on the diagonal (where the skew matrices it divides are 0):
 * a formula temporary. */
static gs_tensor squared_gaps(gs_tensor s) {
  gs_tensor s2 = gs__formula_temp(gs_mul(s, s));
  gs_tensor gaps = gs__formula_temp(
      gs_sub(gs__formula_temp(gs_unsqueeze(s2, -2)), gs__formula_temp(gs_unsqueeze(s2, -1))));
  int64_t k = gs_size(s, gs_ndim(s) - 1);
  return gs__formula_temp(gs_add(gaps, gs__formula_temp(gs_eye(k, k, gs_dtype_of(s)))));
}

/* X - X^T (a formula temporary). */
static gs_tensor skew(gs_tensor x) { return gs__formula_temp(gs_sub(x, gs__linalg_mT(x))); }

/* Saved: U (0) [..., m, k], S (1) [..., k], V^T (2) [..., k, n], constants; ints[0]: whether U
 * is full ([..., m, m]: g's columns past k get no share, as torch narrows them away). */
static void svd_u_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor u = gs__saved(n, 0), s = gs__saved(n, 1), vh = gs__saved(n, 2);
  int64_t rows = n->inputs[0].shape[n->inputs[0].ndim - 2];
  int64_t cols = n->inputs[0].shape[n->inputs[0].ndim - 1], k = rows < cols ? rows : cols;
  if (n->ints[0])
    g = gs__formula_temp(gs_narrow(g, -1, 0, k));
  gs_tensor s_row = gs__formula_temp(gs_unsqueeze(s, -2));
  gs_tensor uhgu = skew(gs__formula_temp(gs_matmul(gs__linalg_mT(u), g)));
  gs_tensor inner =
      gs__formula_temp(gs_mul(gs__formula_temp(gs_div(uhgu, squared_gaps(s))), s_row));
  gs_tensor left = gs__formula_temp(gs_matmul(u, inner));
  if (rows > cols) { /* the part of gU outside U's span: (I - U U^T) gU / S */
    gs_tensor gus = gs__formula_temp(gs_div(g, s_row));
    gs_tensor inside =
        gs__formula_temp(gs_matmul(u, gs__formula_temp(gs_matmul(gs__linalg_mT(u), gus))));
    left = gs__formula_temp(gs_add(left, gs__formula_temp(gs_sub(gus, inside))));
  }
  grads[0] = gs__reduce_grad(n, 0, gs_matmul(left, vh));
}
GS__BACKWARD(LinalgSvdUBackward, svd_u_backward);

/* Saved as svd_u_backward's; ints[0]: whether Vh is full ([..., n, n]: its rows past k get no
 * share). */
static void svd_vh_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor u = gs__saved(n, 0), s = gs__saved(n, 1), vh = gs__saved(n, 2);
  int64_t rows = n->inputs[0].shape[n->inputs[0].ndim - 2];
  int64_t cols = n->inputs[0].shape[n->inputs[0].ndim - 1], k = rows < cols ? rows : cols;
  if (n->ints[0])
    g = gs__formula_temp(gs_narrow(g, -2, 0, k));
  gs_tensor s_col = gs__formula_temp(gs_unsqueeze(s, -1));
  gs_tensor vhgv = skew(gs__formula_temp(gs_matmul(vh, gs__linalg_mT(g))));
  gs_tensor inner =
      gs__formula_temp(gs_mul(s_col, gs__formula_temp(gs_div(vhgv, squared_gaps(s)))));
  gs_tensor right = gs__formula_temp(gs_matmul(inner, vh));
  if (rows < cols) { /* the part of gVh outside Vh's row space: gVh / S (I - Vh^T Vh) */
    gs_tensor gvs = gs__formula_temp(gs_div(g, s_col));
    gs_tensor inside =
        gs__formula_temp(gs_matmul(gs__formula_temp(gs_matmul(gvs, gs__linalg_mT(vh))), vh));
    right = gs__formula_temp(gs_add(right, gs__formula_temp(gs_sub(gvs, inside))));
  }
  grads[0] = gs__reduce_grad(n, 0, gs_matmul(u, right));
}
GS__BACKWARD(LinalgSvdVhBackward, svd_vh_backward);

/* The first k columns (dim -1) or rows (dim -2) of x (no history) as a fresh contiguous
 * tensor. */
static gs_tensor first(gs_tensor x, int dim, int64_t k) {
  gs_tensor view = gs_narrow(x, dim, 0, k);
  gs_tensor r = view.id ? gs_contiguous(view) : GS_NO_TENSOR;
  gs_dispose(view);
  return r;
}

/* Records the node of kind on output r (when it needs one), saving U, S and V^T (cut to k). */
static void record_svd_share(const gs__node_kind *kind, gs__tensor *a, gs_tensor r, gs_tensor u,
                             gs_tensor s, gs_tensor vh, bool full, const char *fn) {
  gs__node *node = gs__record_result(kind, r, 1, (const gs__tensor *[]){a}, 3, fn);
  if (!node)
    return;
  gs__save_constant(node, 0, gs__lookup(u, fn));
  gs__save_constant(node, 1, gs__lookup(s, fn));
  gs__save_constant(node, 2, gs__lookup(vh, fn));
  node->ints[0] = full;
}

gs_tensor gs_linalg_svdvals(gs_tensor ha) {
  const char *fn = "linalg_svdvals";
  gs__tensor *a = gs__linalg_matrices(ha, fn);
  gs_tensor u, s, vh;
  if (!a || !gs__linalg_svd_factors(a, false, &u, &s, &vh, fn))
    return GS_NO_TENSOR;
  gs__node *node = gs__record_result(&LinalgSvdBackward, s, 1, (const gs__tensor *[]){a}, 2, fn);
  if (node) {
    gs__save_constant(node, 0, gs__lookup(u, fn));
    gs__save_constant(node, 1, gs__lookup(vh, fn));
  }
  dispose_all((gs_tensor[]){u, vh}, 2);
  return s;
}

bool gs_linalg_svd(gs_tensor ha, bool full_matrices, gs_tensor *u, gs_tensor *s, gs_tensor *vh) {
  const char *fn = "linalg_svd";
  gs__tensor *a = gs__linalg_matrices(ha, fn);
  gs_tensor hu, hs, hvh;
  if (!a || !gs__linalg_svd_factors(a, full_matrices, &hu, &hs, &hvh, fn))
    return false;
  int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1], k = m < n ? m : n;
  bool full = full_matrices && m != n; /* a square matrix's full factors are its reduced ones */
  if (gs__any_requires_grad(1, (const gs__tensor *[]){a})) {
    gs_tensor uk = full ? first(hu, -1, k) : hu, vhk = full ? first(hvh, -2, k) : hvh;
    record_svd_share(&LinalgSvdUBackward, a, hu, uk, hs, vhk, full, fn);
    /* S's node is svdvals' (U, V^T saved) */
    gs__node *node = gs__record_result(&LinalgSvdBackward, hs, 1, (const gs__tensor *[]){a}, 2, fn);
    if (node) {
      gs__save_constant(node, 0, gs__lookup(uk, fn));
      gs__save_constant(node, 1, gs__lookup(vhk, fn));
    }
    record_svd_share(&LinalgSvdVhBackward, a, hvh, uk, hs, vhk, full, fn);
    if (full)
      dispose_all((gs_tensor[]){uk, vhk}, 2);
  }
  *u = hu, *s = hs, *vh = hvh;
  return true;
}

/* ---- pinv ---------------------------------------------------------------------------------- */

gs_tensor gs__linalg_pinv_grad(gs_tensor g, gs_tensor pinv, gs_tensor a, int64_t m, int64_t n) {
#define T(x) gs__formula_temp(x)
#define MM(x, y) T(gs_matmul(x, y))
  gs_tensor pinvh = gs__linalg_mT(pinv), gh = gs__linalg_mT(g);
  if (m <= n) {
    gs_tensor k = MM(gh, pinv);
    gs_tensor kpinvh = MM(k, pinvh);
    gs_tensor t1 = T(gs_neg(gs__linalg_mT(MM(pinv, k))));
    gs_tensor t3 = MM(MM(a, pinv), kpinvh);
    gs_tensor t4 = MM(MM(pinvh, pinv), T(gs_sub(gh, MM(k, a))));
    return T(gs_add(T(gs_sub(T(gs_add(t1, kpinvh)), t3)), t4));
  }
  gs_tensor k = MM(pinv, gh);
  gs_tensor pinvhk = MM(pinvh, k);
  gs_tensor t1 = T(gs_neg(gs__linalg_mT(MM(k, pinv))));
  gs_tensor t2 = MM(MM(T(gs_sub(gh, MM(a, k))), pinv), pinvh);
  gs_tensor t4 = MM(MM(pinvhk, pinv), a);
  return T(gs_sub(T(gs_add(T(gs_add(t1, t2)), pinvhk)), t4));
#undef MM
#undef T
}

/* Saved: A (0) and P = pinv(A) (1). */
static void pinv_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  int64_t m = n->inputs[0].shape[n->inputs[0].ndim - 2];
  int64_t cols = n->inputs[0].shape[n->inputs[0].ndim - 1];
  gs_tensor ga = gs__linalg_pinv_grad(g, gs__saved(n, 1), gs__saved(n, 0), m, cols);
  grads[0] = gs__reduce_grad_through(n, 0, ga);
}
GS__BACKWARD_TWICE(LinalgPinvBackward, pinv_backward);

/* The cut-off below which a singular value counts as zero, as torch.linalg.pinv and
 * matrix_rank set it: max(atol, rtol * largest); rtol NaN (not given) is eps * max(m, n), or 0
 * when atol is given and positive; atol NaN is 0. */
static double tolerance(double atol, double rtol, double largest, int64_t m, int64_t n,
                        gs_dtype dtype) {
  bool has_atol = !isnan(atol);
  if (isnan(rtol))
    rtol = has_atol && atol > 0
               ? 0.0
               : (dtype == GS_F64 ? DBL_EPSILON : (double)FLT_EPSILON) * (double)(m > n ? m : n);
  double cut = rtol * largest;
  return has_atol && atol > cut ? atol : cut;
}

static double element(const char *data, gs_dtype dtype, int64_t i) {
  return dtype == GS_F64 ? ((const double *)data)[i] : (double)((const float *)data)[i];
}

static bool check_tolerances(double atol, double rtol, const char *fn) {
  if (atol < 0 || rtol < 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected non-negative tolerances, got atol %g and rtol %g",
              atol, rtol);
    return false;
  }
  return true;
}

gs_tensor gs_linalg_pinv(gs_tensor ha, double atol, double rtol) {
  const char *fn = "linalg_pinv";
  gs__tensor *a = gs__linalg_matrices(ha, fn);
  gs_tensor u, s, vh;
  if (!a || !check_tolerances(atol, rtol, fn) || !gs__linalg_svd_factors(a, false, &u, &s, &vh, fn))
    return GS_NO_TENSOR;
  int nbatch = a->ndim - 2;
  int64_t m = a->shape[nbatch], n = a->shape[nbatch + 1], k = m < n ? m : n;
  int64_t shape[GS_MAX_DIMS];
  memcpy(shape, a->shape, sizeof(int64_t) * (size_t)nbatch);
  shape[nbatch] = n, shape[nbatch + 1] = m;
  gs__tensor *p;
  gs_tensor hp = gs__tensor_new(a->dtype, shape, nbatch + 2, fn, &p);
  if (hp.id) {
    const char *ud = gs__tensor_data(gs__lookup(u, fn)), *sd = gs__tensor_data(gs__lookup(s, fn));
    const char *vd = gs__tensor_data(gs__lookup(vh, fn));
    char *pd = gs__tensor_data(p);
    double *inverse = malloc(sizeof(double) * (size_t)(k > 0 ? k : 1));
    int64_t count = gs__linalg_batch_count(a->shape, nbatch);
    for (int64_t b = 0; inverse && b < count; b++) {
      int64_t so = b * k, uo = b * m * k, vo = b * k * n, po = b * n * m;
      double cut = tolerance(atol, rtol, k > 0 ? element(sd, a->dtype, so) : 0.0, m, n, a->dtype);
      for (int64_t l = 0; l < k; l++) {
        double sv = element(sd, a->dtype, so + l);
        inverse[l] = sv > cut ? 1.0 / sv : 0.0;
      }
      /* P[i][j] = sum_l Vh[l][i] / S[l] U[j][l] */
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++) {
          double sum = 0;
          for (int64_t l = 0; l < k; l++)
            sum += element(vd, a->dtype, vo + l * n + i) * inverse[l] *
                   element(ud, a->dtype, uo + j * k + l);
          if (a->dtype == GS_F64)
            ((double *)pd)[po + i * m + j] = sum;
          else
            ((float *)pd)[po + i * m + j] = (float)sum;
        }
    }
    if (!inverse) {
      gs__error(GS_ERR_OUT_OF_MEMORY, fn, "no memory for %lld singular values", (long long)k);
      gs_dispose(hp);
      hp = GS_NO_TENSOR;
    }
    free(inverse);
  }
  dispose_all((gs_tensor[]){u, s, vh}, 3);
  gs__node *node =
      hp.id ? gs__record_result(&LinalgPinvBackward, hp, 1, (const gs__tensor *[]){a}, 2, fn)
            : NULL;
  if (node) {
    gs__save(node, 0, a);
    gs__save(node, 1, gs__lookup(hp, fn));
  }
  return hp;
}

/* ---- matrix_rank --------------------------------------------------------------------------- */

gs_tensor gs_linalg_matrix_rank(gs_tensor ha, double atol, double rtol) {
  const char *fn = "linalg_matrix_rank";
  gs__tensor *a = gs__linalg_matrices(ha, fn);
  gs_tensor s;
  if (!a || !check_tolerances(atol, rtol, fn) ||
      !gs__linalg_svd_factors(a, false, NULL, &s, NULL, fn))
    return GS_NO_TENSOR;
  int nbatch = a->ndim - 2;
  int64_t m = a->shape[nbatch], n = a->shape[nbatch + 1], k = m < n ? m : n;
  gs__tensor *r;
  gs_tensor hr = gs__tensor_new(GS_I64, a->shape, nbatch, fn, &r);
  if (hr.id) {
    const char *sd = gs__tensor_data(gs__lookup(s, fn));
    int64_t *rd = (int64_t *)gs__tensor_data(r);
    int64_t count = gs__linalg_batch_count(a->shape, nbatch);
    for (int64_t b = 0; b < count; b++) {
      double cut =
          tolerance(atol, rtol, k > 0 ? element(sd, a->dtype, b * k) : 0.0, m, n, a->dtype);
      int64_t rank = 0;
      for (int64_t l = 0; l < k; l++)
        rank += element(sd, a->dtype, b * k + l) > cut;
      rd[b] = rank;
    }
  }
  gs_dispose(s);
  return hr;
}
