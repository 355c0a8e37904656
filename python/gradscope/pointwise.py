"""gradscope.pointwise: torch's elementwise and NaN-aware reduction names that real scripts
use, as compositions of the engine's differentiable ops (gradients are the ops'; where torch's
formula has a removable singularity the composition takes it through a safe operand, so no
NaN leaks into a gradient torch gives as a number): logit, logaddexp/logaddexp2, hypot, sinc, xlogy,
heaviside, copysign, sgn, signbit, fmax/fmin, nansum/nanmean, aminmax, isin,
trapezoid/trapz/cumulative_trapezoid, cov, corrcoef, renorm, the products addmv, addr,
baddbmm and addbmm, add/sub's alpha, and div's rounding modes with divide/multiply/subtract
gcd/lcm, the bitwise shifts (<< and >>
through the C type's number slots), ldexp/frexp and nextafter
(gradscope/special.py builds torch.special over these). Put on the C type and the package by
gradscope/__init__.py."""
import math

import numpy as np

from gradscope import _gradscope as _c, return_types

Tensor = _c.Tensor
_LN2 = math.log(2.0)


def _gs():
    import gradscope  # the package imports this module while it loads
    return gradscope


def _float_operands(a, b, name):
    """a and b as tensors of their common floating dtype (as torch promotes for these ops)."""
    gs = _gs()
    a = a if isinstance(a, Tensor) else gs.tensor(a)
    b = b if isinstance(b, Tensor) else gs.tensor(b, dtype=a.dtype if a.is_floating_point() else None)
    dtype = (gs.zeros(1, dtype=a.dtype) + gs.zeros(1, dtype=b.dtype)).dtype
    if not dtype.is_floating_point:
        dtype = gs.get_default_dtype()
    return a.to(dtype), b.to(dtype)


def logaddexp(input, other):
    """log(exp(input) + exp(other)) without overflow: max + log1p(exp(-|input - other|))."""
    a, b = _float_operands(input, other, "logaddexp")
    big = _c.maximum(a, b)
    same_inf = (a == b) & a.isinf()  # exp(-|inf - inf|) would be NaN; torch gives the infinity
    safe = _c.where(same_inf, _c.zeros_like(a), a - b)
    return _c.where(same_inf, a, big + (-safe.abs()).exp().log1p())


def logaddexp2(input, other):
    """log2(2**input + 2**other) without overflow."""
    a, b = _float_operands(input, other, "logaddexp2")
    big = _c.maximum(a, b)
    same_inf = (a == b) & a.isinf()
    safe = _c.where(same_inf, _c.zeros_like(a), a - b)
    return _c.where(same_inf, a, big + (-safe.abs() * _LN2).exp().log1p() / _LN2)


def logit(input, eps=None):
    """log(p / (1 - p)), p first clamped to [eps, 1 - eps] when eps is given (its gradient
    is then 0 outside that range, as torch's)."""
    x = input if input.is_floating_point() else input.to(_gs().get_default_dtype())
    if eps is not None:
        x = x.clamp(eps, 1 - eps)
    return (x / (1 - x)).log()


def hypot(input, other):
    """sqrt(input**2 + other**2), elementwise."""
    a, b = _float_operands(input, other, "hypot")
    return (a * a + b * b).sqrt()


def sinc(input):
    """sin(pi x) / (pi x), 1 at 0 (its gradient there 0, as torch's)."""
    x = input if input.is_floating_point() else input.to(_gs().get_default_dtype())
    zero = x == 0
    px = _c.where(zero, _c.ones_like(x), x) * math.pi
    return _c.where(zero, _c.ones_like(x), px.sin() / px)


def xlogy(input, other):
    """input * log(other), 0 where input is 0 (unless other is NaN), as torch's."""
    gs = _gs()
    if not isinstance(input, Tensor):
        input = gs.tensor(float(input), dtype=other.dtype if other.is_floating_point() else None)
    x, y = _float_operands(input, other, "xlogy")
    x, y = gs.broadcast_tensors(x, y)
    # x * log(y) is already 0 where x is 0 and log(y) finite, with torch's gradients there
    # (log(y) for x, 0 for y); only y = 0 or inf would make 0 * inf a NaN, so those y are
    # replaced where x is 0.
    zero = (x == 0) & ((y == 0) | y.isinf())
    safe_y = _c.where(zero, _c.ones_like(y), y)
    return x * safe_y.log()


def xlog1py(input, other):
    """input * log1p(other), 0 where input is 0 (unless other is NaN), as torch.special's."""
    gs = _gs()
    if not isinstance(input, Tensor):
        input = gs.tensor(float(input), dtype=other.dtype if other.is_floating_point() else None)
    x, y = _float_operands(input, other, "xlog1py")
    x, y = gs.broadcast_tensors(x, y)
    zero = (x == 0) & ((y == -1) | y.isinf())  # as xlogy: only log1p(y) = -inf or inf
    safe_y = _c.where(zero, _c.zeros_like(y), y)
    return x * safe_y.log1p()


def heaviside(input, values):
    """0 where input < 0, values where input == 0, 1 where input > 0 (input and values of one
    dtype, as torch asks)."""
    if input.dtype != values.dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different dtypes")
    one, zero = _c.ones_like(input), _c.zeros_like(input)
    return _c.where(input == 0, values.expand_as(input) if values.dim() <= input.dim() else values,
                    _c.where(input > 0, one, zero))


def copysign(input, other):
    """|input| with the sign of other (negative zero counts as negative, as torch's)."""
    a, b = _float_operands(input, other, "copysign")
    negative = signbit(b)
    return _c.where(negative, -a.abs(), a.abs())


def sgn(input):
    """sign(input) for real tensors (torch's sgn extends sign to complex ones)."""
    return input.sign()


def signbit(input):
    """True where the sign bit is set: negative numbers and -0.0, as torch's."""
    if not input.is_floating_point():
        return input < 0
    # -0.0 < 0 is False; 1 / -0.0 is -inf.
    return (input < 0) | ((input == 0) & ((1.0 / input) < 0))


def fmax(input, other):
    """The larger of the two, ignoring a NaN on one side (NaN only where both are)."""
    # a tie gives input (and its gradient), as torch's fmax
    return _c.where((input >= other) | other.isnan(), input, other)


def fmin(input, other):
    """The smaller of the two, ignoring a NaN on one side (NaN only where both are)."""
    return _c.where((input <= other) | other.isnan(), input, other)


def _dims(dim):
    return () if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum with NaNs counted as zero."""
    x = input if dtype is None else input.to(dtype)
    if x.is_floating_point():
        x = _c.where(x.isnan(), _c.zeros_like(x), x)
    return x.sum(_dims(dim), keepdim=keepdim) if dim is not None else (
        x.sum().reshape([1] * x.dim()) if keepdim else x.sum())


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the non-NaN elements (NaN where there are none)."""
    x = input if dtype is None else input.to(dtype)
    if not x.is_floating_point():
        raise RuntimeError(f"nanmean(): expected input to have floating point dtype but got "
                           f"{str(x.dtype).replace('gradscope.', '').capitalize()}")
    count = (~x.isnan()).to(x.dtype)
    return nansum(x, dim, keepdim) / nansum(count, dim, keepdim)


def aminmax(input, *, dim=None, keepdim=False):
    """(min, max) of the whole tensor or along dim, as torch.return_types.aminmax."""
    if dim is None:
        lo, hi = input.min(), input.max()
        if keepdim:
            lo, hi = lo.reshape([1] * input.dim()), hi.reshape([1] * input.dim())
    else:
        lo, hi = input.amin(dim, keepdim), input.amax(dim, keepdim)
    return return_types.aminmax(lo, hi)




def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """True where an element of elements is among test_elements (either may be a number)."""
    gs = _gs()
    if not isinstance(elements, Tensor):
        elements = gs.tensor(elements)
    if not isinstance(test_elements, Tensor):
        test_elements = gs.tensor(test_elements)
    flat = test_elements.reshape(-1)
    if flat.numel() == 0:
        found = gs.zeros(tuple(elements.shape), dtype=gs.bool)
    else:
        found = (elements.unsqueeze(-1) == flat).any(-1)
    return ~found if invert else found


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoid rule along dim: spacing dx (default 1) or sample points x."""
    n = int(y.shape[dim])
    if n == 0:
        return y.sum(dim)
    lo, hi = y.narrow(dim, 0, n - 1), y.narrow(dim, 1, n - 1)
    if x is None:
        return ((lo + hi).sum(dim)) * ((1.0 if dx is None else dx) / 2)
    if dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: x and dx")
    xd = x.diff(dim=dim if x.dim() == y.dim() else -1)
    return (xd * (lo + hi)).sum(dim) / 2


def trapz(y, x=None, *, dx=None, dim=-1):
    """torch.trapz: the older name of trapezoid."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoid rule along dim (one fewer element than y there)."""
    n = int(y.shape[dim])
    lo, hi = y.narrow(dim, 0, max(n - 1, 0)), y.narrow(dim, 1, max(n - 1, 0))
    if x is None:
        return ((lo + hi) * ((1.0 if dx is None else dx) / 2)).cumsum(dim)
    xd = x.diff(dim=dim if x.dim() == y.dim() else -1)
    return (xd * (lo + hi) / 2).cumsum(dim)


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the rows (variables) over the columns (observations), with
    frequency and analytic weights as torch's."""
    gs = _gs()
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.dim()} dimensions")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    if not x.is_floating_point():
        x = x.to(gs.get_default_dtype())
    n = int(x.shape[1])
    w = None
    if fweights is not None:
        w = fweights.to(x.dtype)
    if aweights is not None:
        w = aweights.to(x.dtype) if w is None else w * aweights.to(x.dtype)
    if w is None:
        mean = x.mean(1, keepdim=True)
        norm = n - correction
        xm = x - mean
        c = xm @ xm.t() / max(norm, 0) if norm > 0 else xm @ xm.t() / 0.0
    else:
        w_sum = w.sum()
        mean = (x * w).sum(1, keepdim=True) / w_sum
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights.to(x.dtype)).sum() / w_sum
        xm = x - mean
        c = (xm * w) @ xm.t() / norm.clamp(min=0)
    return c.reshape(()) if input.dim() < 2 else c


def corrcoef(input):
    """Pearson's correlation coefficients of the rows, clipped to [-1, 1] as torch's."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    stddev = d.sqrt()
    c = c / stddev.unsqueeze(1) / stddev.unsqueeze(0)
    return c.clamp(-1, 1)


def renorm(input, p, dim, maxnorm):
    """Each slice along dim scaled so its p-norm is at most maxnorm (torch's 1e-7 margin)."""
    d = dim % input.dim()
    others = tuple(i for i in range(input.dim()) if i != d)
    if p == float("inf"):
        norms = input.abs().amax(others, keepdim=True)
    else:
        norms = (input.abs() ** p).sum(others, keepdim=True) ** (1.0 / p)
    scale = _c.where(norms > maxnorm, maxnorm / (norms + 1e-7), _c.ones_like(norms))
    return input * scale


def _scaled(beta, base, alpha, product):
    if beta == 0:  # torch ignores base (NaNs in it included) when beta is 0
        out = product if alpha == 1 else product * alpha
        return out + _c.zeros_like(base) if tuple(base.shape) != tuple(out.shape) else out
    left = base if beta == 1 else base * beta
    return left + (product if alpha == 1 else product * alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * (mat @ vec)."""
    return _scaled(beta, input, alpha, mat @ vec)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * outer(vec1, vec2)."""
    return _scaled(beta, input, alpha, _c.outer(vec1, vec2))


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (batch1 @ batch2), batch by batch."""
    return _scaled(beta, input, alpha, _c.bmm(batch1, batch2))


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * the sum over the batch of batch1[i] @ batch2[i]."""
    return _scaled(beta, input, alpha, _c.bmm(batch1, batch2).sum(0))


_TORCH_TYPE = {"float32": "Float", "float64": "Double", "bool": "Bool"}


def _integer_arrays(input, other, name, bool_ok):
    """The two operands (tensors or numbers) as NumPy arrays, refusing floating ones (and
    bool, unless bool_ok) as torch's integer kernels do."""
    for t in (input, other):
        floating = t.is_floating_point() if isinstance(t, Tensor) else isinstance(t, float)
        boolean = isinstance(t, Tensor) and t.dtype == _c.bool
        if floating or (boolean and not bool_ok):
            kind = _TORCH_TYPE[str(t.dtype).rpartition(".")[2]] if isinstance(t, Tensor) else "Float"
            raise RuntimeError(f'"{name}_cpu" not implemented for \'{kind}\'')
    return [np.asarray(t.detach().numpy() if isinstance(t, Tensor) else t) for t in (input, other)]


def _numpy_pair(input, other, name):
    """_integer_arrays (bool refused) and the tensor operand's dtype."""
    values = _integer_arrays(input, other, name, bool_ok=False)
    return values, (input if isinstance(input, Tensor) else other).dtype


def gcd(input, other):
    """The greatest common divisor, elementwise, of integer tensors (non-negative; 0 with 0)."""
    (a, b), dtype = _numpy_pair(input, other, "gcd")
    return _c.tensor(np.gcd(a, b), dtype=dtype)


def lcm(input, other):
    """The least common multiple, elementwise, of integer tensors (non-negative)."""
    (a, b), dtype = _numpy_pair(input, other, "lcm")
    return _c.tensor(np.lcm(a, b), dtype=dtype)


def _shift(input, other, name, np_fn):
    from gradscope.dtype_rules import result_type
    a, b = _integer_arrays(input, other, name, bool_ok=True)
    dtype = result_type(input, other)
    if dtype == _c.bool:
        dtype = _c.int64
    np_dtype = np.dtype(str(dtype).rpartition(".")[2])
    return _c.tensor(np_fn(a.astype(np_dtype), b.astype(np_dtype)), dtype=dtype)


def bitwise_left_shift(input, other):
    """input << other for integer tensors (or numbers), in their promoted dtype."""
    return _shift(input, other, "lshift", np.left_shift)


def bitwise_right_shift(input, other):
    """input >> other for integer tensors (or numbers): arithmetic, so negatives round down."""
    return _shift(input, other, "rshift", np.right_shift)


def bitwise_left_shift_(self, other):
    """self <<= other, in place."""
    return self.copy_(bitwise_left_shift(self, other))


def bitwise_right_shift_(self, other):
    """self >>= other, in place."""
    return self.copy_(bitwise_right_shift(self, other))


def ldexp(input, other):
    """input * 2 ** other (a floating result; differentiable in input)."""
    dtype = input.dtype if input.is_floating_point() else _gs().get_default_dtype()
    return input.to(dtype) * other.to(dtype).exp2()


def frexp(input):
    """(mantissa, exponent) with input = mantissa * 2 ** exponent and |mantissa| in [0.5, 1)
    (0, infinities and NaN keep exponent 0), as torch.return_types.frexp."""
    if not input.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = np.frexp(input.detach().numpy())
    return return_types.frexp(_c.tensor(mantissa, dtype=input.dtype),
                              _c.tensor(exponent, dtype=_c.int32))


def nextafter(input, other):
    """The next floating-point value after input in the direction of other."""
    a, b = _float_operands(input, other, "nextafter")
    return _c.tensor(np.nextafter(a.detach().numpy(), b.detach().numpy()), dtype=a.dtype)




_c_div = Tensor.div


def div(self, other, /, *, rounding_mode=None):
    """self / other, broadcast: true division (rounding_mode None), or rounded toward zero
    ('trunc') or toward minus infinity ('floor', Python's //), as torch.div. Rounded results
    have zero gradient, as torch's."""
    if rounding_mode is None:
        return _c_div(self, other)
    if rounding_mode == "floor":
        return self.floor_divide(other)
    if rounding_mode == "trunc":
        other_float = other.is_floating_point() if isinstance(other, Tensor) else isinstance(other, float)
        if self.is_floating_point() or other_float:
            return _c_div(self, other).trunc()
        # integers: a - fmod(a, b) is an exact multiple of b, so floor division is exact
        return (self - self.fmod(other)).floor_divide(other)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                       f"found '{rounding_mode}'")


_c_add, _c_sub, _c_sub_ = Tensor.add, Tensor.sub, Tensor.sub_


def add(self, other, /, *, alpha=1):
    """self + alpha * other, broadcast."""
    return _c_add(self, other) if alpha == 1 else _c_add(self, other * alpha)


def sub(self, other, /, *, alpha=1):
    """self - alpha * other, broadcast."""
    return _c_sub(self, other) if alpha == 1 else _c_sub(self, other * alpha)


def sub_(self, other, /, *, alpha=1):
    """self -= alpha * other, in place."""
    return _c_sub_(self, other) if alpha == 1 else _c_sub_(self, other * alpha)


def divide(input, other, *, rounding_mode=None):
    """torch.divide: div's other name."""
    return div(input, other, rounding_mode=rounding_mode)


def multiply(input, other):
    """torch.multiply: input * other."""
    return input.mul(other)


def subtract(input, other, *, alpha=1):
    """torch.subtract: input - alpha * other."""
    return sub(input, other, alpha=alpha)


for _name, _value in [("add", add), ("sub", sub), ("sub_", sub_), ("div", div), ("divide", divide), ("multiply", multiply),
                      ("subtract", subtract), ("logit", logit), ("logaddexp", logaddexp), ("logaddexp2", logaddexp2), ("hypot", hypot),
                      ("sinc", sinc), ("xlogy", xlogy), ("heaviside", heaviside),
                      ("copysign", copysign), ("sgn", sgn), ("signbit", signbit),
                      ("fmax", fmax), ("fmin", fmin), ("nansum", nansum), ("nanmean", nanmean),
                      ("aminmax", aminmax), ("renorm", renorm), ("addmv", addmv),
                      ("addr", addr), ("baddbmm", baddbmm), ("addbmm", addbmm),
                      ("cov", cov), ("corrcoef", corrcoef), ("gcd", gcd), ("lcm", lcm),
                      ("ldexp", ldexp), ("frexp", frexp), ("nextafter", nextafter),
                      ("bitwise_left_shift", bitwise_left_shift),
                      ("bitwise_right_shift", bitwise_right_shift),
                      ("bitwise_left_shift_", bitwise_left_shift_),
                      ("bitwise_right_shift_", bitwise_right_shift_)]:
    _c._extend_type(Tensor, _name, _value)
del _name, _value
