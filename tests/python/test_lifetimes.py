"""Lifetimes as Python expects: an object reachable from Python stays usable (a parameter keeps
its module, a grad outlives its tensor, a submodule outlives its container), while dispose
scopes still dispose what they own and a scope cannot be entered again after it ended."""
import gc

import pytest

import gradscope as gs
import gradscope.nn as nn


def test_parameter_keeps_its_module_alive():
    w = nn.Linear(2, 2).weight
    assert (w * 2).shape == (2, 2)
    assert w.is_alive


def test_optimizer_over_a_temporary_modules_parameters():
    opt = gs.optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1)
    opt.zero_grad()
    opt.step()


def test_grad_outlives_its_tensor():
    x = gs.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    g = x.grad
    del x
    gc.collect()
    assert g.tolist() == [2.0, 2.0, 2.0]


def test_submodule_outlives_its_container():
    seq = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    first = seq[0]
    del seq
    gc.collect()
    assert first(gs.ones(1, 3)).shape == (1, 2)
    assert first.weight.shape == (2, 3)


def test_subclass_child_outlives_its_parent():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 1)
            self.scale = nn.Parameter(gs.ones(1))

        def forward(self, x):
            return self.fc(x) * self.scale

    net = Net()
    fc, scale = net.fc, net.scale
    assert net(gs.ones(4, 2)).shape == (4, 1)
    del net
    gc.collect()
    assert fc(gs.ones(1, 2)).shape == (1, 1)
    assert scale.tolist() == [1.0]


def test_dropped_model_is_disposed_at_once():
    before = gs.live_tensor_count()
    m = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 1))
    p = m[1].bias
    assert gs.live_tensor_count() == before + 4
    del m
    # p holds its own Linear (its weight and bias), as in PyTorch; the other Linear, which
    # nothing holds any more, went with the Sequential
    assert gs.live_tensor_count() == before + 2
    del p
    assert gs.live_tensor_count() == before


def test_scope_still_disposes_what_it_owns():
    with gs.dispose_scope("step") as scope:
        t = gs.ones(2) * 3
    assert not t.is_alive
    with pytest.raises(RuntimeError, match="stale"):
        t.tolist()
    del scope


def test_scope_entered_again_after_it_ended_is_an_error():
    scope = gs.dispose_scope("once")
    with scope:
        pass
    with pytest.raises(RuntimeError, match="'once' was entered again after it ended"):
        with scope:
            pass
