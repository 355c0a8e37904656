"""torch.nn's margin losses as modules over F's functions (more_losses.py), with torch's
constructor arguments and their print(model) lines (no arguments shown, as torch's):
MarginRankingLoss, CosineEmbeddingLoss, HingeEmbeddingLoss, TripletMarginLoss,
TripletMarginWithDistanceLoss and SoftMarginLoss; and the two functions F lacked for them,
soft_margin_loss and triplet_margin_with_distance_loss."""
from gradscope import _gradscope
from gradscope.nn.compositions import _legacy_reduction, _reduce
from gradscope.nn.probabilistic_losses import _Reducing
from gradscope.nn.more_losses import (cosine_embedding_loss, hinge_embedding_loss,
                                      margin_ranking_loss, triplet_margin_loss)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input)), the two-class logistic loss (target -1 or 1)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _reduce((-target * input).exp().log1p(), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0) with any distance d (pairwise_distance when None);
    swap: the smaller of d(a, n) and d(p, n), as torch's."""
    from gradscope.nn import functional as F  # (torch 1.13 checks neither margin nor dims)
    d = distance_function if distance_function is not None else F.pairwise_distance
    d_pos, d_neg = d(anchor, positive), d(anchor, negative)
    if swap:
        d_neg = _gradscope.minimum(d_neg, d(positive, negative))
    loss = (margin + d_pos - d_neg).clamp(min=0)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _reduce(loss, reduction)


class MarginRankingLoss(_Reducing):
    """F.margin_ranking_loss as a module."""

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return margin_ranking_loss(input1, input2, target, self.margin, reduction=self.reduction)


class CosineEmbeddingLoss(_Reducing):
    """F.cosine_embedding_loss as a module."""

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return cosine_embedding_loss(input1, input2, target, self.margin,
                                     reduction=self.reduction)


class HingeEmbeddingLoss(_Reducing):
    """F.hinge_embedding_loss as a module."""

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


class SoftMarginLoss(_Reducing):
    """soft_margin_loss as a module."""

    def forward(self, input, target):
        return soft_margin_loss(input, target, reduction=self.reduction)


class TripletMarginLoss(_Reducing):
    """F.triplet_margin_loss as a module."""

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None,
                 reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor, positive, negative):
        return triplet_margin_loss(anchor, positive, negative, self.margin, self.p, self.eps,
                                   self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Reducing):
    """triplet_margin_with_distance_loss as a module."""

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(reduction=reduction)
        if distance_function is None:  # a child module, printed as torch prints it
            from gradscope.nn import PairwiseDistance
            distance_function = PairwiseDistance()
        self.distance_function, self.margin, self.swap = distance_function, margin, swap

    def forward(self, anchor, positive, negative):
        return triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)
