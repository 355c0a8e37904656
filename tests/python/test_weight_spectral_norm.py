"""nn.utils.weight_norm / remove_weight_norm and spectral_norm / remove_spectral_norm against
Debian's torch 1.13, on built-in layers (whose engine forward reads the recomputed weight)
and a module written in Python: the parameters and buffers they leave, the values, the
gradients, a few SGD steps (the weight recomputed before each forward), eval mode (no power
iteration), removal and the errors. torch draws spectral_norm's u and v from its generator:
the comparisons set gradscope's buffers to torch's. meson registers this file only when torch
imports."""
import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")


def close(a, b, tol=1e-10):
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(np.asarray(a.tolist(), dtype=float),
                               np.asarray(b.tolist(), dtype=float), rtol=tol, atol=tol)


class Scale:
    """A module written in Python whose forward reads self.weight."""

    @staticmethod
    def make(L):
        class ScaleModule(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = L.nn.Parameter(L.ones(3, 2, dtype=L.float64))

            def forward(self, x):
                return x @ self.weight

        return ScaleModule()


MAKERS = {
    "linear": lambda L: L.nn.Linear(4, 3).double(),
    "conv2d": lambda L: L.nn.Conv2d(2, 3, 3, padding=1).double(),
    "python": Scale.make,
}
INPUTS = {"linear": (5, 4), "conv2d": (2, 2, 5, 5), "python": (4, 3)}


def twins(kind):
    """The same layer in both libraries: torch's values copied into gradscope's."""
    torch.manual_seed(0)
    theirs = MAKERS[kind](torch)
    ours = MAKERS[kind](gs)
    with gs.no_grad():
        for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            p.copy_(gs.tensor(q.detach().numpy()))
    x = np.random.default_rng(1).standard_normal(INPUTS[kind])
    return ours, theirs, gs.tensor(x), torch.tensor(x)


def state(m):
    return [(k, tuple(v.shape)) for k, v in m.state_dict().items()]


def train(m, x, L, steps=3):
    opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.5)
    outs = []
    for _ in range(steps):
        opt.zero_grad()
        y = m(x)
        (y * y).sum().backward()
        opt.step()
        outs.append(y.detach())
    return outs


@pytest.mark.parametrize("dim", [0, 1, None])
@pytest.mark.parametrize("kind", ["linear", "conv2d", "python"])
def test_weight_norm_as_torch(kind, dim):
    ours, theirs, x, tx = twins(kind)
    assert gs.nn.utils.weight_norm(ours, dim=dim) is ours
    torch.nn.utils.weight_norm(theirs, dim=dim)
    assert [k for k, _ in ours.named_parameters()] == [k for k, _ in theirs.named_parameters()]
    assert state(ours) == state(theirs)
    close(ours.weight_g, theirs.weight_g)
    close(ours.weight_v, theirs.weight_v)
    # torch records its fused _weight_norm_interface (WeightNormInterfaceBackward0) for dim
    # 0 or the last; gradscope the composition v * (g / ||v||), torch's other path
    assert ours.weight.grad_fn.name() == "MulBackward0"
    for a, b in zip(train(ours, x, gs), train(theirs, tx, torch)):
        close(a, b)
    close(ours.weight_g.grad, theirs.weight_g.grad)
    close(ours.weight_v.grad, theirs.weight_v.grad)
    gs.nn.utils.remove_weight_norm(ours)
    torch.nn.utils.remove_weight_norm(theirs)
    assert [k for k, _ in ours.named_parameters()] == [k for k, _ in theirs.named_parameters()]
    close(ours.weight, theirs.weight)
    close(ours(x), theirs(tx))


def test_weight_norm_errors_as_torch():
    for L in (gs, torch):
        m = L.nn.Linear(2, 2)
        L.nn.utils.weight_norm(m)
        with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
            L.nn.utils.weight_norm(m)
        with pytest.raises(ValueError, match="weight_norm of 'bias' not found in"):
            L.nn.utils.remove_weight_norm(m, "bias")
        with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
            L.nn.utils.remove_spectral_norm(m)


def test_weight_norm_in_a_sequential_as_torch():
    models = []
    for L in (torch, gs):
        torch.manual_seed(0)
        models.append(L.nn.Sequential(L.nn.Linear(3, 4), L.nn.Tanh(), L.nn.Linear(4, 2)).double())
    theirs, ours = models
    with gs.no_grad():
        for p, q in zip(ours.parameters(), theirs.parameters()):
            p.copy_(gs.tensor(q.detach().numpy()))
    gs.nn.utils.weight_norm(ours[0])
    torch.nn.utils.weight_norm(theirs[0])
    assert list(ours.state_dict()) == list(theirs.state_dict())
    x = np.random.default_rng(2).standard_normal((6, 3))
    for a, b in zip(train(ours, gs.tensor(x), gs), train(theirs, torch.tensor(x), torch)):
        close(a, b)


def copy_spectral_buffers(ours, theirs):
    with gs.no_grad():
        ours.weight_u.copy_(gs.tensor(theirs.weight_u.numpy()))
        ours.weight_v.copy_(gs.tensor(theirs.weight_v.numpy()))


@pytest.mark.parametrize("iterations", [1, 3])
@pytest.mark.parametrize("kind", ["linear", "conv2d", "python"])
def test_spectral_norm_as_torch(kind, iterations):
    ours, theirs, x, tx = twins(kind)
    assert gs.nn.utils.spectral_norm(ours, n_power_iterations=iterations) is ours
    torch.nn.utils.spectral_norm(theirs, n_power_iterations=iterations)
    assert [k for k, _ in ours.named_parameters()] == [k for k, _ in theirs.named_parameters()]
    assert [k for k, _ in ours.named_buffers()] == [k for k, _ in theirs.named_buffers()]
    assert state(ours) == state(theirs)
    copy_spectral_buffers(ours, theirs)
    for a, b in zip(train(ours, x, gs), train(theirs, tx, torch)):
        close(a, b)
    close(ours.weight_u, theirs.weight_u)
    close(ours.weight_v, theirs.weight_v)
    close(ours.weight_orig.grad, theirs.weight_orig.grad)
    # eval mode: no power iteration, the buffers stay
    ours.eval()
    theirs.eval()
    u = ours.weight_u.tolist()
    close(ours(x), theirs(tx))
    assert ours.weight_u.tolist() == u
    close(ours.weight_u, theirs.weight_u)
    gs.nn.utils.remove_spectral_norm(ours)
    torch.nn.utils.remove_spectral_norm(theirs)
    assert state(ours) == state(theirs)
    close(ours.weight, theirs.weight)


def test_spectral_norm_starts_with_unit_vectors():
    m = gs.nn.utils.spectral_norm(gs.nn.Linear(5, 3))
    assert tuple(m.weight_u.shape) == (3,) and tuple(m.weight_v.shape) == (5,)
    assert abs(m.weight_u.norm().item() - 1) < 1e-6
    assert abs(m.weight_v.norm().item() - 1) < 1e-6
    assert not m.weight_u.requires_grad
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        gs.nn.utils.spectral_norm(m)
