"""torch.gradient: the derivative of a function known only by its samples, by differences.

As numpy.gradient (and torch's, which follows it): second-order central differences inside,
one-sided differences of order edge_order (1 or 2) at both ends, with uniform spacing or the
samples' coordinates along each dim. Built from slices and arithmetic, so it differentiates.
"""
import numbers

from gradscope import _gradscope


def _check(f, dims, edge_order):
    if edge_order not in (1, 2):
        raise ValueError(f"torch.gradient only supports edge_order=1 and edge_order=2, got "
                         f"{edge_order}")
    for d in dims:
        if f.shape[d] < edge_order + 1:
            raise RuntimeError(f"torch.gradient expected each dimension size to be at least "
                               f"edge_order+1, got dim {d} of size {f.shape[d]}")


def _slice(f, d, start, stop):
    return f.narrow(d, start, stop - start)


def _along(t, d, ndim):
    """A 1-D tensor t shaped to broadcast along dim d of an ndim tensor."""
    shape = [1] * ndim
    shape[d] = t.shape[0]
    return t.reshape(shape)


def _uniform(f, d, h, edge_order):
    n = f.shape[d]
    inside = (_slice(f, d, 2, n) - _slice(f, d, 0, n - 2)) / (2 * h)
    if edge_order == 1:
        first = (_slice(f, d, 1, 2) - _slice(f, d, 0, 1)) / h
        last = (_slice(f, d, n - 1, n) - _slice(f, d, n - 2, n - 1)) / h
    else:
        first = (-1.5 * _slice(f, d, 0, 1) + 2 * _slice(f, d, 1, 2) - 0.5 * _slice(f, d, 2, 3)) / h
        last = (0.5 * _slice(f, d, n - 3, n - 2) - 2 * _slice(f, d, n - 2, n - 1)
                + 1.5 * _slice(f, d, n - 1, n)) / h
    return _gradscope.cat([first, inside, last], d)


def _coordinates(f, d, x, edge_order):
    n, nd = f.shape[d], f.dim()
    if x.dim() != 1 or x.shape[0] != n:
        raise RuntimeError(f"torch.gradient expected each tensor in spacing to be 1-D with as "
                           f"many coordinates as dim {d} has samples ({n}), got "
                           f"{tuple(x.shape)}")
    x = x.to(f.dtype)
    dx = x[1:] - x[:-1]
    dx1, dx2 = _along(dx[:-1], d, nd), _along(dx[1:], d, nd)
    a = -dx2 / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    inside = a * _slice(f, d, 0, n - 2) + b * _slice(f, d, 1, n - 1) + c * _slice(f, d, 2, n)
    if edge_order == 1:
        first = (_slice(f, d, 1, 2) - _slice(f, d, 0, 1)) / dx[0]
        last = (_slice(f, d, n - 1, n) - _slice(f, d, n - 2, n - 1)) / dx[-1]
    else:
        h1, h2 = dx[0], dx[1]
        a0, b0, c0 = -(2 * h1 + h2) / (h1 * (h1 + h2)), (h1 + h2) / (h1 * h2), -h1 / (h2 * (h1 + h2))
        first = a0 * _slice(f, d, 0, 1) + b0 * _slice(f, d, 1, 2) + c0 * _slice(f, d, 2, 3)
        h1, h2 = dx[-2], dx[-1]
        a1, b1 = h2 / (h1 * (h1 + h2)), -(h2 + h1) / (h1 * h2)
        c1 = (2 * h2 + h1) / (h2 * (h1 + h2))
        last = (a1 * _slice(f, d, n - 3, n - 2) + b1 * _slice(f, d, n - 2, n - 1)
                + c1 * _slice(f, d, n - 1, n))
    return _gradscope.cat([first, inside, last], d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The derivative of the function sampled by input along each dim (all, or dim: an int or
    a list), as torch.gradient: a tuple with one tensor per dim. spacing: one number (the step
    of every dim), one number per dim, or one 1-D tensor of coordinates per dim."""
    if dim is None:
        dims = list(range(input.dim()))
    elif isinstance(dim, numbers.Integral):
        dims = [dim]
    else:
        dims = list(dim)
    dims = [d % input.dim() for d in dims] if input.dim() else dims
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"torch.gradient: dim {dim!r} names a dim twice")
    if isinstance(spacing, _gradscope.Tensor) and spacing.dim() == 1:
        spacing = [spacing]  # one dim's coordinates
    elif isinstance(spacing, (numbers.Number, _gradscope.Tensor)):
        spacing = [spacing] * len(dims)
    spacing = list(spacing)
    if len(spacing) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a "
                           f"list of length {len(dims)} (one per dim), got a list of length "
                           f"{len(spacing)}")
    _check(input, dims, edge_order)
    f = input if input.is_floating_point() else input.to(_gradscope.get_default_dtype())
    out = []
    for d, h in zip(dims, spacing):
        if isinstance(h, _gradscope.Tensor) and h.dim() == 1:
            out.append(_coordinates(f, d, h, edge_order))
        else:
            out.append(_uniform(f, d, float(h), edge_order))
    return tuple(out)
