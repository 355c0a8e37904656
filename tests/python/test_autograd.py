"""test_autograd.py: gradients from Python, against PyTorch on a float64 MLP to 1e-12, and
PyTorch's autograd surface: requires_grad, backward, .grad, detach, clone, retain_grad,
no_grad, in-place writes after a save."""
import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")


def test_mlp_gradients_match_pytorch_in_float64():
    rng = np.random.default_rng(7)
    arrays = {
        "x": rng.standard_normal((5, 4)), "w1": rng.standard_normal((8, 4)),
        "b1": rng.standard_normal(8), "w2": rng.standard_normal((3, 8)),
        "b2": rng.standard_normal(3),
    }
    y = np.array([0, 2, 1, 2, 0])
    g = {k: gs.tensor(v, requires_grad=k != "x") for k, v in arrays.items()}
    t = {k: torch.tensor(v, requires_grad=k != "x") for k, v in arrays.items()}

    def forward(m, F, targets):
        h = (m["x"] @ m["w1"].T + m["b1"]).tanh()
        logits = h.relu() @ m["w2"].T + m["b2"]
        return F.cross_entropy(logits, targets) + (m["w1"] ** 2.0).sum() * 0.01

    loss_g = forward(g, gs.nn.functional, gs.tensor(y))
    loss_t = forward(t, torch.nn.functional, torch.tensor(y))
    loss_g.backward()
    loss_t.backward()
    assert abs(loss_g.item() - loss_t.item()) < 1e-12
    for k in ("w1", "b1", "w2", "b2"):
        diff = np.abs(g[k].grad.numpy() - t[k].grad.numpy()).max()
        assert diff < 1e-12, f"{k}: {diff}"
    assert g["x"].grad is None


def test_requires_grad_flags_and_leaves():
    x = gs.ones(2)
    assert not x.requires_grad and x.is_leaf
    assert x.requires_grad_() is x and x.requires_grad
    y = x * 2.0
    assert y.requires_grad and not y.is_leaf and y.grad_fn is not None
    with pytest.raises(RuntimeError):
        y.requires_grad = False
    with pytest.raises(TypeError):
        gs.ones(2, dtype=gs.int64).requires_grad_()


def test_retain_grad_detach_and_clone():
    x = gs.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    y.retain_grad()
    d = y.detach()
    c = y.clone()
    assert d.is_leaf and not d.requires_grad and d.storage_id() == y.storage_id()
    (c * y).sum().backward()
    assert y.grad.tolist() == [6.0, 12.0]
    assert x.grad.tolist() == [18.0, 36.0]
    x.grad = None
    assert x.grad is None


def test_no_grad_records_nothing():
    x = gs.ones(2, requires_grad=True)
    with gs.no_grad():
        assert not gs.is_grad_enabled()
        y = x * 2.0
    assert gs.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None


def test_an_in_place_write_after_a_save_is_reported_by_backward():
    x = gs.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    z = (y * y).sum()
    y.detach().add_(gs.ones(2))
    # PyTorch's words first (what people search for), then which tensor, node and write
    with pytest.raises(RuntimeError, match="has been modified by an inplace operation: .* is at "
                       "version 1; expected version 0. It was modified in place by add_"):
        z.backward()


def test_backward_with_a_gradient_and_retain_graph():
    x = gs.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.backward(gs.tensor([1.0, 0.5]), retain_graph=True)
    y.backward(gs.tensor([1.0, 0.5]))
    assert x.grad.tolist() == [4.0, 4.0]


def test_no_grad_and_enable_grad_as_decorators_and_nested():
    x = gs.tensor([1.0, 2.0], requires_grad=True)

    @gs.no_grad()
    def doubled(t):
        return t * 2

    assert not doubled(x).requires_grad and gs.is_grad_enabled()
    with gs.no_grad():
        with gs.enable_grad():
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad
    assert gs.is_grad_enabled()


def test_grad_mode_is_back_on_after_python_blocks_inside_the_engines_own():
    # gs.no_grad inside the engine's no_grad (C code, Function.apply's forward, state-dict
    # loading) used to put is_grad_enabled()'s False back into the flag on exit, leaving
    # grad mode off for the rest of the program.
    x = gs.tensor([1.0, 2.0], requires_grad=True)
    with gs._gradscope.no_grad():
        with gs.no_grad():
            pass
        with gs.enable_grad():
            pass
        with gs.inference_mode():
            pass
    assert gs.is_grad_enabled() and (x * 2).requires_grad

    class Twice(gs.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with gs.no_grad():
        Twice.apply(x)
    assert gs.is_grad_enabled() and Twice.apply(x).requires_grad


def test_set_grad_enabled_as_function_context_and_decorator():
    x = gs.tensor([1.0], requires_grad=True)
    with gs.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad
    with gs.no_grad():
        with gs.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad
    gs.set_grad_enabled(False)
    assert not gs.is_grad_enabled()
    gs.set_grad_enabled(True)
    assert gs.is_grad_enabled()


def test_format_spec_on_one_element_tensors():
    x = gs.tensor([1.25, 2.5])
    assert f"{x.sum():.2f}" == "3.75" and f"{x[0]:>6.1f}" == "   1.2"
    assert f"{x}" == repr(x)


def test_assigning_grad_shares_the_tensor_as_pytorch_does():
    x = gs.ones(2, requires_grad=True)
    g = gs.tensor([1.0, 2.0])
    x.grad = g
    g.add_(1)  # one storage: the write shows in x.grad
    assert x.grad.tolist() == [2.0, 3.0]
    (x * 3).sum().backward()  # accumulates into it in place
    assert g.tolist() == [5.0, 6.0] and x.grad.tolist() == [5.0, 6.0]
    with pytest.raises(RuntimeError, match="different size"):
        x.grad = gs.ones(3)
    x.grad = None
    assert x.grad is None and g.tolist() == [5.0, 6.0]
