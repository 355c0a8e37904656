"""torch.nn's ops over windows that compose from gradscope's pooling and elementwise ops (their
gradients are those ops'): power-average pooling (lp_pool1d/2d, LPPool1d/2d), max unpooling
(max_unpool1d/2d, MaxUnpool1d/2d: a scatter of the pooled values to the indices max pooling
returned), local response normalisation across channels (local_response_norm,
LocalResponseNorm), and pairwise distances and the bilinear form (pdist, bilinear,
Bilinear). Modules print as torch's."""
import math

from gradscope import _gradscope as _c
from gradscope.nn.parameter import Parameter

Module = _c.nn.Module


def _pair(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, n):
    from gradscope.nn import functional as F  # functional imports this module
    pool = F.avg_pool1d if n == 1 else F.avg_pool2d
    out = pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    # torch keeps the sign of the average (negative only through rounding) before the root
    return (out.sign() * out.abs().relu()).mul(math.prod(_pair(kernel_size, n))).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum of x^p over each window)^(1/p), along the last dim."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum of x^p over each window)^(1/p), over the last two dims."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, n):
    kernel = _pair(kernel_size, n)
    stride = _pair(stride if stride is not None else kernel_size, n)
    padding = _pair(padding, n)
    spatial = tuple(input.shape[-n:])
    if output_size is None:
        size = tuple((spatial[d] - 1) * stride[d] - 2 * padding[d] + kernel[d] for d in range(n))
    else:
        size = tuple(output_size)[-n:]
    lead = tuple(input.shape[:-n])
    flat_in = input.reshape(lead + (-1,))
    flat_idx = indices.reshape(lead + (-1,)).long()
    total = math.prod(size)
    if flat_idx.numel() and (int(flat_idx.max()) >= total or int(flat_idx.min()) < 0):
        raise RuntimeError(f"Found an invalid max index: {int(flat_idx.max())} (output volumes "
                           f"are of size {'x'.join(str(s) for s in size)}")
    out = _c.zeros(*(lead + (total,)), dtype=input.dtype).scatter(len(lead), flat_idx, flat_in)
    return out.reshape(lead + size)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of max_pool1d(return_indices=True): each value back at its index, zeros
    elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of max_pool2d(return_indices=True): each value back at its index, zeros
    elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha * mean of x^2 over size neighbouring channels)^beta, the window zero-
    padded (size // 2 before, (size - 1) // 2 after) and averaged over size, as torch's."""
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.dim()} dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    channels = int(input.shape[1])
    shape = list(input.shape)
    before, after = size // 2, (size - 1) // 2
    pads = []
    if before:
        pads.append(_c.zeros(*(shape[:1] + [before] + shape[2:]), dtype=input.dtype))
    pads.append(sq)
    if after:
        pads.append(_c.zeros(*(shape[:1] + [after] + shape[2:]), dtype=input.dtype))
    padded = _c.cat(pads, 1) if len(pads) > 1 else sq
    window = padded.narrow(1, 0, channels)
    for shift in range(1, size):
        window = window + padded.narrow(1, shift, channels)
    div = (window * (alpha / size) + k).pow(beta)
    return input / div


def pdist(input, p=2):
    """The p-norm distances between each pair of rows i < j of a 2-D input, in row-major
    order of the pairs."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    n = int(input.shape[0])
    if n < 2:
        return _c.zeros(0, dtype=input.dtype)
    from gradscope.searching import triu_indices
    i, j = triu_indices(n, n, 1)
    diff = input[i] - input[j]
    if p == 2:
        return (diff * diff).sum(1).sqrt()
    if p == float("inf"):
        return diff.abs().amax(1)
    if p == 0:
        return (diff != 0).to(input.dtype).sum(1)
    return (diff.abs() ** p).sum(1) ** (1.0 / p)


def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum over i, j of input1[..., i] weight[o, i, j] input2[..., j] (+ bias[o])."""
    o, i, j = (int(d) for d in weight.shape)
    lead = tuple(input1.shape[:-1])
    x1, x2 = input1.reshape(-1, i), input2.reshape(-1, j)
    # x1 @ W[., i, .] for every o at once, then the inner product with x2 per (row, o)
    left = (x1 @ weight.permute(1, 0, 2).reshape(i, o * j)).reshape(-1, o, j)
    out = (left * x2.unsqueeze(1)).sum(-1).reshape(lead + (o,))
    return out + bias if bias is not None else out


class LPPool1d(Module):
    """F.lp_pool1d as a module."""

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input):
        return lp_pool1d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool2d(LPPool1d):
    """F.lp_pool2d as a module."""

    def forward(self, input):
        return lp_pool2d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class MaxUnpool1d(Module):
    """F.max_unpool1d as a module: forward(input, indices, output_size=None)."""

    _n = 1

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        n = type(self)._n
        self.kernel_size = _pair(kernel_size, n)
        self.stride = _pair(stride if stride is not None else kernel_size, n)
        self.padding = _pair(padding, n)

    def forward(self, input, indices, output_size=None):
        return _max_unpool(input, indices, self.kernel_size, self.stride, self.padding,
                           output_size, type(self)._n)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool2d(MaxUnpool1d):
    """F.max_unpool2d as a module: forward(input, indices, output_size=None)."""

    _n = 2


class LocalResponseNorm(Module):
    """F.local_response_norm as a module."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class Bilinear(Module):
    """F.bilinear as a module: weight [out, in1, in2] and bias [out], both drawn from
    U(-1/sqrt(in1), 1/sqrt(in1)) as torch's reset_parameters."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        bound = 1 / math.sqrt(in1_features)
        dtype = dtype or _c.get_default_dtype()
        self.weight = Parameter(_c.rand(out_features, in1_features, in2_features, dtype=dtype)
                                * (2 * bound) - bound)
        if bias:
            self.bias = Parameter(_c.rand(out_features, dtype=dtype) * (2 * bound) - bound)
        else:
            self.register_parameter("bias", None)

    def forward(self, input1, input2):
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
