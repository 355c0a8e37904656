/* linalg.c: torch.linalg's LU-based ops (solve, inv, det, slogdet) on LAPACK's getrf/getrs,
 * which Debian's OpenBLAS exports (no LAPACKE header needed: the prototypes are below), and
 * matrix_norm, a composition of vector norms (or svdvals) and max/min/sum as torch writes it.
 *
 * LAPACK reads matrices column-major: each op copies its operands into fresh column-major
 * buffers (which also broadcasts the batch dims and leaves the caller's tensors untouched),
 * factorises each matrix of the batch in turn and copies the answer back row-major.
 *
 * Each op records one node, under torch 1.13's name, with torch's formula written in the
 * engine's ops (so it differentiates again):
 *   solve  X = A^-1 B:   gB = solve(A^T, g),  gA = -gB X^T
 *   inv    Y = A^-1:     gA = -Y^T g Y^T
 *   det    d = det A:    gA = g d A^-T
 *   slogdet l = log|det A|: gA = g A^-T
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "linalg-impl.h"

/* LAPACK (Fortran) entry points in libopenblas. Trailing string lengths are left out: OpenBLAS
 * implements these in C and reads only the first character. */
void dgetrf_(const blasint *m, const blasint *n, double *a, const blasint *lda, blasint *ipiv,
             blasint *info);
void sgetrf_(const blasint *m, const blasint *n, float *a, const blasint *lda, blasint *ipiv,
             blasint *info);
void dgetrs_(const char *trans, const blasint *n, const blasint *nrhs, const double *a,
             const blasint *lda, const blasint *ipiv, double *b, const blasint *ldb, blasint *info);
void sgetrs_(const char *trans, const blasint *n, const blasint *nrhs, const float *a,
             const blasint *lda, const blasint *ipiv, float *b, const blasint *ldb, blasint *info);

static void dispose_all(gs_tensor *ts, int n) {
  for (int i = 0; i < n; i++)
    gs_dispose(ts[i]);
}

/* ---- checks -------------------------------------------------------------------------------- */

gs__tensor *gs__linalg_square(gs_tensor h, const char *fn) {
  gs__tensor *a = gs__lookup(h, fn);
  if (!a)
    return NULL;
  if (!gs_dtype_is_floating(a->dtype)) {
    gs__error(GS_ERR_DTYPE, fn, "expected a floating tensor (f32 or f64), got %s",
              gs_dtype_name(a->dtype));
    return NULL;
  }
  if (a->ndim < 2) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected a tensor with 2 or more dims (batches of square matrices), got %d dims",
              a->ndim);
    return NULL;
  }
  int64_t rows = a->shape[a->ndim - 2], cols = a->shape[a->ndim - 1];
  if (rows != cols) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected batches of square matrices, but they are %lld by %lld matrices",
              (long long)rows, (long long)cols);
    return NULL;
  }
  if (rows > BLAS_INT_MAX) {
    gs__error(GS_ERR_OVERFLOW, fn, "expected matrices of at most %lld rows, got %lld",
              (long long)BLAS_INT_MAX, (long long)rows);
    return NULL;
  }
  return a;
}

/* ---- column-major buffers ------------------------------------------------------------------ */

gs_tensor gs__linalg_column_major(const gs__tensor *t, const int64_t *batch, int nbatch,
                                  gs__tensor **out, const char *fn) {
  gs__tensor flipped = *t; /* a geometry only: read by gs__copy_into, never registered */
  int d = t->ndim;
  flipped.shape[d - 2] = t->shape[d - 1], flipped.shape[d - 1] = t->shape[d - 2];
  flipped.strides[d - 2] = t->strides[d - 1], flipped.strides[d - 1] = t->strides[d - 2];
  int64_t shape[GS_MAX_DIMS];
  memcpy(shape, batch, sizeof(int64_t) * (size_t)nbatch);
  shape[nbatch] = flipped.shape[d - 2], shape[nbatch + 1] = flipped.shape[d - 1];
  gs_tensor h = gs__tensor_new(t->dtype, shape, nbatch + 2, fn, out);
  if (h.id)
    gs__copy_into(*out, &flipped);
  return h;
}

gs_tensor gs__linalg_row_major(const gs__tensor *x, int nbatch, bool vector, const char *fn) {
  gs__tensor flipped = *x;
  int d = x->ndim;
  flipped.shape[d - 2] = x->shape[d - 1], flipped.shape[d - 1] = x->shape[d - 2];
  flipped.strides[d - 2] = x->strides[d - 1], flipped.strides[d - 1] = x->strides[d - 2];
  if (vector) /* [..., n, 1] seen as [..., n] */
    flipped.ndim = nbatch + 1;
  gs__tensor *out;
  gs_tensor h = gs__tensor_new(x->dtype, flipped.shape, flipped.ndim, fn, &out);
  if (h.id)
    gs__copy_into(out, &flipped);
  return h;
}

/* ---- LU on LAPACK -------------------------------------------------------------------------- */

int64_t gs__linalg_batch_count(const int64_t *shape, int ndim) {
  int64_t count = 1;
  for (int i = 0; i < ndim; i++)
    count *= shape[i];
  return count;
}

/* Factorises matrix i (n x n, column-major at data) in place: P A = L U with pivots ipiv
 * (1-based, as LAPACK). Returns LAPACK's info: > 0 when U[info-1, info-1] is exactly 0. */
static blasint lu_factor(gs_dtype dtype, char *data, int64_t i, blasint n, blasint *ipiv) {
  blasint info = 0;
  if (n == 0)
    return 0;
  if (dtype == GS_F64)
    dgetrf_(&n, &n, (double *)data + i * n * n, &n, ipiv, &info);
  else
    sgetrf_(&n, &n, (float *)data + i * n * n, &n, ipiv, &info);
  return info;
}

/* Reports a singular matrix as fn, saying which element of the batch and which pivot. */
void gs__linalg_batch_element(char *where, size_t size, int64_t element, int64_t count) {
  where[0] = 0;
  if (count > 1)
    snprintf(where, size, " (batch element %lld)", (long long)element);
}

static void report_singular(int64_t element, int64_t nbatch_elements, blasint info,
                            const char *fn) {
  char where[64];
  gs__linalg_batch_element(where, sizeof where, element, nbatch_elements);
  gs__error(GS_ERR_SINGULAR, fn,
            "expected an invertible matrix, got a singular one%s: the diagonal element %d of "
            "its LU factorisation is zero",
            where, (int)info);
}

/* Solves A X = B for each matrix of the batch: a holds the A's and x the B's (k columns
 * each), both column-major; x gets X. a is overwritten by its LU factors. false after
 * reporting a singular matrix. */
static bool lu_solve(gs__tensor *a, gs__tensor *x, int64_t count, blasint n, blasint k,
                     const char *fn) {
  if (n == 0 || k == 0 || count == 0)
    return true;
  blasint *ipiv = malloc(sizeof(blasint) * (size_t)n);
  if (!ipiv) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "no memory for %d pivots", (int)n);
    return false;
  }
  char *ad = gs__tensor_data(a), *xd = gs__tensor_data(x);
  bool ok = true;
  for (int64_t i = 0; i < count && ok; i++) {
    blasint info = lu_factor(a->dtype, ad, i, n, ipiv);
    if (info > 0) {
      report_singular(i, count, info, fn);
      ok = false;
    } else if (a->dtype == GS_F64) {
      dgetrs_("N", &n, &k, (double *)ad + i * n * n, &n, ipiv, (double *)xd + i * n * k, &n, &info);
    } else {
      sgetrs_("N", &n, &k, (float *)ad + i * n * n, &n, ipiv, (float *)xd + i * n * k, &n, &info);
    }
  }
  free(ipiv);
  return ok;
}

/* ---- solve --------------------------------------------------------------------------------- */

/* Whether b is a vector right-hand side for a, as torch.linalg.solve decides: 1-D, or one dim
 * fewer than a with a's shape without its last dim. */
static bool is_vector_rhs(const gs__tensor *a, const gs__tensor *b) {
  if (b->ndim == 1)
    return true;
  if (b->ndim != a->ndim - 1)
    return false;
  for (int d = 0; d < b->ndim; d++)
    if (b->shape[d] != a->shape[d])
      return false;
  return true;
}

/* X = solve(a, b) with grad mode off; *vector says whether b was a vector. */
static gs_tensor solve_values(gs__tensor *a, gs__tensor *b, bool *vector, const char *fn) {
  if (!gs_dtype_is_floating(b->dtype) || b->dtype != a->dtype) {
    gs__error(GS_ERR_DTYPE, fn, "expected A and B of the same floating dtype, got %s and %s",
              gs_dtype_name(a->dtype), gs_dtype_name(b->dtype));
    return GS_NO_TENSOR;
  }
  if (b->ndim < 1) {
    gs__error(GS_ERR_SHAPE, fn, "expected B with at least 1 dim, got a 0-dim tensor");
    return GS_NO_TENSOR;
  }
  *vector = is_vector_rhs(a, b);
  gs__tensor bm = *b; /* b as matrices: a vector is one column */
  if (*vector) {
    bm.shape[bm.ndim] = 1, bm.strides[bm.ndim] = 1;
    bm.ndim++;
  }
  int64_t n = a->shape[a->ndim - 1], k = bm.shape[bm.ndim - 1];
  if (bm.shape[bm.ndim - 2] != n) {
    gs__error(GS_ERR_SHAPE, fn,
              "incompatible shapes of A and B for the equation AX = B: expected B with %lld "
              "rows (A is %lldx%lld), got B of %lldx%lld",
              (long long)n, (long long)n, (long long)n, (long long)bm.shape[bm.ndim - 2],
              (long long)k);
    return GS_NO_TENSOR;
  }
  if (k > BLAS_INT_MAX) {
    gs__error(GS_ERR_OVERFLOW, fn, "expected B with at most %lld columns, got %lld",
              (long long)BLAS_INT_MAX, (long long)k);
    return GS_NO_TENSOR;
  }
  int64_t batch[GS_MAX_DIMS];
  int nbatch;
  if (!gs__broadcast_shapes(a->shape, a->ndim - 2, bm.shape, bm.ndim - 2, batch, &nbatch)) {
    char sa[GS__SHAPE_STR], sb[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn, "expected batch dims that broadcast, got A's %s and B's %s",
              gs__shape_str(sa, a->shape, a->ndim - 2), gs__shape_str(sb, bm.shape, bm.ndim - 2));
    return GS_NO_TENSOR;
  }
  gs__tensor *acm, *xcm;
  gs_tensor ha = gs__linalg_column_major(a, batch, nbatch, &acm, fn);
  gs_tensor hx = ha.id ? gs__linalg_column_major(&bm, batch, nbatch, &xcm, fn) : GS_NO_TENSOR;
  gs_tensor r = GS_NO_TENSOR;
  if (hx.id &&
      lu_solve(acm, xcm, gs__linalg_batch_count(batch, nbatch), (blasint)n, (blasint)k, fn))
    r = gs__linalg_row_major(xcm, nbatch, *vector, fn);
  dispose_all((gs_tensor[]){ha, hx}, 2);
  return r;
}

gs_tensor gs__linalg_mT(gs_tensor x) { return gs__formula_temp(gs_transpose(x, -2, -1)); }

/* Saved: A (0) and X (1); ints[0]: whether B was a vector (then g and X gain a last dim of 1
 * for the formula, and gB loses it). */
static void solve_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor a = gs__saved(n, 0), x = gs__saved(n, 1);
  bool vector = n->ints[0];
  if (vector) {
    g = gs__formula_temp(gs_unsqueeze(g, -1));
    x = gs__formula_temp(gs_unsqueeze(x, -1));
  }
  gs_tensor gb = gs__formula_temp(gs_linalg_solve(gs__linalg_mT(a), g));
  if (gs__needs_grad(n, 0))
    grads[0] = gs__reduce_grad(n, 0, gs_neg(gs__formula_temp(gs_matmul(gb, gs__linalg_mT(x)))));
  if (gs__needs_grad(n, 1))
    grads[1] = gs__reduce_grad(n, 1, vector ? gs_squeeze(gb, -1) : gs__pass_grad_through(gb));
}
GS__BACKWARD_TWICE(LinalgSolveExBackward, solve_backward);

gs_tensor gs_linalg_solve(gs_tensor ha, gs_tensor hb) {
  const char *fn = "linalg_solve";
  gs__tensor *a = gs__linalg_square(ha, fn);
  gs__tensor *b = a ? gs__lookup(hb, fn) : NULL;
  if (!b)
    return GS_NO_TENSOR;
  bool vector;
  gs_tensor r = solve_values(a, b, &vector, fn);
  gs__node *n =
      r.id ? gs__record_result(&LinalgSolveExBackward, r, 2, (const gs__tensor *[]){a, b}, 2, fn)
           : NULL;
  if (n) {
    gs__save(n, 0, a);
    gs__save(n, 1, gs__lookup(r, fn));
    n->ints[0] = vector;
  }
  return r;
}

/* ---- inv ----------------------------------------------------------------------------------- */

/* Saved: the inverse Y (0). */
static void inv_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor yt = gs__linalg_mT(gs__saved(n, 0));
  gs_tensor left = gs__formula_temp(gs_matmul(yt, g));
  grads[0] = gs__reduce_grad(n, 0, gs_neg(gs__formula_temp(gs_matmul(left, yt))));
}
GS__BACKWARD_TWICE(LinalgInvExBackward, inv_backward);

gs_tensor gs_linalg_inv(gs_tensor ha) {
  const char *fn = "linalg_inv";
  gs__tensor *a = gs__linalg_square(ha, fn);
  if (!a)
    return GS_NO_TENSOR;
  int nbatch = a->ndim - 2;
  int64_t n = a->shape[a->ndim - 1];
  gs__tensor *acm, *xcm;
  gs_tensor hacm = gs__linalg_column_major(a, a->shape, nbatch, &acm, fn);
  /* the identity, column-major as row-major: each matrix of a's shape */
  gs_tensor hx = hacm.id ? gs__tensor_new(a->dtype, a->shape, a->ndim, fn, &xcm) : GS_NO_TENSOR;
  gs_tensor r = GS_NO_TENSOR;
  if (hx.id) {
    int64_t count = gs__linalg_batch_count(a->shape, nbatch);
    char *data = gs__tensor_data(xcm);
    size_t el = gs__elsize(a->dtype);
    if (count * n > 0)
      memset(data, 0, el * (size_t)(count * n * n));
    for (int64_t i = 0; i < count * n; i++) { /* row i % n of matrix i / n */
      char *one = data + el * (size_t)(i * n + i % n);
      if (a->dtype == GS_F64)
        *(double *)one = 1.0;
      else
        *(float *)one = 1.0f;
    }
    if (lu_solve(acm, xcm, count, (blasint)n, (blasint)n, fn))
      r = gs__linalg_row_major(xcm, nbatch, false, fn);
  }
  dispose_all((gs_tensor[]){hacm, hx}, 2);
  gs__node *n_ =
      r.id ? gs__record_result(&LinalgInvExBackward, r, 1, (const gs__tensor *[]){a}, 1, fn) : NULL;
  if (n_)
    gs__save(n_, 0, gs__lookup(r, fn));
  return r;
}

/* ---- det and slogdet ----------------------------------------------------------------------- */

/* For each matrix of a: its determinant's sign and log |det| (exact zero pivot: sign 0, -inf)
 * and, when det is non-NULL, the determinant as the product of U's diagonal (as torch computes
 * it, without going through exp and log). Each output a fresh [...] tensor of a's dtype; false
 * after an error. */
static bool lu_determinants(const gs__tensor *a, gs_tensor *det, gs_tensor *sign, gs_tensor *logabs,
                            const char *fn) {
  int nbatch = a->ndim - 2;
  int64_t n = a->shape[a->ndim - 1], count = gs__linalg_batch_count(a->shape, nbatch);
  gs__tensor *lu = NULL, *td = NULL, *ts = NULL, *tl = NULL;
  /* det A^T = det A, so A's row-major copy goes to LAPACK as it is (LAPACK sees A^T): torch
   * factors that same buffer, and its pivots and U are what its printed det comes from */
  gs_tensor hlu = gs__tensor_new(a->dtype, a->shape, a->ndim, fn, &lu);
  if (hlu.id)
    gs__copy_into(lu, a);
  blasint *ipiv = hlu.id ? malloc(sizeof(blasint) * (size_t)(n > 0 ? n : 1)) : NULL;
  if (hlu.id && !ipiv)
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "no memory for %lld pivots", (long long)n);
  bool ok = ipiv != NULL;
  gs_tensor hd = ok && det ? gs__tensor_new(a->dtype, a->shape, nbatch, fn, &td) : GS_NO_TENSOR;
  if (det)
    *det = hd;
  *sign = ok ? gs__tensor_new(a->dtype, a->shape, nbatch, fn, &ts) : GS_NO_TENSOR;
  *logabs = ok ? gs__tensor_new(a->dtype, a->shape, nbatch, fn, &tl) : GS_NO_TENSOR;
  ok = ok && sign->id && logabs->id && (!det || hd.id);
  char *data = ok ? gs__tensor_data(lu) : NULL;
  bool f64 = a->dtype == GS_F64;
  for (int64_t i = 0; ok && i < count; i++) {
    lu_factor(a->dtype, data, i, (blasint)n, ipiv);
    double product = 1.0, log_sum = 0.0, s = 1.0;
    float product32 = 1.0f; /* f32's product rounds at each step, as torch's prod does */
    for (int64_t j = 0; j < n; j++) {
      int64_t at = i * n * n + j * n + j;
      double u = f64 ? ((double *)data)[at] : (double)((float *)data)[at];
      if (ipiv[j] != j + 1)
        product = -product, product32 = -product32, s = -s;
      product *= u;
      product32 *= (float)u;
      s = u == 0.0 ? 0.0 : u < 0.0 ? -s : s;
      log_sum += log(fabs(u));
    }
    if (f64) {
      ((double *)gs__tensor_data(ts))[i] = s;
      ((double *)gs__tensor_data(tl))[i] = log_sum;
      if (td)
        ((double *)gs__tensor_data(td))[i] = product;
    } else {
      ((float *)gs__tensor_data(ts))[i] = (float)s;
      ((float *)gs__tensor_data(tl))[i] = (float)log_sum;
      if (td)
        ((float *)gs__tensor_data(td))[i] = product32;
    }
  }
  free(ipiv);
  gs_dispose(hlu);
  if (!ok)
    dispose_all((gs_tensor[]){*sign, *logabs, hd}, 3);
  return ok;
}

/* g (shaped [...]) times the inverse transpose of A, as [..., n, n]; scale, when given, multiplies
 * g first (det's d). */
static gs_tensor scaled_inverse_transpose(gs_tensor a, gs_tensor g, gs_tensor scale) {
  gs_tensor weighted = scale.id ? gs__formula_temp(gs_mul(g, scale)) : g;
  gs_tensor kept = gs__formula_temp(gs_unsqueeze(gs__formula_temp(gs_unsqueeze(weighted, -1)), -1));
  gs_tensor inv = gs__formula_temp(gs_linalg_inv(a));
  return gs_mul(kept, gs__linalg_mT(inv));
}

/* Saved: A (0) and det (1). */
static void det_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, scaled_inverse_transpose(gs__saved(n, 0), g, gs__saved(n, 1)));
}
GS__BACKWARD_TWICE(LinalgDetBackward, det_backward);

/* Saved: A (0). The gradient of logabsdet only: sign's is zero. */
static void slogdet_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, scaled_inverse_transpose(gs__saved(n, 0), g, GS_NO_TENSOR));
}
GS__BACKWARD_TWICE(LinalgSlogdetBackward, slogdet_backward);

gs_tensor gs_linalg_det(gs_tensor ha) {
  const char *fn = "linalg_det";
  gs__tensor *a = gs__linalg_square(ha, fn);
  gs_tensor det, sign, logabs;
  if (!a || !lu_determinants(a, &det, &sign, &logabs, fn))
    return GS_NO_TENSOR;
  dispose_all((gs_tensor[]){sign, logabs}, 2);
  gs__node *n = gs__record_result(&LinalgDetBackward, det, 1, (const gs__tensor *[]){a}, 2, fn);
  if (n) {
    gs__save(n, 0, a);
    gs__save(n, 1, gs__lookup(det, fn));
  }
  return det;
}

bool gs_linalg_slogdet(gs_tensor ha, gs_tensor *sign, gs_tensor *logabsdet) {
  const char *fn = "linalg_slogdet";
  gs__tensor *a = gs__linalg_square(ha, fn);
  gs_tensor s, l;
  if (!a || !lu_determinants(a, NULL, &s, &l, fn))
    return false;
  gs__node *n = gs__record_result(&LinalgSlogdetBackward, l, 1, (const gs__tensor *[]){a}, 1, fn);
  if (n)
    gs__save(n, 0, a);
  if (sign)
    *sign = s;
  else
    gs_dispose(s);
  if (logabsdet)
    *logabsdet = l;
  else
    gs_dispose(l);
  return true;
}

/* ---- matrix_norm --------------------------------------------------------------------------- */

/* 'nuc', 2 and -2, as torch: the matrices moved to the last two dims, their singular values
 * summed or their largest or smallest taken, and d0 and d1 put back as size-1 dims when
 * keepdim. */
static gs_tensor singular_value_norm(gs_tensor h, int ndim, gs_matrix_norm_ord ord, int d0, int d1,
                                     bool keepdim) {
  int order[GS_MAX_DIMS], k = 0;
  for (int d = 0; d < ndim; d++)
    if (d != d0 && d != d1)
      order[k++] = d;
  order[k++] = d0, order[k++] = d1;
  gs_tensor moved = gs_permute(h, order, ndim);
  gs_tensor s = moved.id ? gs_linalg_svdvals(moved) : GS_NO_TENSOR;
  gs_tensor r = !s.id                       ? GS_NO_TENSOR
                : ord == GS_MATRIX_NORM_NUC ? gs_sum(s, (int[]){-1}, 1, false)
                : ord == GS_MATRIX_NORM_TWO ? gs_max(s, (int[]){-1}, 1, false)
                                            : gs_min(s, (int[]){-1}, 1, false);
  dispose_all((gs_tensor[]){moved, s}, 2);
  if (!keepdim || !r.id)
    return r;
  gs_tensor once = gs_unsqueeze(r, d0 < d1 ? d0 : d1);
  gs_tensor twice = gs_unsqueeze(once, d0 < d1 ? d1 : d0);
  dispose_all((gs_tensor[]){r, once}, 2);
  return twice;
}

gs_tensor gs_linalg_matrix_norm(gs_tensor h, gs_matrix_norm_ord ord, int dim0, int dim1,
                                bool keepdim) {
  const char *fn = "linalg_matrix_norm";
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return GS_NO_TENSOR;
  if (t->ndim < 2) {
    gs__error(GS_ERR_SHAPE, fn, "expected a tensor with 2 or more dims (matrices), got %d dims",
              t->ndim);
    return GS_NO_TENSOR;
  }
  int d0 = gs__wrap_dim(dim0, t->ndim, fn), d1 = d0 < 0 ? -1 : gs__wrap_dim(dim1, t->ndim, fn);
  if (d1 < 0)
    return GS_NO_TENSOR;
  if (d0 == d1) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected two different dims, got %d and %d", dim0, dim1);
    return GS_NO_TENSOR;
  }
  if (ord == GS_MATRIX_NORM_FRO)
    return gs_linalg_vector_norm(h, 2.0, (int[]){d0, d1}, 2, keepdim);
  if (ord < GS_MATRIX_NORM_FRO || ord > GS_MATRIX_NORM_NEG_TWO) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected ord GS_MATRIX_NORM_FRO, _ONE, _NEG_ONE, _INF, _NEG_INF, _NUC, _TWO or "
              "_NEG_TWO, got %d",
              (int)ord);
    return GS_NO_TENSOR;
  }
  if (ord >= GS_MATRIX_NORM_NUC)
    return singular_value_norm(h, t->ndim, ord, d0, d1, keepdim);
  /* 1 and -1: sums down the columns (over the row dim d0), then the max or min over them;
   * inf and -inf: the same with the roles of the dims swapped. As torch: the sum keeps or drops
   * its dim as keepdim says, and the extreme is taken over the other dim where it now is. */
  bool by_columns = ord == GS_MATRIX_NORM_ONE || ord == GS_MATRIX_NORM_NEG_ONE;
  bool largest = ord == GS_MATRIX_NORM_ONE || ord == GS_MATRIX_NORM_INF;
  int summed = by_columns ? d0 : d1, other = by_columns ? d1 : d0;
  if (!keepdim && other > summed)
    other--;
  gs_tensor sums = gs_linalg_vector_norm(h, 1.0, (int[]){summed}, 1, keepdim);
  if (!sums.id)
    return GS_NO_TENSOR;
  gs_tensor r =
      largest ? gs_max(sums, (int[]){other}, 1, keepdim) : gs_min(sums, (int[]){other}, 1, keepdim);
  gs_dispose(sums);
  return r;
}
