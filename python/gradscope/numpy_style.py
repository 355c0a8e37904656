"""gradscope.numpy_style: torch's NumPy-style conveniences that scripts reach for, written with
the engine's differentiable ops so gradients are theirs: the shape helpers (atleast_1d/2d/3d,
column_stack, row_stack, dstack, ravel, fliplr, flipud, msort, diagflat, vander), the small
elementwise names (float_power, deg2rad, rad2deg, positive, negative, fix, isposinf,
isneginf, isreal, angle, conj, real, resolve_conj, mvlgamma), products and distances (inner,
vdot, dist, pdist, cosine_similarity), nanmedian, empty_strided and asarray, the spectral
windows (hann, hamming, blackman, bartlett, kaiser: computed in the dtype by torch's own
sequence of ops) and the deterministic-algorithms switch. Put on the C type and the package by
gradscope/__init__.py."""
import math

from gradscope import _gradscope as _c, return_types
from gradscope.rearrange import _atleast as _ones_in_front, vstack as row_stack  # noqa: F401

Tensor = _c.Tensor


def _gs():
    import gradscope  # the package's functions, imported after it is built
    return gradscope


def _tensors(args):
    """atleast_*'s arguments: one tensor, several, or one sequence of them."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return list(args[0]), True
    return list(args), len(args) != 1


def _atleast(args, n, shape_of=None):
    """Each tensor of args with at least n dims: ones put in front (rearrange's, as hstack and
    vstack do), or reshaped to shape_of(t)."""
    ts, many = _tensors(args)
    out = [t if t.dim() >= n else t.reshape(shape_of(t)) if shape_of else _ones_in_front(t, n)
           for t in ts]
    return tuple(out) if many else out[0]


def atleast_1d(*tensors):
    """torch.atleast_1d: each tensor with at least one dim (a 0-d one as [1])."""
    return _atleast(tensors, 1)


def atleast_2d(*tensors):
    """torch.atleast_2d: each tensor with at least two dims (1-D [n] as [1, n])."""
    return _atleast(tensors, 2)


def atleast_3d(*tensors):
    """torch.atleast_3d: at least three dims ([n] as [1, n, 1], [m, n] as [m, n, 1])."""
    def shape_of(t):
        if t.dim() == 0:
            return (1, 1, 1)
        if t.dim() == 1:
            return (1, t.shape[0], 1)
        return (t.shape[0], t.shape[1], 1)
    return _atleast(tensors, 3, shape_of)


def column_stack(tensors):
    """torch.column_stack: 0-d and 1-D tensors as columns, joined along dim 1."""
    cols = [t.reshape(t.numel(), 1) if t.dim() <= 1 else t for t in tensors]
    return _c.cat(cols, 1)


def dstack(tensors):
    """torch.dstack: joined along dim 2 after atleast_3d."""
    return _c.cat([atleast_3d(t) for t in tensors], 2)


def ravel(input):
    """torch.ravel: the elements as one dim (a view when the layout allows, else a copy)."""
    return input.reshape(-1)


def fliplr(input):
    """torch.fliplr: dim 1 reversed (at least two dims)."""
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return input.flip(1)


def flipud(input):
    """torch.flipud: dim 0 reversed (at least one dim)."""
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return input.flip(0)


def msort(input):
    """torch.msort: sorted along dim 0 (values only)."""
    return input.sort(dim=0)[0]


def diagflat(input, offset=0):
    """torch.diagflat: a 2-D tensor with input's elements on diagonal offset."""
    return _gs().diag(input.reshape(-1), offset)


def vander(x, N=None, increasing=False):
    """torch.vander: the Vandermonde matrix of 1-D x, columns x**(N-1) .. x**0 (increasing:
    x**0 first), made as torch makes it (a running product), in x's dtype promoted with
    int64."""
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else int(N)
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = x.dtype if x.is_floating_point() else _c.int64
    if n == 0:
        return _c.empty(x.shape[0], 0, dtype=dtype)
    xs = x.to(dtype).unsqueeze(1)
    if n == 1:
        return _c.ones(x.shape[0], 1, dtype=dtype)
    parts = _c.cat([_c.ones(x.shape[0], 1, dtype=dtype), xs.expand(x.shape[0], n - 1)], 1)
    out = parts.cumprod(1)
    return out if increasing else out.flip(1)


def _floating(input):
    return input if input.is_floating_point() else input.to(_c.get_default_dtype())


def float_power(input, exponent):
    """torch.float_power: input ** exponent computed in float64."""
    base = input.to(_c.float64) if isinstance(input, Tensor) else input
    if isinstance(exponent, Tensor):
        exponent = exponent.to(_c.float64)
    if not isinstance(base, Tensor):
        return _c.tensor(float(base), dtype=_c.float64).pow(exponent)
    return base.pow(exponent)


def deg2rad(input):
    """torch.deg2rad: degrees to radians (integers as the default float dtype)."""
    return _floating(input) * (math.pi / 180.0)


def rad2deg(input):
    """torch.rad2deg: radians to degrees (integers as the default float dtype)."""
    return _floating(input) * (180.0 / math.pi)


def positive(input):
    """torch.positive: input itself (refused for bool, as torch's unary +)."""
    if input.dtype == _c.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def negative(input):
    """torch.negative: -input."""
    return input.neg()


def fix(input):
    """torch.fix: trunc's other name (rounded towards zero)."""
    return input.trunc()


def isposinf(input):
    """torch.isposinf: where input is +inf (never for integers)."""
    if not input.is_floating_point():
        return _c.zeros(*input.shape, dtype=_c.bool)
    return input == math.inf


def isneginf(input):
    """torch.isneginf: where input is -inf (never for integers)."""
    if not input.is_floating_point():
        return _c.zeros(*input.shape, dtype=_c.bool)
    return input == -math.inf


def isreal(input):
    """torch.isreal: true everywhere (gradscope's tensors are real)."""
    return _c.ones(*input.shape, dtype=_c.bool)


def angle(input):
    """torch.angle of a real tensor: pi where negative, 0 elsewhere, NaN kept (integers as
    the default float dtype); its gradient is zero, as torch's."""
    x = _floating(input)
    return (x < 0).to(x.dtype) * math.pi + x.detach() * 0


def conj(input):
    """torch.conj: input itself (real tensors)."""
    return input


def resolve_conj(input):
    """torch.resolve_conj: input itself (real tensors have no conjugate bit)."""
    return input


def real(input):
    """torch.real: input itself (real tensors)."""
    return input


def mvlgamma(input, p):
    """torch.mvlgamma: the multivariate log-gamma of dimension p, elementwise (torch 1.13 does
    not check that the elements exceed (p - 1) / 2, and neither does this)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    # as torch: lgamma of input + (-(p-1)/2, ..., -1/2, 0), summed over that last dim
    halves = _c.arange(-p * 0.5 + 0.5, 0.5, 0.5, dtype=input.dtype if
                       input.is_floating_point() else _c.get_default_dtype())
    out = (input.unsqueeze(-1) + halves).lgamma().sum(-1)
    return out + p * (p - 1) * math.log(math.pi) * 0.25


def inner(input, other):
    """torch.inner: the sum over the last dims of input and other (a product for 0-d)."""
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    return _gs().tensordot(input, other, dims=([input.dim() - 1], [other.dim() - 1]))


def vdot(input, other):
    """torch.vdot: the dot product of two 1-D tensors (real: dot)."""
    return input.dot(other)


def dist(input, other, p=2):
    """torch.dist: the p-norm of input - other (broadcast)."""
    return (input - other).norm(p)


def pdist(input, p=2):
    """torch.pdist: nn.functional.pdist (the p-norm distances between the rows of a 2-D
    input, pairs i < j in row order)."""
    from gradscope.nn import functional as F
    return F.pdist(input, p)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """torch.cosine_similarity: nn.functional.cosine_similarity."""
    from gradscope.nn import functional as F
    return F.cosine_similarity(x1, x2, dim=dim, eps=eps)


def nanmedian(input, dim=None, keepdim=False):
    """torch.nanmedian: the lower median of the values that are not NaN (NaN where all are);
    with dim, (values, indices) as torch.return_types.nanmedian."""
    if dim is None:
        flat = input.reshape(-1)
        if flat.numel() == 0:
            return _c.tensor(math.nan, dtype=input.dtype)
        return nanmedian(flat, 0).values
    values, indices = input.sort(dim=dim)  # NaN sorts last, as torch's
    count = (~input.isnan()).sum(dim=dim, keepdim=True)
    pick = ((count - 1).clamp(min=0) // 2)
    out_v, out_i = values.gather(dim, pick), indices.gather(dim, pick)
    if not keepdim:
        out_v, out_i = out_v.squeeze(dim), out_i.squeeze(dim)
    return return_types.nanmedian(out_v, out_i)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False,
                  layout=None, pin_memory=False):
    """torch.empty_strided: an uninitialised tensor of size laid out with stride."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality "
                           f"of strides ({len(stride)})")
    extent = 1 + sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else 0
    base = _c.empty(extent, dtype=dtype or _c.get_default_dtype())
    out = base.as_strided(size, stride)
    return out.requires_grad_() if requires_grad else out


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """torch.asarray: obj as a tensor, obj itself when it is one of that dtype and no copy is
    asked."""
    if isinstance(obj, Tensor):
        out = obj if dtype is None else obj.to(dtype)
        if copy and out is obj:
            out = obj.clone()
    elif copy:
        out = _c.tensor(obj, dtype=dtype)
    else:
        out = _gs().as_tensor(obj, dtype=dtype)
    return out.requires_grad_() if requires_grad and not out.requires_grad else out


# ---- spectral windows: torch's sequence of ops in the dtype, so its numbers ------------------

def _window(name, window_length, periodic, dtype, requires_grad, make):
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    dtype = dtype or _c.get_default_dtype()
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length == 0:
        out = _c.empty(0, dtype=dtype)
    elif window_length == 1:
        out = _c.ones(1, dtype=dtype)
    else:
        n = window_length + 1 if periodic else window_length
        out = make(_c.arange(n, dtype=dtype), n)
        if periodic:
            out = out[:-1].contiguous()
    return out.requires_grad_() if requires_grad else out


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, requires_grad=False):
    """torch.hamming_window: alpha - beta cos(2 pi n / (N - 1))."""
    return _window("hamming_window", window_length, periodic, dtype, requires_grad,
                   lambda w, n: (w * (math.pi * 2 / (n - 1))).cos() * -beta + alpha)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                requires_grad=False):
    """torch.hann_window: hamming_window with alpha = beta = 0.5."""
    return hamming_window(window_length, periodic, 0.5, 0.5, dtype=dtype,
                          requires_grad=requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """torch.blackman_window: 0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    def make(w, n):
        w = w * (math.pi / (n - 1))
        return (w * 4).cos() * 0.08 - (w * 2).cos() * 0.5 + 0.42
    return _window("blackman_window", window_length, periodic, dtype, requires_grad, make)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """torch.bartlett_window: the triangle rising from 0 to 1 and back."""
    def make(w, n):
        w = w * (2.0 / (n - 1))
        first = ((n - 1) >> 1) + 1
        return _c.cat([w[:first], w[first:] * -1 + 2], 0)
    return _window("bartlett_window", window_length, periodic, dtype, requires_grad, make)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, requires_grad=False):
    """torch.kaiser_window: I0(beta sqrt(1 - ((n - a) / a)^2)) / I0(beta), a = (N - 1) / 2."""
    def make(w, n):
        a = (n - 1) / 2.0
        w64 = w.to(_c.float64)
        x = (((w64 - a) / a) ** 2 * -1 + 1).clamp(min=0).sqrt() * beta
        return (x.i0() / _c.tensor(beta, dtype=_c.float64).i0()).to(w.dtype)
    return _window("kaiser_window", window_length, periodic, dtype, requires_grad, make)


# ---- deterministic algorithms ---------------------------------------------------------------

_deterministic = {"mode": False, "warn_only": False}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """torch.use_deterministic_algorithms: recorded only; gradscope's ops are deterministic
    already (the same inputs give the same bits on every run, at any thread count)."""
    _deterministic["mode"], _deterministic["warn_only"] = bool(mode), bool(warn_only)


def are_deterministic_algorithms_enabled():
    """torch.are_deterministic_algorithms_enabled: what use_deterministic_algorithms set."""
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled():
    """torch.is_deterministic_algorithms_warn_only_enabled: its warn_only setting."""
    return _deterministic["warn_only"]


def _adjoint(self):
    """t.adjoint(): the last two dims swapped (real tensors: mT)."""
    return self.transpose(-2, -1)


def _is_nonzero(self):
    """t.is_nonzero(): whether a one-element tensor is not zero."""
    if self.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if self.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(self.item() != 0)


def _is_complex(self):
    """t.is_complex(): False (gradscope's tensors are real)."""
    return False


adjoint = _adjoint
is_nonzero = _is_nonzero
is_complex = _is_complex

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "column_stack", "row_stack", "dstack",
           "ravel", "fliplr", "flipud", "msort", "diagflat", "vander", "float_power",
           "deg2rad", "rad2deg", "positive", "negative", "fix", "isposinf", "isneginf",
           "isreal", "angle", "conj", "resolve_conj", "real", "mvlgamma", "inner", "vdot",
           "dist", "pdist", "cosine_similarity", "nanmedian", "empty_strided", "asarray",
           "hamming_window", "hann_window", "blackman_window", "bartlett_window",
           "kaiser_window", "use_deterministic_algorithms",
           "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "adjoint", "is_nonzero",
           "is_complex"]

_METHODS = ("ravel", "fliplr", "flipud", "msort", "diagflat", "float_power", "deg2rad",
            "rad2deg", "positive", "negative", "fix", "isposinf", "isneginf", "isreal",
            "angle", "conj", "resolve_conj", "mvlgamma", "inner", "vdot", "dist",
            "nanmedian", "adjoint", "is_nonzero", "is_complex")
for _name in _METHODS:
    if not hasattr(Tensor, _name):
        _c._extend_type(Tensor, _name, globals()[_name])
del _name
