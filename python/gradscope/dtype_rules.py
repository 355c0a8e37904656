"""gradscope.dtype_rules: torch's questions about dtypes, answered by gradscope's own type
promotion (the engine's, as an op on tiny tensors of those dtypes gives it, so the answers can
never disagree with what the ops do): result_type, promote_types, can_cast,
is_floating_point, and Tensor.type() with torch's tensor-type names. Put on the C type and the
package by gradscope/__init__.py."""
from gradscope import _gradscope as _c
from gradscope.tensor_extras import _dtype_name

Tensor = _c.Tensor

# torch's legacy tensor-type names, which programs print and compare
_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "int64": "LongTensor",
               "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor",
               "uint8": "ByteTensor", "bool": "BoolTensor"}


def _probe(x):
    """A tensor standing for x in promotion: x's dtype and its weight (a 0-d tensor weighs
    less than a dimensioned one, a number less than both), without its elements."""
    if isinstance(x, Tensor):
        return x.detach().reshape(-1)[:0] if x.dim() else x.detach().clone()
    return x


def result_type(tensor, other):
    """The dtype an arithmetic op on the two (tensors or numbers) gives."""
    a, b = _probe(tensor), _probe(other)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = _c.tensor(a)
    return (a + b).dtype if not (_is_bool(a) and _is_bool(b)) else _c.bool


def _is_bool(x):
    return (isinstance(x, Tensor) and x.dtype == _c.bool) or isinstance(x, bool)


def promote_types(type1, type2):
    """The smallest dtype both dtypes convert to without losing their kind."""
    if type1 == _c.bool and type2 == _c.bool:
        return _c.bool
    return (_c.zeros(1, dtype=type1) + _c.zeros(1, dtype=type2)).dtype


def can_cast(from_, to):
    """Whether torch's casting rules allow from_ -> to in an op's output: not floating to
    integral, and not anything else to bool."""
    if from_.is_floating_point and not to.is_floating_point:
        return False
    if from_ != _c.bool and to == _c.bool:
        return False
    return True


def is_floating_point(input):
    """Whether input's dtype is floating (float32 or float64)."""
    return input.dtype.is_floating_point


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """With no dtype, the tensor's type name as torch's ('torch.FloatTensor'); with one (a
    dtype, a name such as 'torch.DoubleTensor', or a tensor type), the tensor in that dtype."""
    if dtype is None:
        return "torch." + _TYPE_NAMES[_dtype_name(self.dtype)]
    # a name ('torch.DoubleTensor') or one of the tensor types (gradscope.DoubleTensor)
    name = dtype if isinstance(dtype, str) else getattr(dtype, "__name__", None)
    if name is not None and not isinstance(dtype, type(_c.float32)):
        short = name.rpartition(".")[2]
        for dtype_name, legacy in _TYPE_NAMES.items():
            if short == legacy:
                return self.to(getattr(_c, dtype_name))
        raise ValueError(f"invalid type: '{dtype}'")
    return self.to(dtype)


_c._extend_type(Tensor, "type", _type)
