"""Adaptive pooling as torch's: F.adaptive_avg_pool1d/2d/3d, F.adaptive_max_pool1d/2d/3d and their
modules. Output cell i of a dim of size L pooled to O covers input [floor(i*L/O),
ceil((i+1)*L/O)), so cells may overlap when O does not divide L. A rectangle's mean (or max) is
the mean (max) along one dim of the mean (max) along the other, so each dim is pooled on its
own: with a reshape and one reduction when O divides L (the common ResNet head, (1, 1)), else
cell by cell. Gradients flow through the engine's views and reductions; a max's gradient is
shared among tied maxima (torch gives it to one)."""
from gradscope import _gradscope as _c
from gradscope._missing import NotSupportedError

Module = _c.nn.Module


def _sizes(output_size, n, shape, fn):
    sizes = (output_size,) * n if isinstance(output_size, int) or output_size is None \
        else tuple(output_size)
    if len(sizes) != n:
        raise ValueError(f"{fn}: output_size must be an int or a tuple of {n}, got "
                         f"{output_size!r}")
    out = []
    for s, size in zip(sizes, shape):
        s = size if s is None else s
        if not isinstance(s, int) or s < 0:  # 0 is an empty output, as torch 1.13's
            raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to "
                               f"0 but received {s!r}")
        out.append(s)
    return out


def _pool_dim(x, dim, out, reduce):
    length = x.shape[dim]
    if length == out:
        return x
    if out == 0:
        return x.narrow(dim, 0, 0)
    if length % out == 0:
        shape = list(x.shape)
        cells = x.reshape(*shape[:dim], out, length // out, *shape[dim + 1:])
        return reduce(cells, dim + 1)
    pieces = []
    for i in range(out):
        start, end = (i * length) // out, -((-(i + 1) * length) // out)
        pieces.append(reduce(x.narrow(dim, start, end - start), dim))
    return _c.stack(pieces, dim)


def _adaptive(input, output_size, n, reduce, fn):
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"{fn}: expected {n + 1}D or {n + 2}D input, got {input.dim()}D")
    sizes = _sizes(output_size, n, tuple(input.shape)[-n:], fn)
    for k, size in enumerate(tuple(input.shape)[-n:]):
        if size == 0:
            raise RuntimeError(f"{fn}: expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {tuple(input.shape)} with "
                               f"dimension {input.dim() - n + k} being empty")
    out = input
    for k in range(n):
        out = _pool_dim(out, input.dim() - n + k, sizes[k], reduce)
    return out


def _mean(t, dim):
    return t.mean(dim)


def _amax(t, dim):
    return t.amax(dim)


def adaptive_avg_pool1d(input, output_size):
    """The mean over each of output_size cells of the last dim."""
    return _adaptive(input, output_size, 1, _mean, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input, output_size):
    """The mean over each cell of an output_size grid over the last two dims."""
    return _adaptive(input, output_size, 2, _mean, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size):
    """The mean over each cell of an output_size grid over the last three dims."""
    return _adaptive(input, output_size, 3, _mean, "adaptive_avg_pool3d")


def _no_indices(return_indices, fn):
    if return_indices:
        raise NotSupportedError(f"{fn}(return_indices=True) is not supported by gradscope yet")


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """The max over each of output_size cells of the last dim."""
    _no_indices(return_indices, "adaptive_max_pool1d")
    return _adaptive(input, output_size, 1, _amax, "adaptive_max_pool1d")


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """The max over each cell of an output_size grid over the last two dims."""
    _no_indices(return_indices, "adaptive_max_pool2d")
    return _adaptive(input, output_size, 2, _amax, "adaptive_max_pool2d")


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """The max over each cell of an output_size grid over the last three dims."""
    _no_indices(return_indices, "adaptive_max_pool3d")
    return _adaptive(input, output_size, 3, _amax, "adaptive_max_pool3d")


class _Adaptive(Module):
    _function = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return type(self)._function(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_Adaptive):
    """F.adaptive_avg_pool1d as a module."""
    _function = staticmethod(adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_Adaptive):
    """F.adaptive_avg_pool2d as a module."""
    _function = staticmethod(adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_Adaptive):
    """F.adaptive_avg_pool3d as a module."""
    _function = staticmethod(adaptive_avg_pool3d)


class _AdaptiveMax(_Adaptive):
    def __init__(self, output_size, return_indices=False):
        _no_indices(return_indices, type(self).__name__)
        super().__init__(output_size)
        self.return_indices = return_indices


class AdaptiveMaxPool1d(_AdaptiveMax):
    """F.adaptive_max_pool1d as a module."""
    _function = staticmethod(adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMax):
    """F.adaptive_max_pool2d as a module."""
    _function = staticmethod(adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMax):
    """F.adaptive_max_pool3d as a module."""
    _function = staticmethod(adaptive_max_pool3d)
