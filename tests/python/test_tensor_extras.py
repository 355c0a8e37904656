"""The small Tensor and torch names of gradscope/tensor_extras.py against PyTorch 1.13 where
it is installed (values and gradients), their refusals, and the sampling functions by range
and statistics."""
import math

import numpy as np
import pytest

import gradscope as gs


def test_elementwise_extras_and_gradients_match_torch():
    torch = pytest.importorskip("torch")
    a_np = np.arange(6.0).reshape(2, 3)
    b_np = np.full((2, 3), 2.0)
    a = gs.tensor(a_np, requires_grad=True)
    ta = torch.tensor(a_np, requires_grad=True)
    out = gs.addcmul(a, gs.tensor(b_np), a, value=0.5) + a.addcdiv(a, gs.tensor(b_np) + 1)
    tout = torch.addcmul(ta, torch.tensor(b_np), ta, value=0.5) + ta.addcdiv(ta, torch.tensor(b_np) + 1)
    out.sum().backward()
    tout.sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy())
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy())
    x = [[1.0, math.nan], [math.inf, -math.inf]]
    np.testing.assert_array_equal(gs.nan_to_num(gs.tensor(x)).numpy(),
                                  torch.nan_to_num(torch.tensor(x)).numpy())
    np.testing.assert_array_equal(gs.tensor(x).nan_to_num_(1.0, 2.0, -2.0).numpy(),
                                  [[1.0, 1.0], [2.0, -2.0]])
    s = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(gs.tensor(s).sum_to_size(3, 1).numpy(),
                                  torch.tensor(s).sum_to_size(3, 1).numpy())
    with pytest.raises(RuntimeError, match="is not expandable to size"):
        gs.tensor(s).sum_to_size(2, 3)
    for wrap in (False, True):
        np.testing.assert_array_equal(gs.zeros(7, 3).fill_diagonal_(5.0, wrap=wrap).numpy(),
                                      torch.zeros(7, 3).fill_diagonal_(5.0, wrap=wrap).numpy())
    z = gs.zeros(2, 3)
    assert z.addcmul_(gs.ones(2, 3), gs.ones(2, 3), value=2) is z and z.tolist()[0] == [2.0] * 3


def test_dimension_moves():
    t = gs.arange(24).reshape(2, 3, 4)
    assert t.movedim(0, 2).shape == (3, 4, 2)
    assert gs.movedim(t, (0, 1), (2, 0)).shape == (3, 4, 2)
    assert gs.moveaxis(t, -1, 0).shape == (4, 2, 3)
    assert t.swapaxes(0, 2).shape == (4, 3, 2) and gs.swapdims(t, 1, 2).shape == (2, 4, 3)
    assert gs.equal(t.movedim(2, 0), t.permute(2, 0, 1))
    with pytest.raises(RuntimeError, match="repeated dim"):
        t.movedim((0, 0), (1, 2))


def test_memory_names():
    t = gs.zeros(3, dtype=gs.float64)
    assert t.nbytes == 24 and not t.is_pinned()
    assert not t.is_shared() and t.share_memory_() is t and t.is_shared()
    with pytest.raises(NotImplementedError, match="gradscope computes on the CPU only"):
        t.pin_memory()


def test_sampling_functions():
    gs.manual_seed(3)
    r = gs.zeros(2000).random_(2, 6)
    assert set(r.tolist()) == {2.0, 3.0, 4.0, 5.0}
    e = gs.zeros(20000, dtype=gs.float64).exponential_(2.0)
    assert e.min().item() >= 0 and abs(e.mean().item() - 0.5) < 0.03
    b = gs.bernoulli(gs.full((20000,), 0.25))
    assert set(b.tolist()) == {0.0, 1.0} and abs(b.mean().item() - 0.25) < 0.02
    assert gs.zeros(4).bernoulli_(1.0).tolist() == [1.0] * 4
    n = gs.normal(gs.zeros(20000), gs.ones(20000) * 2)
    assert abs(n.std().item() - 2) < 0.06 and gs.normal(1.0, 0.5, size=(2, 3)).shape == (2, 3)
    m = gs.multinomial(gs.tensor([0.0, 1.0, 0.0, 3.0]), 2)
    assert sorted(m.tolist()) == [1, 3] and m.dtype == gs.int64
    rows = gs.multinomial(gs.tensor([[1.0, 0.0], [0.0, 1.0]]), 3, replacement=True)
    assert rows.tolist() == [[0, 0, 0], [1, 1, 1]]
    with pytest.raises(RuntimeError, match="without replacement"):
        gs.multinomial(gs.tensor([1.0, 1.0]), 3)
    with pytest.raises(RuntimeError, match="lambda > 0"):
        gs.zeros(2).exponential_(0.0)
