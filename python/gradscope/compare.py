"""Whole-tensor comparisons as torch has them: torch.equal, isclose/allclose, all/any (whole or
along a dim), isnan/isinf/isfinite, written with the engine's elementwise ops and reductions so
they run on tensors of any size without leaving the engine."""
from gradscope import _gradscope as _c
from gradscope.autograd import no_grad

_INF = float("inf")


def _as_tensor(value, like):
    return value if isinstance(value, _c.Tensor) else _c.full_like(like, value)


def isnan(input):
    """torch.isnan: True where an element is NaN (never for integer or bool tensors)."""
    return input != input


def isinf(input):
    """torch.isinf: True where an element is +inf or -inf."""
    with no_grad():
        return input.abs() == _INF


def isfinite(input):
    """torch.isfinite: True where an element is neither NaN nor infinite."""
    return ~(isnan(input) | isinf(input))


def _reduce(input, dim, keepdim, want):
    # all: no element is zero (False); any: some element is nonzero (True)
    hits = (input != 0) if want else (input == 0)
    n = hits.sum() if dim is None else hits.sum(dim, keepdim=keepdim)
    return n > 0 if want else n == 0


def all(input, dim=None, keepdim=False):
    """torch.all / Tensor.all: whether every element (along dim, if given) is nonzero, as a
    bool tensor."""
    return _reduce(input, dim, keepdim, False)


def any(input, dim=None, keepdim=False):
    """torch.any / Tensor.any: whether some element (along dim, if given) is nonzero, as a
    bool tensor."""
    return _reduce(input, dim, keepdim, True)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """torch.isclose: |input - other| <= atol + rtol * |other| elementwise; equal infinities are
    close, NaNs are close to each other only with equal_nan."""
    if rtol < 0 or atol < 0:
        raise ValueError(f"isclose: rtol and atol must be non-negative, got rtol={rtol}, "
                         f"atol={atol}")
    other = _as_tensor(other, input)
    with no_grad():  # a comparison has no gradient: record no graph for its arithmetic
        close = ((input - other).abs() <= atol + rtol * other.abs()) | (input == other)
        if equal_nan:
            close = close | (isnan(input) & isnan(other))
    return close


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """torch.allclose: isclose everywhere, as a Python bool."""
    return bool(all(isclose(input, other, rtol, atol, equal_nan)).item())


def equal(input, other):
    """torch.equal: True if both have the same shape and the same elements (NaN equals
    nothing)."""
    if not isinstance(input, _c.Tensor) or not isinstance(other, _c.Tensor):
        raise TypeError(f"equal(): expected two Tensors, got {type(input).__name__} and "
                        f"{type(other).__name__}")
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(all(input == other).item())


for _name in ("isnan", "isinf", "isfinite", "all", "any", "isclose", "allclose", "equal"):
    _c._extend_type(_c.Tensor, _name, globals()[_name])
del _name
