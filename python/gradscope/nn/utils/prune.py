"""torch.nn.utils.prune as in PyTorch 1.13: a pruned parameter ``name`` becomes ``name_orig`` (the
same Parameter object, so an optimizer made before keeps training it) and a buffer
``name_mask``; a forward pre-hook sets ``module.name = name_mask * name_orig`` before each
forward (the engine's computed tensor, as weight_norm's). Pruning the same parameter again
combines the masks in a PruningContainer: an unstructured method picks among the entries
still kept, a structured one among the channels still kept. remove() makes the pruned values
the parameter again.

The methods choose as torch's: L1 and Ln pick the smallest magnitudes or norms through topk,
the random ones draw from the default generator (so a seed gives a fixed mask, though not
torch's mask for torch's seed)."""
import numbers
from abc import ABC as _ABC, abstractmethod as _abstractmethod
from collections.abc import Iterable as _Iterable

import gradscope
from gradscope._missing import unsupported as _unsupported


def _pre_hooks(module):
    return module.__dict__.get("_forward_pre_hooks") or {}


class BasePruningMethod(_ABC):
    """What the pruning methods share: compute_mask (each method's rule), apply (reparametrise
    a module's parameter), prune (a tensor's pruned copy) and remove."""

    _tensor_name = None

    def __init__(self):
        pass

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @_abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask (of t's shape) this method puts on top of default_mask."""

    def apply_mask(self, module):
        """name_mask * name_orig: the pruned tensor the module's forward uses."""
        assert self._tensor_name is not None, "Module {} has to be pruned".format(module)
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prunes module.name with this method (made from args and kwargs), combining with
        an earlier pruning of the same parameter; returns the method (or the container)."""
        method = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            assert importance_scores.shape == orig.shape, (
                "importance_scores should have the same shape as parameter {} of {}".format(
                    name, module))
        else:
            importance_scores = orig
        first = not isinstance(method, PruningContainer)
        if first:
            delattr(module, name)  # the module's parameter goes; orig is the program's again
            module.register_parameter(name + "_orig", orig)
            default_mask = gradscope.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            with gradscope.no_grad():
                mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:  # the parameter back under its name, as before the call
                delattr(module, name + "_orig")
                module.register_parameter(name, orig)
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """t with this method's mask applied (computed on importance_scores, default t)."""
        if importance_scores is not None:
            assert importance_scores.shape == t.shape, (
                "importance_scores should have the same shape as tensor t")
        else:
            importance_scores = t
        if default_mask is None:
            default_mask = gradscope.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """Makes module.name a parameter holding the pruned values (name_orig and name_mask
        go); the pruning itself stays."""
        assert self._tensor_name is not None, (
            "Module {} has to be pruned before pruning can be removed".format(module))
        name = self._tensor_name
        with gradscope.no_grad():
            weight = self.apply_mask(module)
        if name in module.__dict__ or hasattr(module, name):
            delattr(module, name)
        orig = getattr(module, name + "_orig")
        delattr(module, name + "_orig")
        delattr(module, name + "_mask")
        with gradscope.no_grad():
            orig.copy_(weight)
        module.register_parameter(name, orig)


def _composite_method(cls, module, name, *args, **kwargs):
    """cls(*args, **kwargs) for module.name, put in a PruningContainer with the pruning
    already there (whose hook goes: the container's replaces it)."""
    old = None
    hooks = _pre_hooks(module)
    found = [k for k, hook in hooks.items()
             if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
    assert len(found) <= 1, ("Avoid adding multiple pruning hooks to the same tensor {} of "
                             "module {}. Use a PruningContainer.".format(name, module))
    for k in found:
        old = hooks.pop(k)
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if isinstance(old, PruningContainer):
        old.add_pruning_method(method)
        return old
    if old is not None:
        container = PruningContainer(old)
        container.add_pruning_method(method)
        return container
    return method


class PruningContainer(BasePruningMethod):
    """The pruning methods applied to one parameter, in order; its mask is the last method's
    computed on what the earlier ones kept."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1 and not isinstance(args[0], _Iterable):
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in (args[0] if len(args) == 1 else args):
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        """Adds a method pruning the same parameter."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError("{} is not a BasePruningMethod subclass".format(type(method)))
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named '{}' "
                             "to PruningContainer {}. Found '{}'".format(
                                 self._tensor_name, self, method._tensor_name))
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        method = self._pruning_methods[-1]
        new_mask = default_mask.clone()
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            kept = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to "
                                     "have the attribute `dim` defined.")
            dim = method.dim if method.dim >= 0 else method.dim + t.dim()
            others = [d for d in range(t.dim()) if d != dim]
            channels = default_mask.sum(dim=others) != 0
            kept = tuple(channels if d == dim else slice(None) for d in range(t.dim()))
        elif kind == "global":
            kept = tuple(slice(None) for _ in range(t.dim()))
        else:
            raise ValueError("Unrecognized PRUNING_TYPE {}".format(kind))
        partial = method.compute_mask(t[kept], default_mask=default_mask[kept])
        new_mask[kept] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones (a reparametrisation without pruning)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class _UnstructuredBy(BasePruningMethod):
    """Prunes amount (a fraction, or a count) of the entries: those whose score (_scores) is
    largest or smallest (_LARGEST), among the entries default_mask keeps."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        count = _compute_nparams_toprune(self.amount, t.nelement())
        _validate_pruning_amount(self.amount, t.nelement())
        mask = default_mask.clone()
        if count:
            chosen = gradscope.topk(self._scores(t).reshape(-1), k=count, largest=self._LARGEST)
            mask.view(-1)[chosen.indices] = 0
        return mask


class RandomUnstructured(_UnstructuredBy):
    """Prunes amount (a fraction, or a count) of the entries, chosen at random."""

    _LARGEST = True

    @staticmethod
    def _scores(t):
        return gradscope.rand_like(t)

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_UnstructuredBy):
    """Prunes amount (a fraction, or a count) of the entries of smallest magnitude."""

    _LARGEST = False

    @staticmethod
    def _scores(t):
        return t.abs()

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _channel_mask(t, dim, kept_channels):
    """Ones on the kept channels of dim (indices or a bool mask), zeros elsewhere."""
    mask = gradscope.zeros_like(t)
    mask[tuple(kept_channels if d == dim else slice(None) for d in range(t.dim()))] = 1
    return mask


class _StructuredBy(BasePruningMethod):
    """Prunes amount (a fraction, or a count) of the channels along dim: _kept_channels says
    which stay (indices or a bool mask), among the entries default_mask keeps."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        channels = t.shape[self.dim]
        count = _compute_nparams_toprune(self.amount, channels)
        _validate_pruning_amount(self.amount, channels)
        if count == 0:
            return default_mask
        dim = self.dim % t.dim()
        mask = _channel_mask(t, dim, self._kept_channels(t, dim, channels, count))
        return mask * default_mask.to(dtype=mask.dtype)


class RandomStructured(_StructuredBy):
    """Prunes amount (a fraction, or a count) of the channels along dim, chosen at random."""

    def _kept_channels(self, t, dim, channels, count):
        draws = gradscope.rand(channels)
        return draws > gradscope.kthvalue(draws, k=count).values

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(_StructuredBy):
    """Prunes amount (a fraction, or a count) of the channels along dim of smallest n-norm."""

    def __init__(self, amount, n, dim=-1):
        super().__init__(amount, dim)
        self.n = n

    def _kept_channels(self, t, dim, channels, count):
        norms = gradscope.norm(t, p=self.n, dim=[d for d in range(t.dim()) if d != dim])
        return gradscope.topk(norms, k=channels - count, largest=True).indices

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where a given mask is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        assert default_mask.shape == self.mask.shape
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Reparametrises module.name with a mask of ones (nothing pruned); returns module."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prunes amount of module.name's entries at random; returns module."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prunes amount of module.name's entries of smallest magnitude (of importance_scores if
    given); returns module."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prunes amount of module.name's channels along dim at random; returns module."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prunes amount of module.name's channels along dim of smallest n-norm; returns module."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module, name, mask):
    """Prunes module.name where mask is 0; returns module."""
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prunes the (module, name) parameters together: pruning_method (an unstructured one,
    made from kwargs) chooses among all their entries at once."""
    if not isinstance(parameters, _Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = gradscope.cat([importance_scores.get((m, n), getattr(m, n)).reshape(-1)
                            for m, n in parameters])
    default_mask = gradscope.cat([
        getattr(m, n + "_mask", None).reshape(-1) if hasattr(m, n + "_mask")
        else gradscope.ones_like(getattr(m, n)).reshape(-1) for m, n in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        "Found method {} of type {}".format(pruning_method,
                                                            method.PRUNING_TYPE))
    container.add_pruning_method(method)
    with gradscope.no_grad():
        final_mask = container.compute_mask(scores.detach(), default_mask.detach())
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        count = param.numel()
        custom_from_mask(module, name, mask=final_mask[start:start + count].view_as(param))
        start += count


def remove(module, name):
    """Makes module.name a plain parameter again, holding its pruned values; returns module."""
    hooks = _pre_hooks(module)
    for k, hook in list(hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del hooks[k]
            return module
    raise ValueError("Parameter '{}' of module {} has to be pruned before pruning can be "
                     "removed".format(name, module))


def is_pruned(module):
    """Whether module or any submodule has a pruned parameter."""
    return any(isinstance(hook, BasePruningMethod)
               for _, sub in module.named_modules() for hook in _pre_hooks(sub).values())


def _validate_pruning_amount_init(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError("Invalid type for amount: {}. Must be int or float.".format(amount))
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        raise ValueError("amount={} should either be a float in the range [0, 1] or a "
                         "non-negative integer".format(amount))


def _validate_pruning_amount(amount, tensor_size):
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError("amount={} should be smaller than the number of parameters to "
                         "prune={}".format(amount, tensor_size))


def _validate_structured_pruning(t):
    if len(t.shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. "
                         "Found tensor of shape {} with {} dims".format(t.shape, len(t.shape)))


def _compute_nparams_toprune(amount, tensor_size):
    if isinstance(amount, numbers.Integral):
        return amount
    return round(amount * tensor_size)


def _validate_pruning_dim(t, dim):
    if dim >= t.dim():
        raise IndexError("Invalid index {} for tensor of size {}".format(dim, t.shape))


__getattr__ = _unsupported(__name__)
