"""nn.ParameterDict's and nn.ModuleDict's dict methods (pop, popitem, update, setdefault,
clear, copy, fromkeys, |, keys/values/items, in, del) and what they leave in the module
(named_parameters, state_dict); nn.GELU's repr and approximate='tanh', F.gelu's; the
activation modules' reprs: all against Debian's torch 1.13. meson registers this file only
when torch imports."""
from collections import OrderedDict

import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")


def close(a, b, tol=1e-12):
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(np.asarray(a.tolist(), dtype=float),
                               np.asarray(b.tolist(), dtype=float), rtol=tol, atol=tol)


def param_dict_story(L):
    """Edits of a ParameterDict, and what the dict and its module show after each."""
    nn = L.nn
    seen = []

    def snap(pd):
        seen.append((list(pd.keys()), [k for k, _ in pd.named_parameters()],
                     list(pd.state_dict()), len(pd), [tuple(v.shape) for v in pd.values()],
                     [k for k, _ in pd.items()]))

    pd = nn.ParameterDict({"b": nn.Parameter(L.zeros(2)), "a": L.ones(3)})  # sorted, as torch
    snap(pd)
    pd.update(OrderedDict([("z", L.zeros(1)), ("c", L.zeros(4))]))  # kept in order
    pd.update([("y", L.ones(2, 2))])
    snap(pd)
    popped = pd.pop("z")
    seen.append((tuple(popped.shape), popped.requires_grad, "z" in pd))
    snap(pd)
    key, value = pd.popitem()
    seen.append((key, tuple(value.shape)))
    snap(pd)
    got = pd.setdefault("a", L.zeros(9))
    made = pd.setdefault("n", L.full((5,), 2.0))
    seen.append((tuple(got.shape), tuple(made.shape), made.sum().item()))
    snap(pd)
    del pd["b"]
    snap(pd)
    copy = pd.copy()
    seen.append((list(copy.keys()), copy["a"] is pd["a"]))
    merged = pd | nn.ParameterDict(OrderedDict([("q", L.zeros(1))]))
    seen.append(list(merged.keys()))
    pd |= OrderedDict([("r", L.zeros(2))])
    snap(pd)
    fresh = pd.fromkeys(["u", "v"], L.zeros(3))
    seen.append(list(fresh.keys()))
    pd.clear()
    snap(pd)
    # torch 1.13 raises AttributeError from its getattr, gradscope KeyError (its pd["x"])
    with pytest.raises((KeyError, AttributeError)):
        pd.pop("nothing")
    with pytest.raises(KeyError):
        pd.popitem()
    return seen


def test_parameter_dict_methods_as_torch():
    assert param_dict_story(gs) == param_dict_story(torch)


def test_popped_parameter_stays_usable_and_trains():
    pd = gs.nn.ParameterDict({"w": gs.ones(3)})
    w = pd.pop("w")
    (w * 2).sum().backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0]
    assert list(pd.parameters()) == []
    del w
    assert gs.live_tensor_count() == 0


def test_del_module_parameter_as_torch():
    for L in (gs, torch):
        lin = L.nn.Linear(2, 3)
        del lin.bias
        assert [k for k, _ in lin.named_parameters()] == ["weight"]
        assert list(lin.state_dict()) == ["weight"]


def module_dict_story(L):
    nn = L.nn
    seen = []

    def snap(md):
        seen.append((list(md.keys()), [type(m).__name__ for m in md.values()],
                     [k for k, _ in md.items()], len(md), "relu" in md, list(md),
                     [k for k, _ in md.named_parameters()]))

    md = nn.ModuleDict({"lin": nn.Linear(2, 2), "relu": nn.ReLU()})
    snap(md)
    md.update([("tanh", nn.Tanh()), ("out", nn.Linear(2, 1))])
    md.update({"b": nn.Sigmoid(), "a": nn.GELU()})
    snap(md)
    popped = md.pop("lin")
    seen.append(type(popped).__name__)
    snap(md)
    del md["relu"]
    snap(md)
    md.clear()
    snap(md)
    with pytest.raises(KeyError):
        md.pop("lin")
    return seen


def test_module_dict_methods_as_torch():
    assert module_dict_story(gs) == module_dict_story(torch)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_forms_as_torch(approximate):
    x = np.linspace(-5, 5, 41)
    out = []
    for L in (gs, torch):
        t = L.tensor(x, dtype=L.float64, requires_grad=True)
        y = L.nn.functional.gelu(t, approximate=approximate)
        (g,) = L.autograd.grad(y.sum(), t, create_graph=True)
        (gg,) = L.autograd.grad(g.sum(), t)
        m = L.nn.GELU(approximate=approximate)
        out.append((y, g, gg, type(y.grad_fn).__name__ if L is torch else y.grad_fn.name(),
                    repr(m), m.approximate, m(t)))
    (a, ga, gga, na, ra, aa, ma), (b, gb, ggb, nb, rb, ab, mb) = out
    close(a, b)
    close(ga, gb)
    close(gga, ggb)
    close(ma, mb)
    assert na == nb == "GeluBackward0"
    assert ra == rb == f"GELU(approximate='{approximate}')"
    assert aa == ab == approximate


def test_gelu_refuses_other_forms_as_torch():
    for L in (gs, torch):
        with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
            L.nn.functional.gelu(L.ones(2), approximate="erf")


def test_gelu_tanh_float32():
    x = np.linspace(-3, 3, 13)
    a = gs.nn.functional.gelu(gs.tensor(x, dtype=gs.float32), approximate="tanh")
    b = torch.nn.functional.gelu(torch.tensor(x, dtype=torch.float32), approximate="tanh")
    assert a.dtype == gs.float32
    close(a, b, tol=1e-6)


ACTIVATIONS = [("ReLU", {}), ("ReLU", {"inplace": True}), ("GELU", {}),
               ("GELU", {"approximate": "tanh"}), ("Sigmoid", {}), ("Tanh", {}), ("SiLU", {}),
               ("ELU", {"alpha": 0.5}), ("SELU", {}), ("LeakyReLU", {"negative_slope": 0.2}),
               ("Softplus", {"beta": 2, "threshold": 10}), ("Hardtanh", {"min_val": -2.0}),
               ("ReLU6", {}), ("Hardsigmoid", {}), ("Hardswish", {}), ("Mish", {}),
               ("Softsign", {}), ("LogSigmoid", {}), ("Softmax", {"dim": 1}),
               ("LogSoftmax", {"dim": -1}), ("Softmin", {"dim": 0}), ("PReLU", {}),
               ("GLU", {}), ("Identity", {}), ("Dropout", {"p": 0.25})]


@pytest.mark.parametrize("name, kwargs", ACTIVATIONS)
def test_activation_reprs_as_torch(name, kwargs):
    assert repr(getattr(gs.nn, name)(**kwargs)) == repr(getattr(torch.nn, name)(**kwargs))


@pytest.mark.parametrize("name", ["Softsign", "LogSigmoid", "Sigmoid", "Tanh"])
def test_argumentless_activations_refuse_arguments_as_torch(name):
    for L in (gs, torch):
        with pytest.raises(TypeError):
            getattr(L.nn, name)(inplace=True)
