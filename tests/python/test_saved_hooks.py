"""Saved-tensor hooks (torch.autograd.graph: saved_tensors_hooks, save_on_cpu,
disable_saved_tensors_hooks) and checkpoint(use_reentrant=False) on gradscope, against Debian's
torch 1.13: the same programs run with torch and with gradscope (the module passed in as
`lib`). Hooks that log their calls see the same packs and unpacks with the same shapes, node
by node, for an MLP and for ops that save several tensors (slots of one node may come in
another order); nesting picks the innermost pair; gradients through hooks equal those without;
a raising hook makes the op or the backward raise RuntimeError("Type: message") as torch does;
a wrong unpack is refused; the non-reentrant checkpoint gives torch's values and gradients
(inputs not requiring grad, autograd.grad, keyword arguments, dropout recomputed with the same
mask). meson registers this file only when torch imports (tests/python/meson.build)."""
import numpy as np
import pytest

import gradscope as gs
import gradscope.utils.checkpoint as gs_checkpoint

torch = pytest.importorskip("torch")
import torch.utils.checkpoint as torch_checkpoint  # noqa: E402

LIBS = [(torch, torch_checkpoint), (gs, gs_checkpoint)]
IDS = ["torch", "gradscope"]


def values(t):
    return None if t is None else np.asarray(t.detach().tolist(), dtype=float)


def tensor(lib, seed, *shape, requires_grad=False):
    v = np.random.RandomState(seed).uniform(-1.0, 1.0, shape).tolist()
    return lib.tensor(v, dtype=lib.float64, requires_grad=requires_grad)


def mlp(lib, seed, dropout=0.0):
    """Linear-tanh-(dropout)-Linear-ReLU-Linear with weights from numpy, in float64."""
    layers = [lib.nn.Linear(4, 6), lib.nn.Tanh()]
    if dropout:
        layers.append(lib.nn.Dropout(dropout))
    layers += [lib.nn.Linear(6, 6), lib.nn.ReLU(), lib.nn.Linear(6, 3)]
    net = lib.nn.Sequential(*layers).double()
    g = np.random.RandomState(seed)
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.tensor(g.uniform(-0.5, 0.5, tuple(p.shape)).tolist(), dtype=lib.float64))
    return net


class Logger:
    """A pack/unpack pair that logs each call with the tensor's shape and keeps the tensor."""

    def __init__(self, lib, tag=""):
        self.lib, self.tag, self.calls = lib, tag, []

    def pack(self, t):
        self.calls.append(f"p{self.tag}{tuple(t.shape)}")
        return t

    def unpack(self, t):
        self.calls.append(f"u{self.tag}{tuple(t.shape)}")
        return t

    def hooks(self):
        return self.lib.autograd.graph.saved_tensors_hooks(self.pack, self.unpack)


def mlp_calls(lib):
    net = mlp(lib, 1)
    x = tensor(lib, 2, 5, 4)
    log = Logger(lib)
    with log.hooks():
        loss = lib.nn.functional.mse_loss(net(x), lib.zeros(5, 3, dtype=lib.float64))
    packed = list(log.calls)
    log.calls.clear()
    loss.backward()
    return packed, log.calls, [values(p.grad) for p in net.parameters()]


def test_mlp_packs_and_unpacks_as_torch():
    """The same calls with the same shapes; within one node the slots may come in another order
    (torch's addmm saves the weight before the input, gradscope's linear the input first)."""
    want, got = mlp_calls(torch), mlp_calls(gs)
    assert sorted(got[0]) == sorted(want[0])
    assert sorted(got[1]) == sorted(want[1])
    assert got[0][0] == want[0][0] and got[1][-1] == want[1][-1]  # first node packs first
    assert len(want[0]) == 9  # the test would be empty if torch saved nothing
    for a, b in zip(want[2], got[2]):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


OPS = {
    "mul": lambda lib, a, b: a * b,
    "pow": lambda lib, a, b: a.abs() ** b,
    "atan2": lambda lib, a, b: lib.atan2(a, b),
    "softmax": lambda lib, a, b: lib.nn.functional.softmax(a, 1) * b,
    "sigmoid_tanh": lambda lib, a, b: a.sigmoid() * b.tanh(),
    "matmul_relu": lambda lib, a, b: lib.relu(a @ b.t()),
    "custom_function": lambda lib, a, b: Scale.of(lib).apply(a, b),
}


class Scale:
    """A Function saving two tensors with save_for_backward: they are hooked too."""

    @staticmethod
    def of(lib):
        class ScaleFn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a * b

            @staticmethod
            def backward(ctx, g):
                a, b = ctx.saved_tensors
                return g * b, g * a
        return ScaleFn


def op_calls(lib, name):
    a = tensor(lib, 3, 2, 3, requires_grad=True)
    b = tensor(lib, 4, 2, 3, requires_grad=True)
    log = Logger(lib)
    with log.hooks():
        y = OPS[name](lib, a, b).sum()
    packed = list(log.calls)
    log.calls.clear()
    y.backward()
    return packed, log.calls, values(a.grad), values(b.grad)


@pytest.mark.parametrize("name", sorted(OPS))
def test_ops_with_several_saved_tensors_as_torch(name):
    want, got = op_calls(torch, name), op_calls(gs, name)
    assert got[0] == want[0]
    assert got[1] == want[1]
    assert len(want[0]) >= 2
    np.testing.assert_allclose(got[2], want[2], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[3], want[3], rtol=1e-12, atol=1e-12)


def nesting_calls(lib):
    x = tensor(lib, 5, 3, requires_grad=True)
    outer, inner = Logger(lib, "A"), Logger(lib, "B")
    outer.calls = inner.calls = []  # one log, to see the order across both pairs
    with outer.hooks():
        e1 = x.exp()
        with inner.hooks():
            e2 = e1.sin()
        e3 = e2.exp()
    e4 = e3.cos()  # no pair: not packed
    packed = list(outer.calls)
    outer.calls.clear()
    e4.sum().backward()
    return packed, list(outer.calls), values(x.grad)


@pytest.mark.parametrize("lib", [torch, gs], ids=IDS)
def test_innermost_pair_packs_and_each_unpacks_its_own(lib):
    packed, unpacked, _ = nesting_calls(lib)
    assert packed == ["pA(3,)", "pB(3,)", "pA(3,)"]
    assert unpacked == ["uA(3,)", "uB(3,)", "uA(3,)"]


def test_nesting_as_torch():
    want, got = nesting_calls(torch), nesting_calls(gs)
    assert got[:2] == want[:2]
    np.testing.assert_allclose(got[2], want[2], rtol=1e-12)


@pytest.mark.parametrize("lib", [torch, gs], ids=IDS)
def test_hooks_that_replace_the_tensor_give_the_same_gradients(lib):
    """pack keeps a copy as a list of numbers (the node holds no tensor); unpack rebuilds it."""
    def run(hooked):
        x = tensor(lib, 6, 2, 3, requires_grad=True)
        w = tensor(lib, 7, 3, 2, requires_grad=True)
        hooks = lib.autograd.graph.saved_tensors_hooks(
            lambda t: (t.tolist(), t.dtype), lambda p: lib.tensor(p[0], dtype=p[1]))
        if hooked:
            with hooks:
                y = (x @ w).tanh().pow(2).sum()
        else:
            y = (x @ w).tanh().pow(2).sum()
        y.backward()
        return values(x.grad), values(w.grad)
    for a, b in zip(run(False), run(True)):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("lib", [torch, gs], ids=IDS)
def test_a_raising_pack_hook_raises_from_the_op(lib):
    x = tensor(lib, 8, 3, requires_grad=True)

    def pack(t):
        raise ValueError("no packing today")
    with lib.autograd.graph.saved_tensors_hooks(pack, lambda p: p):
        with pytest.raises(RuntimeError, match="ValueError: no packing today") as info:
            x.exp()
    assert isinstance(info.value.__cause__, ValueError) or lib is torch


@pytest.mark.parametrize("lib", [torch, gs], ids=IDS)
def test_a_raising_unpack_hook_raises_from_backward(lib):
    x = tensor(lib, 9, 3, requires_grad=True)

    def unpack(p):
        raise KeyError("lost it")
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        y = x.exp().sum()
    with pytest.raises(RuntimeError, match="KeyError: 'lost it'"):
        y.backward()


@pytest.mark.parametrize("lib", [torch, gs], ids=IDS)
def test_unpack_must_return_a_tensor(lib):
    x = tensor(lib, 10, 3, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda p: 5):
        y = x.exp().sum()
    with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a "
                                        "Tensor but got result of type int"):
        y.backward()


def test_unpack_of_a_wrong_shape_is_refused_naming_both():
    x = tensor(gs, 11, 3, requires_grad=True)
    with gs.autograd.graph.saved_tensors_hooks(lambda t: t, lambda p: gs.ones(2, dtype=gs.float64)):
        y = x.exp().sum()
    with pytest.raises(RuntimeError, match=r"must give back a tensor like the one packed, "
                                           r"\[3\] f64; got \[2\] f64"):
        y.backward()


@pytest.mark.parametrize("lib", [torch, gs], ids=IDS)
def test_save_on_cpu_keeps_the_gradients(lib):
    def run(ctx):
        x = tensor(lib, 12, 4, requires_grad=True)
        with ctx:
            y = (x.sin() * x).sum()
        y.backward()
        return values(x.grad)
    import contextlib
    plain = run(contextlib.nullcontext())
    np.testing.assert_allclose(run(lib.autograd.graph.save_on_cpu()), plain, rtol=1e-12)
    np.testing.assert_allclose(run(lib.autograd.graph.save_on_cpu(pin_memory=True)), plain,
                               rtol=1e-12)


@pytest.mark.parametrize("lib", [torch, gs], ids=IDS)
def test_disable_saved_tensors_hooks(lib):
    graph = lib.autograd.graph
    with graph.disable_saved_tensors_hooks("hooks are off here"):
        with pytest.raises(RuntimeError, match="hooks are off here"):
            with graph.save_on_cpu():
                pass
        with graph.disable_saved_tensors_hooks("inner reason"):
            with pytest.raises(RuntimeError, match="inner reason"):
                with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
        with pytest.raises(RuntimeError, match="hooks are off here"):
            with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):  # enabled again
        pass


# ---- checkpoint(use_reentrant=False) ----------------------------------------------------------

def run_checkpoint(lib, ck, use_checkpoint, x_requires_grad=True):
    net = mlp(lib, 13)
    x = tensor(lib, 14, 5, 4, requires_grad=x_requires_grad)
    h = ck.checkpoint(net, x, use_reentrant=False) if use_checkpoint else net(x)
    (h * h).sum().backward()
    return [values(h), values(x.grad)] + [values(p.grad) for p in net.parameters()]


def assert_all_close(got, want):
    assert len(got) == len(want)
    for a, b in zip(want, got):
        if a is None:
            assert b is None
        else:
            np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("x_requires_grad", [True, False])
def test_non_reentrant_checkpoint_gives_torchs_gradients(x_requires_grad):
    want = run_checkpoint(torch, torch_checkpoint, True, x_requires_grad)
    assert_all_close(run_checkpoint(gs, gs_checkpoint, True, x_requires_grad), want)
    assert_all_close(run_checkpoint(gs, gs_checkpoint, False, x_requires_grad), want)


def checkpoint_counts(lib, ck):
    """How often pack and unpack run for a checkpointed segment (the outer placeholders), and
    how often the segment itself runs (once forward, once recomputed)."""
    x = tensor(lib, 15, 3, 4, requires_grad=True)
    w = tensor(lib, 16, 4, 4, requires_grad=True)
    runs = []

    def segment(a, b, scale=1.0):
        runs.append(scale)
        return (a @ b).sin() * scale + a

    h = ck.checkpoint(segment, x, w, use_reentrant=False, scale=3.0)
    gx, gw = lib.autograd.grad((h * h).sum(), (x, w))
    return runs, values(h), values(gx), values(gw)


def test_non_reentrant_checkpoint_with_autograd_grad_and_kwargs():
    want, got = checkpoint_counts(torch, torch_checkpoint), checkpoint_counts(gs, gs_checkpoint)
    assert got[0] == want[0] == [3.0, 3.0]
    for a, b in zip(want[1:], got[1:]):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("lib,ck", LIBS, ids=IDS)
def test_non_reentrant_checkpoint_recomputes_dropout_with_the_same_mask(lib, ck):
    def run(use_checkpoint):
        lib.manual_seed(7)
        net = mlp(lib, 17, dropout=0.5)
        x = tensor(lib, 18, 6, 4, requires_grad=True)
        h = ck.checkpoint(net, x, use_reentrant=False) if use_checkpoint else net(x)
        h.pow(2).sum().backward()
        return [values(h), values(x.grad)] + [values(p.grad) for p in net.parameters()]
    assert_all_close(run(True), run(False))


@pytest.mark.parametrize("lib,ck", LIBS[1:], ids=IDS[1:])  # torch 1.13's takes no use_reentrant
def test_non_reentrant_checkpoint_sequential(lib, ck):
    def run(segments):
        net = mlp(lib, 19)
        x = tensor(lib, 20, 5, 4, requires_grad=True)
        if segments:
            h = ck.checkpoint_sequential(net, segments, x, use_reentrant=False)
        else:
            h = net(x)
        h.sum().backward()
        return [values(h), values(x.grad)] + [values(p.grad) for p in net.parameters()]
    assert_all_close(run(2), run(0))


@pytest.mark.parametrize("lib,ck", LIBS, ids=IDS)
def test_non_reentrant_checkpoint_twice_needs_retain(lib, ck):
    """A second backward through a non-reentrant checkpoint without retain_graph fails as any
    graph does; with retain_graph the segment is recomputed again."""
    x = tensor(lib, 21, 3, requires_grad=True)
    h = ck.checkpoint(lambda a: a.sin().exp(), x, use_reentrant=False)
    h.sum().backward(retain_graph=True)
    first = values(x.grad)
    h.sum().backward()
    np.testing.assert_allclose(values(x.grad), 2 * first, rtol=1e-12)


def test_graph_is_importable_as_torchs():
    import gradscope.autograd.graph as graph
    assert graph.saved_tensors_hooks is gs.autograd.graph.saved_tensors_hooks
    assert graph.save_on_cpu is gs.autograd_graph.save_on_cpu
