/* softmax.c: softmax and log_softmax along one dim.
 *
 * Each row along the dim takes three passes: its max, the sum of exp(x - max), and the
 * output. Subtracting the max keeps exp from overflowing on large logits; a row that is all
 * -inf has no finite max and gives NaN, as in PyTorch. Rows compute in double whatever the
 * dtype. When neighbouring rows are closer in memory than a row's own elements (softmax over
 * dim 0 of a row-major matrix) a block of rows is done together, so each pass reads memory
 * in order instead of striding across it once per row. The backward formulas come first,
 * written from the saved output.
 */
#include <math.h>

#include "ops-impl.h"

/* Rows done together when they are adjacent in memory. */
#define SOFTMAX_BLOCK 256

typedef struct softmax_ctx {
  gs_dtype dtype;
  bool log;
  int64_t len;       /* elements in a row */
  int64_t in_bytes;  /* step between a row's elements, input */
  int64_t out_bytes; /* and output */
} softmax_ctx;

/* nrows rows: row r starts at in + r * irs and out + r * ors (bytes), its elements step by
 * c->in_bytes and c->out_bytes. The softmax output first holds exp(x - max), then is scaled,
 * so exp runs once per element. */
#define SOFTMAX_ROWS(T)                                                                      \
  static void softmax_rows_##T(const softmax_ctx *c, const char *in, int64_t irs, char *out, \
                               int64_t ors, int64_t nrows) {                                 \
    double max[SOFTMAX_BLOCK], sum[SOFTMAX_BLOCK];                                           \
    for (int64_t r = 0; r < nrows; r++)                                                      \
      max[r] = -INFINITY, sum[r] = 0.0;                                                      \
    for (int64_t k = 0; k < c->len; k++)                                                     \
      for (int64_t r = 0; r < nrows; r++) {                                                  \
        double x = (double)*(const T *)(in + k * c->in_bytes + r * irs);                     \
        if (x > max[r] || isnan(x))                                                          \
          max[r] = x;                                                                        \
      }                                                                                      \
    for (int64_t k = 0; k < c->len; k++)                                                     \
      for (int64_t r = 0; r < nrows; r++) {                                                  \
        double e = exp((double)*(const T *)(in + k * c->in_bytes + r * irs) - max[r]);       \
        sum[r] += e;                                                                         \
        if (!c->log)                                                                         \
          *(T *)(out + k * c->out_bytes + r * ors) = (T)e;                                   \
      }                                                                                      \
    for (int64_t r = 0; r < nrows; r++) /* what the last pass subtracts, or multiplies by */ \
      sum[r] = c->log ? log(sum[r]) : 1.0 / sum[r];                                          \
    for (int64_t k = 0; k < c->len; k++)                                                     \
      for (int64_t r = 0; r < nrows; r++) {                                                  \
        T *o = (T *)(out + k * c->out_bytes + r * ors);                                      \
        if (c->log)                                                                          \
          *o = (T)(((double)*(const T *)(in + k * c->in_bytes + r * irs) - max[r]) - sum[r]); \
        else                                                                                 \
          *o = (T)((double)*o * sum[r]);                                                     \
      }                                                                                      \
  }

/* One row whose elements are adjacent in both input and output (softmax over the last dim of
 * a contiguous tensor: a classifier's logits), as SOFTMAX_ROWS computes it, operation for
 * operation, without its strides and per-row arrays, and its max without a branch on each
 * element (on random logits "x > max" mispredicted about once a row; the row kernel's own
 * code took more of a cross entropy's forward than its exps did). A NaN still wins the max
 * and the last one stays, as the branch leaves it. */
#define SOFTMAX_ROW(T)                                                                             \
  static void softmax_row_##T(bool log_out, const T *in, T *out, int64_t len) {                    \
    double max = -INFINITY, sum = 0.0;                                                             \
    for (int64_t k = 0; k < len; k++) {                                                            \
      double x = (double)in[k];                                                                    \
      max = x > max || isnan(x) ? x : max;                                                         \
    }                                                                                              \
    for (int64_t k = 0; k < len; k++) {                                                            \
      double e = exp((double)in[k] - max);                                                         \
      sum += e;                                                                                    \
      if (!log_out)                                                                                \
        out[k] = (T)e;                                                                             \
    }                                                                                              \
    sum = log_out ? log(sum) : 1.0 / sum;                                                          \
    for (int64_t k = 0; k < len; k++)                                                              \
      out[k] = log_out ? (T)(((double)in[k] - max) - sum) : (T)((double)out[k] * sum);             \
  }

typedef float f32;
typedef double f64;
SOFTMAX_ROWS(f32)
SOFTMAX_ROWS(f64)
SOFTMAX_ROW(f32)
SOFTMAX_ROW(f64)

/* gs__iter_run's inner loop over n rows: operand 0 is the input, 1 the output. */
static void softmax_loop(char **ptrs, const int64_t *bs, int64_t n, void *vctx) {
  const softmax_ctx *c = vctx;
  int64_t es = (int64_t)gs_dtype_size(c->dtype);
  if (c->in_bytes == es && c->out_bytes == es) {
    for (int64_t j = 0; j < n; j++) {
      const char *in = ptrs[0] + j * bs[0];
      char *out = ptrs[1] + j * bs[1];
      if (c->dtype == GS_F32)
        softmax_row_f32(c->log, (const f32 *)in, (f32 *)out, c->len);
      else
        softmax_row_f64(c->log, (const f64 *)in, (f64 *)out, c->len);
    }
    return;
  }
  int64_t block = n > 1 && gs__abs64(bs[0]) < gs__abs64(c->in_bytes) ? SOFTMAX_BLOCK : 1;
  for (int64_t j = 0; j < n; j += block) {
    int64_t m = n - j < block ? n - j : block;
    if (c->dtype == GS_F32)
      softmax_rows_f32(c, ptrs[0] + j * bs[0], bs[0], ptrs[1] + j * bs[1], bs[1], m);
    else
      softmax_rows_f64(c, ptrs[0] + j * bs[0], bs[0], ptrs[1] + j * bs[1], bs[1], m);
  }
}

/* ---- backward formulas (saved: the output, as PyTorch; ints[0]: the dim) --------------- */

/* d softmax(a) = out * (g - sum(g * out, dim, keepdim)) */
static void softmax_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor out = gs__saved(n, 0);
  int dim = (int)n->ints[0];
  gs_tensor dot = gs__formula_temp(gs_sum(gs__formula_temp(gs_mul(g, out)), &dim, 1, true));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(out, gs__formula_temp(gs_sub(g, dot))));
}
GS__BACKWARD_TWICE(SoftmaxBackward, softmax_backward);

/* d log_softmax(a) = g - exp(out) * sum(g, dim, keepdim) */
static void log_softmax_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  int dim = (int)n->ints[0];
  gs_tensor total = gs__formula_temp(gs_sum(g, &dim, 1, true));
  gs_tensor p = gs__formula_temp(gs_exp(gs__saved(n, 0)));
  grads[0] = gs__reduce_grad(n, 0, gs_sub(g, gs__formula_temp(gs_mul(p, total))));
}
GS__BACKWARD_TWICE(LogSoftmaxBackward, log_softmax_backward);

/* ---- forward -------------------------------------------------------------------------- */

static gs_tensor softmax_along(gs_tensor h, int dim, bool log_out, const char *fn) {
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return GS_NO_TENSOR;
  if (!gs_dtype_is_floating(t->dtype)) {
    gs__error(GS_ERR_DTYPE, fn, "expected a floating dtype (f32 or f64), got %s",
              gs_dtype_name(t->dtype));
    return GS_NO_TENSOR;
  }
  int d = gs__wrap_dim(dim, t->ndim, fn);
  if (d < 0)
    return GS_NO_TENSOR;
  gs__tensor *out;
  gs_tensor r = gs__tensor_new(t->dtype, t->shape, t->ndim, fn, &out);
  if (!r.id)
    return r;

  int64_t es = (int64_t)gs_dtype_size(t->dtype);
  softmax_ctx c = {.dtype = t->dtype, .log = log_out, .len = 1};
  if (t->ndim > 0) { /* a 0-dim tensor is one row of one element */
    c.len = t->shape[d];
    c.in_bytes = t->strides[d] * es;
    c.out_bytes = out->strides[d] * es;
  }
  /* The walk visits the start of every row: all dims but d. */
  int64_t shape[GS_MAX_DIMS], strides[2][GS_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < t->ndim; i++)
    if (i != d) {
      shape[n] = t->shape[i];
      strides[0][n] = t->strides[i];
      strides[1][n++] = out->strides[i];
    }
  char *data[2] = {gs__tensor_data(t), gs__tensor_data(out)};
  size_t sizes[2] = {(size_t)es, (size_t)es};
  gs__iter_run(2, data, (const int64_t(*)[GS_MAX_DIMS])strides, sizes, shape, n,
               softmax_loop, &c);
  gs__node *node = gs__record(log_out ? &LogSoftmaxBackward : &SoftmaxBackward, out, 1,
                              (const gs__tensor *[]){t}, 1);
  if (node) {
    node->ints[0] = d;
    gs__save(node, 0, out);
  }
  return r;
}

gs_tensor gs_softmax(gs_tensor t, int dim) { return softmax_along(t, dim, false, "softmax"); }

gs_tensor gs_log_softmax(gs_tensor t, int dim) {
  return softmax_along(t, dim, true, "log_softmax");
}
