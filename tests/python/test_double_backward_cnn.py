"""Double backward through conv nets and recurrent layers, against Debian's torch 1.13 in
float64: the same code runs once with torch and once with gradscope (the module passed in as
`lib`), and every number must agree to 1e-10. A WGAN-GP style gradient penalty through
conv2d, batch norm (training), gelu and max pooling; a Hessian-vector product through conv1d,
conv_transpose2d, avg pooling and cumprod; Hessian-vector products (and an input gradient
penalty) through two-layer bidirectional LSTM, GRU and RNN layers; in-place writes through
views. meson registers this file only when torch imports (tests/python/meson.build)."""
import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")

TOL = 1e-10


def values(seed, *shape):
    """Fixed numbers in [-1, 1), the same for both libraries."""
    return np.random.RandomState(seed).uniform(-1.0, 1.0, shape).tolist()


def leaf(lib, seed, *shape):
    return lib.tensor(values(seed, *shape), dtype=lib.float64, requires_grad=True)


def gradient_penalty(lib):
    """critic(x) = linear(maxpool(gelu(bn(conv(x))))); penalty = mean((|d critic / dx| - 1)^2),
    then differentiated with respect to the parameters."""
    F = lib.nn.functional
    x = leaf(lib, 1, 3, 2, 6, 6)
    w, b = leaf(lib, 2, 4, 2, 3, 3), leaf(lib, 3, 4)
    gamma, beta = leaf(lib, 4, 4), leaf(lib, 5, 4)
    head = leaf(lib, 6, 4 * 3 * 3)
    h = F.conv2d(x, w, b, padding=1)
    h = F.batch_norm(h, None, None, gamma, beta, training=True)
    h = F.max_pool2d(F.gelu(h), 2)
    critic = (h.reshape(3, -1) * head).sum(1)
    (gx,) = lib.autograd.grad(critic.sum(), x, create_graph=True)
    norms = ((gx * gx).reshape(3, -1).sum(1) + 1e-12).sqrt()
    penalty = ((norms - 1) ** 2).mean()
    params = [w, gamma, beta, head]  # not b: batch norm takes each channel's constant away
    grads = lib.autograd.grad(penalty, params)
    return [penalty.item()] + [g.reshape(-1).tolist() for g in grads]


def hessian_vector_product(lib):
    """H v of a loss through conv1d, conv_transpose2d, avg_pool2d and cumprod with respect to
    its weights."""
    F = lib.nn.functional
    x = lib.tensor(values(7, 2, 3, 8), dtype=lib.float64)
    w1, wt = leaf(lib, 8, 4, 3, 3), leaf(lib, 9, 1, 2, 2, 3)
    h = F.conv1d(x, w1, stride=1, padding=1)  # [2, 4, 8]
    h = F.conv_transpose2d(h.reshape(2, 1, 4, 8), wt, stride=(1, 2), padding=(0, 1))
    h = F.avg_pool2d(h, 2, stride=1, padding=1, count_include_pad=False)
    h = (0.3 * h.tanh() + 1.0).cumprod(3)
    loss = (h ** 2).mean()
    params = [w1, wt]
    grads = lib.autograd.grad(loss, params, create_graph=True)
    vs = [lib.tensor(values(10 + i, *p.shape), dtype=lib.float64) for i, p in enumerate(params)]
    dot = sum((g * v).sum() for g, v in zip(grads, vs))
    hv = lib.autograd.grad(dot, params)
    return [loss.item()] + [g.reshape(-1).tolist() for g in grads] + \
        [h.reshape(-1).tolist() for h in hv]


def view_write(lib):
    """In-place ops through views (CopySlices): the overwritten values flow back to their own
    history, the written ones to the op's operands."""
    x0, x1 = leaf(lib, 60, 4, 3), leaf(lib, 61, 2, 3)
    y = x0 * 2
    y.narrow(0, 1, 2).mul_(x1)
    y.t()[0].sin_()
    (g0, g1) = lib.autograd.grad((y * y.tanh()).sum(), [x0, x1], create_graph=True)
    h = lib.autograd.grad((g0 ** 2).sum() + (g1 * x1).sum(), [x0, x1])
    return [g0.sum().item()] + [g.reshape(-1).tolist() for g in (g0, g1) + h]


def recurrent_hvp(kind):
    """H v of a recurrent layer's loss (2 layers, both directions) with respect to its
    weights, and the gradient penalty of its input: through the fused recurrence twice."""
    def program(lib):
        layer = getattr(lib.nn, kind)(3, 4, num_layers=2, bidirectional=True,
                                      dtype=lib.float64)
        params = [p for _, p in sorted(layer.named_parameters())]
        with lib.no_grad():
            for i, p in enumerate(params):
                p.copy_(lib.tensor(values(20 + i, *p.shape), dtype=lib.float64))
        x = leaf(lib, 40, 5, 2, 3)  # [time, batch, features]
        out = layer(x)[0]
        loss = (out.tanh() ** 2).sum()
        grads = lib.autograd.grad(loss, params + [x], create_graph=True)
        vs = [lib.tensor(values(50 + i, *p.shape), dtype=lib.float64)
              for i, p in enumerate(params)]
        dot = sum((g * v).sum() for g, v in zip(grads, vs)) + (grads[-1] ** 2).sum()
        hv = lib.autograd.grad(dot, params)
        return [loss.item()] + [g.reshape(-1).tolist() for g in grads] + \
            [h.reshape(-1).tolist() for h in hv]
    program.__name__ = kind + "_hvp"
    return program


@pytest.mark.parametrize("program", [gradient_penalty, hessian_vector_product, view_write,
                                     recurrent_hvp("LSTM"), recurrent_hvp("GRU"),
                                     recurrent_hvp("RNN")], ids=lambda p: p.__name__)
def test_double_backward_matches_torch(program):
    want, got = program(torch), program(gs)
    assert len(got) == len(want)
    assert got[0] == pytest.approx(want[0], rel=TOL, abs=TOL)
    for g, t in zip(got[1:], want[1:]):
        assert len(g) == len(t)
        assert g == pytest.approx(t, rel=TOL, abs=TOL)
        assert any(abs(v) > 1e-6 for v in t)  # a zero gradient would compare trivially
