"""F.ctc_loss and nn.CTCLoss against torch 1.13: the same losses and float64 gradients (for
log_probs, and through a log_softmax for free inputs) over random shapes, padded and
concatenated targets, lengths as tensors and tuples, every reduction, blank other than 0,
repeated labels, impossible alignments with and without zero_infinity, unbatched input, and the
node's name. meson registers this file only where torch is installed."""
import numpy as np
import pytest
import torch

import gradscope as gs


def case(seed):
    rng = np.random.default_rng(seed)
    T, N, C = int(rng.integers(4, 12)), int(rng.integers(1, 5)), int(rng.integers(3, 7))
    blank = int(rng.integers(0, C))
    labels = [c for c in range(C) if c != blank]
    il = rng.integers(1, T + 1, size=N)
    il[0] = T
    tl = np.array([int(rng.integers(0, max(1, min(il[b], 5)) + 1)) for b in range(N)])
    targets = np.full((N, int(tl.max()) + 1), blank)
    for b in range(N):
        targets[b, :tl[b]] = rng.choice(labels, size=tl[b])
        if tl[b] > 1 and rng.random() < 0.4:
            targets[b, 1] = targets[b, 0]  # a repeat: needs a blank between
    x = rng.standard_normal((T, N, C))
    return x, targets, il, tl, blank


def run(lib, x, targets, il, tl, blank, reduction, concatenated, as_tensors, zero_inf=False):
    inp = lib.tensor(x, requires_grad=True)
    lp = inp.log_softmax(2)
    lp.retain_grad()
    t = np.concatenate([targets[b, :tl[b]] for b in range(len(tl))]) if concatenated else targets
    lengths = (lib.tensor(il), lib.tensor(tl)) if as_tensors else (tuple(int(v) for v in il),
                                                                  tuple(int(v) for v in tl))
    loss = lib.nn.functional.ctc_loss(lp, lib.tensor(t), *lengths, blank=blank,
                                      reduction=reduction, zero_infinity=zero_inf)
    weights = lib.tensor(np.linspace(0.5, 1.5, loss.numel()).reshape(tuple(loss.shape)))
    (loss * weights).sum().backward()
    return loss.detach().numpy(), inp.grad.numpy(), lp.grad.numpy(), loss.grad_fn.name()


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_losses_and_gradients_match_torch(seed, reduction):
    x, targets, il, tl, blank = case(seed)
    concatenated, as_tensors = seed % 2 == 0, seed % 3 == 0
    g = run(gs, x, targets, il, tl, blank, reduction, concatenated, as_tensors)
    t = run(torch, x, targets, il, tl, blank, reduction, concatenated, as_tensors)
    np.testing.assert_allclose(g[0], t[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g[1], t[1], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(g[2], t[2], rtol=1e-9, atol=1e-12)
    if reduction == "none":
        assert g[3] == t[3] == "CtcLossBackward0"


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_an_impossible_alignment_as_torch(zero_infinity):
    x = np.random.default_rng(1).standard_normal((3, 2, 4))
    targets = np.array([[1, 1, 2], [1, 2, 0]])  # the first needs 4 steps: impossible in 3
    il, tl = np.array([3, 3]), np.array([3, 2])
    g = run(gs, x, targets, il, tl, 0, "none", False, True, zero_infinity)
    t = run(torch, x, targets, il, tl, 0, "none", False, True, zero_infinity)
    np.testing.assert_array_equal(np.isinf(g[0]), np.isinf(t[0]))
    assert np.isinf(g[0][0]) != zero_infinity
    np.testing.assert_allclose(g[0][1], t[0][1], rtol=1e-12)
    if zero_infinity:
        np.testing.assert_allclose(g[1], t[1], rtol=1e-9, atol=1e-12)


def test_float32_unbatched_and_the_module():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 5)).astype(np.float32)
    out = []
    for lib in (gs, torch):
        lp = lib.tensor(x).log_softmax(1)
        crit = lib.nn.CTCLoss(blank=4, zero_infinity=True)
        out.append((crit(lp, lib.tensor([1, 2, 2]), (6,), (3,)).item(),
                    lib.nn.functional.ctc_loss(lp, lib.tensor([0, 3]), [6], [2],
                                               blank=4, reduction="none").item(), repr(crit)))
    np.testing.assert_allclose(out[0][:2], out[1][:2], rtol=1e-5)
    assert out[0][2] == out[1][2] == "CTCLoss()"


def test_refusals():
    lp = gs.zeros(5, 2, 4).log_softmax(2)
    with pytest.raises(Exception, match="input_lengths to have value at most 5"):
        gs.nn.functional.ctc_loss(lp, gs.tensor([[1, 2], [1, 2]]), (5, 6), (2, 2))
    with pytest.raises(Exception, match="size at least 3 at dimension 1"):
        gs.nn.functional.ctc_loss(lp, gs.tensor([[1, 2], [1, 2]]), (5, 5), (2, 3))
    with pytest.raises(Exception, match="other than blank"):
        gs.nn.functional.ctc_loss(lp, gs.tensor([[1, 0], [1, 2]]), (5, 5), (2, 2))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        gs.nn.functional.ctc_loss(lp, gs.tensor([[1, 2], [1, 2]]), (5, 5), (2, 2),
                                  reduction="avg")
