/* loss.c: cross_entropy, nll_loss, mse_loss and binary_cross_entropy_with_logits.
 *
 * nll_loss and mse_loss compute with the engine's ops with grad mode off and record one node
 * each (nll_loss's ignore_index as torch's: those rows count 0, the mean is over the rest), as
 * PyTorch does (NllLossBackward0, MseLossBackward0; cross_entropy is nll_loss over log_softmax, as
 * torch's), whose formulas are written with ops, so they differentiate again. The others are
 * composed of public differentiable ops, except cross_entropy with label smoothing and
 * unweighted rows: one pass and one node (cross-entropy.c).
 *
 * A class weight (torch's weight=) scales each row's nll by weight[target] and the mean
 * divides by the sum of those weights (torch's total_weight); with label smoothing the
 * smoothing term weighs each class by its weight, as torch's.
 *
 * Every loss checks its arguments first (handles, dtypes, shapes, class indices, reduction,
 * label smoothing) and reports the first problem under its own name, before creating
 * anything. The composition then disposes each intermediate as soon as the next op has used
 * it (the graph keeps what backward needs), so a call leaves exactly one new handle.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cross-entropy.h"
#include "gradscope/gradscope.h"
#include "ops-impl.h"

/* Disposes a handle unless it is empty (an op that failed after its error handler returned). */
static void drop(gs_tensor t) {
  if (t.id != 0)
    gs_dispose(t);
}

/* ---- validation ---------------------------------------------------------------------- */

static bool check_reduction(gs_reduction reduction, const char *fn) {
  if (reduction != GS_REDUCTION_MEAN && reduction != GS_REDUCTION_SUM &&
      reduction != GS_REDUCTION_NONE) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "unknown reduction %d (expected GS_REDUCTION_MEAN, GS_REDUCTION_SUM or "
              "GS_REDUCTION_NONE)",
              (int)reduction);
    return false;
  }
  return true;
}

static bool check_floating(const gs__tensor *t, const char *what, const char *fn) {
  if (!gs_dtype_is_floating(t->dtype)) {
    gs__error(GS_ERR_DTYPE, fn, "expected floating %s (f32 or f64), got %s", what,
              gs_dtype_name(t->dtype));
    return false;
  }
  return true;
}

static bool same_shape(const gs__tensor *a, const gs__tensor *b) {
  if (a->ndim != b->ndim)
    return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d])
      return false;
  return true;
}

/* Checks the pair (scores [N, C] floating, targets [N] i64 in [0, C)) of the class losses;
 * what names the scores ("logits", "log_probs"). */
static bool check_class_inputs(gs_tensor scores_h, gs_tensor targets_h, const char *what,
                               const int64_t *ignore_index, const char *fn) {
  gs__tensor *scores = gs__lookup(scores_h, fn);
  if (!scores)
    return false;
  gs__tensor *targets = gs__lookup(targets_h, fn);
  if (!targets)
    return false;
  char got[GS__SHAPE_STR];
  if (scores->ndim != 2) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected %s of shape [N, C] (a row of class scores per "
              "sample), got %s",
              what, gs__shape_str(got, scores->shape, scores->ndim));
    return false;
  }
  if (!check_floating(scores, what, fn))
    return false;
  int64_t n = scores->shape[0], classes = scores->shape[1];
  if (targets->ndim != 1 || targets->shape[0] != n) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected targets of shape [%lld] (one class index per row), got %s", (long long)n,
              gs__shape_str(got, targets->shape, targets->ndim));
    return false;
  }
  if (targets->dtype != GS_I64) {
    gs__error(GS_ERR_DTYPE, fn, "expected i64 targets (class indices), got %s",
              gs_dtype_name(targets->dtype));
    return false;
  }
  const int64_t *data = (const int64_t *)gs__tensor_data(targets);
  for (int64_t i = 0; i < n; i++) {
    int64_t v = data[i * targets->strides[0]];
    if ((v < 0 || v >= classes) && !(ignore_index && v == *ignore_index)) {
      gs__error(GS_ERR_INDEX, fn,
                "target %lld is out of range for %lld classes (row %lld; expected 0 to %lld)",
                (long long)v, (long long)classes, (long long)i, (long long)(classes - 1));
      return false;
    }
  }
  return true;
}

/* Checks two floating tensors of one shape (mse, bce). */
static bool check_pair(gs_tensor a_h, gs_tensor b_h, const char *a_what, const char *b_what,
                       const char *fn) {
  gs__tensor *a = gs__lookup(a_h, fn);
  if (!a)
    return false;
  gs__tensor *b = gs__lookup(b_h, fn);
  if (!b)
    return false;
  if (!check_floating(a, a_what, fn) || !check_floating(b, b_what, fn))
    return false;
  if (!same_shape(a, b)) {
    char sa[GS__SHAPE_STR], sb[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn, "expected %s and %s of the same shape, got %s and %s", a_what,
              b_what, gs__shape_str(sa, a->shape, a->ndim), gs__shape_str(sb, b->shape, b->ndim));
    return false;
  }
  return true;
}

/* ---- composition ----------------------------------------------------------------------- */

/* Reduces per-element losses as asked; takes ownership of losses. */
static gs_tensor reduce(gs_tensor losses, gs_reduction reduction) {
  if (reduction == GS_REDUCTION_NONE || losses.id == 0)
    return losses;
  gs_tensor r = reduction == GS_REDUCTION_MEAN ? gs_mean(losses, NULL, 0, false)
                                               : gs_sum(losses, NULL, 0, false);
  drop(losses);
  return r;
}

/* -scores[i, targets[i]] for every row: [N]. */
static gs_tensor picked_negated(gs_tensor scores, gs_tensor targets) {
  gs_tensor index = gs_unsqueeze(targets, 1);     /* [N, 1] */
  gs_tensor picked = gs_gather(scores, 1, index); /* [N, 1] */
  drop(index);
  gs_tensor flat = gs_squeeze(picked, 1); /* [N] */
  drop(picked);
  gs_tensor neg = gs_neg(flat);
  drop(flat);
  return neg;
}

/* d nll_loss(lp, t) = -g at [i, t[i]] of each row, 0 elsewhere (saved: the targets, and with
 * a class weight or ignore_index each row's weight (0 on ignored rows); ints[0]: the
 * reduction, ints[1]: 1 when rows are weighted, -1 when not; reals[0]: what the mean divides
 * by when weighted, the sum of the row weights as torch's total_weight) */
static void nll_loss_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  const gs__input_meta *m = &n->inputs[0];
  bool weighted = n->ints[1] >= 0;
  gs_tensor share = g;
  if (n->ints[0] == GS_REDUCTION_MEAN) {
    /* every row ignored: the weights are all 0 and so is the gradient, as torch's (not 0/0) */
    double total = weighted ? (n->reals[0] != 0.0 ? n->reals[0] : 1.0) : (double)m->shape[0];
    share = gs__formula_temp(gs_div_scalar(g, total));
  }
  gs_tensor column = gs__formula_temp(gs_unsqueeze(gs__saved(n, 0), 1)); /* [N, 1] */
  int64_t rows[2] = {m->shape[0], 1};
  gs_tensor neg = gs__formula_temp(gs_neg(share));
  gs_tensor spread = n->ints[0] == GS_REDUCTION_NONE /* g is [N]: one value per row */
                         ? gs__formula_temp(gs_unsqueeze(neg, 1))
                         : gs__formula_temp(gs_expand(neg, rows, 2));
  if (weighted) /* each row's gradient scaled by its weight, 0 for an ignored row */
    spread = gs__formula_temp(gs_mul(spread, gs__formula_temp(gs_unsqueeze(gs__saved(n, 1), 1))));
  gs_tensor zeros = gs__formula_temp(gs_zeros(gs_dtype_of(g), m->shape, m->ndim));
  grads[0] = gs__reduce_grad(n, 0, gs_scatter_add(zeros, 1, column, spread));
}
GS__BACKWARD_TWICE(NllLossBackward, nll_loss_backward);

/* How the rows of a class loss count, as torch's: a row whose target is ignore_index counts
 * 0 (keep), a kept row counts its class's weight (weights: weight[t], or keep without a class
 * weight); safe is the targets with ignored ones replaced by class 0, so gather reads a valid
 * column; total is the sum of weights (torch's total_weight, what the mean divides by). */
typedef struct row_weights {
  bool used; /* false: no class weight and no row ignored (nothing made, plain rows) */
  gs_tensor safe, keep, weights;
  double total;
} row_weights;

static void row_weights_drop(row_weights *rw) {
  drop(rw->safe);
  drop(rw->keep);
  if (rw->weights.id != rw->keep.id)
    drop(rw->weights);
  *rw = (row_weights){0};
}

/* C of scores [N, C] (checked). */
static int64_t classes_of(gs_tensor scores) {
  int64_t shape[GS_MAX_DIMS] = {0, 0};
  gs_shape(scores, shape);
  return shape[1];
}

/* Reads the f64 values of a 1-D tensor into a new array (NULL after an error). */
static double *values_f64(gs_tensor t, int64_t n, const char *fn) {
  gs_tensor c = gs_to_dtype(t, GS_F64);
  gs_tensor cc = c.id ? gs_contiguous(c) : GS_NO_TENSOR;
  const double *data = cc.id ? (const double *)gs_data(cc) : NULL;
  double *out = data ? malloc((size_t)(n > 0 ? n : 1) * sizeof *out) : NULL;
  if (data && !out)
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory for %lld class weights", (long long)n);
  for (int64_t i = 0; out && i < n; i++)
    out[i] = data[i];
  drop(cc);
  drop(c);
  return out;
}

/* Fills *rw for targets (checked: in range or ignore_index) and an optional class weight
 * (checked: [C]); false after an error. */
static bool row_weights_of(gs_tensor targets, gs_tensor weight, int64_t classes,
                           const int64_t *ignore_index, gs_dtype dtype, const char *fn,
                           row_weights *rw) {
  *rw = (row_weights){0};
  int64_t n = gs_numel(targets), kept = 0;
  gs_tensor t = gs_contiguous(targets);
  const int64_t *data = t.id ? (const int64_t *)gs_data(t) : NULL;
  if (!data) {
    drop(t);
    return false;
  }
  for (int64_t i = 0; i < n; i++)
    kept += !(ignore_index && data[i] == *ignore_index);
  if (weight.id == 0 && kept == n) {
    drop(t);
    return true;
  }
  double *class_w = weight.id ? values_f64(weight, classes, fn) : NULL;
  int64_t *s = malloc((size_t)(n > 0 ? n : 1) * sizeof *s);
  double *k = malloc((size_t)(n > 0 ? n : 1) * sizeof *k);
  double *w = malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
  bool ok = s && k && w && (weight.id == 0 || class_w);
  if (!ok && (weight.id == 0 || class_w))
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory for the row weights of %lld rows",
              (long long)n);
  for (int64_t i = 0; ok && i < n; i++) {
    bool keep = !(ignore_index && data[i] == *ignore_index);
    s[i] = keep ? data[i] : 0;
    k[i] = keep ? 1.0 : 0.0;
    w[i] = keep ? (class_w ? class_w[data[i]] : 1.0) : 0.0;
    rw->total += w[i];
  }
  drop(t);
  if (ok) {
    rw->used = true;
    rw->safe = gs_from_data(GS_I64, &n, 1, s);
    gs_tensor k64 = gs_from_data(GS_F64, &n, 1, k);
    rw->keep = dtype == GS_F64 ? k64 : gs_to_dtype(k64, dtype);
    if (dtype != GS_F64)
      drop(k64);
    if (class_w) {
      gs_tensor w64 = gs_from_data(GS_F64, &n, 1, w);
      rw->weights = dtype == GS_F64 ? w64 : gs_to_dtype(w64, dtype);
      if (dtype != GS_F64)
        drop(w64);
    } else {
      rw->weights = rw->keep;
    }
  }
  free(class_w);
  free(s);
  free(k);
  free(w);
  return ok;
}

/* nll_loss after its checks: the composition with grad mode off, then its node. Rows count
 * as rw says: weighted, and the mean divided by the sum of their weights, as torch's (0/0:
 * nan when every row is ignored). */
static gs_tensor nll_loss_checked(gs_tensor log_probs, gs_tensor targets, gs_reduction reduction,
                                  const row_weights *rw, const char *fn) {
  gs_no_grad_begin();
  gs_tensor r;
  if (!rw->used) {
    r = reduce(picked_negated(log_probs, targets), reduction);
  } else {
    gs_tensor picked = picked_negated(log_probs, rw->safe);
    gs_tensor losses = gs_mul(picked, rw->weights);
    drop(picked);
    if (reduction == GS_REDUCTION_MEAN) {
      gs_tensor total = gs_sum(losses, NULL, 0, false);
      r = gs_div_scalar(total, rw->total);
      drop(total);
      drop(losses);
    } else {
      r = reduce(losses, reduction);
    }
  }
  gs_no_grad_end();
  gs__tensor *lp = r.id ? gs__lookup(log_probs, fn) : NULL;
  gs__node *n = lp ? gs__record_result(&NllLossBackward, r, 1, (const gs__tensor *[]){lp},
                                       rw->used ? 2 : 1, fn)
                   : NULL;
  if (n) {
    gs__save(n, 0, gs__lookup(rw->used ? rw->safe : targets, fn));
    if (rw->used) /* constants: no history, so double backward may read them */
      gs__save_constant(n, 1, gs__lookup(rw->weights, fn));
    n->ints[0] = reduction;
    n->ints[1] = rw->used ? 1 : -1;
    n->reals[0] = rw->total;
  }
  return r;
}

/* Checks an optional class weight: none, or a floating [C] of the scores' dtype. */
static bool check_class_weight(gs_tensor weight_h, gs_tensor scores_h, const char *fn) {
  if (weight_h.id == 0)
    return true;
  gs__tensor *weight = gs__lookup(weight_h, fn);
  gs__tensor *scores = weight ? gs__lookup(scores_h, fn) : NULL;
  if (!scores)
    return false;
  char got[GS__SHAPE_STR];
  if (weight->ndim != 1 || weight->shape[0] != scores->shape[1]) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected a class weight of shape [%lld] (one weight per class), got %s",
              (long long)scores->shape[1], gs__shape_str(got, weight->shape, weight->ndim));
    return false;
  }
  if (weight->dtype != scores->dtype) {
    gs__error(GS_ERR_DTYPE, fn, "expected a class weight of the scores' dtype %s, got %s",
              gs_dtype_name(scores->dtype), gs_dtype_name(weight->dtype));
    return false;
  }
  return true;
}

static gs_tensor nll_loss_impl(gs_tensor log_probs, gs_tensor targets, gs_tensor weight,
                               gs_reduction reduction, const int64_t *ignore_index) {
  const char *fn = "nll_loss";
  row_weights rw;
  if (!check_reduction(reduction, fn) ||
      !check_class_inputs(log_probs, targets, "log_probs", ignore_index, fn) ||
      !check_class_weight(weight, log_probs, fn) ||
      !row_weights_of(targets, weight, classes_of(log_probs), ignore_index, gs_dtype_of(log_probs),
                      fn, &rw))
    return GS_NO_TENSOR;
  gs_tensor r = nll_loss_checked(log_probs, targets, reduction, &rw, fn);
  row_weights_drop(&rw);
  return r;
}

gs_tensor gs_nll_loss(gs_tensor log_probs, gs_tensor targets, gs_reduction reduction) {
  return nll_loss_impl(log_probs, targets, GS_NO_TENSOR, reduction, NULL);
}

gs_tensor gs_nll_loss_ignore(gs_tensor log_probs, gs_tensor targets, gs_reduction reduction,
                             int64_t ignore_index) {
  return nll_loss_impl(log_probs, targets, GS_NO_TENSOR, reduction, &ignore_index);
}

gs_tensor gs_nll_loss_weighted(gs_tensor log_probs, gs_tensor targets, gs_tensor weight,
                               gs_reduction reduction, int64_t ignore_index) {
  return nll_loss_impl(log_probs, targets, weight, reduction, &ignore_index);
}

/* label smoothing's part of each row, as PyTorch's: -(e / C) * sum over classes of
 * log_softmax (each class's term times its weight when there is one), 0 on ignored rows. */
static gs_tensor smoothing_part(gs_tensor lsm, gs_tensor weight, const row_weights *rw,
                                double label_smoothing) {
  gs_tensor terms = weight.id ? gs_mul(lsm, weight) : lsm; /* [N, C] */
  gs_tensor sum_c = gs_sum(terms, (int[]){1}, 1, false);   /* [N] */
  if (weight.id)
    drop(terms);
  gs_tensor smooth = gs_mul_scalar(sum_c, -label_smoothing / (double)classes_of(lsm));
  drop(sum_c);
  if (rw->used) {
    gs_tensor masked = gs_mul(smooth, rw->keep);
    drop(smooth);
    smooth = masked;
  }
  return smooth;
}

static gs_tensor cross_entropy_impl(gs_tensor logits, gs_tensor targets, gs_tensor weight,
                                    gs_reduction reduction, double label_smoothing,
                                    const int64_t *ignore_index) {
  const char *fn = "cross_entropy";
  if (!check_reduction(reduction, fn))
    return GS_NO_TENSOR;
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected label_smoothing between 0.0 and 1.0, got %g",
              label_smoothing);
    return GS_NO_TENSOR;
  }
  if (!check_class_inputs(logits, targets, "logits", ignore_index, fn) ||
      !check_class_weight(weight, logits, fn))
    return GS_NO_TENSOR;
  gs_tensor fused;
  if (label_smoothing > 0.0 && weight.id == 0 &&
      gs__cross_entropy_fused(logits, targets, reduction, label_smoothing, ignore_index, &fused))
    return fused; /* one pass and one node (cross-entropy.c) */
  row_weights rw;
  if (!row_weights_of(targets, weight, classes_of(logits), ignore_index, gs_dtype_of(logits), fn,
                      &rw))
    return GS_NO_TENSOR;
  gs_tensor lsm = gs_log_softmax(logits, 1); /* [N, C] */
  if (label_smoothing == 0.0) { /* torch's graph: NllLossBackward0 over LogSoftmaxBackward0 */
    gs_tensor loss = nll_loss_checked(lsm, targets, reduction, &rw, fn);
    drop(lsm);
    row_weights_drop(&rw);
    return loss;
  }
  /* PyTorch: (1 - e) * nll + smooth per row; with weights or ignore_index the mean of both
   * is their sum over the rows' total weight. */
  gs_tensor nll = nll_loss_checked(lsm, targets, GS_REDUCTION_NONE, &rw, fn); /* [N] */
  gs_tensor smooth = smoothing_part(lsm, weight, &rw, label_smoothing);
  drop(lsm);
  gs_tensor hard = gs_mul_scalar(nll, 1.0 - label_smoothing);
  drop(nll);
  gs_tensor rows = gs_add(hard, smooth);
  drop(hard);
  drop(smooth);
  bool used = rw.used;
  double total = rw.total;
  row_weights_drop(&rw);
  if (used && reduction == GS_REDUCTION_MEAN) {
    gs_tensor sum = gs_sum(rows, NULL, 0, false);
    drop(rows);
    /* every row ignored: nan, with zero gradients (torch's), where 0/0 would give nan ones */
    gs_tensor r = total != 0.0 ? gs_div_scalar(sum, total) : gs_add_scalar(sum, NAN);
    drop(sum);
    return r;
  }
  return reduce(rows, reduction);
}

gs_tensor gs_cross_entropy(gs_tensor logits, gs_tensor targets, gs_reduction reduction,
                           double label_smoothing) {
  return cross_entropy_impl(logits, targets, GS_NO_TENSOR, reduction, label_smoothing, NULL);
}

gs_tensor gs_cross_entropy_ignore(gs_tensor logits, gs_tensor targets, gs_reduction reduction,
                                  double label_smoothing, int64_t ignore_index) {
  return cross_entropy_impl(logits, targets, GS_NO_TENSOR, reduction, label_smoothing,
                            &ignore_index);
}

gs_tensor gs_cross_entropy_weighted(gs_tensor logits, gs_tensor targets, gs_tensor weight,
                                    gs_reduction reduction, double label_smoothing,
                                    int64_t ignore_index) {
  return cross_entropy_impl(logits, targets, weight, reduction, label_smoothing, &ignore_index);
}

/* d mse_loss(x, y) = 2 (x - y) g (2 / numel for the mean) for x, its negation for y (saved:
 * x, y; ints[0]: the reduction), as PyTorch's mse_loss_backward */
static void mse_loss_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  const gs__input_meta *m = &n->inputs[0];
  int64_t count = 1;
  for (int d = 0; d < m->ndim; d++)
    count *= m->shape[d];
  double scale = n->ints[0] == GS_REDUCTION_MEAN ? 2.0 / (double)count : 2.0;
  gs_tensor diff = gs__formula_temp(gs_sub(gs__saved(n, 0), gs__saved(n, 1)));
  gs_tensor dx = gs_mul(gs__formula_temp(gs_mul_scalar(diff, scale)), g);
  if (gs__needs_grad(n, 1))
    grads[1] = gs__reduce_grad(n, 1, gs_neg(dx));
  if (gs__needs_grad(n, 0))
    grads[0] = gs__reduce_grad(n, 0, dx);
  else
    gs_dispose(dx);
}
GS__BACKWARD_TWICE(MseLossBackward, mse_loss_backward);

gs_tensor gs_mse_loss(gs_tensor input, gs_tensor target, gs_reduction reduction) {
  const char *fn = "mse_loss";
  if (!check_reduction(reduction, fn) || !check_pair(input, target, "input", "target", fn))
    return GS_NO_TENSOR;
  gs_no_grad_begin();
  gs_tensor diff = gs_sub(input, target);
  gs_tensor sq = gs_mul(diff, diff);
  drop(diff);
  gs_tensor r = reduce(sq, reduction);
  gs_no_grad_end();
  gs__tensor *a = r.id ? gs__lookup(input, fn) : NULL, *b = a ? gs__lookup(target, fn) : NULL;
  gs__node *n =
      b ? gs__record_result(&MseLossBackward, r, 2, (const gs__tensor *[]){a, b}, 2, fn) : NULL;
  if (n) {
    gs__save(n, 0, a);
    gs__save(n, 1, b);
    n->ints[0] = reduction;
  }
  return r;
}

gs_tensor gs_binary_cross_entropy_with_logits(gs_tensor logits, gs_tensor targets,
                                              gs_reduction reduction) {
  const char *fn = "binary_cross_entropy_with_logits";
  if (!check_reduction(reduction, fn) || !check_pair(logits, targets, "logits", "targets", fn))
    return GS_NO_TENSOR;
  /* max(x, 0) + log(1 + exp(-|x|)) is softplus(x) = logsumexp(0, x), which logsumexp
   * computes the same stable way (max + log of the shifted sum) and differentiates to
   * sigmoid(x) exactly, where relu and abs would each see a kink at x = 0. */
  gs_tensor zeros = gs_zeros_like(logits);
  int nd = gs_ndim(logits);
  gs_tensor pair = gs_stack((gs_tensor[]){zeros, logits}, 2, nd); /* [..., 2] */
  drop(zeros);
  gs_tensor softplus = gs_logsumexp(pair, (int[]){nd}, 1, false);
  drop(pair);
  gs_tensor xy = gs_mul(logits, targets);
  gs_tensor losses = gs_sub(softplus, xy);
  drop(softplus);
  drop(xy);
  return reduce(losses, reduction);
}
