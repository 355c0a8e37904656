"""gradscope.jit: the eager-mode side of torch.jit in PyTorch 1.13, what library and training code
calls without compiling anything: is_scripting/is_tracing (False: nothing is compiled here),
the markers ignore, unused, export, interface and script_if_tracing (each leaves its function
as it is, as torch's do outside TorchScript), annotate, isinstance, Final, Attribute, and
fork/wait (the function runs when forked; wait gives its result). Compiling (script, trace,
save, load, freeze) is not supported: gradscope records eagerly, and a compiled graph would
hide the steps the inspector shows."""
import collections
import contextlib
import typing
import warnings

from gradscope._missing import unsupported as _unsupported

Final = typing.Final


class Attribute(collections.namedtuple("Attribute", ["value", "type"])):
    """torch.jit.Attribute(value, type): outside TorchScript, the value with its declared
    type, as torch's."""


def is_scripting():
    """False: gradscope never compiles a function (torch's answer in eager mode)."""
    return False


def is_tracing():
    """False: gradscope never traces into a graph to compile."""
    return False


def annotate(the_type, the_value):
    """torch.jit.annotate(type, value): the value (the type is for the compiler)."""
    return the_value


def isinstance(obj, target_type):  # noqa: A001  (torch.jit's own name)
    """torch.jit.isinstance(obj, target_type): whether obj is of target_type, containers
    checked through their items (List[int], Dict[str, Tensor], Tuple[...], Optional[...]), as
    torch's outside TorchScript; a container type without its items' type is torch's error."""
    import builtins
    origin, args = typing.get_origin(target_type), typing.get_args(target_type)
    if origin is None:
        if target_type in (dict, typing.Dict):
            raise RuntimeError("Attempted to use Dict without contained types. Please add "
                               "contained type, e.g. Dict[int, int]")
        for bare, name in ((list, "List"), (tuple, "Tuple"), (None, "Optional")):
            if target_type in (bare, getattr(typing, name)) and target_type is not None:
                raise RuntimeError(f"Attempted to use {name} without a contained type. Please "
                                   f"add a contained type, e.g. {name}[int]")
        return builtins.isinstance(obj, target_type)
    if origin is typing.Union:
        return builtins.any(isinstance(obj, a) for a in args)
    if origin is list:
        return builtins.isinstance(obj, list) and builtins.all(isinstance(x, args[0]) for x in obj)
    if origin is dict:
        return builtins.isinstance(obj, dict) and builtins.all(
            isinstance(k, args[0]) and isinstance(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        return (builtins.isinstance(obj, tuple) and len(obj) == len(args) and
                builtins.all(isinstance(x, a) for x, a in zip(obj, args)))
    return builtins.isinstance(obj, origin)


def ignore(drop=False, **kwargs):
    """@torch.jit.ignore or @torch.jit.ignore(drop=...): the function as it is."""
    if callable(drop):
        return drop
    if drop:
        warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the function "
                      "call on compilation. Use torch.jit.unused now. {}", category=FutureWarning)
    return lambda fn: fn


def unused(fn):
    """@torch.jit.unused: the function as it is."""
    return fn


def export(fn):
    """@torch.jit.export: the method as it is."""
    return fn


def interface(obj):
    """@torch.jit.interface: the class as it is."""
    return obj


def script_if_tracing(fn):
    """@torch.jit.script_if_tracing: the function as it is (nothing is ever traced here)."""
    return fn


@contextlib.contextmanager
def optimized_execution(should_optimize):
    """torch.jit.optimized_execution(flag): no effect, there is no compiled code to optimise."""
    yield


class Future:
    """What fork returns: the forked call's result, or the exception it raised, for wait()."""

    def __init__(self, fn, args, kwargs):
        self._error = None
        self._value = None
        try:
            self._value = fn(*args, **kwargs)
        except Exception as error:  # raised again by wait(), as torch's future does
            self._error = error

    def done(self):
        return True

    def wait(self):
        if self._error is not None:
            raise self._error
        return self._value

    value = wait


def fork(func, *args, **kwargs):
    """torch.jit.fork(func, *args): runs func(*args) (eagerly, on this thread) and returns a
    Future whose wait() gives its result."""
    return Future(func, args, kwargs)


def wait(future):
    """torch.jit.wait(future): the forked call's result."""
    return future.wait()


__getattr__ = _unsupported(__name__)
