"""gradscope.nn.init: torch.nn.init's initialisers, with PyTorch 1.13's formulas (gains, fans,
bounds), writing into the tensor in place under no_grad and returning it.

The random ones draw from gradscope's generator (manual_seed), which is torch's: the same seed
gives the same values, drawn in the order torch's kernels draw them (a non-contiguous tensor in
memory order, its normal values one by one).
"""
import math

import numpy as np

from gradscope import _gradscope as _c
from gradscope._draw_order import in_memory_order as _in_memory_order
from gradscope._missing import unsupported as _unsupported
from gradscope.autograd import no_grad as _no_grad


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (torch.nn.init.calculate_gain)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fill(tensor, values):
    """Writes values (a tensor of tensor's shape) into tensor, as PyTorch's init does."""
    with _no_grad():
        tensor.copy_(values.to(tensor.dtype))
    return tensor


def _calculate_fan_in_and_fan_out(tensor):
    dims = tensor.dim()
    if dims < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = 1
    for size in tuple(tensor.shape)[2:]:
        receptive *= size
    return tensor.size(1) * receptive, tensor.size(0) * receptive


def _fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of {['fan_in', 'fan_out']}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _draw(tensor, kind, a, b):
    """tensor's values drawn as torch's uniform_ (kind 0) or normal_ (kind 1) draws them."""
    # a non-contiguous tensor's normal values are drawn one by one, as torch's serial kernel
    return _in_memory_order(tensor, lambda shape: _c._fill_random(
        shape, kind, a, b, _draw_dtype(tensor), not tensor.is_contiguous()))


def uniform_(tensor, a=0.0, b=1.0):
    """Fills tensor with values drawn from U(a, b), torch's draws for its dtype."""
    return _fill(tensor, _draw(tensor, 0, a, b))


def normal_(tensor, mean=0.0, std=1.0):
    """Fills tensor with values drawn from N(mean, std^2), torch's draws for its dtype."""
    return _fill(tensor, _draw(tensor, 1, mean, std))


def _draw_dtype(tensor):
    """The dtype torch draws in for tensor: its own when floating, else float64."""
    return tensor.dtype if tensor.dtype in (_c.float32, _c.float64) else _c.float64


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0):
    """Fills tensor with N(mean, std^2) values redrawn until they fall in [a, b]."""
    values = np.empty(tuple(tensor.shape), dtype=np.float64).reshape(-1)
    filled = 0
    while filled < values.size:
        draw = (_c.randn(values.size - filled, dtype=_c.float64) * std + mean).numpy()
        keep = draw[(draw >= a) & (draw <= b)]
        values[filled:filled + keep.size] = keep
        filled += keep.size
    return _fill(tensor, _c.tensor(values.reshape(tuple(tensor.shape))))


def constant_(tensor, val):
    """Fills tensor with val."""
    with _no_grad():
        tensor.fill_(val)
    return tensor


def ones_(tensor):
    """Fills tensor with ones."""
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """Fills tensor with zeros."""
    return constant_(tensor, 0.0)


def eye_(tensor):
    """Fills a 2-D tensor with the identity matrix (ones on the diagonal)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, _c.eye(*tensor.shape))


def dirac_(tensor, groups=1):
    """Fills a 3-, 4- or 5-D tensor with the Dirac delta: a convolution that keeps its input's
    channels (in each of groups)."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    values = np.zeros(sizes, dtype=np.float64)
    for g in range(groups):
        for d in range(min(out_per_group, sizes[1])):
            centre = tuple(s // 2 for s in sizes[2:])
            values[(g * out_per_group + d, d) + centre] = 1
    return _fill(tensor, _c.tensor(values))


def xavier_uniform_(tensor, gain=1.0):
    """Glorot uniform: U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a)


def xavier_normal_(tensor, gain=1.0):
    """Glorot normal: N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    """He uniform: U(-bound, bound), bound = gain * sqrt(3 / fan)."""
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    """He normal: N(0, std^2), std = gain / sqrt(fan)."""
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std)


def orthogonal_(tensor, gain=1):
    """A (semi-)orthogonal matrix (rows or columns orthonormal) times gain, from the QR of a
    normal matrix with the signs of R's diagonal taken out, as PyTorch's."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flat = _c.randn(rows, cols, dtype=_c.float64).numpy()
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, _c.tensor(np.ascontiguousarray(q * gain).reshape(tuple(tensor.shape))))


def sparse_(tensor, sparsity, std=0.01):
    """A 2-D tensor with N(0, std^2) values, a fraction sparsity of each column zero."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    zeros = int(math.ceil(sparsity * rows))
    values = (_c.randn(rows, cols, dtype=_c.float64) * std).numpy()
    order = _c.rand(rows, cols, dtype=_c.float64).numpy().argsort(axis=0)
    for c in range(cols):
        values[order[:zeros, c], c] = 0
    return _fill(tensor, _c.tensor(values))


__getattr__ = _unsupported(__name__)
