"""Double backward through the activations beyond relu, gelu, sigmoid and tanh (silu, elu,
selu, softplus, hardtanh, relu6, hardsigmoid, hardswish, logsigmoid, mish, leaky_relu),
against Debian's torch 1.13 in float64: the same code runs once with torch and once with
gradscope (the module passed in as `lib`), and every number must agree to 1e-10. For each:
a gradient penalty and a Hessian-vector product through a layer using it, and for the smooth
ones the third derivative; and each written in place through a view. torch 1.13 has no derivative for hardsigmoid_backward: its side
runs hardsigmoid through a Function whose backward is torch's formula written with ops (the
second derivative it implies, 0, is what torch's later releases give). meson registers this file only when torch imports
(tests/python/meson.build)."""
import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")

TOL = 1e-10

# (name, call): each activation as a program calls it, parameters included.
ACTIVATIONS = [
    ("silu", lambda F, x: F.silu(x)),
    ("elu", lambda F, x: F.elu(x, alpha=0.7)),
    ("selu", lambda F, x: F.selu(x)),
    ("softplus", lambda F, x: F.softplus(x)),
    ("softplus_beta_threshold", lambda F, x: F.softplus(x, beta=2.0, threshold=3.0)),
    ("hardtanh", lambda F, x: F.hardtanh(x, -0.8, 1.2)),
    ("relu6", lambda F, x: F.relu6(x * 3)),
    ("hardsigmoid", lambda F, x: F.hardsigmoid(x)),
    ("hardswish", lambda F, x: F.hardswish(x)),
    ("logsigmoid", lambda F, x: F.logsigmoid(x)),
    ("mish", lambda F, x: F.mish(x)),
    ("leaky_relu", lambda F, x: F.leaky_relu(x, 0.2)),
]

# The smooth ones (and elu's pieces): their third derivative is not zero.
SMOOTH = ["silu", "elu", "selu", "softplus", "softplus_beta_threshold", "logsigmoid", "mish"]


def values(seed, *shape, scale=1.0):
    """Fixed numbers in [-scale, scale), the same for both libraries."""
    return (scale * np.random.RandomState(seed).uniform(-1.0, 1.0, shape)).tolist()


def leaf(lib, seed, *shape, scale=1.0):
    return lib.tensor(values(seed, *shape, scale=scale), dtype=lib.float64, requires_grad=True)


class _TorchHardsigmoid(torch.autograd.Function):
    """torch's hardsigmoid, its backward g * 1/6 (torch's float 1/6) where -3 < x < 3 as
    torch's kernel computes it, written with differentiable ops."""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.nn.functional.hardsigmoid(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        inside = (x > -3) & (x < 3)
        return torch.where(inside, g * float(np.float32(1.0) / np.float32(6.0)),
                           torch.zeros((), dtype=g.dtype))


def activation(name, lib=None):
    if name == "hardsigmoid" and lib is torch:
        return lambda F, x: _TorchHardsigmoid.apply(x)
    return dict(ACTIVATIONS)[name]


def penalty_and_hvp(lib, name):
    """y = act(x W + b) V; a WGAN-GP style penalty on d sum(y) / dx differentiated with
    respect to W and b, and H v of a loss with respect to W and b. Inputs spread over
    [-4, 4], so every piece of the piecewise activations is reached."""
    F, act = lib.nn.functional, activation(name, lib)
    x = leaf(lib, 1, 6, 3, scale=2.0)
    w, b, v = leaf(lib, 2, 3, 5, scale=1.5), leaf(lib, 3, 5), leaf(lib, 4, 5, 2)
    y = act(F, x @ w + b) @ v
    (gx,) = lib.autograd.grad(y.sum(), x, create_graph=True)
    penalty = (((gx * gx).sum(1) + 1e-12).sqrt() - 1).pow(2).mean()
    # y is used again; b reaches the penalty only through a piecewise-constant slope for
    # some: no gradient (torch: None), compared as zeros
    gp = lib.autograd.grad(penalty, [w, b, v], retain_graph=True, allow_unused=True)
    gp = tuple(lib.zeros_like(p) if g is None else g for g, p in zip(gp, [w, b, v]))
    loss = (y.tanh() ** 2).sum()
    params = [w, b, v]
    grads = lib.autograd.grad(loss, params, create_graph=True)
    vs = [lib.tensor(values(10 + i, *p.shape), dtype=lib.float64) for i, p in enumerate(params)]
    dot = sum((g * u).sum() for g, u in zip(grads, vs))
    hv = lib.autograd.grad(dot, params)
    return [penalty.item(), loss.item()] + [t.reshape(-1).tolist() for t in
                                            (gx,) + gp + grads + hv]


def third_derivative(lib, name):
    """d^3 sum(act(x)) / dx^3 elementwise, each derivative taken with create_graph."""
    x = leaf(lib, 5, 12, scale=4.0)
    y = activation(name, lib)(lib.nn.functional, x).sum()
    (d1,) = lib.autograd.grad(y, x, create_graph=True)
    (d2,) = lib.autograd.grad(d1.sum(), x, create_graph=True)
    (d3,) = lib.autograd.grad(d2.sum(), x)
    return [y.item()] + [t.tolist() for t in (d1, d2, d3)]


def in_place_through_a_view(lib, name):
    """The activation in place on a slice (CopySlices over its node), then a second
    derivative of a loss through it."""
    F = lib.nn.functional
    x = leaf(lib, 6, 3, 4, scale=4.0)
    y = x * 1.5
    getattr(F, name)(y[1:], inplace=True)
    (g,) = lib.autograd.grad((y * y.sin()).sum(), x, create_graph=True)
    (h,) = lib.autograd.grad((g * g).sum(), x)
    return [g.reshape(-1).tolist(), h.reshape(-1).tolist()]


def compare(want, got):
    assert len(got) == len(want)
    for g, t in zip(got, want):
        if isinstance(t, float):
            assert g == pytest.approx(t, rel=TOL, abs=TOL)
            continue
        assert len(g) == len(t)
        assert g == pytest.approx(t, rel=TOL, abs=TOL)


@pytest.mark.parametrize("name", [n for n, _ in ACTIVATIONS])
def test_gradient_penalty_and_hvp_match_torch(name):
    want, got = penalty_and_hvp(torch, name), penalty_and_hvp(gs, name)
    compare(want, got)
    # the parameters' second-order terms are not all zero (a dropped term would show)
    assert any(abs(v) > 1e-6 for t in want[-3:] for v in t)
    assert any(abs(v) > 1e-6 for t in want[3:6] for v in t)


@pytest.mark.parametrize("name", SMOOTH)
def test_third_derivative_matches_torch(name):
    want, got = third_derivative(torch, name), third_derivative(gs, name)
    compare(want, got)
    assert any(abs(v) > 1e-6 for v in want[-1])


@pytest.mark.parametrize("name", ["silu", "elu", "selu", "hardtanh", "relu6", "hardswish",
                                  "mish", "leaky_relu"])
def test_in_place_through_a_view_matches_torch(name):
    want, got = in_place_through_a_view(torch, name), in_place_through_a_view(gs, name)
    compare(want, got)
    assert any(abs(v) > 1e-6 for v in want[-1])


def test_the_first_gradient_keeps_its_history():
    """.grad of a leaf after backward(create_graph=True) through silu has a grad_fn, and
    differentiating it gives silu's second derivative."""
    x = gs.tensor([-1.5, 0.25, 2.0], dtype=gs.float64, requires_grad=True)
    gs.nn.functional.silu(x).sum().backward(create_graph=True)
    assert x.grad.grad_fn is not None
    (d2,) = gs.autograd.grad(x.grad.sum(), x)
    xt = torch.tensor([-1.5, 0.25, 2.0], dtype=torch.float64)
    s = torch.sigmoid(xt)
    want = s * (1 - s) * (2 + xt * (1 - 2 * s))  # silu''
    assert d2.tolist() == pytest.approx(want.tolist(), rel=TOL, abs=TOL)
