/* cross-entropy.c: cross_entropy with label smoothing and class indices, as one pass and one
 * node (CrossEntropyLossBackward), for loss.c.
 *
 * Composed of ops (loss.c), a label-smoothed cross entropy is log_softmax, nll_loss (a gather),
 * a sum over classes, two scalings, an add and the reduction: about fifteen tensors and seven
 * nodes for a batch of 16 rows of 10 classes, a sixth of the digits example's step. Here each
 * row takes one pass, in double whatever the dtype (as softmax.c's rows):
 *   lse = max + log sum exp(x - max),  loss = (1 - e) (lse - x[t]) + (e / C) sum_c (lse - x[c]),
 * the same terms the composition rounds (log_softmax's outputs), summed without rounding each.
 * Its gradient, (softmax(x) - q) times the loss's gradient (divided by N for the mean), where
 * q = (1 - e) onehot(t) + e / C, is written by a loop too; under create_graph it is built from
 * softmax and ops instead, so it differentiates again.
 *
 * Only where the composition would not weigh rows: no class weight, and no row whose target
 * is ignore_index (loss.c's callers check the weight; this file the rows). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "cross-entropy.h"
#include "gradscope/gradscope.h"
#include "ops-impl.h"

/* The loops over rows, one copy per dtype (T: its element type). x [rows, C] with row and
 * class steps xr and xc (elements); targets t with step ts.
 * forward: each row's loss into losses (NULL: none), and their sum returned. A row's terms
 * sum_c (lse - x[c]) = sum_c (max - x[c]) + C log s are each >= 0: no cancellation.
 * forward also writes each exp(x - max) into kept[i * C + c] and each row's sum into
 * kept[rows * C + i] when kept is not NULL.
 * backward: out [rows, C] contiguous = (softmax - q) * g[i], g[i] = g[i * gs] (gs 0: one g
 * for all rows) times scale; each exp(x - max) is kept for its softmax, so one exp per
 * element (for up to CE_KEPT classes; two past that), or none when forward holds what the
 * forward kept (the same exps and sums, bit for bit: the same max and order). */
enum { CE_KEPT = 256 };
#define CE_LOOPS(T)                                                                                \
  /* the row's max, NaN if it holds one; without a branch on each element (on random logits        \
   * the branch of "v > max" mispredicted often enough to cost more than the rest of the row) */   \
  static double row_max_##T(const T *row, int64_t xc, int64_t classes) {                           \
    double max = -INFINITY;                                                                        \
    bool nan = false;                                                                              \
    for (int64_t c = 0; c < classes; c++) {                                                        \
      double v = (double)row[c * xc];                                                              \
      nan |= v != v;                                                                               \
      max = v > max ? v : max;                                                                     \
    }                                                                                              \
    return nan ? (double)NAN : max;                                                                \
  }                                                                                                \
  static double ce_forward_##T(const T *x, int64_t xr, int64_t xc, const int64_t *t, int64_t ts,   \
                               int64_t rows, int64_t classes, double eps, T *losses,               \
                               double *kept) {                                                     \
    double total = 0.0;                                                                            \
    for (int64_t i = 0; i < rows; i++) {                                                           \
      const T *row = x + i * xr;                                                                   \
      double s = 0.0, below = 0.0, max = row_max_##T(row, xc, classes);                            \
      for (int64_t c = 0; c < classes; c++) {                                                      \
        double v = (double)row[c * xc], e = exp(v - max);                                          \
        s += e;                                                                                    \
        below += max - v;                                                                          \
        if (kept)                                                                                  \
          kept[i * classes + c] = e;                                                               \
      }                                                                                            \
      if (kept)                                                                                    \
        kept[rows * classes + i] = s;                                                              \
      double log_s = log(s), lse = max + log_s;                                                    \
      double picked = (double)row[t[i * ts] * xc];                                                 \
      double loss = (1.0 - eps) * (lse - picked) +                                                 \
                    eps / (double)classes * (below + (double)classes * log_s);                     \
      if (losses)                                                                                  \
        losses[i] = (T)loss;                                                                       \
      total += loss;                                                                               \
    }                                                                                              \
    return total;                                                                                  \
  }                                                                                                \
  static void ce_backward_##T(const T *x, int64_t xr, int64_t xc, const int64_t *t, int64_t ts,    \
                              int64_t rows, int64_t classes, double eps, const T *g, int64_t gs,   \
                              double scale, const double *forward, T *out) {                       \
    for (int64_t i = 0; i < rows; i++) {                                                           \
      const T *row = x + i * xr;                                                                   \
      T *o = out + i * classes;                                                                    \
      double s = 0.0, own[CE_KEPT], max = forward ? 0.0 : row_max_##T(row, xc, classes);           \
      bool keep = classes <= CE_KEPT; /* always when forward is given */                           \
      const double *kept = forward ? forward + i * classes : own;                                  \
      if (forward)                                                                                 \
        s = forward[rows * classes + i];                                                           \
      for (int64_t c = 0; !forward && c < classes; c++) {                                          \
        double e = exp((double)row[c * xc] - max);                                                 \
        s += e;                                                                                    \
        if (keep)                                                                                  \
          own[c] = e;                                                                              \
      }                                                                                            \
      double gi = (double)g[i * gs] * scale, off = eps / (double)classes, inv = 1.0 / s;           \
      int64_t target = t[i * ts];                                                                  \
      for (int64_t c = 0; c < classes; c++) {                                                      \
        double e = keep ? kept[c] : exp((double)row[c * xc] - max);                                \
        o[c] = (T)((e * inv - off - (c == target ? 1.0 - eps : 0.0)) * gi);                        \
      }                                                                                            \
    }                                                                                              \
  }

typedef float f32;
typedef double f64;
CE_LOOPS(f32)
CE_LOOPS(f64)

static int64_t target_at(const gs__tensor *t, int64_t i) {
  return ((const int64_t *)gs__tensor_data(t))[i * t->strides[0]];
}

/* q: the target distribution, [N, C] of x's dtype (no history): (1 - e) at each row's target
 * plus e / C everywhere. */
static gs_tensor target_distribution(const gs__tensor *x, const gs__tensor *t, double eps,
                                     const char *fn) {
  gs__tensor *q;
  gs_tensor h = gs__tensor_new(x->dtype, x->shape, 2, fn, &q);
  if (!h.id)
    return h;
  int64_t n = x->shape[0], classes = x->shape[1];
  size_t es = gs_dtype_size(x->dtype);
  char *data = gs__tensor_data(q);
  for (int64_t i = 0; i < n; i++)
    for (int64_t c = 0; c < classes; c++)
      gs__store_f64(data + (size_t)(i * classes + c) * es, x->dtype,
                    (c == target_at(t, i) ? 1.0 - eps : 0.0) + eps / (double)classes);
  return h;
}

/* The forward's exps and row sums, kept with the node (its user data) so that the backward
 * does not compute each exp again (160 of them a step in the digits example, a tenth of its
 * backward). Valid only for the logits as the forward read them: the same bytes at the same
 * version (a saved-tensor hook may hand the backward another tensor). */
typedef struct forward_exps {
  const void *data;
  int64_t version, rows, classes, row_step, class_step;
  double values[]; /* rows * classes exps, then rows sums */
} forward_exps;

/* Up to this many logits keep their exps (8 bytes each) until the backward. */
enum { CE_KEEP_MAX = 1 << 16 };

static forward_exps *forward_exps_new(const gs__tensor *x) {
  int64_t rows = x->shape[0], classes = x->shape[1];
  if (classes > CE_KEPT || rows * classes > CE_KEEP_MAX || !gs__any_requires_grad(1, &x))
    return NULL;
  forward_exps *f = malloc(sizeof *f + sizeof(double) * (size_t)(rows * classes + rows));
  if (f)
    *f = (forward_exps){
        gs__tensor_data(x), atomic_load(&x->storage->version), rows, classes, x->strides[0],
        x->strides[1]};
  return f;
}

/* f's values if they are x's as the forward read it, else NULL. */
static const double *forward_exps_of(const gs__node *n, const gs__tensor *x) {
  const forward_exps *f = n->user;
  if (!f || f->data != gs__tensor_data(x) || f->version != atomic_load(&x->storage->version) ||
      f->rows != x->shape[0] || f->classes != x->shape[1] || f->row_step != x->strides[0] ||
      f->class_step != x->strides[1])
    return NULL;
  return f->values;
}

/* d loss / d x = (softmax(x) - q) * g (g / N for the mean; row i's g for none) (saved: the
 * logits in slot 0, the targets in slot 1; reals[0]: e; ints[0]: the reduction; user: the
 * forward's exps, or NULL) */
static void cross_entropy_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  if (!gs__needs_grad(n, 0))
    return;
  const char *fn = "cross_entropy_backward";
  gs_tensor xh = gs__saved(n, 0), th = gs__saved(n, 1);
  gs__tensor *x = gs__lookup(xh, fn), *t = x ? gs__lookup(th, fn) : NULL;
  if (!t)
    return;
  double eps = n->reals[0];
  gs_reduction reduction = (gs_reduction)n->ints[0];
  int64_t rows = x->shape[0], classes = x->shape[1];
  if (gs__formula_creates_graph()) { /* the same formula from ops, which differentiate again */
    gs_tensor q = gs__formula_temp(target_distribution(x, t, eps, fn));
    gs_tensor diff = gs__formula_temp(gs_sub(gs__formula_temp(gs_softmax(xh, 1)), q));
    gs_tensor scale = reduction == GS_REDUCTION_MEAN
                          ? gs__formula_temp(gs_div_scalar(g, (double)rows))
                      : reduction == GS_REDUCTION_NONE ? gs__formula_temp(gs_unsqueeze(g, 1))
                                                       : g;
    grads[0] = gs__reduce_grad(n, 0, gs_mul(diff, scale));
    return;
  }
  if (gs_dtype_of(g) != x->dtype) /* the loss's gradient, in the logits' dtype */
    g = gs__formula_temp(gs_to_dtype(g, x->dtype));
  gs__tensor *gt = gs__lookup(g, fn), *dx;
  if (!gt)
    return;
  gs_tensor out = gs__tensor_new(x->dtype, x->shape, 2, fn, &dx);
  if (!out.id)
    return;
  const int64_t *td = (const int64_t *)gs__tensor_data(t);
  int64_t gs = reduction == GS_REDUCTION_NONE ? gt->strides[0] : 0;
  double scale = reduction == GS_REDUCTION_MEAN ? 1.0 / (double)rows : 1.0;
  if (x->dtype == GS_F32)
    ce_backward_f32((const float *)gs__tensor_data(x), x->strides[0], x->strides[1], td,
                    t->strides[0], rows, classes, eps, (const float *)gs__tensor_data(gt), gs,
                    scale, forward_exps_of(n, x), (float *)gs__tensor_data(dx));
  else
    ce_backward_f64((const double *)gs__tensor_data(x), x->strides[0], x->strides[1], td,
                    t->strides[0], rows, classes, eps, (const double *)gs__tensor_data(gt), gs,
                    scale, forward_exps_of(n, x), (double *)gs__tensor_data(dx));
  grads[0] = gs__reduce_grad(n, 0, out);
}
GS__BACKWARD_TWICE(CrossEntropyLossBackward, cross_entropy_backward);

bool gs__cross_entropy_fused(gs_tensor logits, gs_tensor targets, gs_reduction reduction,
                             double eps, const int64_t *ignore_index, gs_tensor *result) {
  const char *fn = "cross_entropy";
  gs__tensor *x = gs__lookup(logits, fn), *t = x ? gs__lookup(targets, fn) : NULL;
  if (!t || x->ndim != 2)
    return false;
  int64_t rows = x->shape[0], classes = x->shape[1];
  for (int64_t i = 0; ignore_index && i < rows; i++)
    if (target_at(t, i) == *ignore_index)
      return false; /* a row that counts 0: the composition weighs rows */
  int64_t shape[1] = {rows};
  gs__tensor *out;
  gs_tensor r = gs__tensor_new(x->dtype, shape, reduction == GS_REDUCTION_NONE ? 1 : 0, fn, &out);
  if (!r.id) {
    *result = r;
    return true;
  }
  const int64_t *td = (const int64_t *)gs__tensor_data(t);
  bool each = reduction == GS_REDUCTION_NONE;
  forward_exps *kept = forward_exps_new(x);
  double *kv = kept ? kept->values : NULL;
  double total = x->dtype == GS_F32
                     ? ce_forward_f32((const float *)gs__tensor_data(x), x->strides[0],
                                      x->strides[1], td, t->strides[0], rows, classes, eps,
                                      each ? (float *)gs__tensor_data(out) : NULL, kv)
                     : ce_forward_f64((const double *)gs__tensor_data(x), x->strides[0],
                                      x->strides[1], td, t->strides[0], rows, classes, eps,
                                      each ? (double *)gs__tensor_data(out) : NULL, kv);
  if (!each)
    gs__store_f64(gs__tensor_data(out), x->dtype,
                  reduction == GS_REDUCTION_MEAN ? total / (double)rows : total);
  gs__node *n = gs__record(&CrossEntropyLossBackward, out, 1, (const gs__tensor *[]){x}, 2);
  if (n) {
    gs__save(n, 0, x);
    gs__save(n, 1, t);
    n->reals[0] = eps;
    n->ints[0] = reduction;
    n->user = kept;
    n->free_user = free;
    kept = NULL;
  }
  free(kept);
  *result = r;
  return true;
}
