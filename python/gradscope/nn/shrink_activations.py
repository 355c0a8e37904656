"""torch.nn's thresholding and shrinking activations, and the self-normalising dropout, as
functions over the engine's differentiable ops and as modules with torch's constructor
arguments and print(model) text: celu, hardshrink, softshrink, tanhshrink, threshold, rrelu
and alpha_dropout (F.*), CELU, Hardshrink, Softshrink, Tanhshrink, Threshold, RReLU and
AlphaDropout. inplace=True writes the result into the input (copy_, a version bump), as
torch's do."""
import math

from gradscope import _gradscope
from gradscope.creation import rand_like

Module = _gradscope.nn.Module
_where = _gradscope.where


def _finish(input, out, inplace):
    return input.copy_(out) if inplace else out


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    # the negative branch on the clamped input, so a large x never makes an inf that a zero
    # gradient would turn into NaN; at 0 the slope is the negative branch's 1, as torch's
    negative = (input.clamp(max=0) / alpha).expm1() * alpha
    return _finish(input, _where(input > 0, input, negative), inplace)


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0."""
    return _where(input.abs() > lambd, input, _gradscope.zeros_like(input))


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    zero = _gradscope.zeros_like(input)
    return _where(input > lambd, input - lambd, _where(input < -lambd, input + lambd, zero))


def tanhshrink(input):
    """x - tanh(x)."""
    return input - input.tanh()


def threshold(input, threshold, value, inplace=False):
    """x where x > threshold, else value."""
    out = _where(input > threshold, input, _gradscope.full_like(input, value))
    return _finish(input, out, inplace)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Leaky ReLU whose negative slope is drawn from U(lower, upper) per element in training
    (from gradscope's generator), and (lower + upper) / 2 in evaluation."""
    if not training:
        slope = (lower + upper) / 2
        out = _where(input > 0, input, input * slope)  # at 0 the slope, as torch's
    else:
        slopes = rand_like(input) * (upper - lower) + lower
        out = _where(input > 0, input, input * slopes)
    return _finish(input, out, inplace)


_SELU_ALPHA_PRIME = -1.7580993408473766  # -scale * alpha of SELU


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps a SELU network's mean and variance: dropped elements take SELU's
    negative saturation, then an affine map restores the moments (torch's constants)."""
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    if p == 1:
        return _finish(input, input * 0, inplace)
    keep = (rand_like(input) >= p).to(input.dtype)
    a = 1.0 / math.sqrt((1 - p) * (1 + p * _SELU_ALPHA_PRIME ** 2))
    b = -a * _SELU_ALPHA_PRIME * p
    out = (input * keep + _SELU_ALPHA_PRIME * (1 - keep)) * a + b
    return _finish(input, out, inplace)


class CELU(Module):
    """F.celu as a module."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Hardshrink(Module):
    """F.hardshrink as a module."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Module):
    """F.softshrink as a module."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return softshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Tanhshrink(Module):
    """F.tanhshrink as a module."""

    def forward(self, input):
        return tanhshrink(input)


class Threshold(Module):
    """F.threshold as a module."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return (f"threshold={self.threshold}, value={self.value}"
                + (", inplace=True" if self.inplace else ""))


class RReLU(Module):
    """F.rrelu as a module (random slopes in training mode, their mean in eval)."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class AlphaDropout(Module):
    """F.alpha_dropout as a module (active in training mode only)."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return alpha_dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"
