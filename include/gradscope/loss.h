/* gradscope/loss.h: loss functions, as torch.nn.functional computes them.
 *
 * Every loss is composed of differentiable ops (log_softmax, gather, logsumexp, ...), so its
 * result takes part in autograd like any other op's: backward reaches the floating inputs
 * that require grad. Each call validates its arguments before computing anything, reports
 * errors under the loss's name ("cross_entropy: ...") and returns GS_NO_TENSOR after one;
 * otherwise it leaves exactly one new handle (the result), its intermediates disposed.
 */
#pragma once

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How per-element losses become the result: their mean (a 0-dim tensor; over the N rows for
 * the class losses, over every element for mse and bce), their sum (0-dim), or none (the
 * per-element losses themselves: [N] for the class losses, the input's shape otherwise). */
typedef enum gs_reduction {
  GS_REDUCTION_MEAN = 0,
  GS_REDUCTION_SUM,
  GS_REDUCTION_NONE,
} gs_reduction;

/* F.cross_entropy with class indices: logits [N, C] (floating), targets [N] i64 class indices
 * in [0, C). label_smoothing in [0, 1] as PyTorch's: each row's loss is
 * (1 - e) * -log_softmax[target] + e * mean over classes of -log_softmax. */
GS_API gs_tensor gs_cross_entropy(gs_tensor logits, gs_tensor targets, gs_reduction reduction,
                                  double label_smoothing);
/* F.nll_loss: log_probs [N, C] (floating), targets [N] i64 in [0, C); each row's loss is
 * -log_probs[target]. */
GS_API gs_tensor gs_nll_loss(gs_tensor log_probs, gs_tensor targets, gs_reduction reduction);
/* ignore_index, as torch's: a target equal to it (any value, in range or not; torch's
 * default is -100) makes its row's loss 0 and the row gets no gradient; the mean is over the
 * other rows (nan when every row is ignored). label_smoothing's part is left out of those
 * rows too. With no row ignored, the result and graph are gs_cross_entropy's and
 * gs_nll_loss's. */
GS_API gs_tensor gs_cross_entropy_ignore(gs_tensor logits, gs_tensor targets,
                                         gs_reduction reduction, double label_smoothing,
                                         int64_t ignore_index);
GS_API gs_tensor gs_nll_loss_ignore(gs_tensor log_probs, gs_tensor targets, gs_reduction reduction,
                                    int64_t ignore_index);
/* weight= as torch's (GS_NO_TENSOR: none): a [C] tensor of the scores' dtype, each kept
 * row's loss times weight[target]; the mean divides by the sum of the kept rows' weights
 * (torch's weighted mean). With label smoothing, its part sums each class's term times that
 * class's weight. ignore_index as above (pass -100, torch's default, to ignore nothing in
 * range). The weight is a constant: it gets no gradient, as torch's. */
GS_API gs_tensor gs_cross_entropy_weighted(gs_tensor logits, gs_tensor targets, gs_tensor weight,
                                           gs_reduction reduction, double label_smoothing,
                                           int64_t ignore_index);
GS_API gs_tensor gs_nll_loss_weighted(gs_tensor log_probs, gs_tensor targets, gs_tensor weight,
                                      gs_reduction reduction, int64_t ignore_index);
/* F.mse_loss: (input - target)^2, input and target floating and of one shape (no
 * broadcasting). */
GS_API gs_tensor gs_mse_loss(gs_tensor input, gs_tensor target, gs_reduction reduction);
/* F.binary_cross_entropy_with_logits: max(x, 0) - x*y + log(1 + exp(-|x|)) for logits x and
 * targets y (floating, of one shape), computed stably (as logsumexp(0, x) - x*y, whose
 * gradient is exactly sigmoid(x) - y, also at x = 0). */
GS_API gs_tensor gs_binary_cross_entropy_with_logits(gs_tensor logits, gs_tensor targets,
                                                     gs_reduction reduction);

/* torch.nn.functional.ctc_loss(reduction='none'): each sample's negative log-likelihood of its
 * target over every alignment (blank labels between and around, repeats merged). log_probs
 * [T, N, C] (floating; log-softmax outputs), targets i64 1-D (the samples' targets one after
 * another), input_lengths and target_lengths i64 [N]. zero_infinity: an impossible alignment
 * gives 0 (and gradient 0) instead of inf. Differentiable in log_probs with torch 1.13's
 * gradient (log_softmax's normalisation folded in: exact through a log_softmax). */
GS_API gs_tensor gs_ctc_loss(gs_tensor log_probs, gs_tensor targets, gs_tensor input_lengths,
                             gs_tensor target_lengths, int64_t blank, bool zero_infinity);

#ifdef __cplusplus
}
#endif
