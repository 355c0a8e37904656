"""F.cross_entropy / nn.CrossEntropyLoss and F.nll_loss / nn.NLLLoss against Debian's torch
1.13: weight= (torch's weighted mean), label_smoothing=, ignore_index, every reduction,
class-probability targets, unbatched and [N, C, d] inputs; values, gradients, grad_fn names
and errors. meson registers this file only when torch imports."""
import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")

rng = np.random.default_rng(3)
LOGITS = rng.standard_normal((6, 4))
TARGETS = [0, 3, -100, 1, 3, 2]
WEIGHT = [0.5, 2.0, 1.25, 0.75]
PROBS = rng.dirichlet(np.ones(4), size=6)


def close(a, b, tol=1e-12):
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(np.asarray(a.tolist(), dtype=float),
                               np.asarray(b.tolist(), dtype=float), rtol=tol, atol=tol)


def run(L, fn, logits=LOGITS, target=TARGETS, float_target=False, **kw):
    """fn over logits (a leaf) and target in library L: the loss and the logits' gradient."""
    x = L.tensor(logits, dtype=L.float64, requires_grad=True)
    t = L.tensor(target, dtype=L.float64 if float_target else L.int64)
    if "weight" in kw and kw["weight"] is not None:
        kw["weight"] = L.tensor(kw["weight"], dtype=L.float64)
    loss = fn(L, x, t, **kw)
    loss.sum().backward()
    return loss, x.grad, loss.grad_fn


def compare(fn, **kw):
    (a, ga, fa), (b, gb, fb) = run(gs, fn, **kw), run(torch, fn, **kw)
    close(a, b)
    close(ga, gb)
    return fa, fb


def ce(L, x, t, **kw):
    return L.nn.functional.cross_entropy(x, t, **kw)


def ce_module(L, x, t, **kw):
    return L.nn.CrossEntropyLoss(**kw)(x, t)


def nll(L, x, t, **kw):
    return L.nn.functional.nll_loss(x.log_softmax(1), t, **kw)


def nll_module(L, x, t, **kw):
    return L.nn.NLLLoss(**kw)(x.log_softmax(1), t)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2, 1.0])
@pytest.mark.parametrize("weight", [None, WEIGHT])
@pytest.mark.parametrize("fn", [ce, ce_module])
def test_cross_entropy_weight_smoothing_ignore(fn, weight, smoothing, reduction):
    compare(fn, weight=weight, label_smoothing=smoothing, reduction=reduction)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("fn", [nll, nll_module])
def test_nll_loss_weighted_mean(fn, reduction):
    compare(fn, weight=WEIGHT, reduction=reduction)
    compare(fn, target=[0, 3, 2, 1, 3, 2], weight=WEIGHT, reduction=reduction, ignore_index=3)


def test_weighted_losses_record_torchs_node():
    fa, fb = compare(ce, weight=WEIGHT)
    assert type(fb).__name__ == fa.name() == "NllLossBackward0"
    fa, fb = compare(nll, weight=WEIGHT, reduction="sum")
    assert fa.name() == type(fb).__name__


def test_every_row_ignored_is_nan_with_zero_gradient():
    for lib in (gs, torch):
        loss, grad, _ = run(lib, ce, target=[-100] * 6, weight=WEIGHT, label_smoothing=0.1)
        assert np.isnan(loss.item())
        assert float(grad.abs().sum()) == 0.0


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
@pytest.mark.parametrize("weight", [None, WEIGHT])
def test_class_probability_targets(weight, smoothing, reduction):
    fa, fb = compare(ce, target=PROBS, float_target=True, weight=weight,
                     label_smoothing=smoothing, reduction=reduction)
    # torch's mean divides by a Python number (DivBackward1, its scalar overload), which
    # gradscope records as every division, DivBackward0
    assert fa.name()[:-1] == type(fb).__name__[:-1]


def test_unbatched_and_spatial_inputs():
    compare(ce, logits=LOGITS[0], target=2, weight=WEIGHT, label_smoothing=0.1)
    compare(ce, logits=LOGITS[0], target=PROBS[0], float_target=True)
    spatial = rng.standard_normal((2, 4, 3, 2))
    labels = [[[0, 1], [3, -100], [2, 2]], [[1, 1], [0, 3], [-100, 2]]]
    for reduction in ("mean", "sum", "none"):
        compare(ce, logits=spatial, target=labels, weight=WEIGHT, label_smoothing=0.2,
                reduction=reduction)
        compare(lambda L, x, t, **kw: L.nn.functional.nll_loss(x.log_softmax(1), t, **kw),
                logits=spatial, target=labels, weight=WEIGHT, reduction=reduction)


def test_float32_weighted_mean():
    a = gs.nn.functional.cross_entropy(gs.tensor(LOGITS, dtype=gs.float32),
                                       gs.tensor(TARGETS), weight=gs.tensor(WEIGHT))
    b = torch.nn.functional.cross_entropy(torch.tensor(LOGITS, dtype=torch.float32),
                                          torch.tensor(TARGETS), weight=torch.tensor(WEIGHT))
    assert a.dtype == gs.float32
    close(a, b, tol=1e-6)


def test_errors_as_torch():
    x = gs.tensor(LOGITS)
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point"):
        gs.nn.functional.cross_entropy(x, gs.tensor(PROBS, dtype=gs.float32), ignore_index=1)
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0"):
        gs.nn.functional.cross_entropy(x, gs.tensor(TARGETS), label_smoothing=1.5)
    with pytest.raises(RuntimeError, match=r"one weight per class\), got \[3\]"):
        gs.nn.functional.nll_loss(x, gs.tensor(TARGETS), weight=gs.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match="weight must be a Tensor or None"):
        gs.nn.functional.nll_loss(x, gs.tensor(TARGETS), weight=[1.0, 2.0, 3.0, 4.0])


def test_module_reprs_as_torch():
    for lib in (gs, torch):
        w = lib.tensor(WEIGHT)
        assert repr(lib.nn.CrossEntropyLoss(weight=w, label_smoothing=0.1)) == \
            "CrossEntropyLoss()"
        assert repr(lib.nn.NLLLoss(weight=w)) == "NLLLoss()"
    m = gs.nn.CrossEntropyLoss(weight=gs.tensor(WEIGHT))
    assert "weight" in dict(m.named_buffers())
    assert "weight" in torch.nn.CrossEntropyLoss(weight=torch.tensor(WEIGHT)).state_dict()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_label_smoothing_graph_is_torchs(reduction):
    """A label-smoothed cross-entropy is made of torch's ops, so its graph reads as torch's:
    AddBackward0 over the NLL loss and the smoothing term, LogSoftmaxBackward0 under both
    (the engine's own fused node is for C programs; torch has none)."""
    names = []
    for m in (torch, gs):
        x = m.tensor(np.random.RandomState(3).randn(4, 3).tolist(), dtype=m.float64,
                     requires_grad=True)
        loss = m.nn.functional.cross_entropy(x, m.tensor([0, 2, 1, 0]), reduction=reduction,
                                             label_smoothing=0.1)
        seen, kept, stack = set(), [], [loss.grad_fn]
        while stack:  # every node once (kept alive, so no id is reused)
            node = stack.pop()
            if node is not None and id(node) not in seen:
                seen.add(id(node))
                kept.append(node)
                stack.extend(n for n, _ in node.next_functions)
        names.append([type(n).__name__ for n in kept])
        del kept, stack, node, loss, x
    assert names[1][0] == names[0][0] == "AddBackward0"
    for name in ("NllLossBackward0", "LogSoftmaxBackward0", "NegBackward0", "SumBackward1",
                 "IndexPutBackward0", "AccumulateGrad"):
        assert names[0].count(name) == names[1].count(name) == 1, name
