"""nn.Parameter as PyTorch's class: ``Parameter(data, requires_grad=True)`` makes the engine's
parameter (the C extension's _Parameter moves data's handle into it, so data's object is stale
afterwards), and ``isinstance(t, nn.Parameter)`` is true of every tensor that is a parameter,
as the parameters a module returns are."""
from gradscope import _gradscope


class _ParameterType(type):
    def __instancecheck__(cls, obj):
        return _gradscope.is_tensor(obj) and _gradscope._is_parameter(obj)


class Parameter(metaclass=_ParameterType):
    """A tensor that is a module's parameter: a leaf the module owns, which it registers when
    assigned as an attribute (self.w = nn.Parameter(t))."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _gradscope.empty(0)
        return _gradscope.nn._Parameter(data, requires_grad)
