"""linalg.matrix_exp, solve_triangular, cond, vecdot, cross, diagonal, vander, tensorinv,
tensorsolve and torch.gradient against torch 1.13 in the same test, in float64: values and
gradients of a random loss, and each one's gradient against finite differences
(gs.autograd.gradcheck). Errors say what was expected, as torch's."""
import math

import numpy as np
import pytest

import gradscope as gs
import gradscope.linalg as L

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(47)


def both(array):
    g = gs.tensor(np.asarray(array).tolist(), dtype=gs.float64).requires_grad_()
    t = torch.tensor(np.asarray(array), dtype=torch.float64).requires_grad_()
    return g, t


def np_of(x):
    return np.array(x.tolist()) if isinstance(x, gs.Tensor) else x.detach().numpy()


def close(a, b, tol):
    """a and b equal to tol relative to b's largest magnitude (exp's values grow fast)."""
    b = np_of(b)
    np.testing.assert_allclose(np_of(a), b, rtol=0, atol=tol * max(1.0, np.abs(b).max()))


def same(fn_gs, fn_torch, *arrays, tol=1e-12):
    """fn on the arrays in both: equal values, and equal gradients of a random weighting."""
    pairs = [both(a) for a in arrays]
    out_g, out_t = fn_gs(*[g for g, _ in pairs]), fn_torch(*[t for _, t in pairs])
    if not isinstance(out_g, tuple):
        out_g, out_t = (out_g,), (out_t,)
    assert len(out_g) == len(out_t)
    loss_g, loss_t = 0, 0
    for a, b in zip(out_g, out_t):
        close(a, b, tol)
        w = RNG.standard_normal(tuple(b.shape))
        loss_g = loss_g + (a * gs.tensor(w.tolist(), dtype=gs.float64)).sum()
        loss_t = loss_t + (b * torch.tensor(w)).sum()
    loss_g.backward()
    loss_t.backward()
    for (g, t) in pairs:
        close(g.grad, t.grad, tol)
    assert gs.autograd.gradcheck(fn_gs, tuple(g.detach().requires_grad_() for g, _ in pairs))


@pytest.mark.parametrize("scale", [0.1, 1.0, 7.0])
def test_matrix_exp(scale):
    A = RNG.standard_normal((3, 4, 4)) * scale
    same(L.matrix_exp, torch.linalg.matrix_exp, A, tol=1e-13)
    x = gs.tensor([[0.0, 1.0], [-1.0, 0.0]], dtype=gs.float64)
    rot = gs.matrix_exp(x * (math.pi / 2))  # a quarter turn
    np.testing.assert_allclose(np_of(rot), [[0, 1], [-1, 0]], atol=1e-15)
    assert gs.equal(x.matrix_exp(), L.matrix_exp(x))
    with pytest.raises(RuntimeError, match="square matrices"):
        L.matrix_exp(gs.zeros(2, 3))


@pytest.mark.parametrize("upper,left,unit", [(True, True, False), (False, True, True),
                                             (False, False, False), (True, False, True)])
def test_solve_triangular(upper, left, unit):
    A = RNG.standard_normal((2, 4, 4)) + 4 * np.eye(4)
    B = RNG.standard_normal((2, 4, 3) if left else (2, 3, 4))
    same(lambda a, b: L.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit),
         lambda a, b: torch.linalg.solve_triangular(a, b, upper=upper, left=left,
                                                    unitriangular=unit), A, B, tol=1e-11)


@pytest.mark.parametrize("p", [None, 2, -2])
def test_cond_of_singular_values(p):
    A = RNG.standard_normal((3, 3, 3)) + 2 * np.eye(3)
    same(lambda a: L.cond(a, p), lambda a: torch.linalg.cond(a, p), A, tol=1e-10)


@pytest.mark.parametrize("p", ["fro", "nuc", 1, -1, math.inf, -math.inf])
def test_cond_of_a_matrix_norm(p):
    """Values as torch's; torch 1.13 cannot differentiate these (its inverse's output is
    changed in place: "modified by an inplace operation"), so the gradient is checked against
    finite differences only."""
    A = RNG.standard_normal((3, 3, 3)) + 2 * np.eye(3)
    g, t = both(A)
    np.testing.assert_allclose(np_of(L.cond(g, p)), torch.linalg.cond(t.detach(), p).numpy(),
                               rtol=1e-10)
    assert gs.autograd.gradcheck(lambda a: L.cond(a, p), (g,))


def test_vecdot_cross_diagonal_vander():
    x, y = RNG.standard_normal((2, 5, 3)), RNG.standard_normal((5, 3))
    same(lambda a, b: L.vecdot(a, b), lambda a, b: torch.linalg.vecdot(a, b), x, y)
    same(lambda a, b: L.vecdot(a, b, dim=-2), lambda a, b: torch.linalg.vecdot(a, b, dim=-2), x, y)
    # (torch 1.13 wants the same number of dims: [1, 5, 3] broadcast against [2, 5, 3])
    same(lambda a, b: L.cross(a, b), lambda a, b: torch.linalg.cross(a, b), x, y[None])
    m = RNG.standard_normal((2, 4, 5))
    same(lambda a: L.diagonal(a, offset=1), lambda a: torch.linalg.diagonal(a, offset=1), m)
    v = RNG.standard_normal((2, 4))
    same(lambda a: L.vander(a), lambda a: torch.linalg.vander(a), v)
    same(lambda a: L.vander(a, N=6), lambda a: torch.linalg.vander(a, N=6), v)


def test_tensorinv_tensorsolve():
    A = RNG.standard_normal((4, 6, 8, 3)) + 0.0
    A = A + 3 * np.eye(24).reshape(4, 6, 8, 3)
    same(lambda a: L.tensorinv(a, ind=2), lambda a: torch.linalg.tensorinv(a, ind=2), A,
         tol=1e-10)
    A2 = RNG.standard_normal((2, 3, 6)) + 3 * np.eye(6).reshape(2, 3, 6)
    B2 = RNG.standard_normal((2, 3))
    same(L.tensorsolve, torch.linalg.tensorsolve, A2, B2, tol=1e-10)
    A3 = RNG.standard_normal((6, 2, 3)) + 3 * np.eye(6).reshape(6, 2, 3)
    same(lambda a, b: L.tensorsolve(a, b, dims=(0,)),
         lambda a, b: torch.linalg.tensorsolve(a, b, dims=(0,)), A3, B2, tol=1e-10)
    with pytest.raises(RuntimeError, match="product of the first 2 dims"):
        L.tensorinv(gs.zeros(2, 3, 4))


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient(edge_order):
    f = RNG.standard_normal((5, 6))
    same(lambda a: gs.gradient(a, edge_order=edge_order),
         lambda a: torch.gradient(a, edge_order=edge_order), f)
    same(lambda a: gs.gradient(a, spacing=[0.5, 2.0], edge_order=edge_order),
         lambda a: torch.gradient(a, spacing=[0.5, 2.0], edge_order=edge_order), f)
    same(lambda a: gs.gradient(a, dim=1, spacing=0.25, edge_order=edge_order),
         lambda a: torch.gradient(a, dim=1, spacing=0.25, edge_order=edge_order), f)
    xs = np.cumsum(RNG.uniform(0.2, 1.0, 6))
    same(lambda a: gs.gradient(a, spacing=[gs.tensor(xs.tolist(), dtype=gs.float64)], dim=1,
                               edge_order=edge_order),
         lambda a: torch.gradient(a, spacing=[torch.tensor(xs)], dim=1, edge_order=edge_order),
         f)
    # the samples of a quadratic: second-order differences are exact, inside and (order 2) at
    # the edges
    x = gs.linspace(0, 2, 9, dtype=gs.float64)
    (d,) = gs.gradient(x * x, spacing=0.25, edge_order=2)
    np.testing.assert_allclose(np_of(d), np_of(2 * x), atol=1e-13)
    with pytest.raises(RuntimeError, match="at least edge_order\\+1"):
        gs.gradient(gs.zeros(2), edge_order=2)
    with pytest.raises(ValueError, match="edge_order=1 and edge_order=2"):
        gs.gradient(gs.zeros(4), edge_order=3)
