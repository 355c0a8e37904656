"""nn.LayerNorm / F.layer_norm over several trailing dims and without elementwise_affine, and
nn.Embedding / F.embedding with padding_idx, max_norm, norm_type and scale_grad_by_freq,
against torch 1.13: the same outputs, float64 gradients, renormalised weights, node names,
attributes, print text and errors. meson registers this file only where torch is installed."""
import copy

import numpy as np
import pytest
import torch

import gradscope as gs


def values(rng, *shape):
    return rng.standard_normal(shape) * 2 + 0.5


def both(a):
    return gs.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


SHAPES = [5, (5,), [4, 5], (3, 4, 5)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_layer_norm_module_matches_torch(shape, affine, seed):
    rng = np.random.default_rng(seed)
    x = values(rng, 2, 3, 4, 5)
    gx, tx = both(x)
    layers = [lib.nn.LayerNorm(shape, eps=1e-3 * (seed + 1), elementwise_affine=affine,
                               dtype=lib.float64) for lib in (gs, torch)]
    if affine:
        w, b = values(rng, *layers[1].weight.shape), values(rng, *layers[1].bias.shape)
        for layer, lib in zip(layers, (gs, torch)):
            with lib.no_grad():
                layer.weight.copy_(lib.tensor(w))
                layer.bias.copy_(lib.tensor(b))
    up = values(rng, 2, 3, 4, 5)
    outs = [layer(xx) for layer, xx in zip(layers, (gx, tx))]
    np.testing.assert_allclose(outs[0].detach().numpy(), outs[1].detach().numpy(), rtol=1e-12,
                               atol=1e-12)
    for out, lib in zip(outs, (gs, torch)):
        (out * lib.tensor(up)).sum().backward()
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-10)
    if affine:
        for name in ("weight", "bias"):
            np.testing.assert_allclose(getattr(layers[0], name).grad.numpy(),
                                       getattr(layers[1], name).grad.numpy(), rtol=1e-10,
                                       atol=1e-10)
    else:
        assert layers[0].weight is None and layers[0].bias is None
        assert list(layers[0].parameters()) == [] and len(layers[0].state_dict()) == 0
    assert outs[0].grad_fn.name() == outs[1].grad_fn.name() == "NativeLayerNormBackward0"
    assert repr(layers[0]) == repr(layers[1])
    assert layers[0].normalized_shape == layers[1].normalized_shape
    assert layers[0].elementwise_affine == layers[1].elementwise_affine


def test_layer_norm_eps_is_read_at_each_forward():
    x = np.linspace(-3, 4, 40).reshape(2, 4, 5) ** 2
    layers = [lib.nn.LayerNorm([4, 5]) for lib in (gs, torch)]
    for layer in layers:
        layer.eps = 0.75
    outs = [layer(lib.tensor(x, dtype=lib.float32)) for layer, lib in zip(layers, (gs, torch))]
    np.testing.assert_allclose(outs[0].detach().numpy(), outs[1].detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    assert repr(layers[0]) == repr(layers[1])
    assert repr(copy.deepcopy(layers[0])) == repr(layers[1])


def test_functional_layer_norm_matches_torch():
    rng = np.random.default_rng(7)
    x, w, b = values(rng, 3, 2, 6), values(rng, 2, 6), values(rng, 2, 6)
    (gx, tx), (gw, tw), (gb, tb) = both(x), both(w), both(b)
    go = gs.nn.functional.layer_norm(gx, (2, 6), gw, gb, eps=0.1)
    to = torch.nn.functional.layer_norm(tx, (2, 6), tw, tb, eps=0.1)
    np.testing.assert_allclose(go.detach().numpy(), to.detach().numpy(), rtol=1e-12, atol=1e-12)
    (go ** 3).sum().backward()
    (to ** 3).sum().backward()
    for g, t in ((gx, tx), (gw, tw), (gb, tb)):
        np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_layer_norm_errors():
    x = gs.ones(2, 3, 4)
    with pytest.raises(RuntimeError, match=r"normalized_shape \[3, 5\], got an input of shape"):
        gs.nn.functional.layer_norm(x, (3, 5))
    with pytest.raises(RuntimeError, match=r"weight of the same shape as normalized_shape \[4\]"):
        gs.nn.functional.layer_norm(x, 4, gs.ones(3))
    with pytest.raises(RuntimeError, match=r"last 1 dims are \[6\], got shape \[2, 3, 4\]"):
        gs.nn.LayerNorm(6)(x)


OPTIONS = [{}, {"padding_idx": 0}, {"padding_idx": -1}, {"scale_grad_by_freq": True},
           {"padding_idx": 2, "scale_grad_by_freq": True}, {"max_norm": 1.5},
           {"max_norm": 2.0, "norm_type": 1.0}, {"max_norm": 0.5, "padding_idx": 3}]


@pytest.mark.parametrize("options", OPTIONS)
def test_embedding_module_matches_torch(options):
    rng = np.random.default_rng(len(repr(options)))
    w0 = values(rng, 10, 3)
    index = rng.integers(0, 10, size=(3, 5))
    index[0, :3] = [0, 0, 2]  # repeats, and the padding rows used above
    layers = [lib.nn.Embedding(10, 3, dtype=lib.float64, **options) for lib in (gs, torch)]
    for layer, lib in zip(layers, (gs, torch)):
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(w0))
    up = values(rng, 3, 5, 3)
    outs = [layer(lib.tensor(index)) for layer, lib in zip(layers, (gs, torch))]
    for out, lib in zip(outs, (gs, torch)):
        (out * lib.tensor(up)).sum().backward()
    np.testing.assert_allclose(outs[0].detach().numpy(), outs[1].detach().numpy(), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(layers[0].weight.grad.numpy(), layers[1].weight.grad.numpy(),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(layers[0].weight.detach().numpy(),
                               layers[1].weight.detach().numpy(), rtol=1e-12, atol=1e-12)
    assert repr(layers[0]) == repr(layers[1])
    for name in ("num_embeddings", "embedding_dim", "padding_idx", "max_norm", "norm_type",
                 "scale_grad_by_freq", "sparse"):
        assert getattr(layers[0], name) == getattr(layers[1], name), name
    assert outs[0].grad_fn.name() == outs[1].grad_fn.name()


def test_embedding_padding_row_starts_at_zero_and_from_pretrained():
    e = gs.nn.Embedding(5, 2, padding_idx=-2)
    assert e.padding_idx == 3 and e.weight[3].tolist() == [0.0, 0.0]
    w = np.arange(12.0).reshape(4, 3)
    pre = [lib.nn.Embedding.from_pretrained(lib.tensor(w), padding_idx=1, max_norm=4.0)
           for lib in (gs, torch)]
    assert repr(pre[0]) == repr(pre[1])
    assert not pre[0].weight.requires_grad
    outs = [p(lib.tensor([1, 3, 1])) for p, lib in zip(pre, (gs, torch))]
    np.testing.assert_allclose(outs[0].numpy(), outs[1].numpy(), rtol=1e-12)
    np.testing.assert_allclose(pre[0].weight.numpy(), pre[1].weight.numpy(), rtol=1e-12)


def test_functional_embedding_matches_torch():
    rng = np.random.default_rng(3)
    w0, index = values(rng, 6, 4), rng.integers(0, 6, size=(2, 7))
    (gw, tw) = both(w0)
    go = gs.nn.functional.embedding(gs.tensor(index), gw, padding_idx=-1, scale_grad_by_freq=True)
    to = torch.nn.functional.embedding(torch.tensor(index), tw, padding_idx=-1,
                                       scale_grad_by_freq=True)
    (go ** 2).sum().backward()
    (to ** 2).sum().backward()
    np.testing.assert_allclose(gw.grad.numpy(), tw.grad.numpy(), rtol=1e-12, atol=1e-12)
    gw2, tw2 = gs.tensor(w0), torch.tensor(w0)
    go = gs.nn.functional.embedding(gs.tensor(index), gw2, max_norm=0.8, norm_type=3.0)
    to = torch.nn.functional.embedding(torch.tensor(index), tw2, max_norm=0.8, norm_type=3.0)
    np.testing.assert_allclose(go.numpy(), to.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gw2.numpy(), tw2.numpy(), rtol=1e-12, atol=1e-12)


def test_embedding_errors():
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        gs.nn.Embedding(4, 2, padding_idx=4)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        gs.nn.functional.embedding(gs.tensor([0]), gs.ones(3, 2), padding_idx=-4)
    with pytest.raises(Exception, match="sparse=True.*not supported by gradscope yet"):
        gs.nn.Embedding(4, 2, sparse=True)
    with pytest.raises(AssertionError, match="Shape of weight does not match"):
        gs.nn.Embedding(4, 2, _weight=gs.ones(3, 2))
