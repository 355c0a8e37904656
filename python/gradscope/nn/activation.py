"""The activations of torch.nn as modules (SiLU, ELU, SELU, Softplus, ReLU6, Hardtanh,
Hardsigmoid, Hardswish, LogSigmoid, Mish, Softsign, LeakyReLU, Softmax, LogSoftmax, Softmin,
GLU), with torch's constructor arguments and print(model) text. inplace=True writes the
result into the input, as torch's modules do."""
from gradscope import _gradscope
from gradscope.nn import functional as F

Module = _gradscope.nn.Module


def _inplace_text(inplace, first=False):
    if not inplace:
        return ""
    return "inplace=True" if first else ", inplace=True"


class _Plain(Module):
    """An activation whose only argument is inplace: forward is type(self)._function."""

    _function = None

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._function(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_text(self.inplace, first=True)


class SiLU(_Plain):
    """F.silu as a module: x * sigmoid(x)."""

    _function = staticmethod(F.silu)


class SELU(_Plain):
    """F.selu as a module: scale * elu(x, alpha) with torch's constants."""

    _function = staticmethod(F.selu)


class Mish(_Plain):
    """F.mish as a module: x * tanh(softplus(x))."""

    _function = staticmethod(F.mish)


class Hardsigmoid(_Plain):
    """F.hardsigmoid as a module: x / 6 + 1/2 limited to [0, 1]."""

    _function = staticmethod(F.hardsigmoid)

    def extra_repr(self):
        return ""  # torch shows no arguments


class Hardswish(_Plain):
    """F.hardswish as a module: x * hardsigmoid(x)."""

    _function = staticmethod(F.hardswish)

    def extra_repr(self):
        return ""  # torch shows no arguments


class ELU(Module):
    """F.elu as a module: x above 0, alpha * (exp(x) - 1) at or below."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + _inplace_text(self.inplace)


class Softplus(Module):
    """F.softplus as a module: log(1 + exp(beta * x)) / beta, linear above threshold."""

    def __init__(self, beta=1, threshold=20):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    """F.hardtanh as a module: x limited to [min_val, max_val]."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        if min_val > max_val:
            raise ValueError("min_val cannot be greater than max_val")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + _inplace_text(self.inplace)


class ReLU6(Hardtanh):
    """F.relu6 as a module: hardtanh(x, 0, 6)."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_text(self.inplace, first=True)


class LeakyReLU(Module):
    """F.leaky_relu as a module: x, or negative_slope * x below zero."""

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + _inplace_text(self.inplace)


class LogSigmoid(Module):
    """F.logsigmoid as a module: log(sigmoid(x))."""

    def __init__(self):
        super().__init__()

    def forward(self, input):
        return F.logsigmoid(input)


class Softsign(Module):
    """F.softsign as a module: x / (1 + |x|)."""

    def __init__(self):
        super().__init__()

    def forward(self, input):
        return F.softsign(input)


class _WithDim(Module):
    """A module over one dim (None: torch's legacy choice), shown as dim=..."""

    _function = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return type(self)._function(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_WithDim):
    """F.softmax as a module."""

    _function = staticmethod(lambda input, dim: F.softmax(input, F._softmax_dim(input, dim)))


class LogSoftmax(_WithDim):
    """F.log_softmax as a module."""

    _function = staticmethod(lambda input, dim: F.log_softmax(input, F._softmax_dim(input, dim)))


class Softmin(_WithDim):
    """F.softmin as a module: softmax(-x)."""

    _function = staticmethod(F.softmin)


class GLU(_WithDim):
    """F.glu as a module: the first half of dim times the sigmoid of the second."""

    _function = staticmethod(F.glu)

    def __init__(self, dim=-1):
        super().__init__(dim)
