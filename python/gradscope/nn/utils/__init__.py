"""gradscope.nn.utils: helpers over parameters, as torch.nn.utils's."""
import math

import gradscope
from gradscope._missing import unsupported as _unsupported
from gradscope.nn.utils import prune, rnn  # noqa: F401
from gradscope.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401
from gradscope.nn.utils.weight_norm import remove_weight_norm, weight_norm  # noqa: F401


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Scales the gradients in place so that their total norm is at most max_norm, and returns
    the total norm before clipping (a 0-dim tensor), as torch.nn.utils.clip_grad_norm_."""
    if isinstance(parameters, gradscope.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return gradscope.tensor(0.0)
    norm_type = float(norm_type)
    with gradscope.no_grad():
        if math.isinf(norm_type):
            norms = [g.abs().max() for g in grads]
            total = norms[0] if len(norms) == 1 else gradscope.stack(norms).max()
        else:
            total = sum((g.abs() ** norm_type).sum() for g in grads) ** (1.0 / norm_type)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise RuntimeError(f"the total norm of order {norm_type} of the gradients is "
                               "non-finite, so it cannot be clipped")
        coef = float(max_norm) / (total.item() + 1e-6)
        if coef < 1.0:
            for g in grads:
                g.mul_(coef)
    return total


def clip_grad_value_(parameters, clip_value):
    """Clamps each gradient in place to [-clip_value, clip_value]."""
    if isinstance(parameters, gradscope.Tensor):
        parameters = [parameters]
    with gradscope.no_grad():
        for p in parameters:
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)


def parameters_to_vector(parameters):
    """The parameters flattened and joined into one vector (differentiable), as torch's."""
    return gradscope.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copies consecutive slices of vec into the parameters' data, as torch's (which rebinds
    each parameter's .data to a view of vec; gradscope copies: the values are the same)."""
    if not isinstance(vec, gradscope.Tensor):
        raise TypeError("expected torch.Tensor, but got: {}".format(type(vec).__name__))
    pointer = 0
    with gradscope.no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[pointer:pointer + n].reshape(tuple(p.shape)))
            pointer += n


__getattr__ = _unsupported(__name__)
