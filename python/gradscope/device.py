"""gradscope.device and the device side of ``.to()``, as PyTorch scripts write them:
``device = torch.device("cuda" if torch.cuda.is_available() else "cpu")``, ``model.to(device)``,
``x.to(device, non_blocking=True)``, ``t.cpu()``.

Gradscope computes on the CPU only. A device object can name any type, as torch's can; moving
a tensor or a module to anything but the CPU is a RuntimeError that says so. ``Tensor.to``
takes PyTorch's forms: a dtype, a device, both, another tensor (its dtype), and the dtype=,
device=, non_blocking= and copy= keywords.
"""
from gradscope import _gradscope as _c
from gradscope.nn.module import Module as _Module


class device:
    """Where a tensor lives: gradscope has only 'cpu'. device('cpu'), device('cuda', 0),
    device('cuda:1') and device(type='cpu') are made as in PyTorch."""

    __module__ = "gradscope"

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        if not isinstance(type, str):
            raise TypeError(f"device(): expected a string like 'cpu', got {type!r}")
        if ":" in type:
            type, _, number = type.partition(":")
            if not number.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{number}'")
            index = int(number)
        self.type = type
        self.index = index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):  # as torch.device's: a string is not equal to a device
        if not isinstance(other, device):
            return NotImplemented
        return (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


def _check_cpu(where, what):
    """The device named is the CPU, or a RuntimeError naming it."""
    if where is None:
        return
    d = where if isinstance(where, device) else device(where) if isinstance(where, str) else None
    if d is None:
        raise TypeError(f"{what}: expected a device, a device string or a dtype, got {where!r}")
    if d.type != "cpu":
        raise RuntimeError(f"{what}: gradscope computes on the CPU only, cannot move to "
                           f"'{d}' (use device('cpu'))")


def _split_to_args(args, kwargs, what):
    """(device, dtype) from .to's positional and keyword forms."""
    where = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    kwargs.pop("copy", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"{what} got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, _c.dtype):
            dtype = a
        elif _c.is_tensor(a):
            dtype = a.dtype
        elif isinstance(a, (str, device)):
            where = a
        elif isinstance(a, bool):  # non_blocking, copy given by position
            continue
        else:
            raise TypeError(f"{what}: expected a device, a dtype or a tensor, got {a!r}")
    return where, dtype


_to_dtype = _c.Tensor.to


def _tensor_to(self, *args, **kwargs):
    """t.to(dtype), t.to(device), t.to(device, dtype), t.to(other): t itself when nothing
    changes, as PyTorch's."""
    where, dtype = _split_to_args(args, dict(kwargs), "Tensor.to()")
    _check_cpu(where, "Tensor.to()")
    return self if dtype is None else _to_dtype(self, dtype)


def _tensor_cpu(self):
    """The tensor itself: it is on the CPU."""
    return self


def _tensor_cuda(self, *args, **kwargs):
    """A RuntimeError: gradscope has no GPU."""
    raise RuntimeError("Tensor.cuda(): gradscope computes on the CPU only")


def _tensor_device(self):
    """device(type='cpu'), where every tensor lives."""
    return device("cpu")


def _module_to(self, *args, **kwargs):
    """model.to(device) and model.to(dtype): the module itself, on the CPU, its floating
    parameters and buffers converted in place by float()/double() for a dtype."""
    where, dtype = _split_to_args(args, dict(kwargs), "Module.to()")
    _check_cpu(where, "Module.to()")
    if dtype == _c.float64:
        return self.double()
    if dtype == _c.float32:
        return self.float()
    if dtype is not None:
        raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got "
                        f"desired dtype={dtype}")
    return self


def _module_cpu(self):
    """The module itself: it is on the CPU."""
    return self


def _module_cuda(self, device=None):
    """A RuntimeError: gradscope has no GPU."""
    raise RuntimeError("Module.cuda(): gradscope computes on the CPU only")


for _name, _value in [("to", _tensor_to), ("cpu", _tensor_cpu), ("cuda", _tensor_cuda),
                      ("device", property(_tensor_device))]:
    _c._extend_type(_c.Tensor, _name, _value)
for _name, _value in [("to", _module_to), ("cpu", _module_cpu), ("cuda", _module_cuda)]:
    _c._extend_type(_Module, _name, _value)
