"""gradscope.autograd: the grad-mode switches and backward under torch.autograd's names.
no_grad and enable_grad are context managers and decorators, as torch's; they restore the
mode that was current, so they nest either way."""
import contextlib

from gradscope import _gradscope as _c
from gradscope._missing import unsupported

set_grad_enabled = _c.set_grad_enabled
is_grad_enabled = _c.is_grad_enabled


class _grad_mode(contextlib.ContextDecorator):
    enabled = None

    def __enter__(self):
        self._prev = _c.is_grad_enabled()
        _c.set_grad_enabled(self.enabled)
        return self

    def __exit__(self, *exc):
        _c.set_grad_enabled(self._prev)
        return False


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
        self._prev = _c.is_grad_enabled()
        if self.enabled is not None:
            _c.set_grad_enabled(self.enabled)
        return self


def backward(tensors, grad_tensors=None, retain_graph=None):
    """torch.autograd.backward: each tensor's backward with its gradient."""
    if not isinstance(tensors, (list, tuple)):
        tensors = [tensors]
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    elif not isinstance(grad_tensors, (list, tuple)):
        grad_tensors = [grad_tensors]
    for t, g in zip(tensors, grad_tensors):
        t.backward(g, retain_graph=retain_graph)


__getattr__ = unsupported(__name__)
