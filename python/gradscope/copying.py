"""copy.copy, copy.deepcopy and pickle of tensors and modules, as PyTorch's: the common
``best = copy.deepcopy(model)`` or ``copy.deepcopy(model.state_dict())`` of a training script.

A tensor is copied as PyTorch copies it: a leaf only (a graph's inner tensor is refused with
torch's words), its values in new memory, requires_grad and a parameter's kind kept, its .grad
copied too. Pickling stores the values as a NumPy array.

A module is copied by making its class again: a built-in (nn.Linear, a subclass of it) with the
arguments its __init__ had, a Module written in Python from its __new__; then its attributes
(sub-modules, parameters, anything else) are deep-copied into the copy, which registers them,
its registered buffers too, and every value of its state_dict is loaded into the copy.
"""
import copy
import itertools

import numpy as np

from gradscope import _gradscope as _c

_Tensor = _c.Tensor
_Module = _c.nn.Module


def _rebuild_tensor(values, requires_grad, is_parameter):
    t = _c.tensor(values)
    if is_parameter:
        return _c.nn._Parameter(t, requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _tensor_reduce_ex(self, protocol):
    """pickle: the values as an array (a copy), requires_grad and whether it is a parameter."""
    return (_rebuild_tensor, (np.array(self.detach().numpy(), copy=True), self.requires_grad,
                              _c._is_parameter(self)))


def _tensor_deepcopy(self, memo):
    """copy.deepcopy(t): a leaf's values in new memory, requires_grad, kind and .grad kept."""
    if id(self) in memo:
        return memo[id(self)]
    if not self.is_leaf:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                           "the deepcopy protocol at the moment")
    values = self.detach().clone()
    if _c._is_parameter(self):
        new = _c.nn._Parameter(values, self.requires_grad)
    else:
        new = values.requires_grad_(self.requires_grad) if self.requires_grad else values
    memo[id(self)] = new
    if self.grad is not None:
        new.grad = _tensor_deepcopy(self.grad, memo)
    return new


def _nearest_builtin_init(cls):
    """The __init__ of the built-in class a module class derives from, or None."""
    for base in cls.__mro__:
        if base.__module__ == "gradscope.nn" and "__init__" in vars(base) and \
                isinstance(base.__dict__["__init__"], type(_Module.__init__)):
            return base.__init__
    return None


def _module_deepcopy(self, memo):
    """copy.deepcopy(model): the class made again, attributes and buffers deep-copied in, the
    state_dict's values loaded."""
    if id(self) in memo:
        return memo[id(self)]
    cls = type(self)
    new = cls.__new__(cls)
    memo[id(self)] = new
    init_args = self._init_args
    if init_args is not None:
        args, kwargs = copy.deepcopy(init_args, memo)
        _nearest_builtin_init(cls)(new, *args, **(kwargs or {}))
    for name, value in self.__dict__.items():
        setattr(new, name, copy.deepcopy(value, memo))
    have = {name for name, _ in new.named_buffers()}
    for name, buffer in self.named_buffers():
        if "." not in name and name not in have:
            persistent = name in self.state_dict()
            new.register_buffer(name, _tensor_deepcopy(buffer, {}), persistent=persistent)
    _match_dtypes(self, new)
    _match_parameter_order(self, new)
    from gradscope.nn import layer_attributes
    if isinstance(self, layer_attributes.BATCH_NORMS):  # options changed since construction
        new.eps, new.momentum = self.eps, self.momentum
    if isinstance(self, _c.nn.Dropout):
        new.p = self.p
    if isinstance(self, _c.nn.LayerNorm):
        new.eps = self.eps
    new.load_state_dict(self.state_dict())
    new.train(self.training)
    return new


def _match_parameter_order(source, made):
    """Puts each module's own parameters of made in source's order: made again from its
    constructor, a Linear whose weight was registered again (prune.remove) lists weight
    first, and zip(copy.parameters(), model.parameters()) (swa_utils) must pair them."""
    for (_, theirs), (_, mine) in zip(source.named_modules(), made.named_modules()):
        want = [n for n, _ in theirs.named_parameters(recurse=False)]
        have = dict(mine.named_parameters(recurse=False))
        if list(have) != want and sorted(have) == sorted(want):
            for name in want:  # each moves to the end, so they end in want's order
                delattr(mine, name)
                mine.register_parameter(name, have[name])


def _match_dtypes(source, made):
    """Gives each module of made the floating dtype of source's (made again from its
    constructor's arguments, a layer of a .double() model is float32 until now), parents
    first so that a child converted with its parent is corrected after."""
    def own_dtype(module):
        for t in itertools.chain(module.parameters(recurse=False), module.buffers(recurse=False)):
            if t.dtype.is_floating_point:
                return t.dtype
        return None
    for (_, theirs), (_, mine) in zip(source.named_modules(), made.named_modules()):
        want, have = own_dtype(theirs), own_dtype(mine)
        if want is not None and have is not None and want != have:
            mine.to(want)


def _module_reduce_ex(self, protocol):
    raise TypeError(f"cannot pickle '{type(self).__name__}' module: save its state_dict() "
                    "(torch.save(model.state_dict(), path)) and load it into a new one")


for _name, _value in [("__deepcopy__", _tensor_deepcopy), ("__reduce_ex__", _tensor_reduce_ex)]:
    _c._extend_type(_Tensor, _name, _value)
for _name, _value in [("__deepcopy__", _module_deepcopy), ("__reduce_ex__", _module_reduce_ex)]:
    _c._extend_type(_Module, _name, _value)
