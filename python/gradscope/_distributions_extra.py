"""gradscope._distributions_extra: the torch.distributions families that need more than
distributions.py's elementwise ops: MultivariateNormal (on gradscope.linalg's cholesky and
solve) and Binomial; gradscope.distributions imports and exports them, and registers
MultivariateNormal's KL divergence.

The formulas are torch 1.13's, op for op (the triangular solves are linalg.solve's, which
agree with torch's solve_triangular to rounding), with torch's validation and messages.
"""
import math

import gradscope as _gs
from gradscope.distributions import (Distribution, _Constraint, _IntegerInterval,
                                     _broadcast_all, _one_of, _ProbsLogits, _size, constraints)


class _RealVector(_Constraint):
    event_dim = 1

    def check(self, value):
        return (value == value).all(-1)  # not NaN


class _Symmetric(_Constraint):
    event_dim = 2

    def check(self, value):
        return _gs.isclose(value, value.transpose(-2, -1), atol=1e-6).all(-2).all(-1)


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        # torch's: symmetric and a Cholesky factorisation that succeeds (all eigenvalues > 0)
        return super().check(value) & (_gs.linalg.eigvalsh(value).min(-1).values > 0)


class _LowerCholesky(_Constraint):
    event_dim = 2

    def check(self, value):
        lower = (value.tril() == value).reshape(tuple(value.shape[:-2]) + (-1,)).all(-1)
        positive = (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)
        return lower & positive


constraints.real_vector = _RealVector()
constraints.symmetric = _Symmetric()
constraints.positive_definite = _PositiveDefinite()
constraints.lower_cholesky = _LowerCholesky()
class _IntegerGreaterThan(_Constraint):
    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self):
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


constraints.nonnegative_integer = _IntegerGreaterThan(0)
constraints.integer_greater_than = _IntegerGreaterThan


def _broadcast_shapes(a, b):
    """The shape a and b broadcast to (torch.broadcast_shapes), or ValueError."""
    a, b = tuple(a), tuple(b)
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    if any(x != y and 1 not in (x, y) for x, y in zip(a, b)):
        raise ValueError(f"shapes {a} and {b} are not broadcastable")
    return tuple(y if x == 1 else x for x, y in zip(a, b))


def _batch_mv(bmat, bvec):
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def _solve_lower(L, B):
    """L^-1 B for lower-triangular L, as torch's solve_triangular(upper=False): it reads only
    L's lower triangle, so L's gradient is lower-triangular too."""
    return _gs.linalg.solve(L.tril(), B)


def _batch_mahalanobis(bL, bx):
    """x^T (L L^T)^-1 x for each x of bx [..., n] against each L of bL [..., n, n] (batch
    dims broadcast): |L^-1 x|^2."""
    y = _solve_lower(bL, bx.unsqueeze(-1)).squeeze(-1)
    return y.pow(2).sum(-1)


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of P^-1, as torch computes it (through the flipped P)."""
    Lf = _gs.linalg.cholesky(_gs.flip(P, (-2, -1)))
    L_inv = _gs.flip(Lf, (-2, -1)).transpose(-2, -1)
    eye = _gs.eye(P.shape[-1], dtype=P.dtype)
    return _solve_lower(L_inv, eye.expand(tuple(L_inv.shape)))


class MultivariateNormal(Distribution):
    """MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None, scale_tril=None):
    the Gaussian over the last dim of loc, given exactly one of its covariance matrix, its
    inverse or the lower Cholesky factor of the covariance; batch dims of loc and the matrix
    broadcast. rsample is loc + L eps."""
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + \
                (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        given = {"scale_tril": scale_tril, "covariance_matrix": covariance_matrix,
                 "precision_matrix": precision_matrix}
        name, matrix = next((k, v) for k, v in given.items() if v is not None)
        if matrix.dim() < 2:
            what = {"scale_tril": "scale_tril matrix", "covariance_matrix": "covariance_matrix",
                    "precision_matrix": "precision_matrix"}[name]
            raise ValueError(f"{what} must be at least two-dimensional, with optional leading "
                             "batch dimensions")
        batch_shape = _broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        self.__dict__[name] = matrix.expand(tuple(batch_shape) + (-1, -1))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        event_shape = self.loc.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = _gs.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = _size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                new.__dict__[name] = self.__dict__[name].expand(cov_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @property
    def scale_tril(self):
        if "scale_tril" not in self.__dict__:
            self.__dict__["scale_tril"] = self._unbroadcasted_scale_tril.expand(
                self._matrix_shape())
        return self.__dict__["scale_tril"]

    @property
    def covariance_matrix(self):
        if "covariance_matrix" not in self.__dict__:
            L = self._unbroadcasted_scale_tril
            self.__dict__["covariance_matrix"] = (L @ L.transpose(-2, -1)).expand(
                self._matrix_shape())
        return self.__dict__["covariance_matrix"]

    @property
    def precision_matrix(self):
        if "precision_matrix" not in self.__dict__:
            L = self._unbroadcasted_scale_tril
            eye = _gs.eye(L.shape[-1], dtype=L.dtype).expand(tuple(L.shape))
            self.__dict__["precision_matrix"] = _gs.cholesky_solve(eye, L).expand(
                self._matrix_shape())
        return self.__dict__["precision_matrix"]

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        shape = tuple(self._batch_shape) + tuple(self._event_shape)
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(shape)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        eps = _gs.randn(shape, dtype=self.loc.dtype)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self):
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return H if len(self._batch_shape) == 0 else H.expand(tuple(self._batch_shape))


def _kl_multivariatenormal_multivariatenormal(p, q):
    """KL(p || q) of two Gaussians, as torch's formula: log-determinants, the trace of
    (L_q^-1 L_p)(L_q^-1 L_p)^T and the Mahalanobis distance of the means."""
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event "
                         "shapes cannot be computed")
    half_term1 = q._half_log_det() - p._half_log_det()
    Lq, Lp = q._unbroadcasted_scale_tril, p._unbroadcasted_scale_tril
    batch = _broadcast_shapes(Lq.shape[:-2], Lp.shape[:-2])
    n = p.event_shape[0]
    term2 = _solve_lower(Lq.expand(batch + (n, n)), Lp.expand(batch + (n, n)))
    term2 = term2.pow(2).sum(-1).sum(-1)
    term3 = _batch_mahalanobis(Lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


def _clamp_by_zero(x):
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(_ProbsLogits, Distribution):
    """Binomial(total_count=1, probs=None, logits=None): the number of successes in
    total_count independent trials, each a success with probability probs (or
    sigmoid(logits)). sample draws the trials (as many uniforms as the largest count)."""
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True
    _binary = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            self.total_count, self.__dict__["probs"] = _broadcast_all(total_count, probs)
            param = self.probs
        else:
            self.total_count, self.__dict__["logits"] = _broadcast_all(total_count, logits)
            param = self.logits
        self.total_count = self.total_count.to(param.dtype)
        self._param = param
        super().__init__(param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Binomial, _instance)
        batch_shape = _size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        for k in ("probs", "logits"):
            if k in self.__dict__:
                new.__dict__[k] = self.__dict__[k].expand(batch_shape)
                new._param = new.__dict__[k]
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def support(self):
        return _IntegerInterval(0, self.total_count)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return _gs.minimum(((self.total_count + 1) * self.probs).floor(), self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with _gs.no_grad():
            n = self.total_count.expand(shape)
            p = self.probs.expand(shape)
            most = int(n.max().item()) if n.numel() else 0
            if most == 0:
                return _gs.zeros(shape, dtype=p.dtype)
            # trial i counts where i < n: successes among the first n of `most` trials
            u = _gs.rand(shape + (most,), dtype=p.dtype)
            trial = _gs.arange(most, dtype=p.dtype)
            hits = (u < p.unsqueeze(-1)) & (trial < n.unsqueeze(-1))
            return hits.to(p.dtype).sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = _gs.lgamma(self.total_count + 1)
        log_factorial_k = _gs.lgamma(value + 1)
        log_factorial_nmk = _gs.lgamma(self.total_count - value + 1)
        # k log p + (n - k) log(1 - p) = k logit - n max(logit, 0) - n log1p(e^-|logit|)
        normalize_term = (self.total_count * _clamp_by_zero(self.logits)
                          + self.total_count * _gs.log1p(_gs.exp(-_gs.abs(self.logits)))
                          - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def _homogeneous_count(self, what):
        total_count = int(self.total_count.max().item())
        if not self.total_count.min().item() == total_count:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return total_count

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(_gs.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = self._homogeneous_count("enumerate_support")
        values = _gs.arange(1 + total_count, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

