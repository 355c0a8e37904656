/* linalg-qr.c: the QR decomposition (LAPACK geqrf + orgqr) and the two solvers torch programs
 * fit with: lstsq (gelsy, as torch's default CPU driver) and cholesky_solve (through solve),
 * batched over the leading dims as linalg.c's ops.
 *
 * Backward formulas, as torch 1.13's:
 *   qr (m >= n)   gA = [gQ + Q sym(triu(gR R^T - Q^T gQ))] R^-T, sym(X) = X + X^T - diag(X);
 *      (m < n)    A = [X | Y] with X = Q U, R = [U | V]: gY = Q gV, and gX the square case's
 *                 with gQ + Y gV^T and gU;
 *                 linear in (gQ, gR), so Q and R record a node each with its share (Python names
 *                 both LinalgQrBackward0); their formulas read Q and R as constants (once).
 *                 mode 'r' and mode 'complete' with m > n record none (torch refuses them);
 *   lstsq  X = pinv(A) B:  gB = pinv(A)^T g,  gA = pinv_backward(g B^T)  (differentiable again);
 *   cholesky_solve X = (L L^T)^-1 B:  gB = cholesky_solve(g, L),  C = gB X^T + X gB^T,
 *                 gL = -C L (upper: -U C)  (differentiable again).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linalg-impl.h"

void dgeqrf_(const blasint *m, const blasint *n, double *a, const blasint *lda, double *tau,
             double *work, const blasint *lwork, blasint *info);
void sgeqrf_(const blasint *m, const blasint *n, float *a, const blasint *lda, float *tau,
             float *work, const blasint *lwork, blasint *info);
void dorgqr_(const blasint *m, const blasint *n, const blasint *k, double *a, const blasint *lda,
             const double *tau, double *work, const blasint *lwork, blasint *info);
void sorgqr_(const blasint *m, const blasint *n, const blasint *k, float *a, const blasint *lda,
             const float *tau, float *work, const blasint *lwork, blasint *info);
void dgelsy_(const blasint *m, const blasint *n, const blasint *nrhs, double *a, const blasint *lda,
             double *b, const blasint *ldb, blasint *jpvt, const double *rcond, blasint *rank,
             double *work, const blasint *lwork, blasint *info);
void sgelsy_(const blasint *m, const blasint *n, const blasint *nrhs, float *a, const blasint *lda,
             float *b, const blasint *ldb, blasint *jpvt, const float *rcond, blasint *rank,
             float *work, const blasint *lwork, blasint *info);

#define T(x) gs__formula_temp(x)
#define MM(x, y) T(gs_matmul(x, y))

static void dispose_all(gs_tensor *ts, int n) {
  for (int i = 0; i < n; i++)
    gs_dispose(ts[i]);
}

/* ---- qr ------------------------------------------------------------------------------------ */

/* The square-or-tall case (Q [..., m, n], R [..., n, n], m >= n) of torch's formula; gq or gr
 * may be GS_NO_TENSOR (no share). A formula temporary. */
static gs_tensor qr_tall_grad(gs_tensor q, gs_tensor r, gs_tensor gq, gs_tensor gr) {
  int64_t n = gs_size(r, gs_ndim(r) - 1);
  gs_dtype dtype = gs_dtype_of(r);
  gs_tensor m = GS_NO_TENSOR;
  if (gr.id)
    m = MM(gr, gs__linalg_mT(r));
  if (gq.id) {
    gs_tensor qtgq = MM(gs__linalg_mT(q), gq);
    m = m.id ? T(gs_sub(m, qtgq)) : T(gs_neg(qtgq));
  }
  /* triu(M), then sym: X + X^T - diag(X) */
  gs_tensor upper = T(gs_mul(m, gs__linalg_mT(T(gs__linalg_triangle(n, dtype, 1, 1)))));
  gs_tensor diag = T(gs_mul(m, T(gs__linalg_triangle(n, dtype, 0, 1))));
  gs_tensor sym = T(gs_sub(T(gs_add(upper, gs__linalg_mT(upper))), diag));
  gs_tensor b = MM(q, sym);
  if (gq.id)
    b = T(gs_add(b, gq));
  /* b R^-T = solve(R, b^T)^T */
  return gs__linalg_mT(T(gs_linalg_solve(r, gs__linalg_mT(b))));
}

/* gA from the shares given (gq, gr: GS_NO_TENSOR when absent), for either shape of A. */
static gs_tensor qr_grad(gs_tensor q, gs_tensor r, gs_tensor gq, gs_tensor gr) {
  int64_t m = gs_size(q, gs_ndim(q) - 2), n = gs_size(r, gs_ndim(r) - 1);
  if (m >= n)
    return qr_tall_grad(q, r, gq, gr);
  gs_tensor u = T(gs_narrow(r, -1, 0, m)), v = T(gs_narrow(r, -1, m, n - m));
  gs_tensor gu = GS_NO_TENSOR, gy;
  if (gr.id) {
    gs_tensor gv = T(gs_narrow(gr, -1, m, n - m));
    gu = T(gs_narrow(gr, -1, 0, m));
    gy = MM(q, gv);
    gs_tensor y = MM(q, v);
    gs_tensor more = MM(y, gs__linalg_mT(gv));
    gq = gq.id ? T(gs_add(gq, more)) : more;
  } else {
    int64_t shape[GS_MAX_DIMS];
    int nd = gs_shape(q, shape);
    shape[nd - 1] = n - m;
    gy = T(gs_zeros(gs_dtype_of(q), shape, nd));
  }
  gs_tensor gx = qr_tall_grad(q, u, gq, gu);
  return T(gs_cat((gs_tensor[]){gx, gy}, 2, -1));
}

/* Saved: Q (0), R (1), constants. */
static void qr_q_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor ga = qr_grad(gs__saved(n, 0), gs__saved(n, 1), g, GS_NO_TENSOR);
  grads[0] = gs__reduce_grad_through(n, 0, ga);
}
GS__BACKWARD(LinalgQrBackward, qr_q_backward);

static void qr_r_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor ga = qr_grad(gs__saved(n, 0), gs__saved(n, 1), GS_NO_TENSOR, g);
  grads[0] = gs__reduce_grad_through(n, 0, ga);
}
GS__BACKWARD(LinalgQrRBackward, qr_r_backward);

/* LAPACK's workspace query answer (work[0]) as a size. */
static blasint work_size(gs_dtype dtype, const void *work) {
  double w = dtype == GS_F64 ? *(const double *)work : (double)*(const float *)work;
  return (blasint)w + 1;
}

/* geqrf then, when q is non-NULL, orgqr on one matrix a (m x n, column-major, in a scratch
 * buffer of m x max(n, qcols) elements, destroyed): R's first rrows rows into r and Q's first
 * qcols columns into q, row-major. false when out of memory. */
static bool qr_one(gs_dtype dtype, char *a, blasint m, blasint n, char *r, blasint rrows, char *q,
                   blasint qcols) {
  blasint k = m < n ? m : n, lda = m > 0 ? m : 1, info = 0, lwork = -1;
  size_t el = gs__elsize(dtype);
  double query[2] = {0, 0};
  char *tau = malloc(el * (size_t)(k > 0 ? k : 1));
  if (!tau)
    return false;
  if (dtype == GS_F64)
    dgeqrf_(&m, &n, (double *)a, &lda, (double *)tau, query, &lwork, &info);
  else
    sgeqrf_(&m, &n, (float *)a, &lda, (float *)tau, (float *)query, &lwork, &info);
  blasint need = work_size(dtype, query);
  if (q) {
    lwork = -1;
    if (dtype == GS_F64)
      dorgqr_(&m, &qcols, &k, (double *)a, &lda, (double *)tau, query, &lwork, &info);
    else
      sorgqr_(&m, &qcols, &k, (float *)a, &lda, (float *)tau, (float *)query, &lwork, &info);
    blasint more = work_size(dtype, query);
    need = more > need ? more : need;
  }
  char *work = malloc(el * (size_t)need);
  if (!work) {
    free(tau);
    return false;
  }
  lwork = need;
  if (dtype == GS_F64)
    dgeqrf_(&m, &n, (double *)a, &lda, (double *)tau, (double *)work, &lwork, &info);
  else
    sgeqrf_(&m, &n, (float *)a, &lda, (float *)tau, (float *)work, &lwork, &info);
  for (blasint i = 0; i < rrows; i++)
    for (blasint j = 0; j < n; j++) {
      char *to = r + el * (size_t)(i * n + j);
      if (i <= j && i < m)
        memcpy(to, a + el * (size_t)(j * m + i), el);
      else
        memset(to, 0, el);
    }
  if (q) {
    if (dtype == GS_F64)
      dorgqr_(&m, &qcols, &k, (double *)a, &lda, (double *)tau, (double *)work, &lwork, &info);
    else
      sorgqr_(&m, &qcols, &k, (float *)a, &lda, (float *)tau, (float *)work, &lwork, &info);
    for (blasint i = 0; i < m; i++)
      for (blasint j = 0; j < qcols; j++)
        memcpy(q + el * (size_t)(i * qcols + j), a + el * (size_t)(j * m + i), el);
  }
  free(work), free(tau);
  return true;
}

bool gs_linalg_qr(gs_tensor ha, gs_qr_mode mode, gs_tensor *hq, gs_tensor *hr) {
  const char *fn = "linalg_qr";
  gs__tensor *a = gs__linalg_matrices(ha, fn);
  if (!a)
    return false;
  if (mode != GS_QR_REDUCED && mode != GS_QR_COMPLETE && mode != GS_QR_R) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected mode reduced, complete or r, got %d", (int)mode);
    return false;
  }
  int nbatch = a->ndim - 2;
  blasint m = (blasint)a->shape[nbatch], n = (blasint)a->shape[nbatch + 1], k = m < n ? m : n;
  blasint qcols = mode == GS_QR_COMPLETE ? m : k, rrows = mode == GS_QR_COMPLETE ? m : k;
  int64_t count = gs__linalg_batch_count(a->shape, nbatch);
  int64_t shape[GS_MAX_DIMS];
  memcpy(shape, a->shape, sizeof(int64_t) * (size_t)nbatch);
  gs__tensor *cm, *q = NULL, *r;
  gs_tensor hcm = gs__linalg_column_major(a, a->shape, nbatch, &cm, fn);
  shape[nbatch] = rrows, shape[nbatch + 1] = n;
  *hr = hcm.id ? gs__tensor_new(a->dtype, shape, nbatch + 2, fn, &r) : GS_NO_TENSOR;
  shape[nbatch] = m, shape[nbatch + 1] = qcols;
  /* mode 'r': Q is an empty tensor, as torch returns */
  *hq = !hr->id           ? GS_NO_TENSOR
        : mode == GS_QR_R ? gs__tensor_new(a->dtype, (int64_t[]){0}, 1, fn, NULL)
                          : gs__tensor_new(a->dtype, shape, nbatch + 2, fn, &q);
  bool ok = hq->id != 0;
  size_t el = gs__elsize(a->dtype);
  blasint width = n > qcols ? n : qcols;
  char *scratch = ok ? malloc(el * (size_t)(m * width > 0 ? m * width : 1)) : NULL;
  if (ok && !scratch) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "no memory for a %dx%d matrix", (int)m, (int)width);
    ok = false;
  }
  for (int64_t i = 0; ok && i < count; i++) {
    memcpy(scratch, gs__tensor_data(cm) + el * (size_t)(i * m * n), el * (size_t)(m * n));
    if (!qr_one(a->dtype, scratch, m, n, gs__tensor_data(r) + el * (size_t)(i * rrows * n), rrows,
                q ? gs__tensor_data(q) + el * (size_t)(i * m * qcols) : NULL, qcols)) {
      gs__error(GS_ERR_OUT_OF_MEMORY, fn, "no memory for the QR's workspace");
      ok = false;
    }
  }
  free(scratch);
  gs_dispose(hcm);
  if (!ok) {
    dispose_all((gs_tensor[]){*hq, *hr}, 2);
    return false;
  }
  /* differentiable where torch's is: Q computed, and Q square or reduced */
  if (q && (mode == GS_QR_REDUCED || m <= n)) {
    const gs__node_kind *kinds[2] = {&LinalgQrBackward, &LinalgQrRBackward};
    gs_tensor outs[2] = {*hq, *hr};
    for (int i = 0; i < 2; i++) {
      gs__node *node = gs__record_result(kinds[i], outs[i], 1, (const gs__tensor *[]){a}, 2, fn);
      if (node) {
        gs__save_constant(node, 0, gs__lookup(*hq, fn));
        gs__save_constant(node, 1, gs__lookup(*hr, fn));
      }
    }
  }
  return true;
}

/* ---- shared by the solvers ----------------------------------------------------------------- */

static bool same_floating(const gs__tensor *a, const gs__tensor *b, const char *fn) {
  if (!gs_dtype_is_floating(b->dtype) || b->dtype != a->dtype) {
    gs__error(GS_ERR_DTYPE, fn, "expected A and B of the same floating dtype, got %s and %s",
              gs_dtype_name(a->dtype), gs_dtype_name(b->dtype));
    return false;
  }
  return true;
}

/* The index in a's batch (a->ndim - 2 dims, each equal to batch's or 1, aligned from the
 * right) of element i of the broadcast batch. */
static int64_t a_index(const gs__tensor *a, const int64_t *batch, int nbatch, int64_t i) {
  int nbatch_a = a->ndim - 2;
  int64_t index = 0, stride = 1;
  for (int d = nbatch - 1; d >= 0; d--) {
    int64_t at = i % batch[d];
    i /= batch[d];
    int da = d - (nbatch - nbatch_a);
    if (da >= 0) {
      index += (a->shape[da] == 1 ? 0 : at) * stride;
      stride *= a->shape[da];
    }
  }
  return index;
}

/* ---- lstsq --------------------------------------------------------------------------------- */

/* Saved: A (0), B (1); ints[0]: whether B was a vector. */
static void lstsq_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor a = gs__saved(n, 0), b = gs__saved(n, 1);
  if (n->ints[0]) {
    g = T(gs_unsqueeze(g, -1));
    b = T(gs_unsqueeze(b, -1));
  }
  gs_tensor pinv = T(gs_linalg_pinv(a, NAN, NAN));
  if (gs__needs_grad(n, 0)) {
    int64_t m = n->inputs[0].shape[n->inputs[0].ndim - 2];
    int64_t cols = n->inputs[0].shape[n->inputs[0].ndim - 1];
    gs_tensor ga = gs__linalg_pinv_grad(MM(g, gs__linalg_mT(b)), pinv, a, m, cols);
    grads[0] = gs__reduce_grad_through(n, 0, ga);
  }
  if (gs__needs_grad(n, 1)) {
    gs_tensor gb = MM(gs__linalg_mT(pinv), g);
    grads[1] = gs__reduce_grad(n, 1, n->ints[0] ? gs_squeeze(gb, -1) : gs__pass_grad_through(gb));
  }
}
GS__BACKWARD_TWICE(LinalgLstsqBackward, lstsq_backward);

/* gelsy on one system: a (m x n, column-major, destroyed), b (ldb x k column-major, the
 * solution in its first n rows). LAPACK's info (-1 here: no memory); the rank into *rank. */
static blasint gelsy(gs_dtype dtype, char *a, char *b, blasint m, blasint n, blasint k, blasint ldb,
                     double rcond, blasint *rank) {
  blasint lda = m > 0 ? m : 1, info = 0, lwork = -1;
  blasint *jpvt = calloc((size_t)(n > 0 ? n : 1), sizeof(blasint));
  double query[2] = {0, 0};
  float rcond_f = (float)rcond;
  if (!jpvt)
    return -1;
  if (dtype == GS_F64)
    dgelsy_(&m, &n, &k, (double *)a, &lda, (double *)b, &ldb, jpvt, &rcond, rank, query, &lwork,
            &info);
  else
    sgelsy_(&m, &n, &k, (float *)a, &lda, (float *)b, &ldb, jpvt, &rcond_f, rank, (float *)query,
            &lwork, &info);
  lwork = work_size(dtype, query);
  void *work = malloc(gs__elsize(dtype) * (size_t)lwork);
  if (!work) {
    free(jpvt);
    return -1;
  }
  if (dtype == GS_F64)
    dgelsy_(&m, &n, &k, (double *)a, &lda, (double *)b, &ldb, jpvt, &rcond, rank, work, &lwork,
            &info);
  else
    sgelsy_(&m, &n, &k, (float *)a, &lda, (float *)b, &ldb, jpvt, &rcond_f, rank, work, &lwork,
            &info);
  free(work), free(jpvt);
  return info;
}

gs_tensor gs_linalg_lstsq(gs_tensor ha, gs_tensor hb, double rcond, gs_tensor *rank) {
  const char *fn = "linalg_lstsq";
  gs__tensor *a = gs__linalg_matrices(ha, fn);
  gs__tensor *b = a ? gs__lookup(hb, fn) : NULL;
  if (!b || !same_floating(a, b, fn))
    return GS_NO_TENSOR;
  /* torch's lstsq rule (not solve's): B has as many dims as A, or one fewer (a vector) */
  if (b->ndim > a->ndim || a->ndim - b->ndim > 1) {
    gs__error(GS_ERR_SHAPE, fn,
              "input.dim() must be greater or equal to other.dim() and (input.dim() - "
              "other.dim()) <= 1: got A with %d dims and B with %d",
              a->ndim, b->ndim);
    return GS_NO_TENSOR;
  }
  bool vector = b->ndim == a->ndim - 1;
  gs__tensor bm = *b; /* b as matrices: a vector is one column */
  if (vector) {
    bm.shape[bm.ndim] = 1, bm.strides[bm.ndim] = 1;
    bm.ndim++;
  }
  int nbatch_a = a->ndim - 2, nbatch_b = bm.ndim - 2;
  int64_t m = a->shape[nbatch_a], n = a->shape[nbatch_a + 1], k = bm.shape[nbatch_b + 1];
  if (bm.shape[nbatch_b] != m) {
    gs__error(GS_ERR_SHAPE, fn,
              "input.size(-2) should match other.size(%d): expected B with %lld rows (A is "
              "%lldx%lld), got %lld",
              vector ? -1 : -2, (long long)m, (long long)m, (long long)n,
              (long long)bm.shape[nbatch_b]);
    return GS_NO_TENSOR;
  }
  if (k > BLAS_INT_MAX) {
    gs__error(GS_ERR_OVERFLOW, fn, "expected B with at most %lld columns, got %lld",
              (long long)BLAS_INT_MAX, (long long)k);
    return GS_NO_TENSOR;
  }
  int64_t batch[GS_MAX_DIMS];
  int nbatch;
  if (!gs__broadcast_shapes(a->shape, nbatch_a, bm.shape, nbatch_b, batch, &nbatch)) {
    char sa[GS__SHAPE_STR], sb[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn, "expected batch dims that broadcast, got A's %s and B's %s",
              gs__shape_str(sa, a->shape, nbatch_a), gs__shape_str(sb, bm.shape, nbatch_b));
    return GS_NO_TENSOR;
  }
  if (isnan(rcond))
    rcond = (a->dtype == GS_F64 ? DBL_EPSILON : (double)FLT_EPSILON) * (double)(m > n ? m : n);
  int64_t count = gs__linalg_batch_count(batch, nbatch);
  int64_t ldb = m > n ? m : n;
  if (ldb < 1)
    ldb = 1;
  gs__tensor *acm, *bcm, *x, *rk;
  gs_tensor hacm = gs__linalg_column_major(a, batch, nbatch, &acm, fn);
  gs_tensor hbcm = hacm.id ? gs__linalg_column_major(&bm, batch, nbatch, &bcm, fn) : GS_NO_TENSOR;
  int64_t shape[GS_MAX_DIMS];
  memcpy(shape, batch, sizeof(int64_t) * (size_t)nbatch);
  shape[nbatch] = k, shape[nbatch + 1] = n; /* X column-major: n x k */
  gs_tensor hx = hbcm.id ? gs__tensor_new(a->dtype, shape, nbatch + 2, fn, &x) : GS_NO_TENSOR;
  /* the rank is A's: of A's batch shape, as torch's */
  gs_tensor hrank = hx.id ? gs__tensor_new(GS_I64, a->shape, nbatch_a, fn, &rk) : GS_NO_TENSOR;
  size_t el = gs__elsize(a->dtype);
  char *scratch = hrank.id ? malloc(el * (size_t)(ldb * (k > 0 ? k : 1))) : NULL;
  bool ok = scratch != NULL;
  if (hrank.id && !scratch)
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "no memory for the right-hand sides");
  for (int64_t i = 0; ok && i < count; i++) {
    char *bi = gs__tensor_data(bcm) + el * (size_t)(i * m * k);
    for (int64_t c = 0; c < k; c++) { /* column c of B into the taller scratch */
      memcpy(scratch + el * (size_t)(c * ldb), bi + el * (size_t)(c * m), el * (size_t)m);
      memset(scratch + el * (size_t)(c * ldb + m), 0, el * (size_t)(ldb - m));
    }
    blasint r = 0, info = 0;
    if (m > 0 && n > 0 && k > 0)
      info = gelsy(a->dtype, gs__tensor_data(acm) + el * (size_t)(i * m * n), scratch, (blasint)m,
                   (blasint)n, (blasint)k, (blasint)ldb, rcond, &r);
    if (info != 0) {
      gs__error(GS_ERR_OUT_OF_MEMORY, fn, "no memory for the least-squares workspace");
      ok = false;
      break;
    }
    if (m == 0 || n == 0 || k == 0)
      memset(scratch, 0, el * (size_t)(ldb * k));
    char *xi = gs__tensor_data(x) + el * (size_t)(i * n * k);
    for (int64_t c = 0; c < k; c++)
      memcpy(xi + el * (size_t)(c * n), scratch + el * (size_t)(c * ldb), el * (size_t)n);
    ((int64_t *)gs__tensor_data(rk))[a_index(a, batch, nbatch, i)] = r;
  }
  free(scratch);
  gs_tensor result = ok ? gs__linalg_row_major(x, nbatch, vector, fn) : GS_NO_TENSOR;
  dispose_all((gs_tensor[]){hacm, hbcm, hx}, 3);
  if (!result.id) {
    gs_dispose(hrank);
    return GS_NO_TENSOR;
  }
  gs__node *node =
      gs__record_result(&LinalgLstsqBackward, result, 2, (const gs__tensor *[]){a, b}, 2, fn);
  if (node) {
    gs__save(node, 0, a);
    gs__save(node, 1, b);
    node->ints[0] = vector;
  }
  if (rank)
    *rank = hrank;
  else
    gs_dispose(hrank);
  return result;
}

/* ---- cholesky_solve ------------------------------------------------------------------------ */

/* Saved: L (0), X (1); ints[0]: upper. */
static void cholesky_solve_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor l = gs__saved(n, 0), x = gs__saved(n, 1);
  bool upper = n->ints[0];
  gs_tensor gb = T(gs_cholesky_solve(g, l, upper));
  if (gs__needs_grad(n, 1)) {
    gs_tensor c = MM(gb, gs__linalg_mT(x));
    c = T(gs_add(c, gs__linalg_mT(c)));
    gs_tensor gl = upper ? MM(l, c) : MM(c, l);
    grads[1] = gs__reduce_grad(n, 1, gs_neg(gl));
  }
  if (gs__needs_grad(n, 0))
    grads[0] = gs__reduce_grad_through(n, 0, gb);
}
GS__BACKWARD_TWICE(CholeskySolveBackward, cholesky_solve_backward);

/* t with leading dims of 1 up to ndim dims (another handle when it has them). */
static gs_tensor lead_ones(gs_tensor t, int have, int ndim) {
  gs_tensor r = gs_contiguous(t);
  for (int i = have; i < ndim && r.id; i++) {
    gs_tensor u = gs_unsqueeze(r, 0);
    gs_dispose(r);
    r = u;
  }
  return r;
}

gs_tensor gs_cholesky_solve(gs_tensor hb, gs_tensor hl, bool upper) {
  const char *fn = "cholesky_solve";
  gs__tensor *b = gs__lookup(hb, fn), *l = b ? gs__lookup(hl, fn) : NULL;
  if (!l)
    return GS_NO_TENSOR;
  if (b->ndim < 2 || l->ndim < 2) {
    gs__error(GS_ERR_SHAPE, fn,
              "%s should have at least 2 dimensions, but has %d dimensions instead",
              b->ndim < 2 ? "b" : "u", b->ndim < 2 ? b->ndim : l->ndim);
    return GS_NO_TENSOR;
  }
  if (b->dtype != l->dtype || !gs_dtype_is_floating(b->dtype)) {
    gs__error(GS_ERR_DTYPE, fn,
              "Expected b and A to have the same floating dtype, but found b of type %s and A of "
              "type %s instead",
              gs_dtype_name(b->dtype), gs_dtype_name(l->dtype));
    return GS_NO_TENSOR;
  }
  int64_t n = l->shape[l->ndim - 1];
  if (l->shape[l->ndim - 2] != n || b->shape[b->ndim - 2] != n) {
    gs__error(GS_ERR_SHAPE, fn,
              "Incompatible matrix sizes for cholesky_solve: each A matrix is %lld by %lld but "
              "each b matrix is %lld by %lld",
              (long long)l->shape[l->ndim - 2], (long long)n, (long long)b->shape[b->ndim - 2],
              (long long)b->shape[b->ndim - 1]);
    return GS_NO_TENSOR;
  }
  /* Both with the same number of dims, so solve never takes B for a vector. */
  int nd = b->ndim > l->ndim ? b->ndim : l->ndim;
  gs_no_grad_begin();
  gs_tensor bb = lead_ones(hb, b->ndim, nd), ll = lead_ones(hl, l->ndim, nd);
  gs_tensor lt = ll.id ? gs_transpose(ll, -2, -1) : GS_NO_TENSOR;
  /* A = L L^T: X = L^-T (L^-1 B); upper, A = U^T U: X = U^-1 (U^-T B) */
  gs_tensor y = bb.id && lt.id ? gs_linalg_solve(upper ? lt : ll, bb) : GS_NO_TENSOR;
  gs_tensor x = y.id ? gs_linalg_solve(upper ? ll : lt, y) : GS_NO_TENSOR;
  gs_no_grad_end();
  dispose_all((gs_tensor[]){bb, ll, lt, y}, 4);
  gs__node *node =
      x.id ? gs__record_result(&CholeskySolveBackward, x, 2, (const gs__tensor *[]){b, l}, 2, fn)
           : NULL;
  if (node) {
    gs__save(node, 0, l);
    gs__save(node, 1, gs__lookup(x, fn));
    node->ints[0] = upper;
  }
  return x;
}
