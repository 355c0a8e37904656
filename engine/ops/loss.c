/* loss.c: cross_entropy, nll_loss, mse_loss and binary_cross_entropy_with_logits.
 *
 * nll_loss and mse_loss compute with the engine's ops with grad mode off and record one node
 * each, as PyTorch does (NllLossBackward0, MseLossBackward0; cross_entropy is nll_loss over
 * log_softmax, as torch's), whose formulas are written with ops, so they differentiate again.
 * The others are composed of public differentiable ops.
 *
 * Every loss checks its arguments first (handles, dtypes, shapes, class indices, reduction,
 * label smoothing) and reports the first problem under its own name, before creating
 * anything. The composition then disposes each intermediate as soon as the next op has used
 * it (the graph keeps what backward needs), so a call leaves exactly one new handle.
 */
#include <math.h>
#include <stdio.h>

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
                               const char *fn) {
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
    if (v < 0 || v >= classes) {
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

/* d nll_loss(lp, t) = -g at [i, t[i]] of each row, 0 elsewhere (saved: the targets; ints[0]:
 * the reduction) */
static void nll_loss_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  const gs__input_meta *m = &n->inputs[0];
  gs_tensor share = element_grad(g, (gs_reduction)n->ints[0], m->shape[0]);
  gs_tensor column = gs__formula_temp(gs_unsqueeze(gs__saved(n, 0), 1)); /* [N, 1] */
  int64_t rows[2] = {m->shape[0], 1};
  gs_tensor neg = gs__formula_temp(gs_neg(share));
  gs_tensor spread = n->ints[0] == GS_REDUCTION_NONE /* g is [N]: one value per row */
                         ? gs__formula_temp(gs_unsqueeze(neg, 1))
                         : gs__formula_temp(gs_expand(neg, rows, 2));
  gs_tensor zeros = gs__formula_temp(gs_zeros(gs_dtype_of(g), m->shape, m->ndim));
  grads[0] = gs__reduce_grad(n, 0, gs_scatter_add(zeros, 1, column, spread));
}
GS__BACKWARD_TWICE(NllLossBackward, nll_loss_backward);

/* nll_loss after its checks: the composition with grad mode off, then its node. */
static gs_tensor nll_loss_checked(gs_tensor log_probs, gs_tensor targets, gs_reduction reduction,
                                  const char *fn) {
  gs_no_grad_begin();
  gs_tensor r = reduce(picked_negated(log_probs, targets), reduction);
  gs_no_grad_end();
  gs__tensor *lp = r.id ? gs__lookup(log_probs, fn) : NULL;
  gs__node *n =
      lp ? gs__record_result(&NllLossBackward, r, 1, (const gs__tensor *[]){lp}, 1, fn) : NULL;
  if (n) {
    gs__save(n, 0, gs__lookup(targets, fn));
    n->ints[0] = reduction;
  }
  return r;
}

gs_tensor gs_nll_loss(gs_tensor log_probs, gs_tensor targets, gs_reduction reduction) {
  const char *fn = "nll_loss";
  if (!check_reduction(reduction, fn) || !check_class_inputs(log_probs, targets, "log_probs", fn))
    return GS_NO_TENSOR;
  return nll_loss_checked(log_probs, targets, reduction, fn);
}

gs_tensor gs_cross_entropy(gs_tensor logits, gs_tensor targets, gs_reduction reduction,
                           double label_smoothing) {
  const char *fn = "cross_entropy";
  if (!check_reduction(reduction, fn))
    return GS_NO_TENSOR;
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected label_smoothing between 0.0 and 1.0, got %g",
              label_smoothing);
    return GS_NO_TENSOR;
  }
  if (!check_class_inputs(logits, targets, "logits", fn))
    return GS_NO_TENSOR;
  gs_tensor lsm = gs_log_softmax(logits, 1); /* [N, C] */
  if (label_smoothing == 0.0) { /* torch's graph: NllLossBackward0 over LogSoftmaxBackward0 */
    gs_tensor loss = nll_loss_checked(lsm, targets, reduction, fn);
    drop(lsm);
    return loss;
  }
  /* PyTorch: (1 - e) * nll + e * smooth, smooth = -sum_c lsm / C (the mean over classes). */
  gs_tensor nll = nll_loss_checked(lsm, targets, GS_REDUCTION_NONE, fn); /* [N] */
  gs_tensor mean_c = gs_mean(lsm, (int[]){1}, 1, false);                 /* [N] */
  gs_tensor smooth = gs_mul_scalar(mean_c, -label_smoothing);
  drop(mean_c);
  gs_tensor hard = gs_mul_scalar(nll, 1.0 - label_smoothing);
  drop(nll);
  nll = gs_add(hard, smooth);
  drop(hard);
  drop(smooth);
  drop(lsm);
  return reduce(nll, reduction);
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
