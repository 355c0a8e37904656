"""torch.nn.functional's margin losses, gumbel_softmax and normalize as compositions of the
engine's differentiable ops (the gradients are those of the ops): triplet_margin_loss,
margin_ranking_loss, cosine_embedding_loss, hinge_embedding_loss, gumbel_softmax, normalize;
and cross_entropy / nll_loss with torch's full signature over the engine's ops (whose
ignore_index is engine-level: engine/ops/loss.c)."""
from gradscope import _gradscope as _c
from gradscope.nn.compositions import _legacy_reduction, _reduce


def _pdist(x1, x2, p, eps):
    # torch.pairwise_distance: ||x1 - x2 + eps||_p over the last dimension
    d = x1 - x2 + eps
    if p == 2:
        return (d * d).sum(-1).sqrt()
    return (d.abs() ** p).sum(-1) ** (1.0 / p)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0), d the p-norm distance (swap: the smaller of
    d(a, n) and d(p, n)), as torch's."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    a_dim, p_dim, n_dim = anchor.dim(), positive.dim(), negative.dim()
    if not (a_dim == p_dim == n_dim):
        raise RuntimeError(f"All inputs should have same dimension but got {a_dim}D, "
                           f"{p_dim}D and {n_dim}D inputs.")
    d_pos = _pdist(anchor, positive, p, eps)
    d_neg = _pdist(anchor, negative, p, eps)
    if swap:
        d_neg = _c.minimum(d_neg, _pdist(positive, negative, p, eps))
    loss = (margin + d_pos - d_neg).clamp(min=0)
    return _reduce(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, -target * (input1 - input2) + margin), as torch's."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same "
                           f"dimension but got sizes: input1: {tuple(input1.shape)}, input2: "
                           f"{tuple(input2.shape)}, target: {tuple(target.shape)} ")
    loss = (-target * (input1 - input2) + margin).clamp(min=0)
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1, as
    torch's (cos with torch's EPSILON 1e-12 on the squared norms)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    prod = (input1 * input2).sum(-1)
    mag1 = (input1 * input1).sum(-1) + 1e-12
    mag2 = (input2 * input2).sum(-1) + 1e-12
    cos = prod / (mag1 * mag2).sqrt()
    zeros = _c.zeros_like(cos)
    pos = 1 - cos
    neg = (cos - margin).clamp(min=0)
    loss = _c.where(target == 1, pos, zeros) + _c.where(target == -1, neg, zeros)
    return _reduce(loss, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """input where target is 1, max(0, margin - input) where it is -1, as torch's."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    zeros = _c.zeros_like(input)
    margin_clamp = (margin - input).clamp(min=0)
    output_margin = _c.where(target != 1, margin_clamp, zeros)
    output_self = _c.where(target != -1, input, zeros)
    return _reduce(output_margin + output_self, reduction)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g) / tau) with Gumbel(0, 1) noise g (gradscope's generator); hard:
    the one-hot of its argmax in the forward pass with the soft gradient (straight-through),
    as torch's."""
    u = _c.rand(*tuple(logits.shape), dtype=logits.dtype)
    gumbels = -(-(u.clamp(min=1e-20)).log()).log()  # -log(Exponential(1))
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = _c.zeros_like(logits).scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p over dim, eps), as torch.nn.functional.normalize."""
    if out is not None:
        raise TypeError("normalize(): out= is not supported by gradscope")
    if p == 2:
        norm = (input * input).sum(dim, keepdim=True).sqrt()
    elif p == 1:
        norm = input.abs().sum(dim, keepdim=True)
    else:
        norm = (input.abs() ** p).sum(dim, keepdim=True) ** (1.0 / p)
    return input / norm.clamp(min=eps)


_engine_cross_entropy = _c.nn.functional.cross_entropy
_engine_nll_loss = _c.nn.functional.nll_loss


def _class_rows(input, target):
    """input [C], [N, C] or [N, C, d1, ...] with its class-index target as the engine's
    [rows, C] and [rows], and how to give a reduction='none' result the target's shape."""
    if input.dim() == 2:
        return input, target, None
    if input.dim() == 1:
        if target.dim() != 0:
            raise RuntimeError(f"Expected target of 0 dimensions for an input of shape "
                               f"{tuple(input.shape)} (one sample), got {tuple(target.shape)}")
        return input.unsqueeze(0), target.reshape(1), ()
    if input.dim() == 0:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    shape = tuple(target.shape)
    expected = (input.shape[0],) + tuple(input.shape[2:])
    if shape != expected:
        raise RuntimeError(f"Expected target size {expected}, got {shape}")
    classes = input.shape[1]
    return input.movedim(1, -1).reshape(-1, classes), target.reshape(-1), shape


def _probability_cross_entropy(input, target, weight, reduction, label_smoothing):
    """cross_entropy with class probabilities as target (same shape as input), written as
    torch 1.13 writes it: -sum(log_softmax * target * weight) over classes, the mean over
    the samples (numel / C)."""
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected input batch_size ({tuple(input.shape)}) to match target "
                           f"batch_size ({tuple(target.shape)}) for class-probability targets")
    class_dim = 0 if input.dim() == 1 else 1
    classes = input.shape[class_dim]
    lsm = input.log_softmax(class_dim)
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    terms = lsm * target
    if weight is not None:
        view = [1] * input.dim()
        view[class_dim] = classes
        terms = terms * weight.reshape(view)
    if reduction == "mean":
        return -terms.sum() / (input.numel() / classes)
    if reduction == "sum":
        return -terms.sum()
    if reduction == "none":
        return -terms.sum(class_dim)
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _shaped(loss, reduction, shape):
    return loss.reshape(shape) if reduction == "none" and shape is not None else loss


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """The engine's cross_entropy (log_softmax then NLL), as torch 1.13's: logits [C], [N, C]
    or [N, C, d1, ...] with class indices (rows whose target is ignore_index count 0 and are
    left out of the mean; weight= scales each row by its class's weight and the mean divides
    by their sum) or class probabilities of the input's shape; label_smoothing as torch's."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not (0.0 <= label_smoothing <= 1.0):
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if target.dtype.is_floating_point:
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _probability_cross_entropy(input, target, weight, reduction, label_smoothing)
    rows, targets, shape = _class_rows(input, target)
    if label_smoothing > 0:
        loss = _smoothed_cross_entropy(rows, targets, weight, reduction, ignore_index,
                                       label_smoothing)
    else:
        loss = _engine_cross_entropy(rows, targets, reduction=reduction, label_smoothing=0.0,
                                     ignore_index=ignore_index, weight=weight)
    return _shaped(loss, reduction, shape)


def _smoothed_cross_entropy(rows, targets, weight, reduction, ignore_index, label_smoothing):
    """cross_entropy with label smoothing over [rows, C] and [rows] targets, made of the ops
    torch 1.13 makes it of, so its graph is torch's (AddBackward0 over the NLL loss and the
    smoothing term, LogSoftmaxBackward0 under both) and so are its numbers. (The engine's own
    cross_entropy fuses it into one node, which C programs get; torch has no such node.)"""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    lsm = rows.log_softmax(1)
    nll = _engine_nll_loss(lsm, targets, reduction=reduction, ignore_index=ignore_index,
                           weight=weight)
    classes = rows.shape[1]
    ignored = targets == ignore_index
    smooth = -(lsm * weight.reshape(1, classes)).sum(1) if weight is not None else -lsm.sum(1)
    smooth = smooth.index_put((ignored,), _c.zeros((), dtype=smooth.dtype))
    if reduction == "mean":
        if weight is not None:
            ret = smooth.sum() / weight.gather(0, targets.masked_select(~ignored)).sum()
        else:
            ret = smooth.masked_select(~ignored).mean()
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth
    return (1 - label_smoothing) * nll + ret * (label_smoothing / classes)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """The engine's nll_loss over log-probabilities [C], [N, C] or [N, C, d1, ...]: rows
    whose target is ignore_index count 0 and are left out of the mean; weight= scales each
    row by its class's weight and the mean divides by their sum, as torch's."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    rows, targets, shape = _class_rows(input, target)
    loss = _engine_nll_loss(rows, targets, reduction=reduction, ignore_index=ignore_index,
                            weight=weight)
    return _shaped(loss, reduction, shape)
