"""Making tensors the ways torch scripts do beyond zeros/ones/tensor: the ``*_like`` family
with torch's keywords (dtype=, requires_grad=, memory_format=: laid out as the input is, or
as told), ``Tensor.new_*`` (the source's dtype unless told),
``as_tensor``, ``randperm``, ``logspace``, ``get_default_dtype``, and ``normal_``/``uniform_``
as Tensor methods. Each is a call of the engine's own creation ops and conversions."""
import numpy as np

from gradscope import _gradscope as _c
from gradscope.memory_format import laid_out as _laid_out

_Tensor = _c.Tensor
_like_c = {"zeros": _c.zeros_like, "ones": _c.ones_like, "full": _c.full_like}


def _finish(t, dtype, requires_grad, like=None, memory_format=None):
    """t in dtype, laid out as memory_format says (preserve_format, the default: as like is),
    then requiring grad if asked (so it stays a leaf)."""
    if dtype is not None and t.dtype != dtype:
        t = t.to(dtype)
    if like is not None:
        t = _laid_out(t, like, memory_format)
    if requires_grad:
        t.requires_grad_(True)
    return t


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """torch.zeros_like: zeros of input's shape, its dtype unless dtype= says otherwise."""
    return _finish(_like_c["zeros"](input), dtype, requires_grad, input, memory_format)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """torch.ones_like: ones of input's shape, its dtype unless dtype= says otherwise."""
    return _finish(_like_c["ones"](input), dtype, requires_grad, input, memory_format)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False,
              memory_format=None):
    """torch.full_like: fill_value in input's shape, its dtype unless dtype= says otherwise."""
    if dtype is not None:
        return _finish(_c.full(tuple(input.shape), fill_value, dtype=dtype), None, requires_grad,
                       input, memory_format)
    return _finish(_like_c["full"](input, fill_value), None, requires_grad, input, memory_format)


def empty_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """torch.empty_like: a tensor of input's shape whose values are not set."""
    return _finish(_c.empty(*input.shape, dtype=dtype or input.dtype), None, requires_grad, input,
                   memory_format)


def rand_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """torch.rand_like: uniform [0, 1) values in input's shape (a floating dtype)."""
    return _finish(_c.rand(*input.shape, dtype=dtype or input.dtype), None, requires_grad, input,
                   memory_format)


def randn_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """torch.randn_like: standard normal values in input's shape (a floating dtype)."""
    return _finish(_c.randn(*input.shape, dtype=dtype or input.dtype), None, requires_grad, input,
                   memory_format)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False,
                 memory_format=None):
    """torch.randint_like(input, high) or (input, low, high): integers in [low, high)."""
    if high is None:
        low, high = 0, low
    return _finish(_c.randint(low, high, tuple(input.shape), dtype=dtype or input.dtype), None,
                   requires_grad, input, memory_format)


def as_tensor(data, dtype=None, device=None):
    """torch.as_tensor: data itself when it is a tensor of that dtype, else a new tensor (an
    ndarray of a dtype torch keeps is shared, not copied, as torch.from_numpy shares it)."""
    if isinstance(data, _Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray):
        try:
            shared = _c.from_numpy(data)
        except (TypeError, RuntimeError):  # a dtype or layout from_numpy refuses: copied below
            shared = None
        if shared is not None and (dtype is None or shared.dtype == dtype):
            return shared
    return _c.tensor(data, dtype=dtype)


def randperm(n, *, dtype=None, device=None, requires_grad=False):
    """torch.randperm: a random permutation of 0..n-1 (int64), drawn from the seeded
    generator as torch draws it (the same order as torch's for one seed)."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise RuntimeError(f"randperm: expected a non-negative integer n, got {n!r}")
    perm = _c._randperm(n)
    return perm if dtype is None else perm.to(dtype)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """torch.logspace: steps values from base**start to base**end, evenly spaced in the
    exponent."""
    t = base ** _c.linspace(start, end, steps).double()
    return _finish(t.to(dtype or _c.get_default_dtype()), None, requires_grad)


get_default_dtype = _c.get_default_dtype


def set_default_dtype(d):
    """torch.set_default_dtype: the dtype floating tensors are made in from now on when none
    is given (Python floats, zeros(), randn(), arange() with a float, modules' parameters):
    float32 (the start) or float64; gradscope has no other floating dtype."""
    if d in (_c.float32, _c.float64):
        return _c._set_default_dtype(d)
    if isinstance(d, _c.dtype):  # an integer or bool dtype: torch's own refusal
        return _c._set_default_dtype(d)
    from gradscope._missing import NotSupportedError
    raise NotSupportedError(f"set_default_dtype(): gradscope's floating dtypes are float32 and "
                            f"float64, got {d!r}")


def _new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
    """t.new_zeros(size): zeros of that size in t's dtype (or dtype=)."""
    return _c.zeros(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)


def _new_ones(self, *size, dtype=None, device=None, requires_grad=False):
    """t.new_ones(size): ones of that size in t's dtype (or dtype=)."""
    return _c.ones(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)


def _new_empty(self, *size, dtype=None, device=None, requires_grad=False):
    """t.new_empty(size): a tensor of that size in t's dtype whose values are not set."""
    return _c.empty(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """t.new_full(size, fill_value) in t's dtype (or dtype=)."""
    return _finish(_c.full(tuple(size), fill_value, dtype=dtype or self.dtype), None,
                   requires_grad)


def _new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    """t.new_tensor(data): a new tensor of data in t's dtype (or dtype=), a copy always."""
    if isinstance(data, _Tensor):
        out = data.detach().clone().to(dtype or self.dtype)
    else:
        out = _c.tensor(data, dtype=dtype or self.dtype)
    return _finish(out, None, requires_grad)


def _normal_(self, mean=0.0, std=1.0, *, generator=None):
    """t.normal_(mean, std): t filled in place with normal values; returns t."""
    from gradscope.nn import init
    return init.normal_(self, mean, std)


def _uniform_(self, from_=0.0, to=1.0, *, generator=None):
    """t.uniform_(from, to): t filled in place with uniform values in [from, to); returns t."""
    from gradscope.nn import init
    return init.uniform_(self, from_, to)


for _name in ("new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "normal_",
              "uniform_"):
    _c._extend_type(_Tensor, _name, globals()["_" + _name])
