/* matmul.c: matrix products (matmul; mm, bmm, mv, dot; addmm) on OpenBLAS.
 *
 * Every product becomes a batch of 2-D gemms. An operand goes to BLAS in the layout it already
 * has whenever BLAS can describe it: rows a leading dimension apart (NoTrans) or columns a
 * leading dimension apart (Trans). So transposed and row-sliced views cost no copy; only
 * layouts BLAS cannot describe (column-strided slices, stride-0 broadcasts inside a matrix)
 * are copied first. i64 has no BLAS routine: a plain loop that wraps on overflow, as
 * PyTorch's CPU kernel does.
 *
 * Their backward formulas are products too: g @ b^T and a^T @ g, with 1-D operands seen as
 * the row or column the forward made of them.
 */
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "ops-impl.h"
#include "small-gemm.h"

/* The largest size or leading dimension BLAS takes (blasint is 32-bit in Debian's OpenBLAS). */
#define BLAS_INT_MAX ((int64_t)(sizeof(blasint) == 4 ? INT32_MAX : INT64_MAX))

/* One operand seen as a batch of matrices: geom is [batch..., rows, cols] over the caller's
 * tensor (not retained), or over copy when BLAS could not read the caller's layout. */
typedef struct operand {
  gs__tensor geom;
  gs__tensor copy;
  bool copied;
  enum CBLAS_TRANSPOSE trans; /* how BLAS reads each matrix (floating dtypes only) */
  int64_t ld;
} operand;

/* What to compute: out[batch] = alpha * a[batch] @ b[batch] + beta * out[batch]. */
typedef struct product {
  gs_dtype dtype;
  int64_t m, n, k;
  double alpha, beta;
  int nbatch;
  int64_t batch[GS_MAX_DIMS];
  /* beta's addend as one f32 row for every row of out (a bias), read by the small product in
   * place of out's values, which then need not hold it; NULL: out holds the addend. */
  const float *bias_row;
} product;

static bool check_dtypes(gs_dtype a, gs_dtype b, const char *fn) {
  if (a != b) {
    gs__error(GS_ERR_DTYPE, fn, "expected operands of the same dtype, got %s and %s",
              gs_dtype_name(a), gs_dtype_name(b));
    return false;
  }
  if (a == GS_BOOL) {
    gs__error(GS_ERR_DTYPE, fn,
              "expected f32, f64 or integer (i64, i32, i16, i8, u8) operands, got bool");
    return false;
  }
  return true;
}

/* How BLAS can read a rows x cols matrix with strides (rs, cs), if it can. A size-1 dim is
 * never stepped over, so its stride is whatever suits BLAS. An ld beyond BLAS's int range
 * counts as unreadable: the caller then copies, which brings ld down to cols. */
static bool blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                        enum CBLAS_TRANSPOSE *trans, int64_t *ld) {
  int64_t min_row_ld = cols > 1 ? cols : 1, min_col_ld = rows > 1 ? rows : 1;
  if ((cols == 1 || cs == 1) && (rows == 1 || rs >= min_row_ld)) {
    *trans = CblasNoTrans;
    *ld = rows == 1 ? min_row_ld : rs;
  } else if ((rows == 1 || rs == 1) && cs >= min_col_ld) {
    /* A single column never gets here: NoTrans takes every one BLAS can read. */
    *trans = CblasTrans;
    *ld = cs;
  } else {
    return false;
  }
  return *ld <= BLAS_INT_MAX;
}

/* t as a batch of matrices: a 1-D left operand is one row, a 1-D right operand one column
 * (torch.matmul's "prepend / append a 1", removed again from the result's shape). */
static void as_matrices(const gs__tensor *t, bool left, operand *o) {
  o->geom = *t;
  o->copied = false;
  if (t->ndim != 1)
    return;
  gs__tensor *g = &o->geom;
  int64_t len = t->shape[0], step = t->strides[0];
  g->ndim = 2;
  g->shape[0] = left ? 1 : len;
  g->shape[1] = left ? len : 1;
  g->strides[0] = left ? len * step : step;
  g->strides[1] = left ? step : 1;
}

static void report_shapes(const gs__tensor *a, const gs__tensor *b, int64_t ka, int64_t kb,
                          const char *fn) {
  char sa[GS__SHAPE_STR], sb[GS__SHAPE_STR];
  gs__error(GS_ERR_SHAPE, fn, "shapes %s and %s cannot be multiplied (%lld != %lld)",
            gs__shape_str(sa, a->shape, a->ndim), gs__shape_str(sb, b->shape, b->ndim),
            (long long)ka, (long long)kb);
}

/* Sizes and batch shape of oa @ ob (a and b are the caller's tensors, named in errors). */
static bool plan_product(product *p, const operand *oa, const operand *ob, const gs__tensor *a,
                         const gs__tensor *b, const char *fn) {
  const gs__tensor *ga = &oa->geom, *gb = &ob->geom;
  int64_t ka = ga->shape[ga->ndim - 1], kb = gb->shape[gb->ndim - 2];
  if (ka != kb) {
    report_shapes(a, b, ka, kb, fn);
    return false;
  }
  if (!gs__broadcast_shapes(ga->shape, ga->ndim - 2, gb->shape, gb->ndim - 2, p->batch,
                            &p->nbatch)) {
    char sa[GS__SHAPE_STR], sb[GS__SHAPE_STR], ba[GS__SHAPE_STR], bb[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn,
              "shapes %s and %s cannot be multiplied: batch dims %s and %s do not broadcast",
              gs__shape_str(sa, a->shape, a->ndim), gs__shape_str(sb, b->shape, b->ndim),
              gs__shape_str(ba, ga->shape, ga->ndim - 2),
              gs__shape_str(bb, gb->shape, gb->ndim - 2));
    return false;
  }
  p->dtype = a->dtype;
  p->m = ga->shape[ga->ndim - 2];
  p->n = gb->shape[gb->ndim - 1];
  p->k = ka;
  if (!gs_dtype_is_integer(p->dtype) &&
      (p->m > BLAS_INT_MAX || p->n > BLAS_INT_MAX || p->k > BLAS_INT_MAX)) {
    gs__error(GS_ERR_OVERFLOW, fn,
              "a product of %lld x %lld and %lld x %lld matrices exceeds BLAS's size limit %lld",
              (long long)p->m, (long long)p->k, (long long)p->k, (long long)p->n,
              (long long)BLAS_INT_MAX);
    return false;
  }
  return true;
}

/* Makes o readable by BLAS: its own layout when possible, else a contiguous copy. Batch dims
 * broadcast with stride 0 stay size 1 in the copy: the batch loop broadcasts them again. */
static bool prepare_for_blas(operand *o, const char *fn) {
  gs__tensor *g = &o->geom;
  int nd = g->ndim;
  if (blas_layout(g->shape[nd - 2], g->shape[nd - 1], g->strides[nd - 2], g->strides[nd - 1],
                  &o->trans, &o->ld))
    return true;
  gs__tensor src = *g;
  src.numel = 1;
  for (int d = 0; d < nd; d++) {
    if (d < nd - 2 && src.strides[d] == 0)
      src.shape[d] = 1;
    src.numel *= src.shape[d];
  }
  if (!gs__as_contiguous(&src, src.dtype, &o->copy, fn))
    return false;
  o->copied = true;
  o->geom = o->copy;
  /* Contiguous rows are always readable as NoTrans, with ld = cols. */
  return blas_layout(g->shape[nd - 2], g->shape[nd - 1], g->strides[nd - 2],
                     g->strides[nd - 1], &o->trans, &o->ld);
}

static void release_operand(operand *o) {
  if (o->copied)
    gs__tensor_release(&o->copy);
  o->copied = false;
}

/* o's step (in elements) along each of the product's batch dims; 0 where o is broadcast. */
static void batch_strides(const operand *o, const product *p, int64_t *strides) {
  int own = o->geom.ndim - 2, lead = p->nbatch - own;
  for (int d = 0; d < p->nbatch; d++) {
    int od = d - lead;
    strides[d] = od < 0 || o->geom.shape[od] == 1 ? 0 : o->geom.strides[od];
  }
}

/* An integer matrix product by loops (BLAS has none), in unsigned arithmetic of T's width so
 * that overflow wraps as PyTorch's does instead of being undefined. */
#define INT_PRODUCT(T, U)                                                                          \
  do {                                                                                             \
    const gs__tensor *ga = &a->geom, *gb = &b->geom;                                               \
    int64_t ars = ga->strides[ga->ndim - 2], acs = ga->strides[ga->ndim - 1];                      \
    int64_t brs = gb->strides[gb->ndim - 2], bcs = gb->strides[gb->ndim - 1];                      \
    const T *x = (const T *)pa, *y = (const T *)pb;                                                \
    T *out = (T *)pc;                                                                              \
    U alpha = (U)gs__f64_to_i64(p->alpha), beta = (U)gs__f64_to_i64(p->beta);                      \
    for (int64_t i = 0; i < m; i++)                                                                \
      for (int64_t j = 0; j < p->n; j++) {                                                         \
        U sum = 0;                                                                                 \
        for (int64_t l = 0; l < p->k; l++)                                                         \
          sum += (U)x[i * ars + l * acs] * (U)y[l * brs + j * bcs];                                \
        U prior = p->beta != 0.0 ? beta * (U)out[i * p->n + j] : 0;                                \
        out[i * p->n + j] = (T)(alpha * sum + prior);                                              \
      }                                                                                            \
  } while (0)

/* One matrix of the product: c = alpha * a @ b + beta * c, c contiguous with n columns. */
static void multiply_one(const product *p, const operand *a, const char *pa, const operand *b,
                         const char *pb, char *pc, int64_t m) {
  switch (p->dtype) {
  case GS_F32:
    if (p->alpha == 1.0 && (p->beta == 0.0 || p->beta == 1.0) &&
        gs__small_sgemm_wins(m, p->n, p->k, b->trans == CblasTrans)) {
      gs__small_sgemm(m, p->n, p->k, (const float *)pa, a->ld, a->trans == CblasTrans,
                      (const float *)pb, b->ld, b->trans == CblasTrans,
                      p->bias_row      ? p->bias_row
                      : p->beta == 1.0 ? (const float *)pc
                                       : NULL,
                      p->bias_row ? 0 : p->n, (float *)pc, p->n);
      break;
    }
    cblas_sgemm(CblasRowMajor, a->trans, b->trans, (blasint)m, (blasint)p->n, (blasint)p->k,
                (float)p->alpha, (const float *)pa, (blasint)a->ld, (const float *)pb,
                (blasint)b->ld, (float)p->beta, (float *)pc, (blasint)p->n);
    break;
  case GS_F64:
    cblas_dgemm(CblasRowMajor, a->trans, b->trans, (blasint)m, (blasint)p->n, (blasint)p->k,
                p->alpha, (const double *)pa, (blasint)a->ld, (const double *)pb,
                (blasint)b->ld, p->beta, (double *)pc, (blasint)p->n);
    break;
  case GS_I64: INT_PRODUCT(int64_t, uint64_t); break;
  case GS_I32: INT_PRODUCT(int32_t, uint32_t); break;
  /* 32-bit unsigned sums for u8, i8 and i16 (narrower ones would be promoted to int, where a
   * product can overflow); their low bits are the result wrapped at T's width. */
  case GS_U8: INT_PRODUCT(uint8_t, uint32_t); break;
  case GS_I8: INT_PRODUCT(int8_t, uint32_t); break;
  case GS_I16: INT_PRODUCT(int16_t, uint32_t); break;
  case GS_BOOL:
    break; /* refused by check_dtypes */
  }
}

/* True when a's batch dims and rows form one run of rows ld apart, so the batch is one tall
 * matrix, and b is one matrix for every batch entry: the whole product is then one gemm. */
static bool batch_folds_into_rows(const product *p, const operand *a, const operand *b) {
  if (gs_dtype_is_integer(p->dtype) || a->trans != CblasNoTrans || p->nbatch == 0)
    return false;
  const gs__tensor *ga = &a->geom, *gb = &b->geom;
  for (int d = 0; d < gb->ndim - 2; d++)
    if (gb->shape[d] != 1)
      return false;
  int64_t expected = p->m * a->ld, rows = p->m;
  for (int d = ga->ndim - 3; d >= 0; d--) {
    if (ga->shape[d] == 1)
      continue;
    if (ga->strides[d] != expected)
      return false;
    expected *= ga->shape[d];
    rows *= ga->shape[d];
  }
  return rows <= BLAS_INT_MAX;
}

/* out *= beta for u8, i8 and i16, wrapping at T's width (through 32-bit unsigned products). */
#define SCALE_SMALL(T)                                                                             \
  for (int64_t i = 0; i < out->numel; i++)                                                         \
  ((T *)data)[i] = (T)((uint32_t)((T *)data)[i] * (uint32_t)gs__f64_to_i64(beta))

/* out *= beta, for a contiguous out, in out's dtype (as BLAS would apply beta). */
static void scale(gs__tensor *out, double beta) {
  char *data = gs__tensor_data(out);
  switch (out->dtype) {
  case GS_F32:
    for (int64_t i = 0; i < out->numel; i++)
      ((float *)data)[i] *= (float)beta;
    break;
  case GS_F64:
    for (int64_t i = 0; i < out->numel; i++)
      ((double *)data)[i] *= beta;
    break;
  case GS_I64:
    for (int64_t i = 0; i < out->numel; i++)
      ((int64_t *)data)[i] =
          (int64_t)((uint64_t)((int64_t *)data)[i] * (uint64_t)gs__f64_to_i64(beta));
    break;
  case GS_I32:
    for (int64_t i = 0; i < out->numel; i++)
      ((int32_t *)data)[i] =
          (int32_t)((uint32_t)((int32_t *)data)[i] * (uint32_t)gs__f64_to_i64(beta));
    break;
  case GS_U8: SCALE_SMALL(uint8_t); break;
  case GS_I8: SCALE_SMALL(int8_t); break;
  case GS_I16: SCALE_SMALL(int16_t); break;
  case GS_BOOL:
    break; /* refused by check_dtypes */
  }
}

/* Runs the product into out's contiguous bytes (out holds beta's addend already). */
static void run_product(const product *p, const operand *a, const operand *b, gs__tensor *out) {
  char *pc = gs__tensor_data(out);
  size_t es = gs_dtype_size(p->dtype);
  if (out->numel == 0)
    return;
  if (p->k == 0) {
    /* An empty sum: out = beta * out. BLAS is not called, so it reads nothing. */
    if (p->beta == 0.0)
      memset(pc, 0, (size_t)out->numel * es);
    else if (p->beta != 1.0)
      scale(out, p->beta);
    return;
  }
  const char *pa = gs__tensor_data(&a->geom), *pb = gs__tensor_data(&b->geom);
  if (batch_folds_into_rows(p, a, b)) {
    multiply_one(p, a, pa, b, pb, pc, out->numel / p->n);
    return;
  }
  int64_t sa[GS_MAX_DIMS], sb[GS_MAX_DIMS], index[GS_MAX_DIMS] = {0};
  batch_strides(a, p, sa);
  batch_strides(b, p, sb);
  int64_t count = out->numel / (p->m * p->n), matrix = p->m * p->n;
  int64_t off_a = 0, off_b = 0; /* in elements, so no pointer ever leaves its buffer */
  for (int64_t i = 0; i < count; i++) {
    multiply_one(p, a, pa + off_a * (int64_t)es, b, pb + off_b * (int64_t)es,
                 pc + i * matrix * (int64_t)es, p->m);
    for (int d = p->nbatch - 1; d >= 0; d--) {
      off_a += sa[d];
      off_b += sb[d];
      if (++index[d] < p->batch[d])
        break;
      off_a -= sa[d] * p->batch[d];
      off_b -= sb[d] * p->batch[d];
      index[d] = 0;
    }
  }
}

/* bias's values when the product will run as the small f32 product (multiply_one) and bias is
 * one contiguous row ([n] or [1, n]) broadcast over every row: the kernel adds it to each row
 * itself (the same sum as copying it into out first, without the copy); NULL otherwise. */
static const float *bias_row_for_small_product(const product *p, const operand *ob,
                                               const gs__tensor *bias) {
  if (p->dtype != GS_F32 || bias->dtype != GS_F32 || p->alpha != 1.0 || p->beta != 1.0 ||
      p->nbatch != 0 || !gs__small_sgemm_wins(p->m, p->n, p->k, ob->trans == CblasTrans))
    return NULL;
  bool row = (bias->ndim == 1 && bias->shape[0] == p->n && (p->n == 1 || bias->strides[0] == 1)) ||
             (bias->ndim == 2 && bias->shape[0] == 1 && bias->shape[1] == p->n &&
              (p->n == 1 || bias->strides[1] == 1));
  return row ? (const float *)gs__tensor_data(bias) : NULL;
}

/* Allocates the result (shape), fills in beta's addend from bias, and runs the product.
 * Floating operands BLAS cannot read are copied first, and only when BLAS will be called. */
static gs_tensor compute(const product *p, operand *oa, operand *ob, const int64_t *shape,
                         int ndim, const gs__tensor *bias, const char *fn) {
  bool calls_blas = !gs_dtype_is_integer(p->dtype) && p->k > 0 && p->m > 0 && p->n > 0;
  for (int d = 0; d < p->nbatch && calls_blas; d++)
    calls_blas = p->batch[d] > 0;
  if (calls_blas && (!prepare_for_blas(oa, fn) || !prepare_for_blas(ob, fn))) {
    release_operand(oa);
    return GS_NO_TENSOR;
  }
  gs__tensor *out;
  gs_tensor h = gs__tensor_new(p->dtype, shape, ndim, fn, &out);
  if (h.id) {
    product run = *p;
    if (bias && p->beta != 0.0) {
      run.bias_row = calls_blas ? bias_row_for_small_product(p, ob, bias) : NULL;
      if (!run.bias_row)
        gs__copy_into(out, bias);
    }
    run_product(&run, oa, ob, out);
  }
  release_operand(oa);
  release_operand(ob);
  return h;
}

/* ---- backward formulas ---------------------------------------------------------------- */

/* Matmul's operand i as the forward multiplied it: a 1-D left operand as one row [1, k], a
 * 1-D right operand as one column [k, 1]; matrices and batches of them as they are. */
static gs_tensor matrix_form(gs__node *n, int i, gs_tensor t) {
  return n->inputs[i].ndim == 1 ? gs__formula_temp(gs_unsqueeze(t, i == 0 ? 0 : 1)) : t;
}

/* The gradient as a batch of matrices: the result lost the row dim of a 1-D left operand and
 * the column dim of a 1-D right operand; put them back. */
static gs_tensor grad_matrix_form(gs__node *n, gs_tensor g) {
  if (n->inputs[1].ndim == 1)
    g = gs__formula_temp(gs_unsqueeze(g, -1));
  if (n->inputs[0].ndim == 1)
    g = gs__formula_temp(gs_unsqueeze(g, -2));
  return g;
}

/* Back from matrix form to input i's shape: a 1-D operand drops the dim it was given, then
 * broadcast batch dims are summed away. Takes ownership of g. */
static gs_tensor grad_from_matrix_form(gs__node *n, int i, gs_tensor g) {
  if (n->inputs[i].ndim == 1)
    g = gs_squeeze(gs__formula_temp(g), i == 0 ? -2 : -1);
  return gs__reduce_grad(n, i, g);
}

/* x^T over the last two dims (each matrix of a batch transposed). */
static gs_tensor mT(gs_tensor x) { return gs__formula_temp(gs_transpose(x, -2, -1)); }

/* Flags in ints[0]: which operands the forward read as the transpose of a contiguous matrix
 * (a weight used as W^T, say). Their gradients are computed transposed, (y @ x)^T instead of
 * x^T @ y^T, so they come out in the operand's own layout: the gradient of W^T is then a
 * transposed view of a contiguous [out, in] product, the gradient of W contiguous, and the
 * leaf takes it without a copy (PyTorch's mm_mat2_backward does the same). */
enum { A_TRANSPOSED = 1, B_TRANSPOSED = 2 };

static bool transposed_contiguous(const gs__tensor *t) {
  if (t->ndim < 2)
    return false;
  int64_t rows = t->shape[t->ndim - 2], cols = t->shape[t->ndim - 1];
  return rows > 1 && cols > 1 && t->strides[t->ndim - 2] == 1 &&
         t->strides[t->ndim - 1] == rows;
}

/* t * s, or t itself when s is 1 (no pass over the data); takes ownership of t. */
static gs_tensor times(gs_tensor t, double s) {
  return s == 1.0 ? t : gs_mul_scalar(gs__formula_temp(t), s);
}

/* The gradient of a in a @ b, in matrix form: g @ b^T, or (b @ g^T)^T when a was read
 * transposed. */
static gs_tensor grad_left(gs__node *n, gs_tensor g, gs_tensor b) {
  if (n->ints[0] & A_TRANSPOSED)
    return gs_transpose(gs__formula_temp(gs_matmul(b, mT(g))), -2, -1);
  return gs_matmul(g, mT(b));
}

/* The gradient of b in a @ b, in matrix form: a^T @ g, or (g^T @ a)^T when b was read
 * transposed. */
static gs_tensor grad_right(gs__node *n, gs_tensor g, gs_tensor a) {
  if (n->ints[0] & B_TRANSPOSED)
    return gs_transpose(gs__formula_temp(gs_matmul(mT(g), a)), -2, -1);
  return gs_matmul(mT(a), g);
}

/* The home (gs__grad_home) that input i's gradient may be written into: input i goes straight
 * into a leaf's accumulator, or through t() (then *transposed), with no hook, retained grad or
 * recorded graph on the way, and the leaf has no gradient yet. No tensor otherwise. */
static gs_tensor grad_home_of(gs__node *n, int i, bool *transposed) {
  *transposed = false;
  gs__node *next = n->next[i];
  if (!gs__grad_home || !next || gs__formula_creates_graph())
    return GS_NO_TENSOR;
  if (next->kind == &TBackward && next->inputs[0].ndim == 2 && !next->hooks &&
      !next->retained_output) {
    next = next->next[0];
    *transposed = true;
  }
  if (!next || next->kind != gs__kinds.accumulate_grad || next->hooks)
    return GS_NO_TENSOR;
  gs__tensor *leaf = gs__lookup((gs_tensor){next->leaf}, "backward");
  if (!leaf || (leaf->ag.grad && gs_is_alive((gs_tensor){leaf->ag.grad})))
    return GS_NO_TENSOR;
  return gs__grad_home(next->leaf, true);
}

/* a @ b (2-D, floating) computed into out, contiguous of the product's shape and dtype, as
 * gs_matmul would compute it; false, with nothing written, where that does not hold. */
static bool product_into(gs_tensor ha, gs_tensor hb, gs_tensor hout) {
  const char *fn = "matmul";
  gs__tensor *a = gs__lookup(ha, fn), *b = gs__lookup(hb, fn), *out = gs__lookup(hout, fn);
  if (!a || !b || !out || a->ndim != 2 || b->ndim != 2 || out->ndim != 2 || a->dtype != b->dtype ||
      out->dtype != a->dtype || !gs_dtype_is_floating(a->dtype) || !gs__is_contiguous(out) ||
      a->shape[1] != b->shape[0] || out->shape[0] != a->shape[0] || out->shape[1] != b->shape[1])
    return false;
  operand oa, ob;
  as_matrices(a, true, &oa);
  as_matrices(b, false, &ob);
  product p = {.alpha = 1.0, .beta = 0.0};
  if (!plan_product(&p, &oa, &ob, a, b, fn))
    return false;
  if (p.k > 0 && (!prepare_for_blas(&oa, fn) || !prepare_for_blas(&ob, fn))) {
    release_operand(&oa);
    return false;
  }
  bool ok = gs__begin_write(out, false, fn);
  if (ok)
    run_product(&p, &oa, &ob, out);
  release_operand(&oa);
  release_operand(&ob);
  return ok;
}

/* The gradient of 2-D b (input i) in a @ b written into its leaf's home when it has one (its
 * layout must be the one the product comes out in: the leaf's own when b is the leaf read
 * transposed, W in x @ W^T); no tensor otherwise, for the usual product. */
static gs_tensor grad_right_at_home(gs__node *n, int i, gs_tensor g, gs_tensor a) {
  bool transposed;
  if (n->inputs[i].ndim != 2 || n->inputs[i - 1].ndim != 2)
    return GS_NO_TENSOR;
  gs_tensor home = grad_home_of(n, i, &transposed);
  if (!home.id || transposed != ((n->ints[0] & B_TRANSPOSED) != 0))
    return GS_NO_TENSOR;
  if (transposed) /* (g^T @ a)^T: home holds g^T @ a, the leaf's layout */
    return product_into(mT(g), a, home) ? gs_transpose(home, 0, 1) : GS_NO_TENSOR;
  int64_t shape[2];
  gs_shape(home, shape);
  return product_into(mT(a), g, home) ? gs_view(home, shape, 2) : GS_NO_TENSOR;
}

/* d(a @ b) = g @ b^T, a^T @ g, on matrix forms (saved: a in slot 0, b in slot 1, each only
 * when the other operand needs its gradient) */
static void matmul_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor gm = grad_matrix_form(n, g);
  if (gs__needs_grad(n, 0))
    grads[0] = grad_from_matrix_form(n, 0, grad_left(n, gm, matrix_form(n, 1, gs__saved(n, 1))));
  if (gs__needs_grad(n, 1)) {
    gs_tensor a = matrix_form(n, 0, gs__saved(n, 0));
    gs_tensor home = grad_right_at_home(n, 1, gm, a);
    grads[1] = home.id ? home : grad_from_matrix_form(n, 1, grad_right(n, gm, a));
  }
}
GS__BACKWARD_TWICE(MatmulBackward, matmul_backward);

/* d(beta * bias + alpha * a @ b) = beta * g, alpha * g @ b^T, alpha * a^T @ g (saved: a in
 * slot 0, b in slot 1, as for matmul; beta and alpha in reals) */
static void addmm_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  double beta = n->reals[0], alpha = n->reals[1];
  if (gs__needs_grad(n, 0))
    grads[0] = beta == 1.0 ? gs__reduce_grad_through(n, 0, g)
                           : gs__reduce_grad(n, 0, gs_mul_scalar(g, beta));
  if (gs__needs_grad(n, 1))
    grads[1] = gs__reduce_grad(n, 1, times(grad_left(n, g, gs__saved(n, 1)), alpha));
  if (gs__needs_grad(n, 2)) {
    gs_tensor a = gs__saved(n, 0);
    gs_tensor home = alpha == 1.0 ? grad_right_at_home(n, 2, g, a) : GS_NO_TENSOR;
    grads[2] = home.id ? home : gs__reduce_grad(n, 2, times(grad_right(n, g, a), alpha));
  }
}
GS__BACKWARD_TWICE(AddmmBackward, addmm_backward);

/* Records the node of a product h = [bias +] a @ b. Each operand is saved only for the other's
 * gradient: x @ W with W frozen keeps W (for x's gradient) but not x. */
static gs_tensor record_product(const gs__node_kind *kind, gs_tensor h, const gs__tensor *bias,
                                const gs__tensor *a, const gs__tensor *b, double beta,
                                double alpha) {
  if (!h.id || !gs_dtype_is_floating(a->dtype))
    return h;
  gs__tensor *out = gs__lookup(h, kind->name);
  gs__node *n = bias ? gs__record(kind, out, 3, (const gs__tensor *[]){bias, a, b}, 2)
                     : gs__record(kind, out, 2, (const gs__tensor *[]){a, b}, 2);
  if (!n)
    return h;
  int ia = bias ? 1 : 0, ib = ia + 1; /* a's and b's input numbers */
  if (gs__needs_grad(n, ib))
    gs__save(n, 0, a);
  if (gs__needs_grad(n, ia))
    gs__save(n, 1, b);
  n->reals[0] = beta;
  n->reals[1] = alpha;
  n->ints[0] = (a->ndim >= 2 && transposed_contiguous(a) ? A_TRANSPOSED : 0) |
               (b->ndim >= 2 && transposed_contiguous(b) ? B_TRANSPOSED : 0);
  return h;
}

/* a @ b under torch.matmul's rules, recorded as a node of kind (matmul's own, or the strict
 * forms' below, which PyTorch names apart: MmBackward0, BmmBackward0, ...). */
static gs_tensor product_of(const gs__node_kind *kind, gs__tensor *a, gs__tensor *b,
                            const char *fn) {
  if (!check_dtypes(a->dtype, b->dtype, fn))
    return GS_NO_TENSOR;
  if (a->ndim == 0 || b->ndim == 0) {
    gs__error(GS_ERR_SHAPE, fn, "expected operands of at least 1 dimension, got %d-D and %d-D",
              a->ndim, b->ndim);
    return GS_NO_TENSOR;
  }
  operand oa, ob;
  as_matrices(a, true, &oa);
  as_matrices(b, false, &ob);
  product p = {.alpha = 1.0, .beta = 0.0};
  if (!plan_product(&p, &oa, &ob, a, b, fn))
    return GS_NO_TENSOR;
  /* The result keeps the batch dims, and rows and columns except where a 1-D operand had
   * a 1 put in (1-D @ 1-D is a 0-D dot product). */
  int64_t shape[GS_MAX_DIMS];
  int ndim = p.nbatch;
  memcpy(shape, p.batch, sizeof(int64_t) * (size_t)ndim);
  if (a->ndim > 1)
    shape[ndim++] = p.m;
  if (b->ndim > 1)
    shape[ndim++] = p.n;
  return record_product(kind, compute(&p, &oa, &ob, shape, ndim, NULL, fn), NULL, a, b, 0.0, 1.0);
}

gs_tensor gs_matmul(gs_tensor ha, gs_tensor hb) {
  const char *fn = "matmul";
  gs__tensor *a = gs__lookup(ha, fn);
  gs__tensor *b = a ? gs__lookup(hb, fn) : NULL;
  return b ? product_of(&MatmulBackward, a, b, fn) : GS_NO_TENSOR;
}

/* The strict forms (torch.mm, bmm, mv, dot): the same product, with the operands' dims fixed
 * and, for bmm, equal batch sizes (no broadcasting). Each records a node kind of its own with
 * matmul's formula, so the graph names the op the program called. */
GS__BACKWARD_TWICE(MmBackward, matmul_backward);
GS__BACKWARD_TWICE(BmmBackward, matmul_backward);
GS__BACKWARD_TWICE(MvBackward, matmul_backward);
GS__BACKWARD_TWICE(DotBackward, matmul_backward);

static gs_tensor strict_product(const gs__node_kind *kind, gs_tensor ha, gs_tensor hb, int ndim_a,
                                int ndim_b, const char *what, const char *fn) {
  gs__tensor *a = gs__lookup(ha, fn);
  gs__tensor *b = a ? gs__lookup(hb, fn) : NULL;
  if (!b)
    return GS_NO_TENSOR;
  char sa[GS__SHAPE_STR], sb[GS__SHAPE_STR];
  if (a->ndim != ndim_a || b->ndim != ndim_b) {
    gs__error(GS_ERR_SHAPE, fn, "expected %s, got operands of shapes %s and %s", what,
              gs__shape_str(sa, a->shape, a->ndim), gs__shape_str(sb, b->shape, b->ndim));
    return GS_NO_TENSOR;
  }
  if (ndim_a == 3 && a->shape[0] != b->shape[0]) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected batches of the same size, got shapes %s and %s (%lld != %lld matrices)",
              gs__shape_str(sa, a->shape, a->ndim), gs__shape_str(sb, b->shape, b->ndim),
              (long long)a->shape[0], (long long)b->shape[0]);
    return GS_NO_TENSOR;
  }
  return product_of(kind, a, b, fn);
}

gs_tensor gs_mm(gs_tensor a, gs_tensor b) {
  return strict_product(&MmBackward, a, b, 2, 2, "two 2-D matrices", "mm");
}
gs_tensor gs_bmm(gs_tensor a, gs_tensor b) {
  return strict_product(&BmmBackward, a, b, 3, 3, "two 3-D batches of matrices", "bmm");
}
gs_tensor gs_mv(gs_tensor a, gs_tensor b) {
  return strict_product(&MvBackward, a, b, 2, 1, "a 2-D matrix and a 1-D vector", "mv");
}
gs_tensor gs_dot(gs_tensor a, gs_tensor b) {
  return strict_product(&DotBackward, a, b, 1, 1, "two 1-D vectors", "dot");
}

gs_tensor gs_addmm(gs_tensor hbias, gs_tensor ha, gs_tensor hb, double beta, double alpha) {
  const char *fn = "addmm";
  gs__tensor *bias = gs__lookup(hbias, fn);
  gs__tensor *a = bias ? gs__lookup(ha, fn) : NULL;
  gs__tensor *b = a ? gs__lookup(hb, fn) : NULL;
  if (!b || !check_dtypes(a->dtype, b->dtype, fn))
    return GS_NO_TENSOR;
  if (bias->dtype != a->dtype) {
    gs__error(GS_ERR_DTYPE, fn, "expected a bias of the operands' dtype %s, got %s",
              gs_dtype_name(a->dtype), gs_dtype_name(bias->dtype));
    return GS_NO_TENSOR;
  }
  if (a->ndim != 2 || b->ndim != 2) {
    gs__error(GS_ERR_SHAPE, fn, "expected 2-D matrices a and b, got %d-D and %d-D", a->ndim,
              b->ndim);
    return GS_NO_TENSOR;
  }
  if (gs_dtype_is_integer(a->dtype) &&
      (!isfinite(beta) || !isfinite(alpha) || beta != floor(beta) || alpha != floor(alpha))) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected integral beta and alpha for i64 tensors, got beta %g and alpha %g",
              beta, alpha);
    return GS_NO_TENSOR;
  }
  operand oa, ob;
  as_matrices(a, true, &oa);
  as_matrices(b, false, &ob);
  product p = {.alpha = alpha, .beta = beta};
  if (!plan_product(&p, &oa, &ob, a, b, fn))
    return GS_NO_TENSOR;
  int64_t shape[2] = {p.m, p.n}, unused[2];
  if (!gs__broadcast_strides(bias, shape, 2, unused)) {
    char sb[GS__SHAPE_STR], so[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn, "bias of shape %s cannot be broadcast to the product's shape %s",
              gs__shape_str(sb, bias->shape, bias->ndim), gs__shape_str(so, shape, 2));
    return GS_NO_TENSOR;
  }
  return record_product(&AddmmBackward, compute(&p, &oa, &ob, shape, 2, bias, fn), bias, a, b,
                        beta, alpha);
}
