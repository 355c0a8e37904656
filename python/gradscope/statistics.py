"""gradscope.statistics: torch's counting and order-statistic names written with gradscope's
ops: bincount, quantile (and nanquantile), histogram, block_diag, and Tensor.unfold's sliding
windows (a strided view, so writes and gradients reach the tensor it views). Put on the C type and the
package by gradscope/__init__.py."""
from gradscope import _gradscope as _c, return_types

Tensor = _c.Tensor

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _gs():
    import gradscope  # the package imports this module while it loads
    return gradscope


def bincount(input, weights=None, minlength=0):
    """torch.bincount: how often each value 0..max occurs in a 1-D non-negative integer
    tensor (at least minlength counts); with weights, their sums instead (in weights' dtype)."""
    gs = _gs()
    if input.dim() != 1 or input.is_floating_point() or input.dtype == gs.bool or (
            input.numel() and int(input.min()) < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and tuple(weights.shape) != tuple(input.shape):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    n = max(int(input.max()) + 1 if input.numel() else 0, int(minlength))
    index = input.long()
    if weights is None:
        return gs.zeros(n, dtype=gs.int64).index_add(0, index, gs.ones(input.numel(), dtype=gs.int64))
    dtype = weights.dtype if weights.is_floating_point() else gs.float64
    return gs.zeros(n, dtype=dtype).index_add(0, index, weights.to(dtype))


def histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    """torch.histogram: counts (or summed weights) of a floating tensor's values in bins
    equal-width bins over range (default: the values' min and max), or between the given
    sorted edges; each bin holds [left, right) but the last, which holds its right edge too.
    density divides by the total and the bins' widths. (hist, bin_edges) as
    torch.return_types.histogram."""
    import numpy as np
    gs = _gs()
    if not input.is_floating_point():
        raise RuntimeError(f"torch.histogram: input tensor and bins tensors should have the same "
                           f"dtype, but got input {str(input.dtype).rpartition('.')[2]}")
    values = input.detach().numpy().reshape(-1)
    edges_in = bins.detach().numpy() if isinstance(bins, Tensor) else int(bins)
    w = weight.detach().numpy().reshape(-1) if weight is not None else None
    hist, edges = np.histogram(values, bins=edges_in, range=range, weights=w, density=density)
    return return_types.histogram(gs.tensor(hist, dtype=input.dtype),
                                  gs.tensor(edges, dtype=input.dtype))




def block_diag(*tensors):
    """torch.block_diag: the tensors (0-d, 1-d as one row, or 2-d) along the diagonal of one
    matrix, zeros elsewhere; differentiable in each."""
    gs = _gs()
    blocks = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.dim()} dimensions")
        blocks.append(t.reshape(1, 1) if t.dim() == 0 else t.reshape(1, -1) if t.dim() == 1 else t)
    if not blocks:
        return gs.zeros(1, 0)
    dtype = blocks[0].dtype
    for b in blocks[1:]:  # torch's type promotion, as an addition of the two dtypes gives it
        dtype = (gs.zeros(1, dtype=dtype) + gs.zeros(1, dtype=b.dtype)).dtype
    width = sum(int(b.shape[1]) for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = int(b.shape[0]), int(b.shape[1])
        parts = [gs.zeros(r, left, dtype=dtype), b.to(dtype), gs.zeros(r, width - left - c, dtype=dtype)]
        rows.append(gs.cat(parts, 1))
        left += c
    return gs.cat(rows, 0)


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """torch.quantile: the q-th quantiles (q a number or a 1-D tensor in [0, 1]) of input, over
    dim or all elements, by torch's interpolations ('linear', 'lower', 'higher', 'midpoint',
    'nearest'); NaN where the values hold one. A tensor q puts its dim first. Differentiable
    through the sorted values."""
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """torch.nanquantile: quantile with the NaNs left out (NaN only where all are)."""
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=True)


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    gs = _gs()
    name = "nanquantile" if ignore_nan else "quantile"
    if not input.is_floating_point():
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest. Got {interpolation}")
    scalar_q = not isinstance(q, Tensor)
    qs = gs.tensor([float(q)] if scalar_q else q.reshape(-1).tolist(), dtype=input.dtype)
    if not scalar_q and q.dim() > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    if bool(((qs < 0) | (qs > 1)).any()):
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if dim is None:
        x, d = input.reshape(-1), 0
    else:
        d = dim % max(input.dim(), 1)
        x = input
    n = int(x.shape[d]) if x.dim() else 1
    if x.dim() == 0:
        x, d = x.reshape(1), 0
    values = x.sort(dim=d).values  # NaNs sort last
    nan = gs.isnan(x).sum(d, keepdim=True)
    count = (n - nan) if ignore_nan else gs.full_like(nan, n)
    last = (count - 1).clamp(min=0).to(input.dtype)
    outs = []
    for k in range(qs.numel()):
        rank = qs[k] * last
        if interpolation == "lower":
            rank = rank.floor()
        elif interpolation == "higher":
            rank = rank.ceil()
        elif interpolation == "nearest":
            rank = rank.round()
        lo = rank.floor().long().clamp(max=max(n - 1, 0))
        hi = rank.ceil().long().clamp(max=max(n - 1, 0))
        below = values.gather(d, lo)
        above = values.gather(d, hi)
        if interpolation == "midpoint":
            weight = gs.where(hi > lo, gs.full_like(rank, 0.5), gs.zeros_like(rank))
        else:
            weight = rank - rank.floor()
        result = below.lerp(above, weight)  # torch's lerp (one rounding, as its FMA)
        bad = (count == 0) if ignore_nan else (nan > 0)
        result = gs.where(bad, gs.full_like(result, float("nan")), result)
        if not keepdim:
            result = result.squeeze(d)
        elif dim is None:
            result = result.reshape((1,) * input.dim())
        outs.append(result)
    return outs[0] if scalar_q else gs.stack(outs, 0)


def unfold(self, dimension, size, step):
    """Tensor.unfold(dimension, size, step): every window of size elements along dimension,
    step apart, as a new last dim; a strided view of this tensor (as torch's)."""
    nd = self.dim()
    d = dimension % nd if nd else 0
    n = int(self.shape[d]) if nd else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    shape, strides = list(self.shape), list(self.stride())
    if not nd:
        return self.as_strided((1, size), (1, 1), self.storage_offset()).reshape(size)
    count = (n - size) // step + 1
    inner = strides[d]
    shape[d], strides[d] = count, inner * step
    return self.as_strided(tuple(shape) + (size,), tuple(strides) + (inner,), self.storage_offset())


def _quantile_method(self, q, dim=None, keepdim=False, *, interpolation="linear"):
    """Tensor.quantile: see gradscope.quantile."""
    return quantile(self, q, dim, keepdim, interpolation=interpolation)


def _nanquantile_method(self, q, dim=None, keepdim=False, *, interpolation="linear"):
    """Tensor.nanquantile: see gradscope.nanquantile."""
    return nanquantile(self, q, dim, keepdim, interpolation=interpolation)


def _bincount_method(self, weights=None, minlength=0):
    """Tensor.bincount: see gradscope.bincount."""
    return bincount(self, weights, minlength)


def _histogram_method(self, bins, *, range=None, weight=None, density=False):
    """Tensor.histogram: see gradscope.histogram."""
    return histogram(self, bins, range=range, weight=weight, density=density)


for _name, _value in [("unfold", unfold), ("quantile", _quantile_method),
                      ("histogram", _histogram_method),
                      ("nanquantile", _nanquantile_method), ("bincount", _bincount_method)]:
    _c._extend_type(Tensor, _name, _value)
del _name, _value
