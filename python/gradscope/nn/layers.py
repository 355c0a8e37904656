"""Modules natural to write in Python over the engine's ops, as torch.nn's: the containers
ModuleList and ModuleDict, and the parameter-free layers Identity, Flatten, MaxPool2d and
AvgPool2d. Each is an nn.Module subclass, so its children join the engine's module tree
(named_parameters, state_dict, safetensors see them) as a user's own subclass's do."""
from gradscope import _gradscope
from gradscope.nn import functional as F

Module = _gradscope.nn.Module


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
        if isinstance(index, slice):
            return ModuleList(items[index])
        return items[index]

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList is a container: call its modules, not the list")


class ModuleDict(Module):
    """Modules under string keys, as torch.nn.ModuleDict."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def update(self, modules):
        items = modules.items() if hasattr(modules, "items") else modules
        for key, m in items:
            self[key] = m

    def __setitem__(self, key, module):
        setattr(self, key, module)

    def __getitem__(self, key):
        for name, m in self._named_children():
            if name == key:
                return m
        raise KeyError(key)

    def __contains__(self, key):
        return any(name == key for name, _ in self._named_children())

    def __len__(self):
        return len(self._named_children())

    def __iter__(self):
        return iter(self.keys())

    def keys(self):
        return [name for name, _ in self._named_children()]

    def values(self):
        return [m for _, m in self._named_children()]

    def items(self):
        return list(self._named_children())

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


class MaxPool2d(Module):
    """F.max_pool2d as a module."""

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
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """F.avg_pool2d as a module."""

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
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


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


class CrossEntropyLoss(_Loss):
    """F.cross_entropy as a module (ignore_index and label_smoothing as torch's)."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__(_legacy_reduction(size_average, reduce, reduction))
        self.weight = weight
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight,
                               ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class NLLLoss(_Loss):
    """F.nll_loss as a module (ignore_index as torch's)."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__(_legacy_reduction(size_average, reduce, reduction))
        self.weight = weight
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


def _legacy_reduction(size_average, reduce, reduction):
    from gradscope.nn.more_losses import _legacy
    return _legacy(size_average, reduce, reduction)


class MSELoss(_Loss):
    """F.mse_loss as a module."""

    _function = staticmethod(F.mse_loss)


class BCEWithLogitsLoss(_Loss):
    """F.binary_cross_entropy_with_logits as a module."""

    _function = staticmethod(F.binary_cross_entropy_with_logits)
