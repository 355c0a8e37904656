"""The activations of nn/shrink_activations.py and the losses of nn/probabilistic_losses.py
against torch 1.13: values and float64 gradients for every option, module reprs, in-place
forms, and the random ones (rrelu in training, alpha_dropout) by their statistics. meson
registers this file only where torch is installed."""
import numpy as np
import pytest
import torch

import gradscope as gs
from torch_compare import same_values_and_gradients
import gradscope.nn as gnn
import gradscope.nn.functional as GF
import torch.nn as tnn
import torch.nn.functional as TF

X = np.array([[0.3, -1.2, 0.0, 2.5, -0.45], [1.5, 0.7, -0.4, -2.0, 0.55], [0.05, 3.0, -0.6, 0.9, -3.5]])


@pytest.mark.parametrize("call", [
    lambda F: (lambda x: F.celu(x)), lambda F: (lambda x: F.celu(x, 0.5)),
    lambda F: (lambda x: F.hardshrink(x)), lambda F: (lambda x: F.hardshrink(x, 1.0)),
    lambda F: (lambda x: F.softshrink(x, 0.3)), lambda F: (lambda x: F.tanhshrink(x)),
    lambda F: (lambda x: F.threshold(x, 0.1, 20.0)),
    lambda F: (lambda x: F.rrelu(x, training=False)),
    lambda F: (lambda x: F.rrelu(x, 0.2, 0.4)),
    lambda F: (lambda x: F.alpha_dropout(x, 0.5, training=False)),
])
def test_activations_against_torch(call):
    same_values_and_gradients(call(GF), call(TF), X)


def test_modules_print_and_run_as_torchs():
    pairs = [(gnn.CELU(), tnn.CELU()), (gnn.CELU(0.5, True), tnn.CELU(0.5, True)),
             (gnn.Hardshrink(), tnn.Hardshrink()), (gnn.Softshrink(0.3), tnn.Softshrink(0.3)),
             (gnn.Tanhshrink(), tnn.Tanhshrink()), (gnn.Threshold(0.1, 20.0), tnn.Threshold(0.1, 20.0)),
             (gnn.Threshold(0.1, 2, True), tnn.Threshold(0.1, 2, True)), (gnn.RReLU(), tnn.RReLU()),
             (gnn.RReLU(0.1, 0.3, True), tnn.RReLU(0.1, 0.3, True)), (gnn.AlphaDropout(0.2), tnn.AlphaDropout(0.2)),
             (gnn.PoissonNLLLoss(), tnn.PoissonNLLLoss()), (gnn.GaussianNLLLoss(), tnn.GaussianNLLLoss()),
             (gnn.MultiLabelSoftMarginLoss(), tnn.MultiLabelSoftMarginLoss()),
             (gnn.MultiMarginLoss(p=2, margin=0.5), tnn.MultiMarginLoss(p=2, margin=0.5))]
    for g, t in pairs:
        assert repr(g) == repr(t)
    for g, t in pairs[:10]:
        g.eval(), t.eval()
        gx, tx = gs.tensor(X), torch.tensor(X)
        out_g, out_t = g(gx), t(tx)
        np.testing.assert_allclose(out_g.numpy(), out_t.numpy(), rtol=1e-12, atol=1e-12)
        if getattr(t, "inplace", False):
            assert out_g is gx
            np.testing.assert_allclose(gx.numpy(), tx.numpy(), rtol=1e-12, atol=1e-12)


def test_rrelu_training_draws_slopes_in_range():
    gs.manual_seed(0)
    x = gs.full((20000,), -1.0, dtype=gs.float64)
    y = GF.rrelu(x, 0.1, 0.3, training=True)
    slopes = -y.numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3
    assert abs(slopes.mean() - 0.2) < 0.003
    assert GF.rrelu(gs.ones(5), training=True).tolist() == [1.0] * 5


def test_alpha_dropout_keeps_selu_moments():
    gs.manual_seed(1)
    x = gs.randn(200000, dtype=gs.float64)
    for p in (0.2, 0.5):
        y = GF.alpha_dropout(x, p, training=True).numpy()
        assert abs(y.mean()) < 0.01 and abs(y.std() - 1.0) < 0.01
        alpha = -1.7580993408473766
        a = ((1 - p) * (1 + p * alpha ** 2)) ** -0.5
        dropped = np.isclose(y, a * alpha - a * alpha * p)  # SELU's saturation, mapped
        assert abs(dropped.mean() - p) < 0.01


@pytest.mark.parametrize("kw", [{}, {"log_input": False}, {"full": True}, {"log_input": False, "full": True},
                                {"reduction": "sum"}, {"reduction": "none"}])
def test_poisson_nll_against_torch(kw):
    target = np.array([[0.0, 1.0, 3.0, 2.0, 7.0], [4.0, 0.0, 1.0, 5.0, 2.0], [1.0, 1.0, 0.0, 9.0, 3.0]])
    rate = np.abs(X) + 0.1 if kw.get("log_input") is False else X
    # target is data here: torch's gradient for it is NaN where target is 0 with full=True
    # (masked_fill after 0 * log 0), which is nothing to match
    same_values_and_gradients(lambda x: GF.poisson_nll_loss(x, gs.tensor(target), **kw),
            lambda x: TF.poisson_nll_loss(x, torch.tensor(target), **kw), rate)


@pytest.mark.parametrize("var_shape", ["full", "per_sample", "per_sample_1"])
@pytest.mark.parametrize("kw", [{}, {"full": True}, {"reduction": "sum"}, {"reduction": "none", "eps": 0.5}])
def test_gaussian_nll_against_torch(var_shape, kw):
    var = {"full": np.abs(X) * 0.7, "per_sample": np.array([0.3, 1e-9, 2.0]),
           "per_sample_1": np.array([[0.3], [1.1], [2.0]])}[var_shape]
    same_values_and_gradients(lambda i, t, v: GF.gaussian_nll_loss(i, t, v, **kw),
            lambda i, t, v: TF.gaussian_nll_loss(i, t, v, **kw), X, X[::-1].copy(), var)


@pytest.mark.parametrize("kw", [{}, {"reduction": "sum"}, {"reduction": "none"}, {"weight": True}])
def test_multilabel_soft_margin_against_torch(kw):
    target = (X > 0.2).astype(np.float64)
    if kw.get("weight"):
        w = np.array([0.5, 1.0, 2.0, 0.1, 1.5])
        same_values_and_gradients(lambda x: GF.multilabel_soft_margin_loss(x, gs.tensor(target), weight=gs.tensor(w)),
                lambda x: TF.multilabel_soft_margin_loss(x, torch.tensor(target), weight=torch.tensor(w)), X)
    else:
        same_values_and_gradients(lambda x: GF.multilabel_soft_margin_loss(x, gs.tensor(target), **kw),
                lambda x: TF.multilabel_soft_margin_loss(x, torch.tensor(target), **kw), X)


@pytest.mark.parametrize("kw", [{}, {"p": 2}, {"margin": 0.3}, {"reduction": "none"}, {"reduction": "sum"},
                                {"weight": [0.5, 1.0, 2.0, 0.1, 1.5]}])
def test_multi_margin_against_torch(kw):
    target = [3, 0, 4]
    gk = dict(kw, weight=gs.tensor(kw["weight"], dtype=gs.float64)) if "weight" in kw else kw
    tk = dict(kw, weight=torch.tensor(kw["weight"], dtype=torch.float64)) if "weight" in kw else kw
    same_values_and_gradients(lambda x: GF.multi_margin_loss(x, gs.tensor(target), **gk),
            lambda x: TF.multi_margin_loss(x, torch.tensor(target), **tk), X)
    same_values_and_gradients(lambda x: GF.multi_margin_loss(x, gs.tensor(2), **gk),
            lambda x: TF.multi_margin_loss(x, torch.tensor(2), **tk), X[0])


def test_loss_errors_are_torchs():
    with pytest.raises(ValueError, match="var is of incorrect size"):
        GF.gaussian_nll_loss(gs.ones(3, 4), gs.ones(3, 4), gs.ones(2))
    with pytest.raises(ValueError, match="var has negative entry"):
        GF.gaussian_nll_loss(gs.ones(3), gs.ones(3), -gs.ones(3))
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        GF.multi_margin_loss(gs.ones(2, 3), gs.tensor([0, 1]), p=3)
