"""BatchNorm1d/2d with all of torch's options (momentum=None, affine, track_running_stats, eps and
momentum changed after construction) and torch.optim.swa_utils (AveragedModel, SWALR, update_bn)
against torch 1.13: the same outputs, gradients, running estimates, state-dict keys, print text,
learning rates and averaged parameters. meson registers this file only where torch is
installed."""
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import gradscope as gs


def same(g, t, tol=1e-12):
    np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def batch(rng, shape):
    a = rng.standard_normal(shape) * 3 + 1
    return gs.tensor(a), torch.tensor(a)


@pytest.mark.parametrize("dims", [1, 2])
@pytest.mark.parametrize("momentum", [None, 0.3])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("track", [True, False])
def test_batch_norm_options_against_torch(dims, momentum, affine, track):
    rng = np.random.default_rng(dims * 8 + (momentum is None) * 4 + affine * 2 + track)
    layers = []
    for lib in (gs, torch):
        cls = lib.nn.BatchNorm1d if dims == 1 else lib.nn.BatchNorm2d
        layers.append(cls(3, momentum=momentum, affine=affine, track_running_stats=track).double())
    g_bn, t_bn = layers
    assert repr(g_bn) == repr(t_bn)
    assert list(g_bn.state_dict()) == list(t_bn.state_dict())
    assert [n for n, _ in g_bn.named_parameters()] == [n for n, _ in t_bn.named_parameters()]
    shape = (4, 3, 5) if dims == 1 else (4, 3, 2, 3)
    for step in range(3):
        gx, tx = batch(rng, shape)
        gx.requires_grad_(True)
        tx.requires_grad_(True)
        gy, ty = g_bn(gx), t_bn(tx)
        same(gy, ty)
        weights = rng.standard_normal(shape)
        (gy * gs.tensor(weights)).sum().backward()
        (ty * torch.tensor(weights)).sum().backward()
        same(gx.grad, tx.grad, 1e-10)
        if affine:
            same(g_bn.weight.grad, t_bn.weight.grad, 1e-10)
            same(g_bn.bias.grad, t_bn.bias.grad, 1e-10)
    for name, t_value in t_bn.state_dict().items():
        same(g_bn.state_dict()[name], t_value)
    g_bn.eval()
    t_bn.eval()
    gx, tx = batch(rng, shape)
    same(g_bn(gx), t_bn(tx))


def test_momentum_and_eps_changed_after_construction():
    rng = np.random.default_rng(5)
    g_bn, t_bn = gs.nn.BatchNorm1d(2).double(), torch.nn.BatchNorm1d(2).double()
    for g, t in ((g_bn, t_bn),):
        for momentum, eps in ((None, 1e-3), (0.7, 0.5), (None, 1e-5)):
            g.momentum, t.momentum = momentum, momentum
            g.eps, t.eps = eps, eps
            assert repr(g) == repr(t)
            assert g.momentum == t.momentum and g.eps == t.eps
            gx, tx = batch(rng, (6, 2))
            same(g(gx), t(tx))
            same(g.running_mean, t.running_mean)
            same(g.running_var, t.running_var)
    assert g_bn.num_batches_tracked.item() == t_bn.num_batches_tracked.item() == 3
    assert (g_bn.num_features, g_bn.affine, g_bn.track_running_stats) == (2, True, True)
    with pytest.raises(AttributeError):
        g_bn.affine = False  # fixed when the layer is made, as torch's buffers are
    with pytest.raises(ValueError, match="momentum in \\[0, 1\\] or NAN"):
        g_bn.momentum = 1.5


def loader_batches(lib, rng_seed=11, as_tuples=False):
    rng = np.random.default_rng(rng_seed)
    out = []
    for _ in range(4):
        x = lib.tensor(rng.standard_normal((5, 4)) * 2 + 0.5)
        y = lib.tensor(rng.standard_normal((5, 1)))
        out.append((x, y) if as_tuples else x)
    return out


def make_model(lib, seed=2):
    rng = np.random.default_rng(seed)
    model = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.BatchNorm1d(3), lib.nn.ReLU(),
                              lib.nn.Linear(3, 1)).double()
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))))
    return model


@pytest.mark.parametrize("as_tuples", [False, True])
def test_update_bn_against_torch(as_tuples):
    results = []
    for lib in (gs, torch):
        model = make_model(lib)
        model.eval()
        model[1].momentum = 0.25
        lib.optim.swa_utils.update_bn(loader_batches(lib, as_tuples=as_tuples), model)
        assert model.training is False
        assert model[1].momentum == 0.25
        results.append({k: v.detach().numpy().copy() for k, v in model.state_dict().items()})
    assert list(results[0]) == list(results[1])
    for name in results[0]:
        np.testing.assert_allclose(results[0][name], results[1][name], rtol=1e-12, atol=1e-12)


def test_update_bn_of_a_model_without_batch_norm_changes_nothing():
    model = gs.nn.Linear(2, 2)
    before = model.weight.detach().numpy().copy()
    gs.optim.swa_utils.update_bn([gs.ones(3, 2)], model)
    np.testing.assert_array_equal(model.weight.detach().numpy(), before)


def swa_run(lib, avg_fn=None, use_buffers=False):
    """Eight SGD steps on a BatchNorm model, the averaged model updated after each from the
    third; SWALR takes over the learning rate there."""
    model = make_model(lib)
    swa_model = lib.optim.swa_utils.AveragedModel(model, avg_fn=avg_fn, use_buffers=use_buffers)
    opt = lib.optim.SGD(model.parameters(), lr=0.2, momentum=0.5)
    swa_sched = lib.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=3)
    lrs = []
    for step, (x, y) in enumerate(loader_batches(lib, 3, as_tuples=True) * 2):
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        opt.step()
        if step >= 2:
            swa_model.update_parameters(model)
            swa_sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    lib.optim.swa_utils.update_bn(loader_batches(lib, 4), swa_model)
    out = swa_model(loader_batches(lib, 9)[0])
    state = {k: v.detach().numpy().copy() for k, v in swa_model.state_dict().items()}
    return lrs, state, out.detach().numpy(), int(swa_model.n_averaged.item())


@pytest.mark.parametrize("use_buffers", [False, True])
@pytest.mark.parametrize("ema", [False, True])
def test_averaged_model_and_swalr_against_torch(use_buffers, ema):
    def avg_fn(averaged, current, n):
        return 0.1 * averaged + 0.9 * current
    g = swa_run(gs, avg_fn if ema else None, use_buffers)
    t = swa_run(torch, avg_fn if ema else None, use_buffers)
    np.testing.assert_allclose(g[0], t[0], rtol=1e-15)
    assert list(g[1]) == list(t[1])
    for name in g[1]:
        np.testing.assert_allclose(g[1][name], t[1][name], rtol=1e-11, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(g[2], t[2], rtol=1e-11, atol=1e-12)
    assert g[3] == t[3] == 6


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 4])
def test_swalr_rates_against_torch(strategy, anneal_epochs):
    rates = []
    for lib in (gs, torch):
        params = [lib.zeros(1, requires_grad=True), lib.zeros(1, requires_grad=True)]
        opt = lib.optim.SGD([{"params": params[:1]}, {"params": params[1:], "lr": 0.3}], lr=1.0)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=[0.1, 0.02], anneal_epochs=anneal_epochs,
                                          anneal_strategy=strategy)
        seen = []
        for _ in range(7):
            opt.step()
            sched.step()
            seen.append(sched.get_last_lr())
        rates.append(seen)
    np.testing.assert_allclose(rates[0], rates[1], rtol=1e-15)


def test_swalr_refusals_are_torchs():
    for bad in (dict(swa_lr=[0.1, 0.2]), dict(swa_lr=0.1, anneal_strategy="exp"),
                dict(swa_lr=0.1, anneal_epochs=-1), dict(swa_lr=0.1, anneal_epochs=1.5)):
        messages = []
        for lib in (gs, torch):
            opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0)
            with pytest.raises(ValueError) as err:
                lib.optim.swa_utils.SWALR(opt, **bad)
            messages.append(str(err.value))
        assert messages[0] == messages[1]


def test_as_torch_runs_an_swa_program(tmp_path):
    script = tmp_path / "swa_program.py"
    script.write_text(
        "import torch\n"
        "from torch.optim.swa_utils import AveragedModel, SWALR, update_bn\n"
        "torch.manual_seed(0)\n"
        "model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2))\n"
        "swa = AveragedModel(model)\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "sched = SWALR(opt, swa_lr=0.01)\n"
        "for _ in range(3):\n"
        "    opt.zero_grad(); model(torch.ones(4, 2)).sum().backward(); opt.step()\n"
        "    swa.update_parameters(model); sched.step()\n"
        "update_bn([torch.ones(4, 2)], swa)\n"
        "print(int(swa.n_averaged), swa.module[1].momentum)\n")
    r = subprocess.run([sys.executable, "-m", "gradscope.as_torch", str(script)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["3", "0.1"]


def test_dropout_attributes_and_print_text_as_torchs():
    for p, inplace in ((0.5, False), (0.25, True)):
        g, t = gs.nn.Dropout(p, inplace=inplace), torch.nn.Dropout(p, inplace=inplace)
        assert (g.p, g.inplace, repr(g)) == (t.p, t.inplace, repr(t))
        g.p = t.p = 0.125
        assert repr(g) == repr(t)
