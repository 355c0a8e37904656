"""Modules shared as torch 1.13 shares them, each case run on gradscope.nn and torch.nn side by
side: a module used twice in one Sequential or in two containers (parameters() deduplicated,
named_* listing the first path, state_dict every path), slices of Sequential, ModuleList and
ParameterList holding the same objects, del/insert/append with renumbering, in-place
activation modules, `p.data = view`; and the lifetimes: a slice outlives its model, a removed
module stays usable while Python holds it, what nothing holds goes."""
import gc
from collections import OrderedDict

import pytest

import gradscope as gs
import gradscope.nn as gnn

torch = pytest.importorskip("torch")
tnn = torch.nn


def build(nn, lib):
    """nn.Sequential(Linear, ReLU, shared, Tanh, shared, Linear) with fixed weights."""
    lib.manual_seed(0)
    shared = nn.Linear(3, 3)
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), shared, nn.Tanh(), shared, nn.Linear(3, 2))
    with lib.no_grad():
        for k, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(lib.tensor([((i * 7 + k * 3) % 11 - 5) / 10 for i in range(n)]).reshape(
                tuple(p.shape)))
    return model, shared


def lists(model):
    return ([n for n, _ in model.named_parameters()], [n for n, _ in model.named_modules()],
            list(model.state_dict().keys()), len(list(model.parameters())),
            [n for n, _ in model.named_children()], repr(model))


def test_shared_layer_lists_match_torch():
    g, _ = build(gnn, gs)
    t, _ = build(tnn, torch)
    assert lists(g) == lists(t)
    x = [[0.5, -1.0], [2.0, 0.25]]
    got = g(gs.tensor(x)).flatten().tolist()
    assert got == pytest.approx(t(torch.tensor(x)).flatten().tolist(), abs=1e-6)


def test_slices_hold_the_same_modules_and_keep_keys():
    for nn, lib in [(gnn, gs), (tnn, torch)]:
        model, shared = build(nn, lib)
        head_off = model[:-1]
        assert type(head_off) is nn.Sequential and len(head_off) == 5
        assert head_off[2] is shared and head_off[4] is shared and head_off[0] is model[0]
        assert [n for n, _ in model[3:].named_children()] == ["3", "4", "5"]
        assert list(model[::2].state_dict().keys()) == ["0.weight", "0.bias", "2.weight",
                                                        "2.bias", "4.weight", "4.bias"]
    assert repr(build(gnn, gs)[0][1:3]) == repr(build(tnn, torch)[0][1:3])


def test_training_a_slice_trains_the_model():
    results = []
    for nn, lib in [(gnn, gs), (tnn, torch)]:
        model, shared = build(nn, lib)
        backbone = model[:-1]
        x = lib.tensor([[0.5, -1.0], [2.0, 0.25], [1.0, 1.0]])
        opt = lib.optim.SGD(backbone.parameters(), lr=0.5)
        for _ in range(3):
            opt.zero_grad()
            backbone(x).pow(2).sum().backward()
            opt.step()
        results.append((shared.weight.flatten().tolist(), model(x).flatten().tolist()))
    assert results[0][0] == pytest.approx(results[1][0], abs=1e-5)
    assert results[0][1] == pytest.approx(results[1][1], abs=1e-5)


def test_one_module_in_two_containers():
    for nn in (gnn, tnn):
        lin = nn.Linear(2, 2)
        a, b = nn.Sequential(lin, nn.ReLU()), nn.Sequential(nn.Tanh(), lin)
        assert a[0] is b[1]
        c = nn.Module()
        c.first = lin
        c.second = lin
        assert [n for n, _ in c.named_parameters()] == ["first.weight", "first.bias"]
        assert list(c.state_dict().keys()) == ["first.weight", "first.bias", "second.weight",
                                               "second.bias"]
        assert [n for n, _ in c.named_modules()] == ["", "first"]


def test_edits_renumber_as_torch():
    out = []
    for nn in (gnn, tnn):
        seq = nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid(), nn.Identity())
        del seq[1]
        text = [repr(seq)]
        seq.insert(1, nn.Hardswish())
        seq.append(nn.Softsign())
        seq.extend([nn.Tanh()])
        text.append(repr(seq))
        popped = seq.pop(0)
        text.append(type(popped).__name__ + repr(seq))
        del seq[1:3]
        text.append(repr(seq))
        seq[0] = nn.Sigmoid()
        text.append(repr(seq))
        ml = nn.ModuleList([nn.Linear(1, 1), nn.ReLU(), nn.Tanh()])
        sub = ml[1:]
        text.append(repr(sub))
        assert sub[0] is ml[1]
        del ml[0]
        ml.insert(0, nn.Sigmoid())
        text.append(repr(ml) + str([n for n, _ in ml.named_children()]))
        out.append(text)
    assert out[0] == out[1]


def test_parameter_list_slice_shares_parameters():
    for nn, lib in [(gnn, gs), (tnn, torch)]:
        plist = nn.ParameterList([nn.Parameter(lib.ones(2) * i) for i in range(4)])
        part = plist[1:3]
        assert len(part) == 2 and part[0] is plist[1] and part[1] is plist[2]
        assert [n for n, _ in part.named_parameters()] == ["0", "1"]
        with lib.no_grad():
            part[0].add_(1)
        assert plist[1].tolist() == [2.0, 2.0]


def test_inplace_activation_modules_write_into_their_input():
    for name, args in [("ReLU", ()), ("ReLU6", ()), ("Hardtanh", (-0.5, 0.5)), ("LeakyReLU", (0.2,)),
                       ("ELU", ()), ("SELU", ()), ("SiLU", ()), ("Hardswish", ()),
                       ("Hardsigmoid", ()), ("Mish", ()), ("Dropout", (0.5,))]:
        got = []
        for nn, lib in [(gnn, gs), (tnn, torch)]:
            act = getattr(nn, name)(*args, inplace=True)
            act.eval()
            x = lib.tensor([-2.0, -0.25, 0.0, 0.75, 4.0])
            v = x._version
            y = act(x)
            assert y is x, name
            got.append((x.tolist(), x._version > v or name == "Dropout", repr(act)))
        assert got[0][0] == pytest.approx(got[1][0], abs=1e-6), name
        assert got[0][1:] == got[1][1:], name


def test_inplace_relu_in_a_sequential_keeps_gradients():
    grads = []
    for nn, lib in [(gnn, gs), (tnn, torch)]:
        lib.manual_seed(0)
        lin = nn.Linear(3, 3)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor([[0.5, -0.2, 0.1], [0.3, 0.8, -0.6], [-0.4, 0.2, 0.9]]))
            lin.bias.copy_(lib.tensor([0.1, -0.3, 0.0]))
        seq = nn.Sequential(lin, nn.ReLU(inplace=True), nn.Linear(3, 1))
        with lib.no_grad():
            seq[2].weight.fill_(0.5)
            seq[2].bias.fill_(0.0)
        x = lib.tensor([[1.0, -2.0, 0.5], [0.3, 0.3, -1.0]])
        seq(x).sum().backward()
        grads.append(lin.weight.grad.flatten().tolist())
    assert grads[0] == pytest.approx(grads[1], abs=1e-6)


def test_set_data_to_a_view():
    for nn, lib in [(gnn, gs), (tnn, torch)]:
        w = nn.Parameter(lib.zeros(3))
        base = lib.arange(6.0)
        w.data = base[1:4]
        assert w.tolist() == [1.0, 2.0, 3.0] and w.requires_grad
        v = lib.arange(4.0)[::2]  # a view whose data is replaced: a view no more
        v.data = lib.ones(3)
        v.add_(1)
        assert v.tolist() == [2.0, 2.0, 2.0]


def test_lifetimes_follow_python_references():
    model, shared = build(gnn, gs)
    backbone = model[:-1]
    w = shared.weight
    del model
    gc.collect()
    x = gs.tensor([[0.5, -1.0]])
    assert backbone(x).shape == (1, 3)  # the slice keeps its modules
    first = backbone[0]
    del backbone[0]
    assert first(x).shape == (1, 3)  # removed, but Python still holds it
    del backbone, shared
    gc.collect()
    assert w.sum().item() == w.sum().item()  # a parameter's object keeps its module
    seq = gnn.Sequential(gnn.Linear(2, 2))
    p = seq[0].weight
    del seq[0]
    gc.collect()
    assert p.shape == (2, 2)
    before = gs.live_tensor_count()
    seq = gnn.Sequential(gnn.Linear(2, 2), gnn.Linear(2, 1))
    q = list(seq.parameters())[0]  # from the root: it keeps its own Linear, not the tree
    del seq[0]
    gc.collect()
    assert q.shape == (2, 2) and gs.live_tensor_count() == before + 4
    del seq
    gc.collect()
    assert gs.live_tensor_count() == before + 2
    del q
    gc.collect()
    assert gs.live_tensor_count() == before


def test_sequential_of_an_ordered_dict():
    for nn in (gnn, tnn):
        seq = nn.Sequential(OrderedDict([("enc", nn.Linear(2, 3)), ("act", nn.ReLU())]))
        assert [n for n, _ in seq.named_children()] == ["enc", "act"]
        assert seq(torch.ones(1, 2) if nn is tnn else gs.ones(1, 2)).shape == (1, 3)
