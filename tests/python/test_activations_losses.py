"""The activations and losses of nn/activation.py, nn/losses.py and the engine's activation
ops: torch's grad_fn names, values at the edges (against numbers from torch 1.13), and the
errors for bad arguments."""
import math

import pytest

import gradscope as gs
import gradscope.nn as nn
import gradscope.nn.functional as F


def grad_fn_name(t):
    return t.grad_fn.name()


@pytest.mark.parametrize("fn,name", [
    (F.silu, "SiluBackward0"), (F.elu, "EluBackward0"), (F.selu, "EluBackward0"),
    (F.softplus, "SoftplusBackward0"), (F.relu6, "HardtanhBackward0"),
    (F.hardtanh, "HardtanhBackward0"), (F.hardsigmoid, "HardsigmoidBackward0"),
    (F.hardswish, "HardswishBackward0"), (F.logsigmoid, "LogSigmoidBackward0"),
    (F.mish, "MishBackward0"),
])
def test_grad_fn_names_are_torchs(fn, name):
    x = gs.tensor([-1.0, 0.5], requires_grad=True)
    assert grad_fn_name(fn(x)) == name


def test_values_and_slopes_at_the_kinks_are_torchs():
    # torch 1.13: F.selu and F.hardswish on these points, and their gradients
    x = gs.tensor([-3.0, 0.0, 3.0], dtype=gs.float64, requires_grad=True)
    F.selu(x).sum().backward()
    assert x.grad.tolist() == pytest.approx([0.08753061208026487, 1.7580993408473766,
                                             1.0507009873554805], rel=1e-12)
    x.grad = None
    y = F.hardswish(x)
    y.sum().backward()
    assert y.tolist() == [0.0, 0.0, 3.0]
    assert x.grad.tolist() == [-0.5, 0.5, 1.5]
    # softplus is linear above its threshold, with slope 1 there
    z = gs.tensor([10.0, 10.5], dtype=gs.float64, requires_grad=True)
    F.softplus(z, beta=2.0, threshold=20.0).sum().backward()
    assert z.grad.tolist()[1] == 1.0 and z.grad.tolist()[0] < 1.0


def test_integer_input_computes_in_float32():
    assert F.silu(gs.tensor([1, 2])).dtype == gs.float32


def test_bad_arguments_are_refused():
    x = gs.tensor([1.0])
    with pytest.raises(Exception, match="min_val <= max_val"):
        F.hardtanh(x, 2.0, 1.0)
    with pytest.raises(Exception, match="beta"):
        F.softplus(x, beta=0.0)
    with pytest.raises(ValueError):
        nn.Hardtanh(1.0, -1.0)
    with pytest.raises(RuntimeError, match="must be even"):
        F.glu(gs.ones(2, 3))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.l1_loss(x, x, reduction="avg")


def test_kl_div_batchmean_divides_by_the_batch():
    logp = gs.tensor([[-1.0, -0.5], [-2.0, -0.2]])
    t = gs.tensor([[0.3, 0.7], [0.0, 1.0]])
    total = F.kl_div(logp, t, reduction="sum").item()
    assert F.kl_div(logp, t, reduction="batchmean").item() == pytest.approx(total / 2)
    # a zero target contributes 0, not nan
    assert not math.isnan(F.kl_div(logp, t, reduction="none").tolist()[1][0])


def test_bce_has_torchs_gradient_at_zero_and_one():
    p = gs.tensor([0.0, 1.0, 0.5], requires_grad=True)
    F.binary_cross_entropy(p, gs.tensor([0.0, 1.0, 1.0]), reduction="sum").backward()
    assert p.grad.tolist() == pytest.approx([0.0, 0.0, -2.0])
