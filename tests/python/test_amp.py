"""torch.autocast, torch.amp and torch.cuda.amp (autocast, GradScaler, custom_fwd, custom_bwd)
against torch 1.13 on this machine, which has no CUDA: the same warnings, the same errors, and a
training loop written for mixed precision that ends with the same parameters as without it.
meson registers this file only where torch is installed."""
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import gradscope as gs


def caught(make):
    """What make() returns and the texts of the warnings it raises."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        value = make()
    return value, [str(w.message) for w in seen]


@pytest.mark.parametrize("enabled", [True, False])
def test_grad_scaler_disables_itself_with_torchs_warning(enabled):
    g, g_warned = caught(lambda: gs.cuda.amp.GradScaler(enabled=enabled))
    t, t_warned = caught(lambda: torch.cuda.amp.GradScaler(enabled=enabled))
    assert g_warned == t_warned
    assert len(g_warned) == (1 if enabled else 0)
    assert g.is_enabled() == t.is_enabled() is False
    assert g.get_scale() == t.get_scale() == 1.0
    assert g.state_dict() == t.state_dict() == {}


def train(lib, amp, use_scaler):
    """Five SGD steps of a small model, written as mixed-precision programs are."""
    rng = np.random.default_rng(3)
    x = lib.tensor(rng.standard_normal((8, 4)))
    y = lib.tensor(rng.standard_normal((8, 1)))
    model = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.Tanh(), lib.nn.Linear(3, 1)).double()
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))))
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scaler = amp.GradScaler(enabled=use_scaler)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with amp.autocast(enabled=use_scaler):
                loss = ((model(x) - y) ** 2).mean()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        assert scaler.step(opt) is None
        scaler.update()
        losses.append(loss.item())
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


def test_a_mixed_precision_loop_trains_as_torchs_and_as_without_amp():
    g_losses, g_params = train(gs, gs.cuda.amp, True)
    t_losses, t_params = train(torch, torch.cuda.amp, True)
    plain_losses, plain_params = train(gs, gs.cuda.amp, False)
    np.testing.assert_allclose(g_losses, t_losses, rtol=1e-12)
    assert g_losses == plain_losses
    for g, t, p in zip(g_params, t_params, plain_params):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-14)
        np.testing.assert_array_equal(g, p)


def test_scale_returns_what_it_was_given():
    scaler = gs.cuda.amp.GradScaler(enabled=False)
    loss = gs.ones(2, requires_grad=True).sum()
    assert scaler.scale(loss) is loss
    pair = [loss, loss]
    assert scaler.scale(pair) is pair


@pytest.mark.parametrize("make", [
    lambda lib: lib.autocast(device_type="cuda"),
    lambda lib: lib.autocast("cuda", dtype=None),
    lambda lib: lib.cuda.amp.autocast(),
])
def test_cuda_autocast_warns_and_is_off(make):
    g, g_warned = caught(lambda: make(gs))
    t, t_warned = caught(lambda: make(torch))
    assert g_warned == t_warned and len(g_warned) == 1
    with g:
        assert gs.is_autocast_enabled() == torch.is_autocast_enabled() is False
        r = gs.ones(2) * 2
    assert r.tolist() == [2.0, 2.0]


def test_disabled_autocast_is_silent_and_works_as_a_decorator():
    for lib in (gs, torch):
        _, warned = caught(lambda: lib.autocast(device_type="cuda", enabled=False))
        assert warned == []
        _, warned = caught(lambda: lib.autocast(device_type="cpu", enabled=False))
        assert warned == []

    @gs.autocast("cuda", enabled=False)
    def double(x):
        """doubles"""
        return x * 2
    assert double(gs.ones(1)).tolist() == [2.0]
    assert double.__doc__ == "doubles"


def test_unknown_device_type_is_torchs_error():
    with pytest.raises(RuntimeError) as t_err:
        torch.autocast("tpu")
    with pytest.raises(RuntimeError) as g_err:
        gs.autocast("tpu")
    assert str(g_err.value) == str(t_err.value)


def test_enabled_cpu_autocast_is_refused_not_computed_in_float32():
    # torch computes matrix products in bfloat16 here; gradscope has no bfloat16
    with pytest.raises(gs.NotSupportedError, match="device_type='cpu'.*not supported"):
        gs.autocast("cpu")
    assert gs.is_autocast_cpu_enabled() is False


def custom_function(lib, amp):
    class Cube(lib.autograd.Function):
        @staticmethod
        @amp.custom_fwd
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @amp.custom_bwd
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * grad
    return Cube


def test_custom_fwd_and_bwd_leave_a_function_as_it_is():
    values = np.array([0.5, -1.25, 2.0])
    grads = []
    for lib, amp in ((gs, gs.cuda.amp), (torch, torch.cuda.amp)):
        x = lib.tensor(values, requires_grad=True)
        custom_function(lib, amp).apply(x).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    np.testing.assert_array_equal(grads[0], 3 * values ** 2)


def test_as_torch_runs_an_amp_program(tmp_path):
    script = tmp_path / "amp_program.py"
    script.write_text(
        "import warnings\n"
        "import torch\n"
        "from torch.cuda.amp import GradScaler, autocast\n"
        "import torch.amp\n"
        "warnings.simplefilter('ignore')\n"
        "model = torch.nn.Linear(3, 1)\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "scaler = GradScaler()\n"
        "with autocast():\n"
        "    loss = model(torch.ones(2, 3)).pow(2).mean()\n"
        "scaler.scale(loss).backward()\n"
        "scaler.step(opt)\n"
        "scaler.update()\n"
        "print(type(torch.amp.autocast('cuda')).__module__, scaler.get_scale())\n")
    r = subprocess.run([sys.executable, "-m", "gradscope.as_torch", str(script)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["gradscope.amp", "1.0"]
