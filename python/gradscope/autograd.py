"""gradscope.autograd: the grad-mode switches and backward under torch.autograd's names.
no_grad and enable_grad are context managers and decorators, as torch's; they restore the
mode that was current, so they nest either way."""
import contextlib
import sys as _sys
import threading

from gradscope import _gradscope as _c
from gradscope._missing import unsupported as _unsupported

is_grad_enabled = _c.is_grad_enabled


class _grad_mode(contextlib.ContextDecorator):
    """Sets the engine's grad-mode flag on entry and puts back the flag it replaced on exit.
    The flag, not is_grad_enabled(): that is also off inside the engine's own no_grad blocks
    (gs_no_grad_begin, which C code and _gradscope.no_grad use), and restoring it into the flag
    would leave grad mode off after such a block ends."""

    enabled = None

    def __enter__(self):
        self._prev = _c.set_grad_enabled(self.enabled)
        return self

    def __exit__(self, *exc):
        _c.set_grad_enabled(self._prev)
        return False


class set_grad_enabled(_grad_mode):
    """torch.set_grad_enabled(mode): turns recording on or off at once; used as a context
    manager (``with set_grad_enabled(training):``) or decorator, it puts back the mode it
    replaced at the end."""

    def __init__(self, mode):
        self.enabled = bool(mode)
        self._prev = _c.set_grad_enabled(self.enabled)

    def __enter__(self):
        return self


class no_grad(_grad_mode):
    """``with no_grad():`` or ``@no_grad()``: ops record no graph inside."""
    enabled = False


class enable_grad(_grad_mode):
    """``with enable_grad():`` or ``@enable_grad()``: recording back on inside a no_grad."""
    enabled = True


class inference_mode(_grad_mode):
    """``with inference_mode():`` or ``@inference_mode()``: no graph is recorded, as
    torch.inference_mode (the engine has one no-record mode, so this is no_grad's);
    inference_mode(False) leaves the mode as it is."""

    def __init__(self, mode=True):
        self.enabled = False if mode else None

    def __enter__(self):
        self._prev = None
        if self.enabled is not None:
            self._prev = _c.set_grad_enabled(self.enabled)
        return self

    def __exit__(self, *exc):
        if self._prev is not None:
            _c.set_grad_enabled(self._prev)
        return False


def _tensors(value, what):
    """A tensor or a sequence of them, as a list (torch takes either)."""
    if isinstance(value, _c.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return list(value)
    raise TypeError(f"{what}: expected a Tensor or a sequence of Tensors, got {type(value).__name__}")


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """torch.autograd.backward: one backward pass from every tensor, each seeded with its
    gradient (None: ones, for a one-element tensor); the gradients accumulate into the
    leaves' .grad, or with inputs only into those tensors' .grad (leaves or not). With
    create_graph the backward formulas record their graph, so the gradients (and .grad) can be
    differentiated again; retain_graph defaults to create_graph, as in torch."""
    if retain_graph is None:
        retain_graph = create_graph
    tensors = _tensors(tensors, "autograd.backward")
    grads = None if grad_tensors is None else _tensors(grad_tensors, "autograd.backward")
    if inputs is not None:
        # torch: only these tensors' .grad accumulate (a lone Tensor is one input)
        inputs = _tensors(inputs, "autograd.backward")
        if not inputs:
            raise RuntimeError("autograd.backward: 'inputs' argument to backward() cannot be empty")
    with _pass(inputs is not None):
        _c._backward_many(tensors, grads, bool(retain_graph), inputs, bool(create_graph))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=False, is_grads_batched=False):
    """torch.autograd.grad: the gradients of outputs with respect to inputs, as a tuple, without
    touching any .grad. Only the part of the graph between them runs; an input no gradient
    reaches is an error unless allow_unused (then its gradient is None). The graph's saved
    tensors are freed unless retain_graph (default: create_graph). With create_graph the
    gradients have a graph of their own and can be differentiated again (double backward)."""
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        raise NotImplementedError("autograd.grad(is_grads_batched=True) is not supported by "
                                  "gradscope")
    outputs = _tensors(outputs, "autograd.grad")
    inputs = _tensors(inputs, "autograd.grad")
    grads = None if grad_outputs is None else _tensors(grad_outputs, "autograd.grad")
    with _pass(True):
        return _c._autograd_grad(outputs, inputs, grads, bool(retain_graph), bool(allow_unused),
                                 bool(create_graph))


# For each pass started here and running on this thread (innermost last): whether it only
# computes given inputs' gradients (grad(), backward(inputs=...)) instead of every leaf's.
_passes = threading.local()


@contextlib.contextmanager
def _pass(captures):
    stack = _passes.__dict__.setdefault("stack", [])
    stack.append(captures)
    try:
        yield
    finally:
        stack.pop()


def _is_checkpoint_valid():
    """Whether a reentrant checkpoint's backward may run its own backward into .grad here: not
    inside grad() or backward(inputs=...), whose passes must leave .grad alone (torch's)."""
    stack = getattr(_passes, "stack", None)
    return not stack or not stack[-1]


class RemovableHandle:
    """What Tensor.register_hook returns: remove() takes the hook off (twice is fine); also a
    context manager that removes it on exit, as torch.utils.hooks.RemovableHandle."""

    def __init__(self, node, hook_id):
        self._key = (node, hook_id)
        self.id = hook_id

    def remove(self):
        if self._key is not None:
            _c._remove_grad_hook(*self._key)
            self._key = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False


def _register_hook(self, hook):
    """Tensor.register_hook(hook): hook(grad) runs during backward with the gradient flowing
    into this tensor (before its grad_fn, or before it is accumulated into .grad for a leaf);
    returning a Tensor replaces the gradient, None keeps it. Returns a RemovableHandle."""
    return RemovableHandle(*_c._register_grad_hook(self, hook))


_tensor_backward = _c.Tensor.backward


def _backward_method(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Tensor.backward(gradient=None, retain_graph=None, create_graph=False, inputs=None):
    accumulates the gradient of this tensor into the leaves' .grad, or with inputs only into
    those tensors' .grad (gradient: the seed, of this tensor's shape; None for a one-element
    tensor). With create_graph the .grad made can be differentiated again."""
    if create_graph or inputs is not None:
        return backward(self, None if gradient is None else [gradient], retain_graph,
                        create_graph, inputs)
    return _tensor_backward(self, gradient, retain_graph=bool(retain_graph))


def _node_register_hook(self, hook):
    """Node.register_hook(hook): hook(grad_inputs, grad_outputs) runs after this node's
    formula, with the gradients it made for its inputs (None where an input takes none) and
    the one it was given; returning a tuple of as many gradients (None keeps one) replaces
    them. Returns a RemovableHandle."""
    return RemovableHandle(*self._register_hook(hook))


def _node_register_prehook(self, hook):
    """Node.register_prehook(hook): hook(grad_outputs) runs before this node's formula with a
    tuple of the gradient flowing into it; returning a tuple of one gradient replaces it.
    Returns a RemovableHandle."""
    if not callable(hook):
        raise TypeError(f"register_prehook(): expected a function, got {type(hook).__name__}")

    def on_gradient(grad):  # the engine's hook on the gradient flowing into the node
        result = hook((grad,))
        if result is not None and (not isinstance(result, tuple) or len(result) != 1):
            got = (f"a tuple of {len(result)}" if isinstance(result, tuple)
                   else type(result).__name__)
            raise TypeError("a node pre-hook must return None or a tuple of 1 gradient (one "
                            f"per output), got {got}")
        return None if result is None else result[0]
    return RemovableHandle(*self._register_prehook(on_gradient))


_c._extend_type(_c.Tensor, "register_hook", _register_hook)
_c._extend_type(_c.Node, "register_hook", _node_register_hook)
_c._extend_type(_c.Node, "register_prehook", _node_register_prehook)
_c._extend_type(_c.Tensor, "backward", _backward_method)
Node = _c.Node

_anomaly = [False]


def set_detect_anomaly(mode, check_nan=True):
    """Accepted, as torch.autograd.set_detect_anomaly (a function and a context manager): the
    flag is kept (is_anomaly_enabled) but gradscope adds no checks to backward. Where a NaN
    came from is what the event log answers: run under the inspector or GS_TRACE."""
    return _AnomalyMode(bool(mode))


def is_anomaly_enabled():
    """The flag set_detect_anomaly / detect_anomaly last set."""
    return _anomaly[0]


class _AnomalyMode(contextlib.ContextDecorator):
    def __init__(self, mode):
        self._prev = _anomaly[0]
        _anomaly[0] = mode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _anomaly[0] = self._prev
        return False


class detect_anomaly(contextlib.ContextDecorator):
    """Accepted, as torch.autograd.detect_anomaly: sets the flag inside (see
    set_detect_anomaly: gradscope adds no checks)."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        self._prev = _anomaly[0]
        _anomaly[0] = True
        return self

    def __exit__(self, *exc):
        _anomaly[0] = self._prev
        return False


from gradscope import autograd_functional as functional  # noqa: E402,F401
from gradscope import autograd_graph as graph  # noqa: E402,F401

# `import gradscope.autograd.graph` as `import torch.autograd.graph` (this is a module, not a
# package: the submodule is registered under that name).
_sys.modules.setdefault(__name__ + ".graph", graph)

# torch.autograd.Function and its helpers (gradscope/function.py, which uses no_grad above).
from gradscope import function  # noqa: E402
from gradscope.function import Function, FunctionCtx, once_differentiable  # noqa: E402
from gradscope.gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402,F401

__getattr__ = _unsupported(__name__)
