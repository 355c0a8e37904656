"""Module.double()/float()/to(dtype)/type(dtype) converting parameters, buffers and grads in
place as torch's Module._apply does (the objects a program holds stay the same), the refusals
(half, bfloat16, integer dtypes), `Tensor.data = t`, and the log's tensor_set_data events."""
import os
import subprocess
import sys

import numpy as np
import pytest

import gradscope as gs
import gradscope.nn as nn
from gradscope._missing import NotSupportedError


def test_double_keeps_the_objects_requires_grad_and_grads():
    m = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))
    params = list(m.parameters())
    before = [p.detach().numpy().copy() for p in params]
    m(gs.ones(4, 3)).sum().backward()
    grads = [p.grad for p in params]
    grad_values = [g.numpy().copy() for g in grads]
    assert m.double() is m
    for p, b, g, gv in zip(m.parameters(), before, grads, grad_values):
        assert p.dtype == gs.float64 and p.requires_grad
        assert p.grad is g and g.dtype == gs.float64
        np.testing.assert_array_equal(p.detach().numpy(), b.astype(np.float64))
        np.testing.assert_array_equal(g.numpy(), gv.astype(np.float64))
    assert [p is q for p, q in zip(m.parameters(), params)] == [True] * 4
    out = m(gs.ones(4, 3, dtype=gs.float64))
    assert out.dtype == gs.float64
    m.float()
    assert all(p.dtype == gs.float32 for p in m.parameters())
    assert params[0].grad.dtype == gs.float32


def test_optimizer_made_before_double_steps_the_float64_parameters():
    m = nn.Linear(2, 1)
    opt = gs.optim.SGD(m.parameters(), lr=0.5)
    m.double()
    w0 = m.weight.detach().numpy().copy()
    x = gs.tensor([[1.0, 2.0]], dtype=gs.float64)
    m(x).sum().backward()
    opt.step()
    assert m.weight.dtype == gs.float64
    np.testing.assert_allclose(m.weight.detach().numpy(), w0 - 0.5 * np.array([[1.0, 2.0]]))


def test_buffers_convert_and_integer_buffers_stay():
    bn = nn.BatchNorm1d(3)
    mean = bn.running_mean
    bn.to(gs.float64)
    assert bn.running_mean is mean and mean.dtype == gs.float64
    assert bn.num_batches_tracked.dtype == gs.int64
    bn(gs.ones(2, 3, dtype=gs.float64))
    assert int(bn.num_batches_tracked.item()) == 1
    assert bn.state_dict()["running_var"].dtype == gs.float64


def test_recurrent_modules_run_in_the_new_dtype():
    for cls in (nn.RNN, nn.GRU, nn.LSTM):
        rnn = cls(3, 4, num_layers=2).double()
        out, _ = rnn(gs.zeros(5, 2, 3, dtype=gs.float64))
        assert out.dtype == gs.float64
        with pytest.raises(TypeError, match="dtype f64"):
            rnn(gs.zeros(5, 2, 3))


def test_refusals_name_what_is_missing():
    m = nn.Linear(2, 2)
    for what in ("half", "bfloat16"):
        with pytest.raises(NotSupportedError, match=f"Module.{what}\\(\\): gradscope has no {what}"):
            getattr(m, what)()
    with pytest.raises(TypeError, match="only accepts floating point or complex dtypes"):
        m.to(gs.int64)
    with pytest.raises(NotSupportedError, match="float32 or float64"):
        m.type(gs.int32)
    assert m.weight.dtype == gs.float32  # refused: nothing changed
    assert m.type("torch.DoubleTensor").weight.dtype == gs.float64


def test_tensor_data_assignment():
    w = nn.Parameter(gs.zeros(2))
    src = gs.tensor([1.0, 2.0, 3.0], dtype=gs.float64)
    w.data = src
    assert w.dtype == gs.float64 and w.shape == (3,) and w.requires_grad
    src.add_(1.0)
    assert w.tolist() == [2.0, 3.0, 4.0]  # they share storage, as in torch
    with pytest.raises(TypeError, match="expected a Tensor"):
        w.data = [1.0]
    with pytest.raises(TypeError, match="must be floating"):
        w.data = gs.tensor([1, 2])


def test_conversion_is_in_the_log(tmp_path):
    log = tmp_path / "run.gstrace"
    prog = ("import gradscope as gs\nm = gs.nn.Linear(2, 3)\nm.double()\n")
    env = dict(os.environ, GS_TRACE=str(log))
    subprocess.run([sys.executable, "-c", prog], env=env, check=True)
    cli = os.environ.get("GS_CLI")
    if not cli:
        pytest.skip("GS_CLI is not set")
    dump = subprocess.run([cli, "dump", str(log)], capture_output=True, text=True,
                          check=True).stdout
    lines = [line for line in dump.splitlines() if "tensor_set_data" in line]
    assert len(lines) == 2
    assert all('op="double"' in line and "dtype=f64" in line for line in lines)


@pytest.fixture
def float64_default():
    gs.set_default_dtype(gs.float64)
    try:
        yield
    finally:
        gs.set_default_dtype(gs.float32)


def test_default_dtype_starts_float32_and_refuses_integers():
    assert gs.get_default_dtype() == gs.float32
    with pytest.raises(TypeError, match="only floating-point types are supported"):
        gs.set_default_dtype(gs.int64)
    assert gs.get_default_dtype() == gs.float32


def test_float64_default_is_followed_by_creation_promotion_and_modules(float64_default):
    assert gs.get_default_dtype() == gs.float64
    for t in (gs.tensor([1.5]), gs.tensor(2.0), gs.zeros(2), gs.ones(1, 2), gs.randn(3),
              gs.rand(2), gs.empty(1), gs.arange(0.0, 1.0, 0.5), gs.linspace(0, 1, 3),
              gs.eye(2), gs.full((2,), 1.5), gs.tensor([1, 2]) / 2, gs.tensor([1, 2]) * 1.5,
              gs.tensor([4]).sqrt()):
        assert t.dtype == gs.float64
    assert gs.arange(3).dtype == gs.int64 and gs.tensor([1]).dtype == gs.int64
    assert repr(gs.tensor([1.5])) == "tensor([1.5000])"
    assert repr(gs.tensor([1.5], dtype=gs.float32)) == "tensor([1.5000], dtype=gradscope.float32)"
    for m in (nn.Linear(2, 3), nn.LSTM(2, 3), nn.BatchNorm1d(2), nn.Conv2d(1, 1, 2)):
        assert all(p.dtype == gs.float64 for p in m.parameters())
    assert nn.BatchNorm1d(2).num_batches_tracked.dtype == gs.int64


# ---- nn.ParameterList and nn.ParameterDict ----------------------------------------------------

def test_parameter_list_registers_under_torch_names():
    pl = nn.ParameterList([nn.Parameter(gs.zeros(2, 3)), gs.ones(4)])
    assert len(pl) == 2 and isinstance(pl[1], nn.Parameter) and pl[1].requires_grad
    pl.append(gs.full((1,), 2.0))
    pl += [gs.zeros(5)]
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2", "3"]
    assert list(pl.state_dict()) == ["0", "1", "2", "3"]
    assert [tuple(p.shape) for p in pl] == [(2, 3), (4,), (1,), (5,)]
    assert pl[-1] is pl[3]
    first = pl[0]
    pl[0] = gs.ones(2, 3)
    assert pl[0] is not first and pl[0].tolist() == [[1.0] * 3] * 2
    with pytest.raises(IndexError, match="index 4 is out of range"):
        pl[4]
    part = pl[0:2]  # the same Parameters, as torch's slice
    assert len(part) == 2 and part[0] is pl[0] and part[1] is pl[1]
    with pytest.raises(RuntimeError, match="ParameterList should not be called"):
        pl(1)
    assert repr(nn.ParameterList()) == "ParameterList()"
    assert repr(nn.ParameterList([gs.zeros(2, 3)])) == (
        "ParameterList(  (0): Parameter containing: [gradscope.float32 of size 2x3])")


def test_parameter_dict_registers_by_key_and_round_trips():
    pd = nn.ParameterDict({"a": nn.Parameter(gs.zeros(2)), "b": gs.ones(1, dtype=gs.float64)})
    pd["c"] = gs.full((3,), 0.5)
    pd.update([("d", gs.zeros(1))])
    assert list(pd) == ["a", "b", "c", "d"] and len(pd) == 4 and "c" in pd and "z" not in pd
    assert list(pd.state_dict()) == ["a", "b", "c", "d"]
    assert [k for k, _ in pd.items()] == list(pd.keys())
    assert pd.get("z") is None and pd.get("a") is pd["a"]
    assert repr(pd).splitlines()[2] == (
        "    (b): Parameter containing: [gradscope.DoubleTensor of size 1]")
    with pytest.raises(TypeError, match="not a string"):
        pd[1] = gs.zeros(1)
    with pytest.raises(KeyError, match=r'contain "\."'):
        pd["x.y"] = gs.zeros(1)
    with pytest.raises(AttributeError, match="'ParameterDict' object has no attribute 'z'"):
        pd["z"]  # torch 1.13 looks keys up as attributes
    a = pd["a"]
    assert pd.pop("a") is a and "a" not in pd and "a" not in pd.state_dict()
    pd["a"] = a
    twin = nn.ParameterDict({k: gs.zeros(*p.shape, dtype=p.dtype) for k, p in pd.items()})
    twin.load_state_dict(pd.state_dict())
    assert all(gs.equal(twin[k], pd[k]) for k in pd)
