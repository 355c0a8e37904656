"""gradscope.special: torch.special's functions over the engine's special-function ops
(lgamma, digamma, polygamma, erf, erfc, erfinv, exp2, the Bessel functions i0, i0e, i1,
i1e, erfcx, ...) and gradscope.pointwise's
compositions; every one is differentiable where torch's is. ``python3 -m gradscope.as_torch``
answers ``torch.special`` with this module."""
import math

from gradscope._missing import unsupported
from gradscope.pointwise import logit, sinc, xlog1py, xlogy  # noqa: F401  (torch.special names)

_SQRT2 = math.sqrt(2.0)


def expit(input):
    """The logistic sigmoid 1 / (1 + exp(-x))."""
    return input.sigmoid()


def ndtr(input):
    """The standard normal CDF, (1 + erf(x / sqrt 2)) / 2."""
    return ((input / _SQRT2).erf() + 1) / 2


def log_ndtr(input):
    """The log of the standard normal CDF, as log(erfc(-x / sqrt 2) / 2): erfc does not
    underflow until about x = -37 in float64, where the answer is -inf in torch's too."""
    return ((-input / _SQRT2).erfc() / 2).log()


def ndtri(input):
    """The inverse of the standard normal CDF, sqrt 2 * erfinv(2p - 1)."""
    return (2 * input - 1).erfinv() * _SQRT2


def entr(input):
    """-x log x elementwise: 0 at 0, -inf below 0. Its gradient at 0 is 0 (torch's is inf,
    the limit of -log x - 1, which a composition of ops cannot give without a NaN value)."""
    import gradscope as gs
    zero = input == 0
    safe = gs.where(zero, gs.ones_like(input), input)
    out = gs.where(zero, gs.zeros_like(input), -input * safe.log())
    return gs.where(input < 0, gs.full_like(input, float("-inf")), out)


def erf(input):
    """The error function."""
    return input.erf()


def erfc(input):
    """1 - erf(x), without its cancellation."""
    return input.erfc()


def erfinv(input):
    """The inverse error function."""
    return input.erfinv()


def exp2(input):
    """2 ** x."""
    return input.exp2()


def expm1(input):
    """exp(x) - 1, without its cancellation."""
    return input.expm1()


def log1p(input):
    """log(1 + x), without its cancellation."""
    return input.log1p()


def i0(input):
    """The modified Bessel function of the first kind of order 0; its gradient is i1."""
    return input.i0()


def i0e(input):
    """i0 scaled by exp(-|x|): finite where i0 overflows."""
    return input._special_i0e()


def i1(input):
    """The modified Bessel function of the first kind of order 1 (odd; gradient 0.5 at 0)."""
    return input._special_i1()


def i1e(input):
    """i1 scaled by exp(-|x|): finite where i1 overflows."""
    return input._special_i1e()


def erfcx(input):
    """The scaled complementary error function exp(x^2) erfc(x), without erfc's underflow;
    its gradient is 2x erfcx(x) - 2/sqrt(pi)."""
    return input._special_erfcx()


def gammaln(input):
    """log |Gamma(x)|."""
    return input.lgamma()


def digamma(input):
    """The derivative of lgamma."""
    return input.digamma()


def psi(input):
    """digamma's other name."""
    return input.digamma()


def polygamma(n, input):
    """The n-th derivative of digamma."""
    return input.polygamma(n)


def multigammaln(input, p):
    """The multivariate log-gamma function of dimension p."""
    import gradscope as gs
    offsets = gs.arange(p, dtype=input.dtype) / -2
    return (input.unsqueeze(-1) + offsets).lgamma().sum(-1) + p * (p - 1) / 4 * math.log(math.pi)


def round(input, decimals=0):
    """Rounds half to even, to decimals places."""
    return input.round(decimals=decimals)


def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(x))) along dim, without overflow."""
    return input.logsumexp(dim, keepdim)


def softmax(input, dim, *, dtype=None):
    """softmax along dim (in dtype if given)."""
    return (input if dtype is None else input.to(dtype)).softmax(dim)


def log_softmax(input, dim, *, dtype=None):
    """log_softmax along dim (in dtype if given)."""
    return (input if dtype is None else input.to(dtype)).log_softmax(dim)


__getattr__ = unsupported(__name__)
