"""gradscope.device and the device side of ``.to()``, as PyTorch scripts write them:
``device = torch.device("cuda" if torch.cuda.is_available() else "cpu")``, ``model.to(device)``,
``x.to(device, non_blocking=True)``, ``t.cpu()``.

Gradscope computes on the CPU only. A device object can name any type, as torch's can; moving
a tensor or a module to anything but the CPU is a RuntimeError that says so. ``Tensor.to``
takes PyTorch's forms: a dtype, a device, both, another tensor (its dtype), and the dtype=,
device=, non_blocking=, copy= and memory_format= keywords (the layout, memory_format.py).
"""
from gradscope import _gradscope as _c
from gradscope import memory_format as _formats
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
    """(device, dtype, memory_format) from .to's positional and keyword forms."""
    where = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    kwargs.pop("copy", None)
    fmt = kwargs.pop("memory_format", None)
    if fmt is not None and not isinstance(fmt, _formats.memory_format):
        raise TypeError(f"{what}: expected memory_format to be a memory_format, got {fmt!r}")
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
    return where, dtype, fmt


_to_dtype = _c.Tensor.to


def _tensor_to(self, *args, **kwargs):
    """t.to(dtype), t.to(device), t.to(device, dtype), t.to(other), t.to(memory_format=...):
    t itself when nothing changes, as PyTorch's; a converted channels-last tensor stays so
    unless memory_format says otherwise (preserve_format)."""
    where, dtype, fmt = _split_to_args(args, dict(kwargs), "Tensor.to()")
    _check_cpu(where, "Tensor.to()")
    out = self if dtype is None else _to_dtype(self, dtype)
    if fmt in (None, _formats.preserve_format):
        return out  # a conversion is laid out as torch's empty_like: dense strides are kept
    if out is self and _formats.layout_of(self) is fmt:
        return self  # torch aliases when its suggested format for t is the one asked
    if fmt is _formats.contiguous_format:
        return out if out.is_contiguous() else out.contiguous()
    return out.contiguous(memory_format=fmt)  # out itself if laid out so already


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
    """model.to(device), model.to(dtype), model.to(memory_format=...): the module itself, on
    the CPU, its floating parameters and buffers converted in place by float()/double() for a
    dtype, and its 4-D and 5-D ones (and their grads) laid out in memory_format, as torch's."""
    where, dtype, fmt = _split_to_args(args, dict(kwargs), "Module.to()")
    _check_cpu(where, "Module.to()")
    if dtype is not None and dtype not in (_c.float32, _c.float64):
        raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got "
                        f"desired dtype={dtype}")
    if dtype == _c.float64:
        self.double()
    elif dtype == _c.float32:
        self.float()
    if fmt is not None and fmt is not _formats.preserve_format:
        with _c.no_grad():
            for t in list(self.parameters()) + list(self.buffers()):
                for held in (t, t.grad):
                    if held is not None and held.dim() in (4, 5):
                        laid = held.contiguous(memory_format=fmt)
                        if laid is not held:
                            held.data = laid
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
