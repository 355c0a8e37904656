"""torch.nn's likelihood and multi-class margin losses as compositions of the engine's ops
(gradients are the ops'), and as modules with torch's constructor arguments:
poisson_nll_loss, gaussian_nll_loss, multilabel_soft_margin_loss and multi_margin_loss (F.*),
PoissonNLLLoss, GaussianNLLLoss, MultiLabelSoftMarginLoss and MultiMarginLoss. print(model)
shows them as torch does: with no arguments."""
import math

from gradscope import _gradscope
from gradscope.nn.compositions import _legacy_reduction, _reduce

Module = _gradscope.nn.Module
_where = _gradscope.where


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """The negative log likelihood of target under Poisson(rate): rate = exp(input) with
    log_input, else input (+ eps inside the log); full adds Stirling's log(target!) for
    target > 1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        big = target > 1
        safe = _where(big, target, _gradscope.full_like(target, 2.0))
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        loss = loss + _where(big, stirling, _gradscope.zeros_like(stirling))
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """The negative log likelihood of target under N(input, var): (log var + (input -
    target)^2 / var) / 2 (+ log(2 pi) / 2 with full). var may lack input's last dim or have 1
    there (one variance per sample); values below eps count as eps, with var's gradient
    passed through as torch's does."""
    vshape, ishape = tuple(var.shape), tuple(input.shape)
    if vshape != ishape:
        if ishape[:-1] == vshape:
            var = var.unsqueeze(-1)
        elif not (ishape[:-1] == vshape[:-1] and vshape[-1:] == (1,)):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    clamped = var + (var.clamp(min=eps) - var).detach()
    loss = 0.5 * (clamped.log() + (input - target) ** 2 / clamped)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """For each sample, the mean over classes of the binary cross-entropy of sigmoid(input)
    against the 0/1 target (weight rescales each class)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = -(target * _gradscope.nn.functional.logsigmoid(input)
             + (1 - target) * _gradscope.nn.functional.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.dim() - 1) / int(input.shape[-1])
    return _reduce(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """For each sample, the mean over classes j != y of max(0, margin - x[y] + x[j])^p (times
    weight[y])."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x = input if input.dim() == 2 else input.reshape(1, -1)
    y = target.reshape(-1, 1).long()
    n_class = int(x.shape[1])
    picked = x.gather(1, y)
    hinge = (margin - picked + x).clamp(min=0)
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * weight[y.reshape(-1)].reshape(-1, 1)
    not_target = _gradscope.ones_like(hinge).scatter(1, y, 0.0)
    loss = (hinge * not_target).sum(1) / n_class
    if input.dim() != 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


class _Reducing(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = _legacy_reduction(size_average, reduce, reduction)


class PoissonNLLLoss(_Reducing):
    """F.poisson_nll_loss as a module."""

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        return poisson_nll_loss(log_input, target, self.log_input, self.full, eps=self.eps,
                                reduction=self.reduction)


class GaussianNLLLoss(_Reducing):
    """F.gaussian_nll_loss as a module: forward(input, target, var)."""

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):
        return gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)


class MultiLabelSoftMarginLoss(_Reducing):
    """F.multilabel_soft_margin_loss as a module (weight is a buffer, as torch's)."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)

    def forward(self, input, target):
        return multilabel_soft_margin_loss(input, target, self.weight, reduction=self.reduction)


class MultiMarginLoss(_Reducing):
    """F.multi_margin_loss as a module (weight is a buffer, as torch's)."""

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        self.p, self.margin = p, margin
        self.register_buffer("weight", weight)

    def forward(self, input, target):
        return multi_margin_loss(input, target, self.p, self.margin, self.weight,
                                 reduction=self.reduction)
