"""The functions of torch.nn.functional written here over the engine's ops, as torch writes
them over its own: softsign, softmin and glu, and the losses l1_loss, smooth_l1_loss,
huber_loss, binary_cross_entropy, kl_div, cosine_similarity and pairwise_distance, each with
torch 1.13's formula, edge values and reduction= strings."""
import gradscope as gs


def _softmax_dim(input, dim):
    """dim, or for None torch's legacy choice: 0 for 0-, 1- and 3-dim inputs, else 1."""
    if dim is not None:
        return dim
    return 0 if input.dim() in (0, 1, 3) else 1


def softsign(input):
    """x / (1 + |x|)."""
    return input / (input.abs() + 1)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) over dim (None: torch's legacy choice of dim)."""
    if dtype is not None:
        input = input.to(dtype)
    return (-input).softmax(_softmax_dim(input, dim))


def glu(input, dim=-1):
    """a * sigmoid(b), a and b the halves of input along dim (which must have an even size)."""
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.dim()} "
                           f"is size {size}")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average, reduce, reduction):
    """torch's size_average= and reduce= (deprecated) into a reduction string."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "none" if not reduce else "mean" if size_average else "sum"


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """The mean (or sum) of absolute differences."""
    return _reduce((input - target).abs(), _legacy_reduction(size_average, reduce, reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 * d^2 / beta where |d| < beta, |d| - 0.5 * beta elsewhere (beta 0: the L1 loss)."""
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    d = input - target
    ad = d.abs()
    if beta == 0:
        return _reduce(ad, reduction)
    loss = gs.where(ad < beta, d * d * (0.5 / beta), ad - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0):
    """0.5 * d^2 where |d| < delta, delta * (|d| - 0.5 * delta) elsewhere."""
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = input - target
    ad = d.abs()
    loss = gs.where(ad < delta, d * d * 0.5, (ad - 0.5 * delta) * delta)
    return _reduce(loss, reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100 as torch's."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({tuple(target.shape)}) that is different to the "
                         f"input size ({tuple(input.shape)}) is deprecated. Please ensure they "
                         "have the same size.")
    # torch's values, with its gradients (the formulas of its backward, which at x = 0 or 1
    # differ from the composition's: (x - t) / max((1 - x) x, 1e-12)). They join the graph
    # as (v - v.detach()) * slope: zero in value, slope in gradient.
    x, t = input.detach(), target.detach()
    log_x = x.log().clamp(min=-100)
    log_1mx = (1 - x).log().clamp(min=-100)
    loss = -(t * log_x + (1 - t) * log_1mx)
    if input.requires_grad:
        slope = (x - t) / ((1 - x) * x).clamp(min=1e-12)
        loss = loss + (input - x) * slope
    if target.requires_grad:
        loss = loss + (target - t) * (log_1mx - log_x)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """target * (log target - input) pointwise (0 where target is 0), input being
    log-probabilities; log_target=True takes target as log-probabilities too. 'batchmean'
    divides the sum by the batch size."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        positive = target > 0
        safe = gs.where(positive, target, gs.ones_like(target))
        loss = target * safe.log() - target * input  # xlogy(t, t): 0 where t is 0
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() != 0 else loss.sum()
    return _reduce(loss, reduction)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 * x2) / sqrt(max(|x1|^2 |x2|^2, eps^2)) along dim."""
    w12 = (x1 * x2).sum(dim)
    w1 = (x1 * x1).sum(dim)
    w2 = (x2 * x2).sum(dim)
    return w12 / (w1 * w2).clamp(min=eps * eps).sqrt()


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The p-norm of x1 - x2 + eps along the last dim."""
    return (x1 - x2 + eps).norm(p, -1, keepdim)
