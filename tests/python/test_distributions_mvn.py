"""gradscope.distributions' MultivariateNormal and Binomial against torch 1.13: the same calls
on both libraries in float64; log_prob, entropy, the moments, the matrices, KL divergences and
their gradients agree to 1e-10; shapes, reprs and validation messages are torch's; samples (from
gradscope's own generator) have the right statistics. Registered only when torch imports."""
import math

import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")

LIBS = {"torch": torch, "gradscope": gs}
RNG = np.random.default_rng(5)
X = RNG.uniform(-1, 1, (2, 3, 3))
COV = X @ np.swapaxes(X, -1, -2) + np.eye(3)  # two positive-definite 3 x 3
LOC = RNG.uniform(-1, 1, (2, 3))


def t(lib, values, grad=False):
    values = values.tolist() if isinstance(values, np.ndarray) else values
    return lib.tensor(values, dtype=lib.float64, requires_grad=grad)


def arr(x):
    return np.asarray(x.detach().tolist(), dtype=float)


def mvn(lib, how, loc=LOC, cov=COV):
    """A MultivariateNormal given its covariance ('cov'), precision ('prec') or Cholesky
    factor ('tril'), and the leaf tensors it was built from."""
    loc_t = t(lib, loc, True)
    matrix = {"cov": cov, "prec": np.linalg.inv(cov), "tril": np.linalg.cholesky(cov)}[how]
    matrix_t = t(lib, matrix, True)
    key = {"cov": "covariance_matrix", "prec": "precision_matrix", "tril": "scale_tril"}[how]
    return lib.distributions.MultivariateNormal(loc_t, **{key: matrix_t}), (loc_t, matrix_t)


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(arr(a), arr(b), rtol=tol, atol=tol)


@pytest.mark.parametrize("how", ["cov", "prec", "tril"])
def test_mvn_values_and_gradients_are_torchs(how):
    value = RNG.normal(size=(4, 2, 3))
    out = {}
    for name, lib in LIBS.items():
        d, leaves = mvn(lib, how)
        lp = d.log_prob(t(lib, value))
        loss = lp.sum() + d.entropy().sum() * 0.5
        loss.backward()
        out[name] = (d, lp, d.entropy(), leaves)
    (gd, glp, gh, gleaves), (td, tlp, th, tleaves) = out["gradscope"], out["torch"]
    close(glp, tlp)
    close(gh, th)
    for field in ("mean", "mode", "variance", "stddev", "scale_tril", "covariance_matrix",
                  "precision_matrix"):
        close(getattr(gd, field), getattr(td, field))
    for g_leaf, t_leaf in zip(gleaves, tleaves):
        close(g_leaf.grad, t_leaf.grad)
    assert tuple(gd.batch_shape) == tuple(td.batch_shape) == (2,)
    assert tuple(gd.event_shape) == tuple(td.event_shape) == (3,)
    assert repr(gd) == repr(td)


def test_mvn_broadcasts_loc_against_the_matrix_and_expands():
    for lib in LIBS.values():
        D = lib.distributions
        d = D.MultivariateNormal(t(lib, LOC), covariance_matrix=t(lib, COV[0]))
        assert tuple(d.batch_shape) == (2,) and tuple(d.scale_tril.shape) == (2, 3, 3)
        e = d.expand((4, 2))
        assert tuple(e.batch_shape) == (4, 2) and tuple(e.sample((5,)).shape) == (5, 4, 2, 3)
    g = gs.distributions.MultivariateNormal(t(gs, LOC), covariance_matrix=t(gs, COV[0]))
    tt = torch.distributions.MultivariateNormal(t(torch, LOC), covariance_matrix=t(torch, COV[0]))
    v = RNG.normal(size=(3,))
    close(g.expand((4, 2)).log_prob(t(gs, v)), tt.expand((4, 2)).log_prob(t(torch, v)))


@pytest.mark.parametrize("p_how,q_how", [("cov", "tril"), ("prec", "cov"), ("tril", "tril")])
def test_mvn_kl_divergence_is_torchs(p_how, q_how):
    cov_q = COV[::-1] + 0.5 * np.eye(3)
    loc_q = LOC[0]
    out = {}
    for name, lib in LIBS.items():
        p, p_leaves = mvn(lib, p_how)
        q, q_leaves = mvn(lib, q_how, loc_q, cov_q)
        kl = lib.distributions.kl_divergence(p, q)
        kl.sum().backward()
        out[name] = (kl, p_leaves + q_leaves)
    close(out["gradscope"][0], out["torch"][0])
    for g_leaf, t_leaf in zip(out["gradscope"][1], out["torch"][1]):
        close(g_leaf.grad, t_leaf.grad)
    assert (arr(out["gradscope"][0]) > 0).all()


def test_mvn_kl_of_different_event_shapes_is_torchs_error():
    for lib in LIBS.values():
        D = lib.distributions
        p = D.MultivariateNormal(lib.zeros(2, dtype=lib.float64), lib.eye(2, dtype=lib.float64))
        q = D.MultivariateNormal(lib.zeros(3, dtype=lib.float64), lib.eye(3, dtype=lib.float64))
        with pytest.raises(ValueError, match="different event shapes"):
            D.kl_divergence(p, q)


def test_mvn_samples_have_its_mean_and_covariance():
    gs.manual_seed(3)
    d, _ = mvn(gs, "cov")
    x = arr(d.sample((20000,)))
    assert x.shape == (20000, 2, 3)
    se = np.sqrt(np.diagonal(COV, axis1=-2, axis2=-1) / 20000)
    assert (np.abs(x.mean(0) - LOC) < 5 * se).all()
    for b in range(2):
        np.testing.assert_allclose(np.cov(x[:, b].T), COV[b], atol=0.1 * np.abs(COV[b]).max())
    # rsample carries the gradient to loc: d mean(sample) / d loc = 1
    loc = t(gs, LOC, True)
    gs.distributions.MultivariateNormal(loc, scale_tril=t(gs, np.linalg.cholesky(COV))) \
        .rsample((7,)).mean(0).sum().backward()
    np.testing.assert_allclose(arr(loc.grad), np.ones((2, 3)))


@pytest.mark.parametrize("call,kwargs", [
    ("cov", {"covariance_matrix": -np.eye(3)}),
    ("cov", {"covariance_matrix": np.array([[2.0, 1.0, 0], [0, 2.0, 0], [0, 0, 2.0]])}),
    ("tril", {"scale_tril": np.ones((3, 3))}),
    ("prec", {"precision_matrix": -np.eye(3)}),
    ("none", {}),
    ("two", {"covariance_matrix": np.eye(3), "scale_tril": np.eye(3)}),
    ("flat", {"covariance_matrix": np.ones(3)}),
])
def test_mvn_validation_messages_are_torchs(call, kwargs):
    messages = []
    for lib in LIBS.values():
        with pytest.raises(ValueError) as info:
            lib.distributions.MultivariateNormal(
                lib.zeros(3, dtype=lib.float64), **{k: t(lib, v) for k, v in kwargs.items()})
        messages.append(str(info.value).replace("gradscope.", "torch."))
    assert messages[0] == messages[1]
    with pytest.raises(ValueError, match="loc must be at least one-dimensional"):
        gs.distributions.MultivariateNormal(gs.tensor(0.0), gs.eye(1))


# ---- Binomial -------------------------------------------------------------------------------

def binomials(lib):
    D = lib.distributions
    return {
        "probs": (D.Binomial(t(lib, [5.0, 5.0, 5.0]), probs=t(lib, [0.2, 0.5, 0.9], True)),
                  t(lib, [1.0, 5.0, 4.0])),
        "logits": (D.Binomial(t(lib, [[3.0], [7.0]]), logits=t(lib, [-1.0, 0.0, 2.5], True)),
                   t(lib, [[0.0, 3.0, 3.0], [7.0, 2.0, 6.0]])),
        "count": (D.Binomial(4, probs=t(lib, [0.3, 0.7], True)), t(lib, [2.0, 4.0])),
    }


@pytest.mark.parametrize("name", ["probs", "logits", "count"])
def test_binomial_is_torchs(name):
    out = {}
    for lib_name, lib in LIBS.items():
        d, value = binomials(lib)[name]
        lp = d.log_prob(value)
        lp.sum().backward()
        param = d.probs if "probs" in d.__dict__ and d.__dict__["probs"].requires_grad \
            else d.logits
        leaf = param if param.grad is not None else None
        out[lib_name] = (d, lp, leaf)
    (gd, glp, gleaf), (td, tlp, tleaf) = out["gradscope"], out["torch"]
    close(glp, tlp)
    for field in ("mean", "mode", "variance", "probs", "logits"):
        close(getattr(gd, field), getattr(td, field))
    assert tuple(gd.batch_shape) == tuple(td.batch_shape)
    assert repr(gd) == repr(td)
    if tleaf is not None:
        close(gleaf.grad, tleaf.grad)
    if name != "logits":  # a homogeneous count: the support and the entropy
        close(gd.enumerate_support(), td.enumerate_support())
        close(gd.enumerate_support(expand=False), td.enumerate_support(expand=False))
        close(gd.entropy(), td.entropy())


def test_binomial_gradient_reaches_probs():
    grads = []
    for lib in LIBS.values():
        p = t(lib, [0.2, 0.5, 0.9], True)
        lib.distributions.Binomial(6, probs=p).log_prob(t(lib, [1.0, 3.0, 6.0])).sum().backward()
        grads.append(arr(p.grad))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10)


def test_binomial_samples_have_its_moments():
    gs.manual_seed(11)
    d = gs.distributions.Binomial(t(gs, [[10.0, 3.0, 0.0]]), probs=t(gs, [0.3, 0.8, 0.5]))
    x = arr(d.sample((20000,)))
    assert x.shape == (20000, 1, 3)
    assert (x == np.round(x)).all() and (x >= 0).all() and (x <= [10, 3, 0]).all()
    mean, var = np.array([3.0, 2.4, 0.0]), np.array([2.1, 0.48, 0.0])
    assert (np.abs(x.mean(0)[0] - mean) <= 5 * np.sqrt(var / 20000) + 1e-12).all()
    np.testing.assert_allclose(x.var(0)[0], var, rtol=0.05, atol=1e-12)


@pytest.mark.parametrize("make", [
    lambda D, lib: D.Binomial(t(lib, [2.5]), probs=t(lib, [0.5])),
    lambda D, lib: D.Binomial(t(lib, [2.0]), probs=t(lib, [1.5])),
    lambda D, lib: D.Binomial(t(lib, [2.0]), probs=t(lib, [0.5])).log_prob(t(lib, [3.0])),
    lambda D, lib: D.Binomial(t(lib, [2.0])),
    lambda D, lib: D.Binomial(t(lib, [2.0, 3.0]), probs=t(lib, [0.5, 0.5])).enumerate_support(),
])
def test_binomial_errors_are_torchs(make):
    errors = []
    for lib in LIBS.values():
        with pytest.raises((ValueError, NotImplementedError)) as info:
            make(lib.distributions, lib)
        errors.append((type(info.value), str(info.value).replace("gradscope.", "torch.")))
    assert errors[0] == errors[1]


def test_mvn_log_likelihood_fit_matches_torch_step_by_step():
    """Fitting loc and scale_tril by gradient descent on the negative log-likelihood: the
    same numbers in both after 20 steps."""
    data = RNG.normal(size=(50, 2)) @ np.array([[1.0, 0.5], [0.0, 0.7]]) + [1.0, -2.0]
    results = []
    for lib in LIBS.values():
        loc = lib.zeros(2, dtype=lib.float64, requires_grad=True)
        raw = lib.zeros(2, 2, dtype=lib.float64, requires_grad=True)
        x = t(lib, data)
        for _ in range(20):
            tril = lib.tril(raw, -1) + lib.diag_embed(lib.exp(raw.diagonal()))
            d = lib.distributions.MultivariateNormal(loc, scale_tril=tril)
            nll = -d.log_prob(x).mean()
            nll.backward()
            with lib.no_grad():
                loc -= 0.2 * loc.grad
                raw -= 0.2 * raw.grad
            loc.grad = None
            raw.grad = None
        results.append((nll.item(), arr(loc), arr(raw)))
    assert math.isclose(results[0][0], results[1][0], rel_tol=1e-10)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-9)
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-9, atol=1e-12)
