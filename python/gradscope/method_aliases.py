"""gradscope.method_aliases: torch's other names for what gradscope already has, and the small
Tensor methods scripts test for, so a script written against any of torch's spellings runs:
the NumPy names (absolute, arccos, arctan2, greater, less_equal, not_equal, ...), in-place
forms made of their out-of-place ops (eq_, cumsum_, addmm_, sinc_, ...: the result must cast
to the tensor's dtype, as torch requires), method forms of package functions (rot90, histc,
diag_embed), broadcast_to, split_with_sizes, legacy new(), and the device and layout
predicates of a CPU tensor (is_cpu, is_cuda, get_device, layout, ...). Put on the C type and
the package by gradscope/__init__.py."""
from gradscope import _gradscope as _c

Tensor = _c.Tensor


class layout:
    """torch.layout: how a tensor's elements are stored; gradscope's are all strided."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "torch." + self._name


strided = layout("strided")

# torch's other names: (alias, gradscope's name), for methods and functions alike
_ALIASES = [("absolute", "abs"), ("arccos", "acos"), ("arccosh", "acosh"), ("arcsin", "asin"),
            ("arcsinh", "asinh"), ("arctan", "atan"), ("arctanh", "atanh"),
            ("arctan2", "atan2"), ("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"),
            ("less_equal", "le"), ("not_equal", "ne"), ("ger", "outer")]
_METHOD_ALIASES = [("absolute_", "abs_"), ("arccos_", "acos_"), ("arccosh_", "acosh_"),
                   ("arcsin_", "asin_"), ("arcsinh_", "asinh_"), ("arctan_", "atan_"),
                   ("arctanh_", "atanh_"), ("arctan2_", "atan2_"), ("multiply_", "mul_"),
                   ("divide_", "div_"), ("subtract_", "sub_"), ("negative_", "neg_"),
                   ("fix_", "trunc_"), ("ndimension", "dim"), ("unsafe_chunk", "chunk"),
                   ("unsafe_split", "split")]

# in place through the out-of-place op of the same name without the underscore
_IN_PLACE = ["eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less",
             "less_equal", "not_equal", "cumsum", "cumprod", "addmm", "addmv", "addr",
             "addbmm", "baddbmm", "deg2rad", "rad2deg", "sinc", "logit", "hypot", "xlogy",
             "heaviside", "copysign", "gcd", "lcm", "ldexp", "nextafter", "remainder",
             "renorm", "sgn", "mvlgamma", "bitwise_and", "bitwise_or", "bitwise_xor",
             "bitwise_not", "logical_not", "float_power"]

_TORCH_NAMES = {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int",
                "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _type_name(dtype):
    return _TORCH_NAMES.get(str(dtype).rpartition(".")[2], str(dtype))


def _in_place(name):
    def method(self, *args, **kwargs):
        import gradscope
        if name == "float_power" and self.dtype != gradscope.float64:
            raise RuntimeError(f"the base given to float_power_ has dtype "
                               f"{_type_name(self.dtype)} but the operation's result requires "
                               f"dtype Double")
        result = getattr(self, name)(*args, **kwargs)
        if not isinstance(result, Tensor):
            result = gradscope.tensor(result)
        if result.dtype != self.dtype and not gradscope.can_cast(result.dtype, self.dtype):
            raise RuntimeError(f"result type {_type_name(result.dtype)} can't be cast to the "
                               f"desired output type {_type_name(self.dtype)}")
        if tuple(result.shape) != tuple(self.shape):
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(result.shape)}")
        return self.copy_(result)
    method.__name__ = name + "_"
    method.__doc__ = f"t.{name}_(...): t.{name}(...) written into t (its dtype kept)."
    return method


def broadcast_to(input, size):
    """torch.broadcast_to: input expanded to size (a view)."""
    return input.expand(*tuple(size))


def is_same_size(self, other):
    """t.is_same_size(other): whether the two shapes are equal."""
    return tuple(self.shape) == tuple(other.shape)


def _split_with_sizes(self, split_sizes, dim=0):
    """t.split_with_sizes(sizes, dim): split with a list of sizes that must sum to the dim."""
    total = self.shape[dim]
    if sum(split_sizes) != total:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {total} "
                           f"(input tensor's size at dimension {dim}), but got "
                           f"split_sizes={list(split_sizes)}")
    return self.split(list(split_sizes), dim)


def _narrow_copy(self, dim, start, length):
    """t.narrow_copy(dim, start, length): narrow's slice as a new tensor."""
    return self.narrow(dim, start, length).clone()


def _new(self, *args):
    """t.new(...): the legacy constructor in t's dtype: t.new(data), t.new(sizes...),
    t.new(Size), t.new() for an empty tensor."""
    import gradscope
    if not args:
        return gradscope.empty(0, dtype=self.dtype)
    if len(args) == 1 and not isinstance(args[0], int):
        data = args[0]
        if isinstance(data, tuple) and all(isinstance(v, int) for v in data) and \
                type(data).__name__ == "Size":
            return gradscope.empty(*data, dtype=self.dtype)
        return gradscope.tensor(data, dtype=self.dtype)
    return gradscope.empty(*args, dtype=self.dtype)


def _is_signed(self):
    """t.is_signed(): whether t's dtype holds negative numbers (not uint8 or bool)."""
    return _type_name(self.dtype) not in ("Byte", "Bool")


def _get_device(self):
    """t.get_device(): -1, the CPU's number."""
    return -1


def _false(self):
    return False


def _itself(self):
    return self


def _imag(self):
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


def _mH(self):
    """t.mH: the conjugate transpose of the last two dims (real tensors: mT)."""
    return self.transpose(-2, -1)


def _H(self):
    """t.H: the conjugate transpose of a matrix (real: t.t())."""
    if self.dim() not in (0, 2):
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.dim()}-D tensor. For batches of matrices, consider using "
                           f"tensor.mH")
    return self if self.dim() == 0 else self.t()


def _documented(fn, name, doc):
    def method(self):
        return fn(self)
    method.__name__, method.__doc__ = name, f"t.{name}(): {doc}"
    return method


def _install():
    import gradscope
    for alias, name in _ALIASES:
        if hasattr(Tensor, name) and not hasattr(Tensor, alias):
            _c._extend_type(Tensor, alias, getattr(Tensor, name))
        if hasattr(gradscope, name) and not hasattr(gradscope, alias):
            setattr(gradscope, alias, getattr(gradscope, name))
    for alias, name in _METHOD_ALIASES:
        if hasattr(Tensor, name) and not hasattr(Tensor, alias):
            _c._extend_type(Tensor, alias, getattr(Tensor, name))
    for name in _IN_PLACE:
        if hasattr(Tensor, name) and not hasattr(Tensor, name + "_"):
            _c._extend_type(Tensor, name + "_", _in_place(name))
    for name in ("rot90", "histc", "diag_embed"):  # package functions as methods
        if not hasattr(Tensor, name):
            _c._extend_type(Tensor, name, getattr(gradscope, name))
    methods = {"broadcast_to": broadcast_to, "is_same_size": is_same_size,
               "split_with_sizes": _split_with_sizes, "narrow_copy": _narrow_copy,
               "new": _new, "is_signed": _is_signed, "get_device": _get_device,
               "is_conj": _documented(_false, "is_conj", "False: real tensors have no "
                                      "conjugate bit."),
               "is_neg": _documented(_false, "is_neg", "False: no tensor has a negative bit."),
               "is_inference": _documented(_false, "is_inference", "False: gradscope has no "
                                           "inference mode."),
               "resolve_neg": _documented(_itself, "resolve_neg", "The tensor itself (no "
                                          "negative bit to resolve).")}
    for name, fn in methods.items():
        if not hasattr(Tensor, name):
            _c._extend_type(Tensor, name, fn)
    properties = {"is_cpu": property(lambda self: True, doc="True: every tensor is on the CPU."),
                  "is_cuda": property(_false, doc="False: gradscope has no GPU."),
                  "is_sparse": property(_false, doc="False: gradscope's tensors are dense."),
                  "is_quantized": property(_false, doc="False: no quantized tensors."),
                  "is_meta": property(_false, doc="False: every tensor has its data."),
                  "is_mkldnn": property(_false, doc="False: no MKL-DNN tensors."),
                  "is_nested": property(_false, doc="False: no nested tensors."),
                  "layout": property(lambda self: strided, doc="The layout: torch.strided."),
                  "real": property(_itself, doc="The tensor itself (real tensors)."),
                  "imag": property(_imag, doc="An error, as torch's for real tensors."),
                  "mH": property(_mH, doc=_mH.__doc__), "H": property(_H, doc=_H.__doc__)}
    for name, prop in properties.items():
        if not hasattr(Tensor, name):
            _c._extend_type(Tensor, name, prop)
    if not hasattr(gradscope, "broadcast_to"):
        gradscope.broadcast_to = broadcast_to
    gradscope.layout, gradscope.strided = layout, strided
