"""torch.nn's margin-loss modules and small shape modules (gradscope/nn/margin_modules.py,
shape_modules.py) against Debian's torch 1.13: the same losses, gradients and print(model)
lines, and torch's errors. meson registers this file only when torch imports
(tests/python/meson.build)."""
import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")


def data(m, seed, *shape):
    return m.tensor(np.random.RandomState(seed).uniform(-1, 1, shape).tolist(),
                    dtype=m.float64, requires_grad=True)


def signs(m, seed, n):
    return m.tensor(np.where(np.random.RandomState(seed).rand(n) > 0.5, 1.0, -1.0).tolist(),
                    dtype=m.float64)


LOSSES = {
    "MarginRankingLoss": lambda m, r: (m.nn.MarginRankingLoss(0.2, reduction=r),
                                       (data(m, 1, 5), data(m, 2, 5), signs(m, 3, 5))),
    "CosineEmbeddingLoss": lambda m, r: (m.nn.CosineEmbeddingLoss(0.1, reduction=r),
                                         (data(m, 1, 4, 3), data(m, 2, 4, 3), signs(m, 3, 4))),
    "HingeEmbeddingLoss": lambda m, r: (m.nn.HingeEmbeddingLoss(0.5, reduction=r),
                                        (data(m, 1, 6), signs(m, 2, 6))),
    "SoftMarginLoss": lambda m, r: (m.nn.SoftMarginLoss(reduction=r),
                                    (data(m, 1, 6), signs(m, 2, 6))),
    "TripletMarginLoss": lambda m, r: (m.nn.TripletMarginLoss(0.5, p=1.0, swap=True, reduction=r),
                                       (data(m, 1, 4, 3), data(m, 2, 4, 3), data(m, 3, 4, 3))),
    "TripletMarginWithDistanceLoss": lambda m, r: (
        m.nn.TripletMarginWithDistanceLoss(
            distance_function=lambda a, b: 1 - m.nn.functional.cosine_similarity(a, b),
            margin=0.3, swap=True, reduction=r),
        (data(m, 1, 4, 3), data(m, 2, 4, 3), data(m, 3, 4, 3))),
    "TripletMarginWithDistanceLoss_default": lambda m, r: (
        m.nn.TripletMarginWithDistanceLoss(reduction=r),
        (data(m, 1, 4, 3), data(m, 2, 4, 3), data(m, 3, 4, 3))),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("reduction", ("mean", "sum", "none"))
def test_losses_as_torch(name, reduction):
    got = []
    for m in (torch, gs):
        module, args = LOSSES[name](m, reduction)
        loss = module(*args)
        loss.sum().backward()
        grads = [a.grad.tolist() for a in args if a.requires_grad]
        got.append((repr(module), loss.tolist(), grads))
    assert got[0][0] == got[1][0]
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-12, atol=1e-14)
    for a, b in zip(got[0][2], got[1][2]):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)


SHAPES = {
    "Unflatten": lambda m: (m.nn.Unflatten(1, (2, 3)), data(m, 1, 4, 6)),
    "Softmax2d": lambda m: (m.nn.Softmax2d(), data(m, 1, 2, 3, 2, 2)),
    "Softmax2d_3d": lambda m: (m.nn.Softmax2d(), data(m, 1, 3, 2, 2)),
    "UpsamplingNearest2d": lambda m: (m.nn.UpsamplingNearest2d(scale_factor=2),
                                      data(m, 1, 1, 2, 3, 3)),
    "UpsamplingBilinear2d": lambda m: (m.nn.UpsamplingBilinear2d(size=(5, 4)),
                                       data(m, 1, 1, 2, 3, 3)),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shape_modules_as_torch(name):
    got = []
    for m in (torch, gs):
        module, x = SHAPES[name](m)
        y = module(x)
        (y * y).sum().backward()
        got.append((repr(module), tuple(y.shape), y.tolist(), x.grad.tolist()))
    assert got[0][:2] == got[1][:2]
    np.testing.assert_allclose(got[1][2], got[0][2], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got[1][3], got[0][3], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("call", [
    lambda m: m.nn.Softmax2d()(m.zeros(2, 3)),
    lambda m: m.nn.TripletMarginLoss()(m.zeros(2, 3), m.zeros(2, 3), m.zeros(3)),
    lambda m: m.nn.Unflatten(1, 6),
])
def test_errors_as_torch(call):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(Exception) as got:
        call(gs)
    assert type(got.value) is type(want.value)
    assert str(got.value) == str(want.value)


def test_conv_transpose1d_as_torch():
    """nn.ConvTranspose1d: torch's initial weights for one seed, print line, output (also
    with output_size=) and gradients."""
    got = []
    for m in (torch, gs):
        m.manual_seed(0)
        conv = m.nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2,
                                    dtype=m.float64)
        x = data(m, 4, 2, 4, 5)
        y = conv(x)
        (y * y).sum().backward()
        got.append((repr(conv), tuple(conv(x, output_size=[10]).shape), conv.weight.tolist(),
                    y.tolist(), x.grad.tolist(), conv.weight.grad.tolist(),
                    conv.bias.grad.tolist(), repr(m.nn.ConvTranspose1d(3, 2, 4, bias=False))))
        del conv, x, y
    assert got[0][:2] == got[1][:2] and got[0][-1] == got[1][-1]
    for a, b in zip(got[0][2:-1], got[1][2:-1]):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-13)
