"""The ops of nn/window_ops.py against torch 1.13: lp pooling, max unpooling, local response
normalisation, pdist and bilinear, as functions and modules (values, float64 gradients and
reprs). meson registers this file only where torch is installed."""
import numpy as np
import pytest
import torch

import gradscope as gs
from torch_compare import same_values_and_gradients
import gradscope.nn as gnn
import gradscope.nn.functional as GF
import torch.nn as tnn
import torch.nn.functional as TF

RNG = np.random.default_rng(5)
X3 = RNG.normal(size=(2, 6, 9))
X4 = RNG.normal(size=(2, 5, 6, 7))


@pytest.mark.parametrize("args", [(2, 3), (2, 3, 2), (3, 2, 1, True), (1.5, 4)])
def test_lp_pool1d(args):
    x = np.abs(X3) + 0.1 if args[0] == 1.5 else X3
    same_values_and_gradients(lambda t: GF.lp_pool1d(t, *args), lambda t: TF.lp_pool1d(t, *args), x)


@pytest.mark.parametrize("args", [(2, 2), (2, (2, 3), 1), (3, 2, (1, 2), True)])
def test_lp_pool2d(args):
    same_values_and_gradients(lambda t: GF.lp_pool2d(t, *args), lambda t: TF.lp_pool2d(t, *args), X4)


def test_max_unpool_inverts_max_pool():
    for n, x, k in ((1, X3, 3), (2, X4[..., :6].copy(), 2)):
        gp = getattr(GF, f"max_pool{n}d")(gs.tensor(x), k, return_indices=True)
        tp = getattr(TF, f"max_pool{n}d")(torch.tensor(x), k, return_indices=True)
        same_values_and_gradients(lambda v: getattr(GF, f"max_unpool{n}d")(v, gp[1], k),
                lambda v: getattr(TF, f"max_unpool{n}d")(v, tp[1], k), tp[0].numpy())
        size = tuple(x.shape[-n:])
        same_values_and_gradients(lambda v: getattr(GF, f"max_unpool{n}d")(v, gp[1], k, output_size=size),
                lambda v: getattr(TF, f"max_unpool{n}d")(v, tp[1], k, output_size=size), tp[0].numpy())


@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_local_response_norm(size):
    same_values_and_gradients(lambda t: GF.local_response_norm(t, size), lambda t: TF.local_response_norm(t, size), X3)
    same_values_and_gradients(lambda t: GF.local_response_norm(t, size, 0.3, 0.5, 2.0),
            lambda t: TF.local_response_norm(t, size, 0.3, 0.5, 2.0), X4)


@pytest.mark.parametrize("p", [2, 1, 3.5, float("inf")])
def test_pdist(p):
    same_values_and_gradients(lambda t: GF.pdist(t, p), lambda t: TF.pdist(t, p), X3[0])


def test_bilinear_and_modules():
    w = RNG.normal(size=(3, 6, 4))
    b = RNG.normal(size=3)
    same_values_and_gradients(GF.bilinear, TF.bilinear, RNG.normal(size=(5, 6)), RNG.normal(size=(5, 4)), w, b)
    same_values_and_gradients(GF.bilinear, TF.bilinear, RNG.normal(size=(2, 5, 6)), RNG.normal(size=(2, 5, 4)), w, b)
    pairs = [(gnn.Bilinear(4, 3, 2), tnn.Bilinear(4, 3, 2)), (gnn.Bilinear(4, 3, 2, bias=False), tnn.Bilinear(4, 3, 2, bias=False)),
             (gnn.LPPool1d(2, 3), tnn.LPPool1d(2, 3)), (gnn.LPPool2d(2, (2, 3), stride=1), tnn.LPPool2d(2, (2, 3), stride=1)),
             (gnn.MaxUnpool1d(2), tnn.MaxUnpool1d(2)), (gnn.MaxUnpool2d(2, stride=2, padding=0), tnn.MaxUnpool2d(2, stride=2, padding=0)),
             (gnn.LocalResponseNorm(2), tnn.LocalResponseNorm(2))]
    for g, t in pairs:
        assert repr(g) == repr(t)
    g = gnn.Bilinear(4, 3, 2)
    assert [n for n, _ in g.named_parameters()] == ["weight", "bias"]
    bound = 0.5
    assert float(g.weight.abs().max()) <= bound and float(g.bias.abs().max()) <= bound
    assert tuple(g(gs.ones(5, 4), gs.ones(5, 3)).shape) == (5, 2)
