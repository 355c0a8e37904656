"""Modules natural to write in Python over the engine's ops, as torch.nn's: the containers
ModuleList and ModuleDict (and the list edits of the engine's Sequential: slices, del,
insert, append, extend, pop, +), and the parameter-free layers Identity, Flatten, MaxPool2d
and AvgPool2d. Each is an nn.Module subclass, so its children join the engine's module tree
(named_parameters, state_dict, safetensors see them) as a user's own subclass's do. Engine
modules are shared as torch's: a slice or a second container holds the SAME modules."""
from collections import OrderedDict

from gradscope import _gradscope
from gradscope.nn import functional as F

Module = _gradscope.nn.Module
Sequential = _gradscope.nn.Sequential


def _position(container, idx):
    """idx (negative: from the end) as a position in range, or torch's IndexError."""
    n = len(container)
    idx = int(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx % n


def _delete_and_renumber(container, idx):
    """del container[idx] (an int or a slice), then the names "0".."n-1" again, as torch's
    Sequential and ModuleList keep their numbering."""
    names = [name for name, _ in container._named_children()]
    if isinstance(idx, slice):
        doomed = names[idx]
    else:
        doomed = [names[_position(container, idx)]]
    for name in doomed:
        container._remove_child(name)
        container.__dict__.pop(name, None)
    for i, (name, _) in enumerate(container._named_children()):
        if name != str(i):
            container._rename_child(name, str(i))
            value = container.__dict__.pop(name, None)
            if value is not None:
                container.__dict__[str(i)] = value


def _insert(container, index, module):
    """module at position index, the later ones renumbered (torch's insert)."""
    if not isinstance(module, Module):
        raise AssertionError(f"module should be of type: {Module}")
    n = len(container)
    if not -n <= index <= n:
        raise IndexError(f"Index out of range: {index}")
    if index < 0:
        index += n
    for i in range(n, index, -1):
        container._rename_child(str(i - 1), str(i))
        value = container.__dict__.pop(str(i - 1), None)
        if value is not None:
            container.__dict__[str(i)] = value
    container._insert_child(index, str(index), module)
    container.__dict__[str(index)] = module


def _seq_getitem(self, idx):
    """seq[i] is a child; seq[a:b] a new Sequential holding the SAME modules under their
    names ("1", "2" for seq[1:]), as torch's."""
    if isinstance(idx, slice):
        return self.__class__(OrderedDict(list(self._named_children())[idx]))
    return self._named_children()[_position(self, idx)][1]


def _seq_setitem(self, idx, module):
    setattr(self, self._named_children()[_position(self, idx)][0], module)


def _seq_delitem(self, idx):
    _delete_and_renumber(self, idx)


def _seq_append(self, module):
    """module at the end, named str(len(self)); returns self."""
    setattr(self, str(len(self)), module)
    return self


def _seq_extend(self, sequential):
    """Appends each module of sequential; returns self."""
    for layer in sequential:
        _seq_append(self, layer)
    return self


def _seq_insert(self, index, module):
    """module at position index, the later ones renumbered; returns self."""
    _insert(self, index, module)
    return self


def _seq_pop(self, key):
    """Removes and returns the module at key (torch's Sequential.pop)."""
    v = self[key]
    del self[key]
    return v


def _seq_add(self, other):
    """A new Sequential of self's modules then other's (the same module objects)."""
    if not isinstance(other, Sequential):
        raise ValueError("add operator supports only objects of Sequential class, but "
                         f"{type(other)} is given.")
    return Sequential(*(list(self) + list(other)))


def _seq_iadd(self, other):
    if not isinstance(other, Sequential):
        raise ValueError("add operator supports only objects of Sequential class, but "
                         f"{type(other)} is given.")
    return _seq_extend(self, other)


def _seq_iter(self):
    return iter([m for _, m in self._named_children()])


for _name, _value in [("__getitem__", _seq_getitem), ("__setitem__", _seq_setitem),
                      ("__delitem__", _seq_delitem), ("__iter__", _seq_iter),
                      ("append", _seq_append), ("extend", _seq_extend),
                      ("insert", _seq_insert), ("pop", _seq_pop), ("__add__", _seq_add),
                      ("__iadd__", _seq_iadd)]:
    _value.__name__ = _name
    _value.__qualname__ = "Sequential." + _name
    setattr(Sequential, _name, _value)
del _name, _value


class ModuleList(Module):
    """Modules held in a list, registered under "0", "1", ... as torch.nn.ModuleList."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def append(self, module):
        setattr(self, str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def __len__(self):
        return len(self._named_children())

    def __iter__(self):
        return iter([m for _, m in self._named_children()])

    def __getitem__(self, index):
        items = [m for _, m in self._named_children()]
        if isinstance(index, slice):  # the SAME modules, renumbered, as torch's
            return self.__class__(items[index])
        return items[_position(self, index)]

    def __setitem__(self, index, module):
        setattr(self, str(_position(self, index)), module)

    def __delitem__(self, index):
        _delete_and_renumber(self, index)

    def insert(self, index, module):
        """module before position index, the later ones renumbered."""
        _insert(self, index, module)

    def pop(self, key):
        """Removes and returns the module at key."""
        v = self[key]
        del self[key]
        return v

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        combined = ModuleList()
        for i, module in enumerate(list(self) + list(other)):
            combined.add_module(str(i), module)
        return combined

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList is a container: call its modules, not the list")


class ModuleDict(Module):
    """Modules under string keys, as torch.nn.ModuleDict."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def update(self, modules):
        """Adds each (key, module) of a mapping or an iterable of pairs, in their order."""
        from collections.abc import Iterable, Mapping
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value "
                            "pairs, but got " + type(modules).__name__)
        if isinstance(modules, (Mapping, ModuleDict)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, pair in enumerate(modules):
            if not isinstance(pair, Iterable):
                raise TypeError(f"ModuleDict update sequence element #{j} should be Iterable; "
                                f"is{type(pair).__name__}")
            if len(pair) != 2:
                raise ValueError(f"ModuleDict update sequence element #{j} has length "
                                 f"{len(pair)}; 2 is required")
            self[pair[0]] = pair[1]

    def __setitem__(self, key, module):
        setattr(self, key, module)

    def __getitem__(self, key):
        for name, m in self._named_children():
            if name == key:
                return m
        raise KeyError(key)

    def __delitem__(self, key):
        if key not in self:
            raise KeyError(key)
        delattr(self, key)

    def __contains__(self, key):
        return any(name == key for name, _ in self._named_children())

    def __len__(self):
        return len(self._named_children())

    def __iter__(self):
        return iter(self.keys())

    def keys(self):
        """The keys, in insertion order."""
        return [name for name, _ in self._named_children()]

    def values(self):
        """The modules, in insertion order."""
        return [m for _, m in self._named_children()]

    def items(self):
        """(key, module) pairs, in insertion order."""
        return list(self._named_children())

    def pop(self, key):
        """Takes the entry out and returns its module."""
        module = self[key]
        del self[key]
        return module

    def clear(self):
        """Takes every entry out."""
        for key in self.keys():
            del self[key]

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleDict is a container: call its modules, not the dict")


class Identity(Module):
    """Returns its input, as torch.nn.Identity (any constructor arguments are ignored)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Flatten(Module):
    """Flattens dims start_dim..end_dim into one, as torch.nn.Flatten."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class _MaxPoolNd(Module):
    """A max pooling as a module: _function (F.max_pool1d, 2d or 3d) with its arguments."""
    _function = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._function(input, self.kernel_size, self.stride, self.padding,
                                    self.dilation, ceil_mode=self.ceil_mode,
                                    return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool2d(_MaxPoolNd):
    """F.max_pool2d as a module."""
    _function = staticmethod(F.max_pool2d)


class _AvgPoolNd(Module):
    """An average pooling as a module: _function (F.avg_pool2d or 3d) with its arguments."""
    _function = None

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return type(self)._function(input, self.kernel_size, self.stride, self.padding,
                                    self.ceil_mode, self.count_include_pad,
                                    self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """F.avg_pool2d as a module."""
    _function = staticmethod(F.avg_pool2d)


class _Loss(Module):
    """A loss as a module: forward(input, target) calls its functional form with the
    reduction ('mean', 'sum' or 'none') given at construction, as torch.nn's losses."""

    _function = None

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):
        return type(self)._function(input, target, reduction=self.reduction)

    def extra_repr(self):
        return ""


def _shared(weight):
    """A class weight as the buffer torch's _WeightedLoss registers (in the state_dict): a
    handle over the caller's memory, since registering moves the handle given to the module
    and the caller's tensor must stay usable, as in torch."""
    return None if weight is None else weight.detach()


class CrossEntropyLoss(_Loss):
    """F.cross_entropy as a module (weight, ignore_index and label_smoothing as torch's)."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__(_legacy_reduction(size_average, reduce, reduction))
        self.register_buffer("weight", _shared(weight))
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight,
                               ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class NLLLoss(_Loss):
    """F.nll_loss as a module (weight and ignore_index as torch's)."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__(_legacy_reduction(size_average, reduce, reduction))
        self.register_buffer("weight", _shared(weight))
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


def _legacy_reduction(size_average, reduce, reduction):
    from gradscope.nn.compositions import _legacy_reduction as legacy
    return legacy(size_average, reduce, reduction)


class MSELoss(_Loss):
    """F.mse_loss as a module."""

    _function = staticmethod(F.mse_loss)


class BCEWithLogitsLoss(_Loss):
    """F.binary_cross_entropy_with_logits as a module."""

    _function = staticmethod(F.binary_cross_entropy_with_logits)
