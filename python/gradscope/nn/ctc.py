"""F.ctc_loss and nn.CTCLoss as torch 1.13's: the engine's CTC op (engine/ops/ctc-loss.c) gives
each sample's negative log-likelihood and its gradient; this file takes torch's forms of the
arguments (targets padded [N, S] or concatenated 1-D, lengths as tensors or sequences, an
unbatched [T, C] input) and its reductions ('mean' divides each loss by its target length,
at least 1, then averages)."""
from gradscope import _gradscope as _c
Module = _c.nn.Module

_REDUCTIONS = ("none", "mean", "sum")


def _lengths(values, name):
    if isinstance(values, _c.Tensor):
        return values.reshape(-1).to(_c.int64)
    if isinstance(values, int):
        values = (values,)
    return _c.tensor(list(values), dtype=_c.int64)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """The connectionist temporal classification loss of log_probs ([T, N, C] or [T, C],
    log-softmax outputs) against targets ([N, S] padded or the targets one after another),
    as torch.nn.functional.ctc_loss."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if targets.dim() == 1 else targets
    il, tl = _lengths(input_lengths, "input_lengths"), _lengths(target_lengths, "target_lengths")
    n = log_probs.shape[1] if log_probs.dim() == 3 else 0
    if il.numel() != n or tl.numel() != n:
        raise RuntimeError(f"Expected input_lengths and target_lengths of size {n} (the batch), "
                           f"got {il.numel()} and {tl.numel()}")
    targets = targets.to(_c.int64)
    if targets.dim() == 2:
        # padded rows: each sample's first target_length labels, one after another
        widest = int(tl.max().item()) if n else 0
        if widest > targets.shape[1]:
            raise RuntimeError(f"Expected tensor to have size at least {widest} at dimension 1, "
                               f"but got size {targets.shape[1]} for argument #2 'targets' "
                               "(while checking arguments for ctc_loss_cpu)")
        targets = _c.cat([targets[b, :int(tl[b].item())] for b in range(n)]) if n else \
            targets.reshape(-1)
    losses = _c.nn.functional._ctc_loss(log_probs, targets, il, tl, int(blank),
                                         bool(zero_infinity))
    if reduction == "none":
        return losses.squeeze(0) if unbatched else losses
    if reduction == "sum":
        return losses.sum()
    return (losses / tl.clamp(min=1).to(losses.dtype)).mean()


class CTCLoss(Module):
    """F.ctc_loss as a module: CTCLoss(blank=0, reduction='mean', zero_infinity=False)."""

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__()
        self.blank, self.reduction, self.zero_infinity = blank, reduction, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                        self.reduction, self.zero_infinity)
