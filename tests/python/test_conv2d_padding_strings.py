"""F.conv2d and nn.Conv2d with padding='same' and 'valid' against torch 1.13: the same outputs
and float64 gradients (odd and even kernels, dilation: the odd zero on the far side), print
text, and torch's errors for strided 'same' and unknown strings. meson registers this file only
where torch is installed."""
import numpy as np
import pytest
import torch

import gradscope as gs


@pytest.mark.parametrize("kernel", [(3, 3), (3, 5), (2, 2), (4, 3), (1, 1)])
@pytest.mark.parametrize("dilation", [1, 2])
@pytest.mark.parametrize("padding", ["same", "valid"])
def test_functional_conv2d_matches_torch(kernel, dilation, padding):
    rng = np.random.default_rng(sum(kernel) + dilation)
    x, w, b = rng.standard_normal((2, 3, 11, 12)), rng.standard_normal((4, 3, *kernel)), \
        rng.standard_normal(4)
    outs, grads = [], []
    for lib in (gs, torch):
        tx, tw, tb = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        out = lib.nn.functional.conv2d(tx, tw, tb, padding=padding, dilation=dilation)
        (out * out).sum().backward()
        outs.append(out.detach().numpy())
        grads.append([t.grad.numpy() for t in (tx, tw, tb)])
    assert outs[0].shape == outs[1].shape
    if padding == "same":
        assert outs[0].shape[-2:] == x.shape[-2:]
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-10, atol=1e-10)
    for g, t in zip(*grads):
        np.testing.assert_allclose(g, t, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("padding", ["same", "valid"])
def test_conv2d_module_matches_torch(padding):
    layers = [lib.nn.Conv2d(2, 3, (3, 5), padding=padding, dilation=(1, 2)) for lib in (gs, torch)]
    w, b = np.linspace(-1, 1, 90).reshape(3, 2, 3, 5), np.array([0.5, -0.25, 0.0])
    for layer, lib in zip(layers, (gs, torch)):
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(w, dtype=lib.float32))
            layer.bias.copy_(lib.tensor(b, dtype=lib.float32))
    x = np.cos(np.arange(2 * 2 * 7 * 11)).reshape(2, 2, 7, 11)
    outs = [layer(lib.tensor(x, dtype=lib.float32)) for layer, lib in zip(layers, (gs, torch))]
    np.testing.assert_allclose(outs[0].detach().numpy(), outs[1].detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    assert repr(layers[0]) == repr(layers[1])


def test_padding_string_errors():
    x, w = gs.ones(1, 1, 5, 5), gs.ones(1, 1, 3, 3)
    with pytest.raises(ValueError, match="padding='same' is not supported for strided"):
        gs.nn.functional.conv2d(x, w, stride=2, padding="same")
    with pytest.raises(ValueError, match="Invalid padding string 'full'"):
        gs.nn.functional.conv2d(x, w, padding="full")
    with pytest.raises(ValueError, match="padding='same' is not supported for strided"):
        gs.nn.Conv2d(1, 1, 3, stride=2, padding="same")
    assert gs.nn.Conv2d(1, 1, 2, padding="same")(x).shape == x.shape  # the odd zero far side
