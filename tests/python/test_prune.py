"""torch.nn.utils.prune against torch 1.13: the same masks (unstructured, structured, global,
custom, and combined in a PruningContainer), parameters and buffers, gradients through the
mask, training with an optimizer made before pruning, remove(), and torch's errors. The random
methods draw from gradscope's generator, so they are checked by what they prune, not by which
entries. meson registers this file only where torch is installed."""
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.utils.prune  # noqa: F401  (torch does not import it with torch.nn.utils)

import gradscope as gs


def linear(lib, w, b):
    m = lib.nn.Linear(w.shape[1], w.shape[0]).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(w))
        m.bias.copy_(lib.tensor(b))
    return m


def state(m):
    return ([n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()],
            {k: v.detach().numpy().copy() for k, v in m.state_dict().items()})


def same_state(g, t, tol=0.0):
    gs_, ts_ = state(g), state(t)
    assert gs_[:2] == ts_[:2]
    for k in ts_[2]:
        np.testing.assert_allclose(gs_[2][k], ts_[2][k], rtol=tol, atol=tol, err_msg=k)


@pytest.mark.parametrize("seed", range(6))
def test_successive_prunings_combine_as_torchs(seed):
    rng = np.random.default_rng(seed)
    w, b = rng.standard_normal((6, 5)), rng.standard_normal(6)
    x = rng.standard_normal((3, 5))
    models = []
    for lib in (gs, torch):
        P = lib.nn.utils.prune
        m = linear(lib, w, b)
        P.l1_unstructured(m, "weight", amount=0.25)
        P.ln_structured(m, "weight", amount=2, n=1, dim=0)
        P.ln_structured(m, "weight", amount=0.2, n=float("inf"), dim=1)
        P.l1_unstructured(m, "bias", amount=2, importance_scores=lib.tensor(np.arange(6.0)))
        P.l1_unstructured(m, "weight", amount=3)
        assert len(m._forward_pre_hooks) == 2
        m(lib.tensor(x)).pow(2).sum().backward()
        models.append(m)
    g, t = models
    same_state(g, t)
    np.testing.assert_allclose(g.weight_orig.grad.numpy(), t.weight_orig.grad.numpy(),
                               rtol=1e-12)
    np.testing.assert_array_equal(g.weight.detach().numpy(), t.weight.detach().numpy())
    for lib, m in ((gs, g), (torch, t)):
        assert lib.nn.utils.prune.is_pruned(m)
        lib.nn.utils.prune.remove(m, "weight")
        lib.nn.utils.prune.remove(m, "bias")
        assert not lib.nn.utils.prune.is_pruned(m)
    same_state(g, t)
    assert g.weight.requires_grad


def test_conv_channels_global_and_custom_masks_as_torchs():
    rng = np.random.default_rng(7)
    conv_w = rng.standard_normal((4, 3, 2, 2))
    lin_w, lin_b = rng.standard_normal((5, 4)), rng.standard_normal(5)
    custom = (rng.random((5, 4)) > 0.3).astype(np.float64)
    results = []
    for lib in (gs, torch):
        P = lib.nn.utils.prune
        conv = lib.nn.Conv2d(3, 4, 2).double()
        with lib.no_grad():
            conv.weight.copy_(lib.tensor(conv_w))
            conv.bias.copy_(lib.tensor(conv_w[:, 0, 0, 0]))
        lin = linear(lib, lin_w, lin_b)
        P.ln_structured(conv, "weight", amount=0.5, n=2, dim=1)
        P.custom_from_mask(lin, "weight", mask=lib.tensor(custom))
        P.global_unstructured([(conv, "weight"), (lin, "weight"), (lin, "bias")],
                              pruning_method=P.L1Unstructured, amount=20)
        P.identity(conv, "bias")
        results.append((conv, lin))
    for g, t in zip(*results):
        same_state(g, t)


def test_an_optimizer_made_before_pruning_trains_the_original():
    rng = np.random.default_rng(3)
    w, b, x = rng.standard_normal((3, 4)), rng.standard_normal(3), rng.standard_normal((5, 4))
    models = []
    for lib in (gs, torch):
        m = linear(lib, w, b)
        opt = lib.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        lib.nn.utils.prune.l1_unstructured(m, "weight", amount=0.5)
        assert any(p is m.weight_orig for p in opt.param_groups[0]["params"])
        for _ in range(3):
            opt.zero_grad()
            m(lib.tensor(x)).pow(2).mean().backward()
            opt.step()
        models.append(m)
    same_state(*models, tol=1e-12)  # the loss's mean may sum in another order


def test_random_methods_prune_what_they_say():
    gs.manual_seed(0)
    P = gs.nn.utils.prune
    m = gs.nn.Linear(10, 8)
    P.random_unstructured(m, "weight", amount=0.3)
    assert int((m.weight_mask == 0).sum().item()) == 24
    P.random_unstructured(m, "weight", amount=10)  # among the 56 kept
    assert int((m.weight_mask == 0).sum().item()) == 34
    conv = gs.nn.Conv2d(2, 6, 3)
    P.random_structured(conv, "weight", amount=0.5, dim=0)
    per_channel = conv.weight_mask.sum(dim=[1, 2, 3])
    assert sorted(per_channel.tolist()) == [0.0] * 3 + [18.0] * 3


@pytest.mark.parametrize("call, error", [
    (lambda P, m: P.l1_unstructured(m, "weight", amount=-1), ValueError),
    (lambda P, m: P.l1_unstructured(m, "weight", amount=1.5), ValueError),
    (lambda P, m: P.l1_unstructured(m, "weight", amount="a"), TypeError),
    (lambda P, m: P.l1_unstructured(m, "weight", amount=100), ValueError),
    (lambda P, m: P.ln_structured(m, "bias", amount=1, n=2, dim=0), ValueError),
    (lambda P, m: P.ln_structured(m, "weight", amount=1, n=2, dim=2), IndexError),
    (lambda P, m: P.remove(m, "weight"), ValueError),
    (lambda P, m: P.global_unstructured([(m, "weight")], P.RandomStructured, amount=1),
     TypeError),
])
def test_refusals_are_torchs(call, error):
    messages, names = [], []
    for lib in (gs, torch):
        m = lib.nn.Linear(3, 2)
        with pytest.raises(error) as err:
            call(lib.nn.utils.prune, m)
        messages.append(str(err.value).replace("gradscope.", "torch."))
        # a failed pruning leaves the parameter under its name (registered again, so last)
        names.append([n for n, _ in m.named_parameters()])
        assert not lib.nn.utils.prune.is_pruned(m)
    assert names[0] == names[1] and sorted(names[0]) == ["bias", "weight"]
    if error is not ValueError or "pruned before" not in messages[1]:
        assert messages[0].split(" of module")[0] == messages[1].split(" of module")[0]


def test_as_torch_runs_a_pruning_program(tmp_path):
    script = tmp_path / "prune_program.py"
    script.write_text(
        "import torch\n"
        "import torch.nn.utils.prune as prune\n"
        "torch.manual_seed(0)\n"
        "model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), "
        "torch.nn.Linear(8, 2))\n"
        "prune.global_unstructured([(model[0], 'weight'), (model[2], 'weight')],\n"
        "                          pruning_method=prune.L1Unstructured, amount=0.5)\n"
        "zeros = sum(int((m.weight == 0).sum()) for m in (model[0], model[2]))\n"
        "prune.remove(model[0], 'weight')\n"
        "print(zeros, prune.is_pruned(model), sorted(model.state_dict())[0])\n")
    r = subprocess.run([sys.executable, "-m", "gradscope.as_torch", str(script)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["24", "True", "0.bias"]
