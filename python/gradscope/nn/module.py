"""What nn.Module (the C extension's type) does in Python, as torch.nn.Module: the tree walks
(children, named_children, modules, named_modules, apply), requires_grad_, float/double,
add_module, extra_repr and PyTorch's ``print(model)`` text
(_repr_text, which the C type's repr calls: a slot cannot be replaced from a type's dict). They are put on the C type itself
(_extend_type), so modules the C code makes (nn.Linear(...), seq[0]) have them too, and
subclasses inherit them as they inherit torch.nn.Module's."""
from gradscope import _gradscope
from gradscope._missing import NotSupportedError

Module = _gradscope.nn.Module


def named_children(self):
    """(name, module) for each direct child, in registration order; a module in several slots
    once, under its first name (as torch's: print(model) shows every slot)."""
    seen = set()
    out = []
    for name, m in self._named_children():
        if id(m) not in seen:
            seen.add(id(m))
            out.append((name, m))
    return iter(out)


def children(self):
    return (m for _, m in self.named_children())


def named_modules(self, memo=None, prefix="", remove_duplicate=True):
    """(dotted name, module) for self and every submodule, depth first, as torch's."""
    if memo is None:
        memo = set()
    if remove_duplicate:
        if id(self) in memo:
            return
        memo.add(id(self))
    yield prefix, self
    for name, child in self.named_children():
        yield from child.named_modules(memo, prefix + ("." if prefix else "") + name,
                                       remove_duplicate)


def modules(self):
    return (m for _, m in self.named_modules())


def apply(self, fn):
    """fn on every submodule, then on self (torch's order); returns self."""
    for child in self.children():
        child.apply(fn)
    fn(self)
    return self


def requires_grad_(self, requires_grad=True):
    for p in self.parameters():
        p.requires_grad_(requires_grad)
    return self


def _convert(self, dtype, what):
    """Every floating parameter and buffer (and its grad) converted in place, as torch's
    Module._apply: the tensors the program holds (and optimizers) stay the same objects."""
    if dtype not in (_gradscope.float32, _gradscope.float64):
        raise NotSupportedError(
            f"Module.{what}(): gradscope's modules compute in float32 or float64, not {dtype}")
    return self._to_dtype(dtype)


def float(self):
    """Floating parameters and buffers converted to float32 in place; returns self."""
    return _convert(self, _gradscope.float32, "float")


def double(self):
    """Floating parameters and buffers converted to float64 in place; returns self."""
    return _convert(self, _gradscope.float64, "double")


def _no_half(what):
    def refuse(self, *args, **kwargs):
        raise NotSupportedError(f"Module.{what}(): gradscope has no {what} dtype (its floating "
                                "dtypes are float32 and float64): use float() or double()")
    refuse.__name__ = what
    refuse.__doc__ = f"Refused: gradscope has no {what} dtype."
    return refuse


half = _no_half("half")
bfloat16 = _no_half("bfloat16")

_TYPE_NAMES = {"torch.FloatTensor": "float32", "torch.DoubleTensor": "float64",
               "gradscope.FloatTensor": "float32", "gradscope.DoubleTensor": "float64"}


def _type(self, dst_type):
    """Module.type(dtype): parameters and buffers converted to dtype (float32 or float64, also
    named 'torch.FloatTensor' / 'torch.DoubleTensor'); returns self."""
    if isinstance(dst_type, str):
        if dst_type not in _TYPE_NAMES:
            raise NotSupportedError(f"Module.type(): gradscope has no {dst_type}")
        dst_type = getattr(_gradscope, _TYPE_NAMES[dst_type])
    return _convert(self, dst_type, "type")


def add_module(self, name, module):
    setattr(self, name, module)


register_module = add_module


def register_parameter(self, name, param):
    """Adds param (a Parameter, or None for an absent one such as bias=False) as name."""
    from gradscope.nn.parameter import Parameter
    if not isinstance(name, str):
        raise TypeError(f"parameter name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError('parameter name can\'t contain "."')
    if name == "":
        raise KeyError('parameter name can\'t be empty string ""')
    if param is not None and not isinstance(param, Parameter):
        kind = param.type() if hasattr(param, "type") and callable(param.type) else type(param).__name__
        raise TypeError(f"cannot assign '{kind}' object to parameter '{name}' "
                        f"(torch.nn.Parameter or None required)")
    setattr(self, name, param)


def get_submodule(self, target):
    """The module at the dotted path target ("" is self), as torch's."""
    module = self
    for part in target.split(".") if target else []:
        child = dict(module.named_children()).get(part)
        if child is None:
            raise AttributeError(f"{module._get_name()} has no attribute `{part}`")
        module = child
    return module


def get_parameter(self, target):
    """The parameter at the dotted path target ("0.bias"), as torch's."""
    path, _, name = target.rpartition(".")
    module = get_submodule(self, path)
    param = dict(module.named_parameters()).get(name) if name else None  # its own: no dot
    if param is None:
        raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
    return param


def extra_repr(self):
    """The constructor's arguments as print(model) shows them; subclasses override it."""
    return self._extra_repr


class RemovableHandle:
    """What register_forward_hook and register_forward_pre_hook return: remove() takes the
    hook off (twice is fine); also a context manager that removes it on exit, as
    torch.utils.hooks.RemovableHandle."""

    _next_id = 0

    def __init__(self, hooks):
        self._hooks = hooks
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1

    def remove(self):
        if self._hooks is not None:
            self._hooks.pop(self.id, None)
            self._hooks = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False


def _add_hook(self, key, hook):
    if not callable(hook):
        raise TypeError(f"{key[1:-1].replace('_', ' ')}: expected a function, got "
                        f"{type(hook).__name__}")
    hooks = self.__dict__.get(key)
    if hooks is None:  # the module's call (nn.c) looks for this dict
        hooks = self.__dict__[key] = {}
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def register_forward_pre_hook(self, hook):
    """hook(module, args) runs before forward; a result that is not None replaces the
    arguments (a single value becomes a 1-tuple). Returns a RemovableHandle."""
    return _add_hook(self, "_forward_pre_hooks", hook)


def register_forward_hook(self, hook):
    """hook(module, args, output) runs after forward; a result that is not None replaces the
    output. Returns a RemovableHandle."""
    return _add_hook(self, "_forward_hooks", hook)


def _get_name(self):
    if type(self) is Module:
        return self._type_name.rsplit(".", 1)[-1]
    return type(self).__name__


def _addindent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


def _repr_text(self):
    """PyTorch's text: Name(extra) or Name(\\n  (child): ...\\n)."""
    extra = self.extra_repr()
    extra_lines = extra.split("\n") if extra else []
    child_lines = [f"({name}): " + _addindent(repr(child), 2)
                   for name, child in self._named_children()]
    lines = extra_lines + child_lines
    text = self._get_name() + "("
    if lines:
        if len(extra_lines) == 1 and not child_lines:
            text += extra_lines[0]
        else:
            text += "\n  " + "\n  ".join(lines) + "\n"
    return text + ")"


# The C type's walks of the engine tree (every parameter or buffer once, under its first
# dotted name), which the methods below give torch's arguments.
_tree_named_parameters = Module.named_parameters
_tree_named_buffers = Module.named_buffers


def _select(named, prefix, recurse):
    """torch's prefix and recurse over a walk's (dotted name, tensor) pairs: recurse=False
    keeps the module's own (names without a dot). An iterator, as torch's generators
    (``next(model.parameters())`` is a common idiom)."""
    return iter([(prefix + ("." if prefix else "") + name, t) for name, t in named
                 if recurse or "." not in name])


def named_parameters(self, prefix="", recurse=True):
    """(dotted name, parameter) for every parameter, each once; recurse=False: the module's
    own only; prefix goes before every name, as torch's."""
    return _select(_tree_named_parameters(self), prefix, recurse)


def parameters(self, recurse=True):
    """Every parameter, each once (recurse=False: the module's own only)."""
    return (p for _, p in named_parameters(self, recurse=recurse))


def named_buffers(self, prefix="", recurse=True):
    """(dotted name, buffer) for every buffer, each once; recurse and prefix as
    named_parameters."""
    return _select(_tree_named_buffers(self), prefix, recurse)


def buffers(self, recurse=True):
    """Every buffer, each once (recurse=False: the module's own only)."""
    return (b for _, b in named_buffers(self, recurse=recurse))


for _name, _value in [("named_children", named_children), ("children", children),
                      ("named_parameters", named_parameters), ("parameters", parameters),
                      ("named_buffers", named_buffers), ("buffers", buffers),
                      ("named_modules", named_modules), ("modules", modules), ("apply", apply),
                      ("requires_grad_", requires_grad_), ("float", float), ("double", double),
                      ("half", half), ("bfloat16", bfloat16), ("type", _type),
                      ("add_module", add_module), ("register_module", register_module),
                      ("register_parameter", register_parameter),
                      ("get_submodule", get_submodule), ("get_parameter", get_parameter),
                      ("register_forward_hook", register_forward_hook),
                      ("register_forward_pre_hook", register_forward_pre_hook),
                      ("extra_repr", extra_repr), ("_get_name", _get_name),
                      ("_repr_text", _repr_text)]:
    _gradscope._extend_type(Module, _name, _value)
del _name, _value
