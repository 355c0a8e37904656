/* loss.c: cross_entropy, nll_loss, mse_loss and binary_cross_entropy_with_logits.
 *
 * nll_loss and mse_loss compute with the engine's ops with grad mode off and record one node
 * each (nll_loss's ignore_index as torch's: those rows count 0, the mean is over the rest), as
 * PyTorch does (NllLossBackward0, MseLossBackward0; cross_entropy is nll_loss over log_softmax, as
 * torch's), whose formulas are written with ops, so they differentiate again. The others are
 * composed of public differentiable ops.
 *
 * Every loss checks its arguments first (handles, dtypes, shapes, class indices, reduction,
 * label smoothing) and reports the first problem under its own name, before creating
 * anything. The composition then disposes each intermediate as soon as the next op has used
 * it (the graph keeps what backward needs), so a call leaves exactly one new handle.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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

/* g of a reduced loss over count elements, as each element's share: g / count for the mean,
 * g for the sum and for none (whose g has the elements' shape). */
static gs_tensor element_grad(gs_tensor g, gs_reduction reduction, int64_t count) {
  return reduction == GS_REDUCTION_MEAN ? gs__formula_temp(gs_div_scalar(g, (double)count)) : g;
}

/* d nll_loss(lp, t) = -g at [i, t[i]] of each row, 0 elsewhere (saved: the targets, with
 * ignore_index the kept rows' 0/1 weights; ints[0]: the reduction, ints[1]: the number of
 * kept rows the mean divides by, -1 without ignore_index) */
static void nll_loss_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  const gs__input_meta *m = &n->inputs[0];
  bool ignoring = n->ints[1] >= 0;
  /* every row ignored: the weights are all 0 and so is the gradient, as torch's (not 0/0) */
  gs_tensor share = element_grad(g, (gs_reduction)n->ints[0],
                                 ignoring ? (n->ints[1] > 0 ? n->ints[1] : 1) : m->shape[0]);
  gs_tensor column = gs__formula_temp(gs_unsqueeze(gs__saved(n, 0), 1)); /* [N, 1] */
  int64_t rows[2] = {m->shape[0], 1};
  gs_tensor neg = gs__formula_temp(gs_neg(share));
  gs_tensor spread = n->ints[0] == GS_REDUCTION_NONE /* g is [N]: one value per row */
                         ? gs__formula_temp(gs_unsqueeze(neg, 1))
                         : gs__formula_temp(gs_expand(neg, rows, 2));
  if (ignoring) /* the ignored rows get no gradient */
    spread = gs__formula_temp(gs_mul(spread, gs__formula_temp(gs_unsqueeze(gs__saved(n, 1), 1))));
  gs_tensor zeros = gs__formula_temp(gs_zeros(gs_dtype_of(g), m->shape, m->ndim));
  grads[0] = gs__reduce_grad(n, 0, gs_scatter_add(zeros, 1, column, spread));
}
GS__BACKWARD_TWICE(NllLossBackward, nll_loss_backward);

/* The rows whose target is not ignore_index: *safe gets the targets with ignored ones
 * replaced by class 0 (so gather reads a valid column), *weights 1 for a kept row and 0 for
 * an ignored one (in dtype); returns how many are kept, -1 when none is ignored (then
 * nothing is made), -2 after an error. */
static int64_t kept_rows(gs_tensor targets, int64_t ignore_index, gs_dtype dtype, gs_tensor *safe,
                         gs_tensor *weights) {
  int64_t n = gs_numel(targets), kept = 0;
  gs_tensor t = gs_contiguous(targets);
  const int64_t *data = (const int64_t *)gs_data(t);
  for (int64_t i = 0; data && i < n; i++)
    kept += data[i] != ignore_index;
  if (!data || kept == n) {
    drop(t);
    return -1;
  }
  int64_t *s = malloc((size_t)n * sizeof *s);
  double *w = malloc((size_t)n * sizeof *w);
  if (!s || !w) {
    free(s);
    free(w);
    drop(t);
    gs__error(GS_ERR_OUT_OF_MEMORY, "nll_loss",
              "out of memory for the ignore_index mask of %lld rows", (long long)n);
    return -2;
  }
  for (int64_t i = 0; i < n; i++) {
    bool keep = data[i] != ignore_index;
    s[i] = keep ? data[i] : 0;
    w[i] = keep ? 1.0 : 0.0;
  }
  drop(t);
  *safe = gs_from_data(GS_I64, &n, 1, s);
  gs_tensor w64 = gs_from_data(GS_F64, &n, 1, w);
  free(s);
  free(w);
  *weights = dtype == GS_F64 ? w64 : gs_to_dtype(w64, dtype);
  if (dtype != GS_F64)
    drop(w64);
  return kept;
}

/* nll_loss after its checks: the composition with grad mode off, then its node. With
 * ignore_index (non-NULL), rows whose target equals it count 0 and the mean is over the
 * others, as torch's (0/0: nan when every row is ignored). */
static gs_tensor nll_loss_checked(gs_tensor log_probs, gs_tensor targets, gs_reduction reduction,
                                  const int64_t *ignore_index, const char *fn) {
  gs_tensor safe = GS_NO_TENSOR, weights = GS_NO_TENSOR;
  int64_t kept = ignore_index
                     ? kept_rows(targets, *ignore_index, gs_dtype_of(log_probs), &safe, &weights)
                     : -1;
  if (kept == -2)
    return GS_NO_TENSOR;
  gs_no_grad_begin();
  gs_tensor r;
  if (kept < 0) {
    r = reduce(picked_negated(log_probs, targets), reduction);
  } else {
    gs_tensor picked = picked_negated(log_probs, safe);
    gs_tensor losses = gs_mul(picked, weights);
    drop(picked);
    if (reduction == GS_REDUCTION_MEAN) {
      gs_tensor total = gs_sum(losses, NULL, 0, false);
      r = gs_div_scalar(total, (double)kept);
      drop(total);
      drop(losses);
    } else {
      r = reduce(losses, reduction);
    }
  }
  gs_no_grad_end();
  gs__tensor *lp = r.id ? gs__lookup(log_probs, fn) : NULL;
  gs__node *n = lp ? gs__record_result(&NllLossBackward, r, 1, (const gs__tensor *[]){lp},
                                       kept < 0 ? 1 : 2, fn)
                   : NULL;
  if (n) {
    gs__save(n, 0, gs__lookup(kept < 0 ? targets : safe, fn));
    if (kept >= 0)
      gs__save(n, 1, gs__lookup(weights, fn));
    n->ints[0] = reduction;
    n->ints[1] = kept;
  }
  drop(safe);
  drop(weights);
  return r;
}

static gs_tensor nll_loss_impl(gs_tensor log_probs, gs_tensor targets, gs_reduction reduction,
                               const int64_t *ignore_index) {
  const char *fn = "nll_loss";
  if (!check_reduction(reduction, fn) ||
      !check_class_inputs(log_probs, targets, "log_probs", ignore_index, fn))
    return GS_NO_TENSOR;
  return nll_loss_checked(log_probs, targets, reduction, ignore_index, fn);
}

gs_tensor gs_nll_loss(gs_tensor log_probs, gs_tensor targets, gs_reduction reduction) {
  return nll_loss_impl(log_probs, targets, reduction, NULL);
}

gs_tensor gs_nll_loss_ignore(gs_tensor log_probs, gs_tensor targets, gs_reduction reduction,
                             int64_t ignore_index) {
  return nll_loss_impl(log_probs, targets, reduction, &ignore_index);
}

static gs_tensor cross_entropy_impl(gs_tensor logits, gs_tensor targets, gs_reduction reduction,
                                    double label_smoothing, const int64_t *ignore_index) {
  const char *fn = "cross_entropy";
  if (!check_reduction(reduction, fn))
    return GS_NO_TENSOR;
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected label_smoothing between 0.0 and 1.0, got %g",
              label_smoothing);
    return GS_NO_TENSOR;
  }
  if (!check_class_inputs(logits, targets, "logits", ignore_index, fn))
    return GS_NO_TENSOR;
  gs_tensor lsm = gs_log_softmax(logits, 1); /* [N, C] */
  if (label_smoothing == 0.0) { /* torch's graph: NllLossBackward0 over LogSoftmaxBackward0 */
    gs_tensor loss = nll_loss_checked(lsm, targets, reduction, ignore_index, fn);
    drop(lsm);
    return loss;
  }
  /* PyTorch: (1 - e) * nll + e * smooth, smooth = -sum_c lsm / C (the mean over classes);
   * with ignore_index both are 0 on the ignored rows and the mean is over the others. */
  gs_tensor nll = nll_loss_checked(lsm, targets, GS_REDUCTION_NONE, ignore_index, fn); /* [N] */
  gs_tensor mean_c = gs_mean(lsm, (int[]){1}, 1, false);                               /* [N] */
  gs_tensor smooth = gs_mul_scalar(mean_c, -label_smoothing);
  drop(mean_c);
  gs_tensor safe = GS_NO_TENSOR, weights = GS_NO_TENSOR;
  int64_t kept =
      ignore_index ? kept_rows(targets, *ignore_index, gs_dtype_of(logits), &safe, &weights) : -1;
  if (kept == -2) {
    drop(nll);
    drop(smooth);
    drop(lsm);
    return GS_NO_TENSOR;
  }
  if (kept >= 0) {
    gs_tensor masked = gs_mul(smooth, weights);
    drop(smooth);
    smooth = masked;
  }
  gs_tensor hard = gs_mul_scalar(nll, 1.0 - label_smoothing);
  drop(nll);
  nll = gs_add(hard, smooth);
  drop(hard);
  drop(smooth);
  drop(lsm);
  drop(safe);
  drop(weights);
  if (kept >= 0 && reduction == GS_REDUCTION_MEAN) {
    gs_tensor total = gs_sum(nll, NULL, 0, false);
    drop(nll);
    /* every row ignored: nan, with zero gradients (torch's), where 0/0 would give nan ones */
    gs_tensor r = kept > 0 ? gs_div_scalar(total, (double)kept) : gs_add_scalar(total, NAN);
    drop(total);
    return r;
  }
  return reduce(nll, reduction);
}

gs_tensor gs_cross_entropy(gs_tensor logits, gs_tensor targets, gs_reduction reduction,
                           double label_smoothing) {
  return cross_entropy_impl(logits, targets, reduction, label_smoothing, NULL);
}

gs_tensor gs_cross_entropy_ignore(gs_tensor logits, gs_tensor targets, gs_reduction reduction,
                                  double label_smoothing, int64_t ignore_index) {
  return cross_entropy_impl(logits, targets, reduction, label_smoothing, &ignore_index);
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
