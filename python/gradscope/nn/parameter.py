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


_Module = _gradscope.nn.Module
_TYPENAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "int64": "LongTensor",
              "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor",
              "uint8": "ByteTensor", "bool": "BoolTensor"}


def _as_parameter(value):
    """A tensor becomes a Parameter (its handle moves into it), as torch 1.13's containers
    make one of a plain tensor; a Parameter or anything else is kept as it is."""
    if _gradscope.is_tensor(value) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _line(key, p, dtype_text):
    if not _gradscope.is_tensor(p):
        return f"  ({key}): Object of type: {type(p).__name__}"
    size = "x".join(str(n) for n in p.shape)
    kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
    return f"  ({key}): {kind} containing: [{dtype_text(p.dtype)} of size {size}]"


def _typename(dtype):
    """torch.typename's words for a tensor of dtype ("torch.FloatTensor")."""
    prefix, _, name = str(dtype).rpartition(".")
    return f"{prefix}.{_TYPENAMES.get(name, name)}"


class ParameterList(_Module):
    """Parameters held in a list, registered under "0", "1", ... (state_dict keys
    "name.0", ...) as torch.nn.ParameterList; a plain tensor appended becomes a Parameter."""

    def __init__(self, values=None):
        super().__init__()
        self.__dict__["_size"] = 0
        if values is not None:
            self.extend(values)

    def _index(self, idx):
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return idx % n

    def __getitem__(self, idx):
        if isinstance(idx, slice):  # a ParameterList holding the SAME parameters, as torch's
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, str(self._index(idx)))

    def __setitem__(self, idx, param):
        setattr(self, str(self._index(idx)), _as_parameter(param))

    def __len__(self):
        return self.__dict__["_size"]

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value):
        """Adds value (made a Parameter if it is a tensor) at the end; returns self."""
        new = len(self)
        self.__dict__["_size"] = new + 1
        try:
            setattr(self, str(new), _as_parameter(value))
        except BaseException:
            self.__dict__["_size"] = new
            raise
        return self

    def extend(self, values):
        """Appends each of values; returns self."""
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return "\n".join(_line(k, p, str) for k, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(_Module):
    """Parameters under string keys, registered by key (state_dict keys "name.key") as
    torch.nn.ParameterDict; a plain tensor stored becomes a Parameter."""

    def __init__(self, parameters=None):
        super().__init__()
        self.__dict__["_keys"] = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        if key not in self.__dict__["_keys"]:
            # torch 1.13 looks the key up as an attribute: a missing one (d[k], d.pop(k)) is
            # its AttributeError, not a KeyError
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{key}'")
        return getattr(self, key)

    def __setitem__(self, key, value):
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not "
                            f"a string (type is '{type(key).__name__}'). Open an issue on github "
                            "if you need non-string keys.")
        if "." in key:
            raise KeyError("parameter name can't contain \".\"")
        if key == "":
            raise KeyError("parameter name can't be empty string \"\"")
        setattr(self, key, _as_parameter(value))
        self.__dict__["_keys"][key] = None

    def __delitem__(self, key):
        if key not in self.__dict__["_keys"]:
            raise KeyError(key)
        delattr(self, key)  # the engine's entry goes too: state_dict no longer lists it
        del self.__dict__["_keys"][key]

    def __len__(self):
        return len(self.__dict__["_keys"])

    def __iter__(self):
        return iter(list(self.__dict__["_keys"]))

    def __reversed__(self):
        return reversed(list(self.__dict__["_keys"]))

    def __contains__(self, key):
        return key in self.__dict__["_keys"]

    def keys(self):
        """The keys, in insertion order."""
        return self.__dict__["_keys"].keys()

    def values(self):
        """The parameters, in insertion order."""
        return (self[k] for k in list(self.__dict__["_keys"]))

    def items(self):
        """(key, parameter) pairs, in insertion order."""
        return ((k, self[k]) for k in list(self.__dict__["_keys"]))

    def get(self, key, default=None):
        """The parameter under key, or default."""
        return self[key] if key in self else default

    def pop(self, key):
        """Takes the entry out of the dict (and the module's parameters) and returns its
        parameter."""
        value = self[key]
        del self[key]
        return value

    def popitem(self):
        """Takes the last inserted entry out and returns (key, parameter)."""
        if not self.__dict__["_keys"]:
            raise KeyError("popitem(): dictionary is empty")
        key = next(reversed(self.__dict__["_keys"]))
        return key, self.pop(key)

    def setdefault(self, key, default=None):
        """The parameter under key; if there is none, default is stored there first."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        """Takes every entry out."""
        for key in list(self.__dict__["_keys"]):
            del self[key]

    def copy(self):
        """A new ParameterDict holding the same parameters, in the same order."""
        return ParameterDict([(k, self[k]) for k in self.__dict__["_keys"]])

    def fromkeys(self, keys, default=None):
        """A new ParameterDict with each of keys holding default (a plain tensor: a Parameter
        over its memory for each key, as torch's Parameter(default) shares it)."""
        def value():
            plain = _gradscope.is_tensor(default) and not isinstance(default, Parameter)
            return default.detach() if plain else default
        return ParameterDict([(k, value()) for k in keys])

    def __or__(self, other):
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other):
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other):
        self.update(other)
        return self

    def update(self, parameters):
        """Adds each (key, value) of a mapping or an iterable of pairs, as torch 1.13: a plain
        mapping's keys in sorted order, an OrderedDict's, a ParameterDict's or pairs' in
        theirs."""
        from collections import OrderedDict
        from collections.abc import Iterable, Mapping
        if not isinstance(parameters, Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of "
                            "key/value pairs, but got " + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, value in parameters.items():
                self[key] = value
        elif isinstance(parameters, Mapping):
            for key, value in sorted(parameters.items()):
                self[key] = value
        else:
            for j, pair in enumerate(parameters):
                if not isinstance(pair, Iterable):
                    raise TypeError(f"ParameterDict update sequence element #{j} should be "
                                    f"Iterable; is{type(pair).__name__}")
                if len(pair) != 2:
                    raise ValueError(f"ParameterDict update sequence element #{j} has length "
                                     f"{len(pair)}; 2 is required")
                self[pair[0]] = pair[1]

    def extra_repr(self):
        return "\n".join(_line(k, p, _typename) for k, p in self.items())

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")
