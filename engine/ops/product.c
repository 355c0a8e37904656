/* product.c: products: prod (of everything, or along one dim) and cumprod, the running
 * product along a dim.
 *
 * Both compute on a contiguous copy seen as [outer, len, inner] rows (gs__row_layout):
 * floating inputs in double, integer and bool ones as i64 (torch's result dtype), wrapping
 * on overflow. Their gradients stay exact when the input holds zeros, as torch's do: prod's
 * is g times the product of the other elements, the exclusive running products from either
 * side (cumprod ops, so it differentiates again); cumprod's is a pass over each row in C.
 */
#include <stdlib.h>
#include <string.h>

#include "ops-impl.h"

/* The rows' products: every running product when running, else only each row's last. */
#define PRODUCT_ROWS(NAME, T, ACC, MUL)                                                            \
  static void NAME(const void *src, void *dst, int64_t outer, int64_t len, int64_t inner,          \
                   bool running) {                                                                 \
    const T *x = src;                                                                              \
    T *y = dst;                                                                                    \
    for (int64_t o = 0; o < outer; o++)                                                            \
      for (int64_t i = 0; i < inner; i++) {                                                        \
        ACC acc = 1;                                                                               \
        for (int64_t k = 0; k < len; k++) {                                                        \
          int64_t at = (o * len + k) * inner + i;                                                  \
          acc = MUL;                                                                               \
          if (running)                                                                             \
            y[at] = (T)acc;                                                                        \
        }                                                                                          \
        if (!running)                                                                              \
          y[o * inner + i] = (T)acc;                                                               \
      }                                                                                            \
  }
PRODUCT_ROWS(product_f32, float, double, acc *(double)x[at])
PRODUCT_ROWS(product_f64, double, double, acc *x[at])
PRODUCT_ROWS(product_i64, int64_t, int64_t, (int64_t)((uint64_t)acc *(uint64_t)x[at]))

/* The products of t along d (running, or one per row) into a new tensor of shape. */
static gs_tensor products(gs__tensor *t, int d, bool running, const int64_t *shape, int ndim,
                          const char *fn) {
  gs_dtype dtype = gs_dtype_is_floating(t->dtype) ? t->dtype : GS_I64;
  gs__tensor c;
  if (!gs__as_contiguous(t, dtype, &c, fn))
    return GS_NO_TENSOR;
  gs__tensor *out;
  gs_tensor r = gs__tensor_new(dtype, shape, ndim, fn, &out);
  if (r.id) {
    int64_t outer, len, inner;
    gs__row_layout(t, d, &outer, &len, &inner);
    void (*rows)(const void *, void *, int64_t, int64_t, int64_t, bool) =
        dtype == GS_F32   ? product_f32
        : dtype == GS_F64 ? product_f64
                          : product_i64;
    rows(gs__tensor_data(&c), gs__tensor_data(out), outer, len, inner, running);
  }
  gs__tensor_release(&c);
  return r;
}

/* ---- prod ------------------------------------------------------------------------------ */

/* The products of the elements before each one along d (1 for the first): cumprod of x
 * shifted by one. len >= 1. */
static gs_tensor products_before(gs_tensor x, int d, int64_t len) {
  int64_t shape[GS_MAX_DIMS];
  int nd = gs_shape(x, shape);
  shape[d] = 1;
  gs_tensor one = gs__formula_temp(gs_ones(gs_dtype_of(x), shape, nd));
  if (len == 1)
    return one;
  gs_tensor head = gs__formula_temp(gs_narrow(x, d, 0, len - 1));
  gs_tensor shifted = gs__formula_temp(gs_cat((gs_tensor[]){one, head}, 2, d));
  return gs__formula_temp(gs_cumprod(shifted, d));
}

/* d prod(x) / dx_i = g * prod of the other elements = g * (product before i) * (product
 * after i): exact with zeros. The input is seen as 1-D for prod() (dim -1 in ints). */
static void prod_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  const gs__input_meta *m = &n->inputs[0];
  gs_tensor x = gs__saved(n, 0);
  int d = (int)n->ints[0];
  int64_t numel = 1;
  for (int e = 0; e < m->ndim; e++)
    numel *= m->shape[e];
  if (d < 0) {
    x = gs__formula_temp(gs_reshape(x, &numel, 1));
    d = 0;
  } else if (!n->ints[1]) { /* not keepdim: g gets dim d back, of size 1 */
    g = gs__formula_temp(gs_unsqueeze(g, d));
  }
  int64_t len = gs_ndim(x) ? gs_size(x, d) : 1;
  if (len == 0) {
    grads[0] = gs__reduce_grad(n, 0, gs_zeros(m->dtype, m->shape, m->ndim));
    return;
  }
  gs_tensor before = products_before(x, d, len);
  gs_tensor after = gs__formula_flip(products_before(gs__formula_flip(x, d), d, len), d);
  gs_tensor others = gs__formula_temp(gs_mul(before, after));
  gs_tensor grad = gs__formula_temp(gs_mul(others, g));
  grads[0] = gs__reduce_grad(n, 0, gs_reshape(grad, m->shape, m->ndim));
}
GS__BACKWARD_TWICE(ProdBackward, prod_backward);
/* prod along a dim (torch's ProdBackward1). */
GS__BACKWARD_TWICE(ProdDimBackward, prod_backward);

/* Records prod's node on r: the input saved, dim (-1: all) and keepdim in ints. */
static gs_tensor record_prod(const gs__node_kind *kind, gs_tensor r, gs__tensor *t, int d,
                             bool keepdim) {
  gs__tensor *out = r.id ? gs__lookup(r, kind->name) : NULL;
  gs__node *n = out && gs_dtype_is_floating(out->dtype)
                    ? gs__record(kind, out, 1, (const gs__tensor *[]){t}, 1)
                    : NULL;
  if (n) {
    gs__save(n, 0, t);
    n->ints[0] = d;
    n->ints[1] = keepdim;
  }
  return r;
}

gs_tensor gs_prod_all(gs_tensor h) {
  const char *fn = "prod";
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return GS_NO_TENSOR;
  /* All elements as one row: a contiguous copy is that row whatever the shape. */
  gs__tensor c;
  if (!gs__as_contiguous(t, t->dtype, &c, fn))
    return GS_NO_TENSOR;
  gs__tensor flat = c;
  flat.ndim = 1, flat.shape[0] = c.numel, flat.strides[0] = 1;
  gs_tensor r = products(&flat, 0, false, NULL, 0, fn);
  gs__tensor_release(&c);
  return record_prod(&ProdBackward, r, t, -1, false);
}

gs_tensor gs_prod(gs_tensor h, int dim, bool keepdim) {
  const char *fn = "prod";
  gs__tensor *t = gs__lookup(h, fn);
  int d = t ? gs__wrap_dim(dim, t->ndim, fn) : -1;
  if (d < 0)
    return GS_NO_TENSOR;
  int64_t shape[GS_MAX_DIMS];
  int nd = 0;
  for (int e = 0; e < t->ndim; e++) {
    if (e != d)
      shape[nd++] = t->shape[e];
    else if (keepdim)
      shape[nd++] = 1;
  }
  gs_tensor r = products(t, d, false, shape, nd, fn);
  return record_prod(&ProdDimBackward, r, t, d, keepdim);
}

/* ---- cumprod --------------------------------------------------------------------------- */

/* d cumprod(x)_j / dx_i = prod_{k <= j, k != i} x_k for j >= i. With z the first zero of a
 * row: before z, grad_i = sum_{i <= j < z} g_j y_j / x_i (the terms from z on hold x_z = 0);
 * at z, grad_z = (product before z) * sum_{j >= z} g_j prod_{z < k <= j} x_k; after z, 0. */
static void cumprod_rows_grad(const double *x, const double *g, double *out, int64_t outer,
                              int64_t len, int64_t inner) {
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      const double *xr = x + o * len * inner + i, *gr = g + o * len * inner + i;
      double *r = out + o * len * inner + i;
      int64_t z = 0;
      double before = 1;
      while (z < len && xr[z * inner] != 0)
        before *= xr[z++ * inner];
      /* Before z: suffix sums of g_j y_j over j < z, with the running products y_j kept in
       * r (each read just before it is overwritten). */
      double p = 1;
      for (int64_t k = 0; k < z; k++)
        r[k * inner] = p *= xr[k * inner];
      double tail = 0;
      for (int64_t k = z - 1; k >= 0; k--) {
        tail += gr[k * inner] * r[k * inner];
        r[k * inner] = tail / xr[k * inner];
      }
      if (z < len) {
        double run = 1, sum = gr[z * inner];
        for (int64_t j = z + 1; j < len; j++) {
          run *= xr[j * inner];
          sum += gr[j * inner] * run;
        }
        r[z * inner] = before * sum;
        for (int64_t j = z + 1; j < len; j++)
          r[j * inner] = 0;
      }
    }
}

/* The same gradient with ops that record (double backward), zeros included: along the dim
 * (moved last, length L), M[i, k] = x_k but 1 at k = i, so cumprod(M)[i, j] is the product of
 * x_k for k <= j without x_i, and grad_i = sum_{j >= i} g_j cumprod(M)[i, j]. L x L per row:
 * only double backward pays for it. */
static void cumprod_backward_recorded(gs__node *n, gs_tensor hg, gs_tensor *grads) {
  const char *fn = "CumprodBackward";
  int d = (int)n->ints[0], nd = n->inputs[0].ndim;
  if (nd == 0) { /* a scalar's cumprod is itself */
    grads[0] = gs__reduce_grad_through(n, 0, hg);
    return;
  }
  int64_t len = n->inputs[0].shape[d];
  gs__tensor *off_t, *upper_t;
  gs_tensor off = gs__formula_temp(gs__tensor_new(GS_F64, (int64_t[]){len, len}, 2, fn, &off_t));
  gs_tensor upper =
      off.id ? gs__formula_temp(gs__tensor_new(GS_F64, (int64_t[]){len, len}, 2, fn, &upper_t))
             : GS_NO_TENSOR;
  if (!upper.id)
    return;
  off_t = gs__lookup(off, fn); /* the second allocation may have moved the tensor table */
  for (int64_t i = 0; i < len; i++)
    for (int64_t j = 0; j < len; j++) {
      ((double *)gs__tensor_data(off_t))[i * len + j] = i == j ? 0.0 : 1.0;
      ((double *)gs__tensor_data(upper_t))[i * len + j] = j >= i ? 1.0 : 0.0;
    }
  gs_dtype dt = gs_dtype_of(hg);
  off = gs__formula_temp(gs_to_dtype(off, dt));
  upper = gs__formula_temp(gs_to_dtype(upper, dt));
  gs_tensor eye = gs__formula_temp(gs_rsub_scalar(off, 1));
  gs_tensor x = gs__formula_temp(gs_transpose(gs__saved(n, 0), d, nd - 1));
  gs_tensor g = gs__formula_temp(gs_transpose(hg, d, nd - 1));
  gs_tensor rows = gs__formula_temp(gs_unsqueeze(x, nd - 1)); /* [..., 1, L] */
  gs_tensor m = gs__formula_temp(gs_add(gs__formula_temp(gs_mul(rows, off)), eye));
  gs_tensor p = gs__formula_temp(gs_cumprod(m, nd)); /* [..., L, L] */
  gs_tensor gj = gs__formula_temp(gs_unsqueeze(g, nd - 1));
  gs_tensor terms = gs__formula_temp(gs_mul(gs__formula_temp(gs_mul(p, gj)), upper));
  gs_tensor sums = gs__formula_temp(gs_sum(terms, (const int[]){nd}, 1, false));
  if (sums.id)
    grads[0] = gs__reduce_grad(n, 0, gs_transpose(sums, d, nd - 1));
}

static void cumprod_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  const char *fn = "CumprodBackward";
  int d = (int)n->ints[0];
  if (gs__formula_creates_graph()) {
    cumprod_backward_recorded(n, g, grads);
    return;
  }
  gs__tensor *x = gs__lookup(gs__saved(n, 0), fn), *gt = gs__lookup(g, fn);
  gs__tensor xc, gc;
  if (!x || !gt || !gs__as_contiguous(x, GS_F64, &xc, fn))
    return;
  if (!gs__as_contiguous(gt, GS_F64, &gc, fn)) {
    gs__tensor_release(&xc);
    return;
  }
  gs__tensor *out;
  gs_tensor r = gs__tensor_new(GS_F64, x->shape, x->ndim, fn, &out);
  if (r.id) {
    int64_t outer, len, inner;
    gs__row_layout(x, d, &outer, &len, &inner);
    cumprod_rows_grad((const double *)gs__tensor_data(&xc), (const double *)gs__tensor_data(&gc),
                      (double *)gs__tensor_data(out), outer, len, inner);
    grads[0] = gs__reduce_grad(n, 0, r);
  }
  gs__tensor_release(&xc);
  gs__tensor_release(&gc);
}
GS__BACKWARD_TWICE(CumprodBackward, cumprod_backward);

gs_tensor gs_cumprod(gs_tensor h, int dim) {
  const char *fn = "cumprod";
  gs__tensor *t = gs__lookup(h, fn);
  int d = t ? gs__wrap_dim(dim, t->ndim, fn) : -1;
  if (d < 0)
    return GS_NO_TENSOR;
  gs_tensor r = products(t, d, true, t->shape, t->ndim, fn);
  gs__tensor *out = r.id ? gs__lookup(r, fn) : NULL;
  gs__node *n = out && gs_dtype_is_floating(out->dtype)
                    ? gs__record(&CumprodBackward, out, 1, (const gs__tensor *[]){t}, 1)
                    : NULL;
  if (n) {
    gs__save(n, 0, t);
    n->ints[0] = d;
  }
  return r;
}
