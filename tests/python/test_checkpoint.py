"""torch.utils.checkpoint on gradscope (gradscope.utils.checkpoint), against Debian's torch
1.13: the same models run with torch and with gradscope (the module passed in as `lib`), each
checkpointed and plain. Values and gradients must equal the un-checkpointed model's and
torch's; dropout inside a checkpoint draws the same mask when recomputed (preserve_rng_state);
checkpoint_sequential over nn.Sequential; parameters that get their gradient only through the
nested backward; a Function whose backward runs autograd.grad; the warning when no input
requires grad; and the refusals torch makes (grad(), unexpected keywords). use_reentrant=False
is tested in test_saved_hooks.py. meson registers this file only when torch imports
(tests/python/meson.build)."""
import json
import os
import subprocess
import warnings

import numpy as np
import pytest

import gradscope as gs
import gradscope.utils.checkpoint as gs_checkpoint

torch = pytest.importorskip("torch")
import torch.utils.checkpoint as torch_checkpoint  # noqa: E402

LIBS = [(torch, torch_checkpoint), (gs, gs_checkpoint)]


def values(t):
    return None if t is None else np.asarray(t.detach().tolist(), dtype=float)


def tensor(lib, seed, *shape, requires_grad=False):
    v = np.random.RandomState(seed).uniform(-1.0, 1.0, shape).tolist()
    return lib.tensor(v, dtype=lib.float64, requires_grad=requires_grad)


def mlp(lib, seed):
    """Linear-tanh-Linear with weights from numpy, in float64."""
    net = lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.Tanh(), lib.nn.Linear(6, 6),
                            lib.nn.ReLU(), lib.nn.Linear(6, 3)).double()
    g = np.random.RandomState(seed)
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.tensor(g.uniform(-0.5, 0.5, tuple(p.shape)).tolist(), dtype=lib.float64))
    return net


def grads(net, *inputs):
    return [values(t.grad) for t in inputs] + [values(p.grad) for p in net.parameters()]


def run_segment(lib, ck, use_checkpoint):
    """out = segment(x, w) * 2 with segment sin(x @ w) + x, checkpointed or not; loss backward."""
    x = tensor(lib, 1, 3, 4, requires_grad=True)
    w = tensor(lib, 2, 4, 4, requires_grad=True)

    def segment(a, b):
        return (a @ b).sin() + a

    h = ck.checkpoint(segment, x, w) if use_checkpoint else segment(x, w)
    loss = (h * 2).pow(2).sum()
    loss.backward()
    return values(h), values(x.grad), values(w.grad)


@pytest.mark.parametrize("lib,ck", LIBS, ids=["torch", "gradscope"])
def test_checkpoint_equals_the_plain_segment(lib, ck):
    plain = run_segment(lib, ck, False)
    checkpointed = run_segment(lib, ck, True)
    for a, b in zip(plain, checkpointed):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


def test_checkpoint_values_and_gradients_equal_torchs():
    for a, b in zip(run_segment(torch, torch_checkpoint, True), run_segment(gs, gs_checkpoint, True)):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


def run_sequential(lib, ck, segments):
    net = mlp(lib, 4)
    x = tensor(lib, 5, 5, 4, requires_grad=True)
    out = ck.checkpoint_sequential(net, segments, x) if segments else net(x)
    out.pow(2).sum().backward()
    return [values(out)] + grads(net, x)


@pytest.mark.parametrize("segments", [1, 2, 3])
def test_checkpoint_sequential_against_plain_and_torch(segments):
    ref = run_sequential(torch, torch_checkpoint, segments)
    for lib, ck in LIBS:
        plain = run_sequential(lib, ck, 0)
        got = run_sequential(lib, ck, segments)
        for a, b, c in zip(ref, plain, got):
            np.testing.assert_allclose(c, b, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(c, a, rtol=1e-10, atol=1e-12)


def run_dropout(lib, ck, use_checkpoint):
    """A dropout inside the segment: the recomputation must draw the same mask."""
    lib.manual_seed(123)
    lin = mlp(lib, 6)[0]
    drop = lib.nn.Dropout(0.5)
    x = tensor(lib, 7, 8, 4, requires_grad=True)

    def segment(a):
        return drop(lin(a)).tanh()

    out = ck.checkpoint(segment, x) if use_checkpoint else segment(x)
    out.sum().backward()
    after = lib.rand(3)  # the program's own stream continues as without the recomputation
    return values(out), values(x.grad), values(lin.weight.grad), values(after)


@pytest.mark.parametrize("lib,ck", LIBS, ids=["torch", "gradscope"])
def test_dropout_inside_draws_the_same_mask(lib, ck):
    plain = run_dropout(lib, ck, False)
    checkpointed = run_dropout(lib, ck, True)
    assert 0 < np.count_nonzero(plain[0] == 0) < plain[0].size  # the mask dropped some
    for a, b in zip(plain, checkpointed):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("lib,ck", LIBS, ids=["torch", "gradscope"])
def test_without_preserved_rng_the_mask_differs(lib, ck):
    lib.manual_seed(5)
    drop = lib.nn.Dropout(0.5)
    x = tensor(lib, 8, 64, requires_grad=True)
    out = ck.checkpoint(drop, x, preserve_rng_state=False)
    out.sum().backward()
    kept_forward = values(out) != 0
    kept_backward = values(x.grad) != 0
    assert not np.array_equal(kept_forward, kept_backward)


def run_parameter_only(lib, ck):
    """The segment's input needs a gradient but is not a leaf of interest: the parameters of
    the module inside get theirs through the nested backward only."""
    net = mlp(lib, 9)
    x = tensor(lib, 10, 2, 4)
    h = net[0](x)  # requires grad through the first layer's parameters
    out = ck.checkpoint(lambda a: net[2](net[1](a)), h)
    out.sum().backward()
    return [values(p.grad) for p in list(net.parameters())[:4]]


def test_parameter_only_gradients_equal_torchs():
    ref = run_parameter_only(torch, torch_checkpoint)
    got = run_parameter_only(gs, gs_checkpoint)
    assert all(r is not None for r in ref)
    for a, b in zip(ref, got):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("lib,ck", LIBS, ids=["torch", "gradscope"])
def test_no_input_requiring_grad_warns(lib, ck):
    lin = mlp(lib, 11)[0]
    x = tensor(lib, 12, 2, 4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = ck.checkpoint(lin, x)
    assert [str(w.message) for w in caught] == [
        "None of the inputs have requires_grad=True. Gradients will be None"]
    assert not out.requires_grad


@pytest.mark.parametrize("lib,ck", LIBS, ids=["torch", "gradscope"])
def test_refused_like_torch(lib, ck):
    x = tensor(lib, 13, 3, requires_grad=True)
    out = ck.checkpoint(lambda a: a.exp(), x)
    with pytest.raises(RuntimeError, match="Checkpointing is not compatible with .grad()"):
        lib.autograd.grad(out.sum(), x)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: bogus"):
        ck.checkpoint(lambda a: a, x, bogus=1)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: bogus"):
        ck.checkpoint_sequential([lambda a: a], 1, x, bogus=1)


@pytest.mark.skipif(not os.environ.get("GS_CLI"), reason="GS_CLI (the gradscope CLI) is not set")
def test_nested_pass_shows_in_the_log(tmp_path):
    """The event log nests the recomputation's backward inside the outer one."""
    x = tensor(gs, 15, 3, requires_grad=True)
    path = tmp_path / "ckpt.gstrace"
    with gs.trace(str(path)):
        out = gs_checkpoint.checkpoint(lambda a: a.sin() * 3, x)
        out.sum().backward()
    np.testing.assert_allclose(values(x.grad), 3 * np.cos(values(x)), rtol=1e-12)
    dump = subprocess.run([os.environ["GS_CLI"], "dump", "--jsonl", str(path)],
                          capture_output=True, text=True, check=True).stdout
    kinds = [json.loads(line).get("kind") for line in dump.splitlines() if line.strip()]
    passes = [k for k in kinds if k in ("backward_begin", "backward_end")]
    assert passes == ["backward_begin", "backward_begin", "backward_end", "backward_end"]


def run_nested_grad(lib):
    """A Function whose backward differentiates a recomputation with autograd.grad: the
    nested pass leaves every .grad alone and hands its gradient back."""

    class Recompute(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return (x * w).tanh()

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            with lib.enable_grad():
                xd, wd = x.detach().requires_grad_(True), w.detach().requires_grad_(True)
                y = (xd * wd).tanh()
                gx, gw = lib.autograd.grad(y, (xd, wd), g)
            return gx, gw

    x = tensor(lib, 16, 4, requires_grad=True)
    w = tensor(lib, 17, 4, requires_grad=True)
    out = Recompute.apply(x, w)
    (out * out).sum().backward()
    return values(out), values(x.grad), values(w.grad)


def test_function_backward_running_grad_equals_torchs():
    for a, b in zip(run_nested_grad(torch), run_nested_grad(gs)):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
