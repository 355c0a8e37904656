"""gradscope.autograd: the grad-mode switches and backward under torch.autograd's names."""
from gradscope import _gradscope as _c
from gradscope._missing import unsupported

no_grad = _c.no_grad
set_grad_enabled = _c.set_grad_enabled
is_grad_enabled = _c.is_grad_enabled


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
