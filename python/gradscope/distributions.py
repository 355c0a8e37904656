"""gradscope.distributions: torch.distributions' common families, written with gradscope's ops.

Normal, Uniform, Bernoulli, Categorical, OneHotCategorical, Exponential, Laplace, Gamma, Chi2,
Dirichlet, Beta, Poisson and Independent, and (from _distributions_extra.py) MultivariateNormal
and Binomial, with torch's parameters (probs or logits), shapes (batch_shape, event_shape,
sample(sample_shape)), rsample where torch has it (the reparameterised sample that gradients
flow through, as in a VAE), log_prob, entropy, cdf, mean, mode, variance, stddev, expand and
enumerate_support; kl_divergence between two of the same family, and register_kl for more.
Arguments and log_prob's values are validated as torch does by default (validate_args), with
torch's messages. The formulas are torch 1.13's, op for op, so log_prob, entropy and KL agree
with torch's to the last bits on the same inputs. Samples come from gradscope's generator
(gradscope.manual_seed), so they are not torch's numbers for the same seed.

Everything is built from ops that record, so log_prob(...).backward() reaches the parameters
and the event log shows each step.
"""
import math

import gradscope as _gs
import gradscope.nn.functional as _F

__all__ = ["Distribution", "Normal", "Uniform", "Bernoulli", "Categorical", "OneHotCategorical",
           "Exponential", "Laplace", "Gamma", "Chi2", "Dirichlet", "Beta", "Poisson",
           "Independent", "MultivariateNormal", "Binomial", "kl_divergence", "register_kl",
           "constraints"]

# torch.finfo's eps, tiny and min of the floating dtypes, for the clamps torch's formulas use.
_FINFO = {"float32": (1.1920928955078125e-07, 1.1754943508222875e-38, -3.4028234663852886e+38),
          "float64": (2.220446049250313e-16, 2.2250738585072014e-308, -1.7976931348623157e+308)}


def _finfo(dtype):
    key = "float64" if "float64" in str(dtype) else "float32"
    return _FINFO[key]


def _size(shape):
    return _gs.Size(tuple(int(d) for d in shape))


def _broadcast_all(*values):
    """torch's broadcast_all: numbers become tensors of the tensors' dtype (the default dtype
    when all are numbers), then all are broadcast to one shape."""
    tensors = [v for v in values if isinstance(v, _gs.Tensor)]
    for v in values:
        if not isinstance(v, (_gs.Tensor, int, float)):
            raise ValueError("Input arguments must all be instances of numbers.Number, "
                             "torch.Tensor or objects implementing __torch_function__.")
    dtype = tensors[0].dtype if tensors else _gs.get_default_dtype()
    made = [v if isinstance(v, _gs.Tensor) else _gs.tensor(float(v), dtype=dtype) for v in values]
    if not tensors:
        return tuple(made)
    return tuple(_gs.broadcast_tensors(*made))


def _sum_rightmost(value, dim):
    return value if dim == 0 else value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def _clamp_probs(probs):
    eps = _finfo(probs.dtype)[0]
    return probs.clamp(min=eps, max=1 - eps)


def _logits_to_probs(logits, is_binary=False):
    return _gs.sigmoid(logits) if is_binary else _F.softmax(logits, dim=-1)


def _probs_to_logits(probs, is_binary=False):
    ps = _clamp_probs(probs)
    return _gs.log(ps) - _gs.log1p(-ps) if is_binary else _gs.log(ps)


# ---- constraints ------------------------------------------------------------------------------

class _Constraint:
    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__[1:] + "()"


class _Real(_Constraint):
    def check(self, value):
        return value == value  # not NaN


class _GreaterThan(_Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self):
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return self.lower_bound <= value

    def __repr__(self):
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _Interval(_Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)

    def __repr__(self):
        return f"HalfOpenInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Boolean(_Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _IntegerInterval(_Constraint):
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Simplex(_Constraint):
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(dim=-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _OneHot(_Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class _Dependent(_Constraint):
    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")


class _Independent(_Constraint):
    def __init__(self, base, reinterpreted_batch_ndims):
        self.base_constraint = base
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        self.event_dim = base.event_dim + reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        for _ in range(self.reinterpreted_batch_ndims):
            result = result.all(-1)
        return result

    def __repr__(self):
        return (f"IndependentConstraint({self.base_constraint!r}, "
                f"{self.reinterpreted_batch_ndims})")


class constraints:  # noqa: N801 - torch.distributions.constraints is a module of these names
    """torch.distributions.constraints: what a parameter or a sample must satisfy."""
    real = _Real()
    positive = _GreaterThan(0.0)
    nonnegative = _GreaterThanEq(0.0)
    unit_interval = _Interval(0.0, 1.0)
    boolean = _Boolean()
    simplex = _Simplex()
    one_hot = _OneHot()
    dependent = _Dependent()
    greater_than = _GreaterThan
    greater_than_eq = _GreaterThanEq
    interval = _Interval
    half_open_interval = _HalfOpenInterval
    integer_interval = _IntegerInterval
    independent = _Independent
    Constraint = _Constraint


def _dependent_property(fn):
    return property(fn)


# ---- the base class ---------------------------------------------------------------------------

class Distribution:
    """torch.distributions.Distribution: batch_shape, event_shape, sample, rsample, log_prob,
    entropy and the moments; arguments validated unless validate_args=False (or
    Distribution.set_default_validate_args(False))."""
    has_rsample = False
    has_enumerate_support = False
    arg_constraints = {}
    support = None
    _validate_args = True

    @staticmethod
    def set_default_validate_args(value):
        """Whether new distributions check their arguments and log_prob's values (on by
        default, as in torch)."""
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = _size(batch_shape)
        self._event_shape = _size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            for param, constraint in self.arg_constraints.items():
                if isinstance(constraint, _Dependent):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param, None),
                                                             property):
                    continue  # a parameter given the other way (probs for logits)
                value = getattr(self, param)
                if not bool(constraint.check(value).all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}")

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def expand(self, batch_shape, _instance=None):
        """The same distribution with its parameters expanded to batch_shape."""
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """A sample of shape sample_shape + batch_shape + event_shape, without gradient."""
        with _gs.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        """A reparameterised sample: gradients flow through it to the parameters."""
        raise NotImplementedError

    def sample_n(self, n):
        return self.sample(_gs.Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return _gs.exp(self.entropy())

    def _extended_shape(self, sample_shape=()):
        if not isinstance(sample_shape, (tuple, list)):
            sample_shape = (sample_shape,)
        return _size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        if not isinstance(value, _gs.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.shape) - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual = value.size()
        expected = _size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual} vs {expected}.")
        support = self.support
        if support is None or isinstance(support, _Dependent):
            return
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)})"
                f" to be within the support ({support!r}) of the distribution {self!r}, but "
                f"found invalid values:\n{value}")

    def _expand_params(self, cls, batch_shape, _instance, *names):
        """expand() of a family whose parameters are the named tensors of batch_shape."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = _size(batch_shape)
        for name in names:
            setattr(new, name, getattr(self, name).expand(batch_shape))
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} "
                                      f"that defines a custom __init__ method must also define "
                                      f"a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        parts = ", ".join(f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
                          for p in names)
        return f"{type(self).__name__}({parts})"


# ---- continuous families ----------------------------------------------------------------------

class Normal(Distribution):
    """Normal(loc, scale): the Gaussian with mean loc and standard deviation scale."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast_all(loc, scale)
        super().__init__(self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Normal, batch_shape, _instance, "loc", "scale")

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with _gs.no_grad():
            return _gs.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _gs.randn(tuple(shape), dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        log_scale = self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + _gs.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * _gs.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + _gs.log(self.scale)


class Uniform(Distribution):
    """Uniform(low, high): uniform on the half-open interval [low, high)."""
    arg_constraints = {"low": constraints.dependent, "high": constraints.dependent}
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = _broadcast_all(low, high)
        super().__init__(self.low.size(), validate_args=validate_args)
        if self._validate_args and not bool((self.low < self.high).all()):
            raise ValueError("Uniform is not defined when low>= high")

    @property
    def support(self):
        return _HalfOpenInterval(self.low, self.high)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Uniform, batch_shape, _instance, "low", "high")

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return _gs.full_like(self.high, float("nan"))

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rand = _gs.rand(tuple(shape), dtype=self.low.dtype)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return _gs.log(lb.mul(ub)) - _gs.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return _gs.log(self.high - self.low)


class Exponential(Distribution):
    """Exponential(rate): density rate * exp(-rate * x) on x >= 0."""
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        (self.rate,) = _broadcast_all(rate)
        super().__init__(self.rate.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Exponential, batch_shape, _instance, "rate")

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return _gs.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return _gs.empty(tuple(shape), dtype=self.rate.dtype).exponential_() / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - _gs.exp(-self.rate * value)

    def icdf(self, value):
        return -_gs.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - _gs.log(self.rate)


class Laplace(Distribution):
    """Laplace(loc, scale): density exp(-|x - loc| / scale) / (2 scale)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast_all(loc, scale)
        super().__init__(self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Laplace, batch_shape, _instance, "loc", "scale")

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _finfo(self.loc.dtype)[0]
        u = _gs.empty(tuple(shape), dtype=self.loc.dtype).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * _gs.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -_gs.log(2 * self.scale) - _gs.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * _gs.expm1(-(value - self.loc).abs() / self.scale)

    def entropy(self):
        return 1 + _gs.log(2 * self.scale)


def _xlogy(x, y):
    """x * log(y), 0 where x is 0 even at y = 0 (torch.xlogy, for the log-densities below);
    its gradient in x is log(y), as torch's, also where x is 0."""
    both_zero = (x == 0) & (y == 0)
    return x * _gs.log(_gs.where(both_zero, _gs.ones_like(y * x), y))


def _standard_gamma(alpha):
    """Gamma(alpha, 1) samples, one per element of alpha, without gradient: Marsaglia and
    Tsang's squeeze method (2000), all elements at once, redrawing the few rejected; below
    alpha = 1 a Gamma(alpha + 1) sample times U^(1/alpha)."""
    with _gs.no_grad():
        shape = tuple(alpha.shape)
        boost = alpha < 1
        d = _gs.where(boost, alpha + 1, alpha) - 1.0 / 3
        c = 1.0 / _gs.sqrt(9 * d)
        out = _gs.zeros_like(alpha)
        pending = _gs.ones(shape, dtype=_gs.bool)
        while bool(pending.any()):
            x = _gs.randn(shape, dtype=alpha.dtype)
            v = (1 + c * x) ** 3
            u = _gs.rand(shape, dtype=alpha.dtype)
            ok = (v > 0) & (_gs.log(u) < 0.5 * x * x + d - d * v + d * _gs.log(v.clamp(min=1e-300)))
            take = pending & ok
            out = _gs.where(take, d * v, out)
            pending = pending & ~ok
        if bool(boost.any()):
            u = _gs.rand(shape, dtype=alpha.dtype)
            out = _gs.where(boost, out * u ** (1.0 / alpha), out)
        tiny = _finfo(alpha.dtype)[1]
        return out.clamp(min=tiny)


def _poisson(rate):
    """Poisson(rate) samples, one per element, without gradient: Knuth's product of uniforms
    below rate 10, and Hoermann's transformed rejection (PTRS, 1993) from 10 up, as NumPy
    draws them."""
    with _gs.no_grad():
        shape = tuple(rate.shape)
        out = _gs.zeros_like(rate)
        small = rate < 10
        if bool(small.any()):
            limit = _gs.exp(-rate)
            product = _gs.rand(shape, dtype=rate.dtype)
            count = _gs.zeros_like(rate)
            running = small & (product > limit)
            while bool(running.any()):
                count = count + running.to(rate.dtype)
                product = _gs.where(running, product * _gs.rand(shape, dtype=rate.dtype), product)
                running = running & (product > limit)
            out = _gs.where(small, count, out)
        large = ~small
        if bool(large.any()):
            lam = _gs.where(large, rate, _gs.full_like(rate, 10.0))
            slam, loglam = _gs.sqrt(lam), _gs.log(lam)
            b = 0.931 + 2.53 * slam
            a = -0.059 + 0.02483 * b
            invalpha = 1.1239 + 1.1328 / (b - 3.4)
            vr = 0.9277 - 3.6224 / (b - 2)
            pending = large.clone()
            while bool(pending.any()):
                u = _gs.rand(shape, dtype=rate.dtype) - 0.5
                v = _gs.rand(shape, dtype=rate.dtype)
                us = 0.5 - u.abs()
                k = _gs.floor((2 * a / us + b) * u + lam + 0.43)
                quick = (us >= 0.07) & (v <= vr)
                possible = (k >= 0) & ~((us < 0.013) & (v > us))
                bound = (_gs.log(v) + _gs.log(invalpha) - _gs.log(a / (us * us) + b)
                         <= -lam + k * loglam - _gs.lgamma(k + 1))
                ok = pending & (quick | (possible & bound))
                out = _gs.where(ok, k, out)
                pending = pending & ~ok
        return out


class Gamma(Distribution):
    """Gamma(concentration, rate): density rate^c x^(c-1) e^(-rate x) / Gamma(c) on x > 0.
    sample draws by Marsaglia and Tsang's method; there is no rsample yet (torch's needs the
    gamma sample's implicit gradient)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = _broadcast_all(concentration, rate)
        super().__init__(self.concentration.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gamma, batch_shape, _instance, "concentration", "rate")

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with _gs.no_grad():
            value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
            return value.clamp(min=_finfo(value.dtype)[1])

    def log_prob(self, value):
        value = _gs.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        c, r = self.concentration, self.rate
        return _xlogy(c, r) + _xlogy(c - 1, value) - r * value - _gs.lgamma(c)

    def entropy(self):
        c = self.concentration
        return c - _gs.log(self.rate) + _gs.lgamma(c) + (1.0 - c) * _gs.digamma(c)


class Chi2(Gamma):
    """Chi2(df): Gamma(df / 2, 1 / 2)."""
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        (df,) = _broadcast_all(df)
        super().__init__(0.5 * df, _gs.full_like(df, 0.5), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2


class Dirichlet(Distribution):
    """Dirichlet(concentration): a point of the simplex over the last dim; sample normalises
    Gamma samples (no rsample yet, as Gamma)."""
    arg_constraints = {"concentration": _Independent(constraints.positive, 1)}
    support = constraints.simplex

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = _size(batch_shape)
        new.concentration = self.concentration.expand(tuple(batch_shape) + tuple(self.event_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concm1 / concm1.sum(-1, True)
        mask = (self.concentration < 1).all(dim=-1)
        mode[mask] = _F.one_hot(mode[mask].argmax(dim=-1), concm1.shape[-1]).to(mode.dtype)
        return mode

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with _gs.no_grad():
            g = _standard_gamma(self.concentration.expand(shape))
            return (g / g.sum(-1, True)).clamp(min=_finfo(g.dtype)[1])

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (_xlogy(c - 1.0, value).sum(-1) + _gs.lgamma(c.sum(-1))
                - _gs.lgamma(c).sum(-1))

    def entropy(self):
        c = self.concentration
        k = c.size(-1)
        a0 = c.sum(-1)
        return (_gs.lgamma(c).sum(-1) - _gs.lgamma(a0) - (k - a0) * _gs.digamma(a0)
                - ((c - 1.0) * _gs.digamma(c)).sum(-1))


class Beta(Distribution):
    """Beta(concentration1, concentration0): on [0, 1], the first coordinate of a Dirichlet of
    the two (no rsample yet, as Gamma)."""
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval

    def __init__(self, concentration1, concentration0, validate_args=None):
        c1, c0 = _broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(_gs.stack([c1, c0], -1), validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = _size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def sample(self, sample_shape=()):
        return self._dirichlet.sample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = _gs.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()


class Poisson(Distribution):
    """Poisson(rate): counts with mean rate; sample by Knuth's method below rate 10 and
    transformed rejection above."""
    arg_constraints = {"rate": constraints.nonnegative}
    support = _IntegerInterval(0, float("inf"))

    def __init__(self, rate, validate_args=None):
        (self.rate,) = _broadcast_all(rate)
        super().__init__(self.rate.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Poisson, batch_shape, _instance, "rate")

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        return _poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = _broadcast_all(self.rate, value)
        return _xlogy(value, rate) - rate - _gs.lgamma(value + 1)


# ---- discrete families ------------------------------------------------------------------------

class _ProbsLogits:
    """probs and logits, each computed from the other on first use (torch's lazy_property)."""

    @property
    def probs(self):
        if "probs" not in self.__dict__:
            self.__dict__["probs"] = _logits_to_probs(self.logits, self._binary)
        return self.__dict__["probs"]

    @property
    def logits(self):
        if "logits" not in self.__dict__:
            self.__dict__["logits"] = _probs_to_logits(self.probs, self._binary)
        return self.__dict__["logits"]


def _one_of(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class Bernoulli(_ProbsLogits, Distribution):
    """Bernoulli(probs=None, logits=None): 1 with probability probs (or sigmoid(logits))."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _binary = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            (self.__dict__["probs"],) = _broadcast_all(probs)
            param = self.probs
        else:
            (self.__dict__["logits"],) = _broadcast_all(logits)
            param = self.logits
        super().__init__(param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = _size(batch_shape)
        for k in ("probs", "logits"):
            if k in self.__dict__:
                new.__dict__[k] = self.__dict__[k].expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        mode[self.probs == 0.5] = float("nan")
        return mode

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    @property
    def param_shape(self):
        return self.probs.size()

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with _gs.no_grad():
            return _gs.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = _gs.broadcast_tensors(self.logits, value)
        return -_F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return _F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = _gs.arange(2, dtype=self.probs.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


class Categorical(_ProbsLogits, Distribution):
    """Categorical(probs=None, logits=None): an index into the last dim of probs (normalised
    to sum to 1) or logits (normalised by logsumexp)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real}
    has_enumerate_support = True
    _binary = False

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.__dict__["probs"] = probs / probs.sum(-1, keepdim=True)
            param = self.probs
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.__dict__["logits"] = logits - logits.logsumexp(dim=-1, keepdim=True)
            param = self.logits
        self._param = param
        self._num_events = param.size()[-1]
        batch_shape = param.size()[:-1] if param.dim() > 1 else ()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = _size(batch_shape)
        param_shape = tuple(batch_shape) + (self._num_events,)
        for k in ("probs", "logits"):
            if k in self.__dict__:
                new.__dict__[k] = self.__dict__[k].expand(param_shape)
                new._param = new.__dict__[k]
        new._num_events = self._num_events
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def support(self):
        return _IntegerInterval(0, self._num_events - 1)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return _gs.full(tuple(self._extended_shape()), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return _gs.full(tuple(self._extended_shape()), float("nan"), dtype=self.probs.dtype)

    def sample(self, sample_shape=()):
        if not isinstance(sample_shape, (tuple, list, _gs.Size)):
            sample_shape = (sample_shape,)
        n = 1
        for d in sample_shape:
            n *= int(d)
        with _gs.no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = _gs.multinomial(probs_2d, n, True).t()
            return samples_2d.reshape(tuple(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = _gs.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        min_real = _finfo(self.logits.dtype)[2]
        logits = _gs.clamp(self.logits, min=min_real)
        p_log_p = logits * self.probs
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand=True):
        values = _gs.arange(self._num_events, dtype=_gs.int64)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


class OneHotCategorical(Distribution):
    """OneHotCategorical(probs=None, logits=None): Categorical's index as a one-hot vector."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        param = self._categorical._param
        super().__init__(self._categorical.batch_shape, param.size()[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = _size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        mode = probs.argmax(dim=-1)
        return _F.one_hot(mode, num_classes=probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape=()):
        probs = self._categorical.probs
        num_events = self._categorical._num_events
        indices = self._categorical.sample(sample_shape)
        return _F.one_hot(indices, num_events).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        indices = value.max(-1)[1]
        return self._categorical.log_prob(indices)

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = _gs.eye(n, dtype=self._categorical._param.dtype)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values


class Independent(Distribution):
    """Independent(base, n): the base distribution's rightmost n batch dims taken as event
    dims, so log_prob sums over them (a diagonal Gaussian as one multivariate event)."""
    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError(
                f"Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                f"actual {reinterpreted_batch_ndims} vs {len(base_distribution.batch_shape)}")
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        split = len(shape) - event_dim
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(shape[:split], shape[split:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = _size(batch_shape)
        new.base_dist = self.base_dist.expand(
            tuple(batch_shape) + tuple(self.event_shape[:self.reinterpreted_batch_ndims]))
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        return False if self.reinterpreted_batch_ndims > 0 else self.base_dist.has_enumerate_support

    @property
    def support(self):
        s = self.base_dist.support
        return _Independent(s, self.reinterpreted_batch_ndims) if self.reinterpreted_batch_ndims else s

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def __repr__(self):
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"


# ---- KL divergence ----------------------------------------------------------------------------

_KL_REGISTRY = {}


def register_kl(type_p, type_q):
    """Decorator: registers fn(p, q) as kl_divergence for p of type_p and q of type_q (the most
    specific registered pair of their classes is used, as in torch)."""
    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        return fn
    return decorator


def _dispatch_kl(type_p, type_q):
    matches = [(p, q) for p, q in _KL_REGISTRY if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return None
    # The most specific pair: smallest (MRO distance of p, of q).
    return _KL_REGISTRY[min(matches, key=lambda m: (type_p.__mro__.index(m[0]),
                                                    type_q.__mro__.index(m[1])))]


def kl_divergence(p, q):
    """KL(p || q) for two distributions of families with a registered formula."""
    fn = _dispatch_kl(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} "
                                  f"and q type {type(q).__name__}")
    return fn(p, q)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (_F.softplus(-q.logits) - _F.softplus(-p.logits))
    t1[q.probs == 0] = float("inf")
    t1[p.probs == 0] = 0
    t2 = (1 - p.probs) * (_F.softplus(q.logits) - _F.softplus(p.logits))
    t2[q.probs == 1] = float("inf")
    t2[p.probs == 1] = 0
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t[(q.probs == 0).expand_as(t)] = float("inf")
    t[(p.probs == 0).expand_as(t)] = 0
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    t1 = -rate_ratio.log()
    return t1 + rate_ratio - 1


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    result[(q.low > p.low) | (q.high < p.high)] = float("inf")
    return result


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * _gs.exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)



# Between families. Where p's support reaches outside q's, KL(p || q) is infinite.

def _infinite_like(t):
    return _gs.full_like(t, float("inf"))


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_q = q.scale.pow(2)
    rate2 = p.rate.pow(2)
    log_term = 0.5 * _gs.log(rate2 * var_q * 2 * math.pi)
    return log_term - 1 + (rate2.reciprocal() - q.loc / p.rate + q.loc.pow(2) * 0.5) / var_q


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var_q = q.scale.pow(2)
    ratio = p.scale.pow(2) / var_q
    log_term = 0.5 * _gs.log(2 * ratio / math.pi)
    return -log_term + ratio + (0.5 * p.loc.pow(2) - p.loc * q.loc + 0.5 * q.loc.pow(2)) / var_q - 1


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    diff = p.loc - q.loc
    z = diff / p.scale
    t2 = math.sqrt(2 / math.pi) * p.scale * _gs.exp(-0.5 * z.pow(2))
    t3 = diff * _gs.erf(math.sqrt(0.5) * z)
    return -_gs.log(p.scale / q.scale) + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    result[p.low < 0] = float("inf")
    return result


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    width = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / width).log()
    return t1 + 0.5 * (width.pow(2) / 12 + ((p.high + p.low - 2 * q.loc) / 2).pow(2)) / q.scale.pow(2)


@register_kl(Normal, Exponential)
@register_kl(Normal, Uniform)
@register_kl(Laplace, Exponential)
@register_kl(Laplace, Uniform)
def _kl_real_to_bounded(p, q):
    return _infinite_like(p.loc)


@register_kl(Exponential, Uniform)
def _kl_exponential_uniform(p, q):
    return _infinite_like(p.rate)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * _gs.log(p.rate / q.rate)
    t2 = _gs.lgamma(q.concentration) - _gs.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * _gs.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = sum_p.lgamma() - sum_q.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sum_p.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sum_q.lgamma()
    t3 = (p.concentration1 - q.concentration1) * _gs.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * _gs.digamma(p.concentration0)
    t5 = (sum_q - sum_p) * _gs.digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


# The families on linear algebra, in their own file; imported last, as they build on the above.
from gradscope._distributions_extra import (Binomial, MultivariateNormal,  # noqa: E402
                                            _kl_multivariatenormal_multivariatenormal)

register_kl(MultivariateNormal, MultivariateNormal)(_kl_multivariatenormal_multivariatenormal)
