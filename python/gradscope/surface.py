"""torch's smaller top-level names that ordinary programs call, on gradscope: compositions of
the engine's differentiable ops (cdist, std_mean, var_mean, rot90, diag_embed, clamp with
tensor bounds), histc, finfo/iinfo, the legacy typed constructors (FloatTensor, ...), the
generator's state (get_rng_state, set_rng_state, Generator), OpenBLAS's thread count
(set_num_threads), set_printoptions, and torch.backends' flags."""
import builtins
import ctypes
import math
import types

from gradscope import _gradscope as _c


# ---- compositions of differentiable ops ----------------------------------------------------

def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Distances between each row of x1 (..., P, M) and each row of x2 (..., R, M): the p-norm
    of their difference, (..., P, R), as torch.cdist (differentiable; p=0 counts the
    differing coordinates, p=inf takes the largest)."""
    if x1.dim() < 2 or x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D"
                           if x1.dim() < 2 else
                           f"cdist only supports at least 2D tensors, X2 got: {x2.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError("X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if p == 0:
        return (diff != 0).to(x1.dtype).sum(-1)
    if math.isinf(p):
        return diff.abs().amax(-1)
    if p == 2:
        return (diff * diff).sum(-1).sqrt()
    if p == 1:
        return diff.abs().sum(-1)
    return (diff.abs() ** p).sum(-1) ** (1.0 / p)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) over dim (all elements by default), as torch.var_mean."""
    return _moments(input, dim, unbiased, keepdim, correction, False)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) over dim (all elements by default), as torch.std_mean."""
    return _moments(input, dim, unbiased, keepdim, correction, True)


def _moments(input, dim, unbiased, keepdim, correction, take_sqrt):
    if isinstance(dim, bool):  # torch.var_mean(x, False): the unbiased flag
        unbiased, dim = dim, None
    if correction is None:
        correction = 0 if unbiased is False else 1
    if dim is None:
        dims = tuple(range(input.dim()))
    elif isinstance(dim, int):
        dims = (dim,)
    else:
        dims = tuple(dim)
    n = 1
    for d in dims:
        n *= input.shape[d] if input.dim() else 1
    if dim is None:  # over everything: torch's mean of all elements (0.0, not -0.0)
        mean = input.mean()
        centred = input - mean
        var = (centred * centred).sum() / builtins.max(n - correction, 0)
        if keepdim:
            mean = mean.reshape((1,) * input.dim())
            var = var.reshape((1,) * input.dim())
    elif not dims:
        mean = input * 1.0
        centred = input - mean
        var = centred * centred / builtins.max(n - correction, 0)
    else:
        mean = input.mean(dims, keepdim=True)
        centred = input - mean
        var = (centred * centred).sum(dims, keepdim=True) / builtins.max(n - correction, 0)
        if not keepdim:
            for d in sorted((d % input.dim() for d in dims), reverse=True):
                mean, var = mean.squeeze(d), var.squeeze(d)
    return (var.sqrt() if take_sqrt else var), mean


def rot90(input, k=1, dims=(0, 1)):
    """input rotated by 90 degrees k times in the plane of dims (from the first towards the
    second), as torch.rot90."""
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    n = input.dim()
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    d0, d1 = dims[0] % n, dims[1] % n
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    k = k % 4
    if k == 1:
        return input.flip([d1]).transpose(d0, d1)
    if k == 2:
        return input.flip([d0, d1])
    if k == 3:
        return input.flip([d0]).transpose(d0, d1)
    return input.clone()


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Square matrices whose diagonal (offset) holds input's last dimension, placed in dims
    dim1 and dim2 of the result, as torch.diag_embed (differentiable)."""
    n = input.shape[-1] + builtins.abs(offset)
    out_dim = input.dim() + 1
    d1, d2 = dim1 % out_dim, dim2 % out_dim
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    m = input.shape[-1]
    eye = _c.eye(n, dtype=input.dtype)
    rows = eye.index_select(0, _c.arange(m) + builtins.max(-offset, 0))  # [m, n] one-hot
    cols = eye.index_select(0, _c.arange(m) + builtins.max(offset, 0))
    place = rows.unsqueeze(2) * cols.unsqueeze(1)  # place[k] is 1 at (row k, col k) only
    # out[..., i, j] = sum_k input[..., k] * place[k, i, j]
    out = (input.unsqueeze(-1).unsqueeze(-1) * place).sum(-3)
    # out's matrix dims are the last two; move them to d1 and d2
    if (d1, d2) != (out_dim - 2, out_dim - 1):
        lead = [i for i in range(out_dim) if i not in (d1, d2)]
        order = [0] * out_dim
        for pos, src in zip(lead, range(out_dim - 2)):
            order[pos] = src
        order[d1], order[d2] = out_dim - 2, out_dim - 1
        out = out.permute(*order)
    return out


def histc(input, bins=100, min=0, max=0):
    """A histogram of input's elements in bins equal bins between min and max (both 0: the
    data's own range); elements outside are ignored, as torch.histc (not differentiable)."""
    if bins <= 0:
        raise RuntimeError(f"torch.histogramc: bins must be > 0, but got {bins} for bins")
    values = input.detach().double().reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and values.numel() > 0:
        lo, hi = values.min().item(), values.max().item()
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError(f"torch.histogramc: max must be larger than min, but got min {lo} "
                           f"max {hi}")
    inside = values[(values >= lo) & (values <= hi)]
    index = ((inside - lo) * bins / (hi - lo)).long().clamp(0, bins - 1)
    counts = _c.zeros(bins, dtype=_c.float64)
    if index.numel():
        counts = counts.index_add(0, index, _c.ones(index.numel(), dtype=_c.float64))
    return counts.to(input.dtype)


_clamp_engine = _c.clamp


def clamp(input, min=None, max=None, *, out=None):
    """torch.clamp: with number bounds the engine's clamp; with tensor bounds (broadcast)
    maximum(input, min) then minimum(., max), differentiable as torch's."""
    if out is not None:
        raise TypeError("clamp(): out= is not supported by gradscope")
    if not _c.is_tensor(min) and not _c.is_tensor(max):
        return _clamp_engine(input, min, max)
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    result = input
    if min is not None:
        result = _c.maximum(result, min if _c.is_tensor(min) else _c.full_like(input, min))
    if max is not None:
        result = _c.minimum(result, max if _c.is_tensor(max) else _c.full_like(input, max))
    return result


clip = clamp


# ---- dtype information -----------------------------------------------------------------------

class finfo:
    """The limits of a floating dtype (float32 by default), as torch.finfo."""

    _TABLE = {
        "float32": dict(bits=32, eps=1.1920928955078125e-07, max=3.4028234663852886e+38,
                        min=-3.4028234663852886e+38, tiny=1.1754943508222875e-38,
                        resolution=1e-06),
        "float64": dict(bits=64, eps=2.220446049250313e-16, max=1.7976931348623157e+308,
                        min=-1.7976931348623157e+308, tiny=2.2250738585072014e-308,
                        resolution=1e-15),
    }

    def __init__(self, type=None):
        name = _dtype_name(type if type is not None else _c.get_default_dtype())
        if name not in self._TABLE:
            raise TypeError(f"torch.finfo() requires a floating point input type. Use "
                            f"torch.iinfo to handle '{name}'")
        for k, v in self._TABLE[name].items():
            setattr(self, k, v)
        self.smallest_normal = self.tiny
        self.dtype = name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo:
    """The limits of an integer dtype, as torch.iinfo."""

    _TABLE = {"int64": (64, -2 ** 63, 2 ** 63 - 1), "int32": (32, -2 ** 31, 2 ** 31 - 1),
              "int16": (16, -2 ** 15, 2 ** 15 - 1), "int8": (8, -128, 127),
              "uint8": (8, 0, 255)}

    def __init__(self, type):
        name = _dtype_name(type)
        if name not in self._TABLE:
            raise TypeError(f"torch.iinfo() requires an integer input type. Use torch.finfo "
                            f"to handle '{name}'")
        self.bits, self.min, self.max = self._TABLE[name]
        self.dtype = name

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


def _dtype_name(d):
    text = str(d)
    return text.split(".")[-1]


# ---- legacy typed constructors -----------------------------------------------------------------

def _typed(name, dtype, doc):
    def make(*args):
        if len(args) == 1 and not isinstance(args[0], int):
            return _c.tensor(args[0], dtype=dtype)
        if not args:
            return _c.zeros(0, dtype=dtype)
        return _c.empty(*args, dtype=dtype).zero_()
    make.__name__ = make.__qualname__ = name
    make.__doc__ = doc
    return make


FloatTensor = _typed("FloatTensor", _c.float32,
                     "FloatTensor(data) or FloatTensor(*sizes): a float32 tensor (sizes: "
                     "zeros; torch leaves them uninitialised).")
DoubleTensor = _typed("DoubleTensor", _c.float64,
                      "DoubleTensor(data) or DoubleTensor(*sizes): a float64 tensor.")
LongTensor = _typed("LongTensor", _c.int64,
                    "LongTensor(data) or LongTensor(*sizes): an int64 tensor.")
IntTensor = _typed("IntTensor", _c.int32,
                   "IntTensor(data) or IntTensor(*sizes): an int32 tensor.")
BoolTensor = _typed("BoolTensor", _c.bool,
                    "BoolTensor(data) or BoolTensor(*sizes): a bool tensor.")


# ---- the generator's state -------------------------------------------------------------------

def get_rng_state():
    """The default generator's state as a uint8 tensor in torch's 5056-byte layout (its
    Mersenne Twister state and cached normal), for set_rng_state."""
    return _c.tensor(list(_c._get_rng_state()), dtype=_c.uint8)


def set_rng_state(new_state):
    """Puts back a state get_rng_state() returned: the numbers drawn next repeat."""
    if _c.is_tensor(new_state):
        new_state = bytes(new_state.tolist())
    _c._set_rng_state(bytes(new_state))


_initial_seed = [67280421310721]
_manual_seed_engine = _c.manual_seed


def manual_seed(seed):
    """Seeds the default generator (randn, rand, randint, randperm, dropout, shuffles)."""
    seed = int(seed)
    _manual_seed_engine(seed)
    _initial_seed[0] = seed
    return default_generator


def initial_seed():
    """The seed manual_seed last gave (or the default seed)."""
    return _initial_seed[0]


def seed():
    """Seeds the default generator from the operating system's randomness; returns the seed."""
    import os
    s = int.from_bytes(os.urandom(8), "little") >> 1
    manual_seed(s)
    return s


class Generator:
    """A generator of its own: manual_seed, seed, initial_seed, get_state and set_state, as
    torch.Generator. Functions that take generator= (random_split, the samplers) draw from it;
    its numbers are torch's for the same seed."""

    def __init__(self, device="cpu"):
        self.device = device
        self._seed = 67280421310721
        self._state = None  # None: freshly seeded with _seed

    def manual_seed(self, seed):
        self._seed = int(seed)
        self._state = None
        return self

    def seed(self):
        import os
        self.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
        return self._seed

    def initial_seed(self):
        return self._seed

    def get_state(self):
        with self._drawing():
            return get_rng_state()

    def set_state(self, new_state):
        if _c.is_tensor(new_state):
            new_state = bytes(new_state.tolist())
        self._state = bytes(new_state)
        return self

    def _drawing(self):
        """A context in which the default generator draws this generator's numbers: its state
        is swapped in, and swapped out again (with this one's advanced) at the end."""
        gen = self

        class _Swap:
            def __enter__(self):
                self.saved = _c._get_rng_state()
                if gen._state is None:
                    _manual_seed_engine(gen._seed)
                else:
                    _c._set_rng_state(gen._state)

            def __exit__(self, *exc):
                gen._state = _c._get_rng_state()
                _c._set_rng_state(self.saved)
                return False

        return _Swap()


class _DefaultGenerator(Generator):
    """torch.default_generator: the default generator itself."""

    def manual_seed(self, seed):
        _manual_seed_engine(int(seed))
        _initial_seed[0] = int(seed)
        return self

    def initial_seed(self):
        return _initial_seed[0]

    def get_state(self):
        return get_rng_state()

    def set_state(self, new_state):
        set_rng_state(new_state)
        return self

    def _drawing(self):
        class _Nothing:
            def __enter__(self):
                pass

            def __exit__(self, *exc):
                return False
        return _Nothing()


default_generator = _DefaultGenerator()


# ---- threads, print options, backends ---------------------------------------------------------

def _openblas():
    try:
        lib = ctypes.CDLL(_c.__file__)
        lib.openblas_set_num_threads, lib.openblas_get_num_threads  # noqa: B018
        return lib
    except (OSError, AttributeError):
        return None


_threads = [None]


def set_num_threads(n):
    """The number of threads matrix products use (OpenBLAS's, when the engine is linked with
    it; otherwise remembered only)."""
    if not isinstance(n, int) or n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    lib = _openblas()
    if lib is not None:
        lib.openblas_set_num_threads(ctypes.c_int(n))
    _threads[0] = n


def get_num_threads():
    """The number of threads matrix products use (OpenBLAS's)."""
    lib = _openblas()
    if lib is not None:
        lib.openblas_get_num_threads.restype = ctypes.c_int
        return int(lib.openblas_get_num_threads())
    if _threads[0] is not None:
        return _threads[0]
    import os
    return os.cpu_count() or 1


def set_num_interop_threads(n):
    """Accepted: gradscope has no inter-op thread pool."""


def get_num_interop_threads():
    """1: gradscope has no inter-op thread pool."""
    return 1


_PROFILES = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
             "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
             "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80)}
_print = dict(_PROFILES["default"], sci_mode=None)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """The tensor repr's options, as torch.set_printoptions: digits after the point
    (precision), how many elements before summarising (threshold) and how many shown at each
    end (edgeitems), the line width, and scientific notation always (sci_mode=True), never
    (False) or by torch's rule (None, which every call sets unless given). profile is
    "default", "short" or "full"."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be default, short or full, got "
                             f"{profile!r}")
        _print.update(_PROFILES[profile])
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            _print[name] = value
    _print["sci_mode"] = sci_mode
    threshold = _print["threshold"]
    _c._set_printoptions(int(_print["precision"]),
                         2 ** 62 if threshold == math.inf else int(threshold),
                         int(_print["edgeitems"]), int(_print["linewidth"]),
                         -1 if sci_mode is None else int(bool(sci_mode)))


def _flags_module(name, doc, **flags):
    import importlib.machinery
    m = types.ModuleType(name, doc)
    m.__spec__ = importlib.machinery.ModuleSpec(name, None)
    for k, v in flags.items():
        setattr(m, k, v)
    return m


backends = _flags_module("gradscope.backends", "torch.backends: flags gradscope accepts and "
                         "ignores (there is no cuDNN or MPS on gradscope's CPU).")
backends.cudnn = _flags_module(
    "gradscope.backends.cudnn", "torch.backends.cudnn: accepted flags, no effect.",
    benchmark=False, deterministic=False, enabled=True, allow_tf32=True,
    is_available=lambda: False, version=lambda: None)
backends.mps = _flags_module(
    "gradscope.backends.mps", "torch.backends.mps: not available on gradscope.",
    is_available=lambda: False, is_built=lambda: False)
backends.cuda = _flags_module(
    "gradscope.backends.cuda", "torch.backends.cuda: not available on gradscope.",
    is_built=lambda: False)
backends.cuda.matmul = _flags_module("gradscope.backends.cuda.matmul", None, allow_tf32=False)
backends.mkldnn = _flags_module("gradscope.backends.mkldnn", None, enabled=True,
                                is_available=lambda: False)
backends.openmp = _flags_module("gradscope.backends.openmp", None, is_available=lambda: False)


def _inplace_view(name, make):
    """Tensor.<name> (unsqueeze_, t_, ...): the view make(t, ...) would return, given to the
    tensor itself (as_strided_ over its own storage), as torch changes a tensor's shape in
    place; returns the tensor."""
    def method(self, *args, **kwargs):
        view = make(self.detach(), *args, **kwargs)
        return self.as_strided_(view.shape, view.stride(), view.storage_offset(), _op=name)
    method.__name__ = name
    method.__doc__ = (f"In place: the tensor takes the shape and strides of its {name[:-1]}() "
                      f"view over its own storage (its version goes up), as torch's {name}.")
    return method


def _resize_(self, *sizes, memory_format=None):
    """Tensor.resize_(*sizes): the tensor becomes contiguous of that shape over its own bytes
    (their row-major order kept) when they hold enough elements, else over new bytes holding
    the first elements it had (the rest zero), as torch's resize_."""
    shape = list(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)) else list(sizes)
    strides, n = [], 1
    for size in reversed(shape):
        strides.insert(0, n)
        n *= int(size)
    if n <= self.numel() and self.is_contiguous():
        return self.as_strided_(shape, strides, self.storage_offset(), _op="resize_")
    fresh = _c.zeros(shape, dtype=self.dtype)
    kept = min(n, self.numel())
    if kept:
        fresh.view(-1)[:kept] = self.detach().reshape(-1)[:kept]
    self.data = fresh
    return self


def _resize_as_(self, other, memory_format=None):
    """Tensor.resize_as_(other): resize_ to other's shape."""
    return _resize_(self, list(other.shape))


for _name, _make in (("t_", lambda t: t.t()),
                     ("transpose_", lambda t, dim0, dim1: t.transpose(dim0, dim1)),
                     ("swapdims_", lambda t, dim0, dim1: t.transpose(dim0, dim1)),
                     ("swapaxes_", lambda t, axis0, axis1: t.transpose(axis0, axis1)),
                     ("squeeze_", lambda t, *dim: t.squeeze(*dim)),
                     ("unsqueeze_", lambda t, dim: t.unsqueeze(dim))):
    if not hasattr(_c.Tensor, _name):
        _c._extend_type(_c.Tensor, _name, _inplace_view(_name, _make))
for _name, _value in (("resize_", _resize_), ("resize_as_", _resize_as_)):
    if not hasattr(_c.Tensor, _name):
        _c._extend_type(_c.Tensor, _name, _value)
