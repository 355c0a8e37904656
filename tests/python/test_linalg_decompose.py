"""gradscope.linalg's SVD, QR and solvers (svd, torch.svd, qr, lstsq, pinv, matrix_rank,
cholesky_solve) against torch 1.13 run in the same test, in float64. The factors' signs are
LAPACK's choice in both, so factors are compared through what does not depend on them:
reconstructions, orthonormality, U diag(S) Vh, Q R, |R's diagonal|, and gradients of losses
that do not change when a singular vector (or a Q column with its R row) flips sign. Solvers'
values and gradients are compared to 1e-10; grad_fn names are torch's."""
import math
import types

import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(31)


def both(array):
    """The same float64 tensor in gradscope and in torch, both requiring grad."""
    g = gs.tensor(array.tolist(), dtype=gs.float64).requires_grad_()
    t = torch.tensor(array, dtype=torch.float64).requires_grad_()
    return g, t


def np_of(x):
    if isinstance(x, np.ndarray):
        return x
    return np.array(x.tolist()) if isinstance(x, gs.Tensor) else x.detach().numpy()


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(np_of(a), np_of(b), rtol=tol, atol=tol)


def assert_identity(x):
    """x (a batch of square matrices) is the identity to rounding."""
    np.testing.assert_allclose(x, np.broadcast_to(np.eye(x.shape[-1]), x.shape), atol=1e-12)


# ---- svd ------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 4, 4), (3, 2, 5, 3)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_reconstructs_and_matches_torchs_invariants(shape, full):
    a = RNG.uniform(-1, 1, shape)
    g, t = both(a)
    U, S, Vh = gs.linalg.svd(g, full_matrices=full)
    tU, tS, tVh = torch.linalg.svd(t, full_matrices=full)
    assert U.shape == tuple(tU.shape) and S.shape == tuple(tS.shape)
    assert Vh.shape == tuple(tVh.shape)
    close(S, tS)
    k = min(shape[-2:])
    u, s, vh = np_of(U), np_of(S), np_of(Vh)
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, atol=1e-12)
    assert_identity(np.swapaxes(u, -1, -2) @ u)
    assert_identity(vh @ np.swapaxes(vh, -1, -2))
    # each singular pair up to sign: u_i v_i^T is the same in both
    tu, tvh = np_of(tU), np_of(tVh)
    for i in range(k):
        np.testing.assert_allclose(u[..., :, i, None] * vh[..., None, i, :],
                                   tu[..., :, i, None] * tvh[..., None, i, :], atol=1e-10)
    for x in (U, S, Vh):
        assert x.grad_fn.name() == "LinalgSvdBackward0"


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_gradient_of_a_sign_free_loss_is_torchs(shape, full):
    """Loss: S weighted, plus |U|^2 and |Vh|^2 (so every output's share is used, and it
    does not see the vectors' signs) and the squares of the first k rows of U weighted."""
    a = RNG.uniform(-1, 1, shape)
    g, t = both(a)
    k = min(shape[-2:])
    w = np.linspace(0.5, 2.0, k)

    def loss(mod, A, wt):
        U, S, Vh = mod.linalg.svd(A, full_matrices=full)
        Uk, Vk = U[..., :k], Vh[..., :k, :]
        return ((S * wt).sum() + (Uk * Uk * wt).sum() + (Vk * Vk).sum(-1).mul(wt).sum()
                + (U[..., 0, :k] * U[..., 1, :k]).pow(2).sum())

    loss(gs, g, gs.tensor(w.tolist(), dtype=gs.float64)).backward()
    loss(torch, t, torch.tensor(w)).backward()
    close(g.grad, t.grad, 1e-9)


def test_torch_svd_returns_v_and_honours_some_and_compute_uv():
    a = RNG.uniform(-1, 1, (5, 3))
    g, t = both(a)
    r, tr = gs.svd(g), torch.svd(t)
    assert type(r).__name__ == "svd" and r._fields == ("U", "S", "V")
    assert r.V.shape == (3, 3) and r.U.shape == (5, 3)
    close(np_of(r.U) * np_of(r.S) @ np_of(r.V).T, a)
    assert r.V.grad_fn is not None and tr.V.grad_fn is not None
    full = g.svd(some=False)
    assert full.U.shape == (5, 5)
    none = gs.svd(g, compute_uv=False)
    assert not np_of(none.U).any() and none.U.shape == (5, 5) and none.V.shape == (3, 3)
    close(none.S, tr.S)


def test_svd_of_a_vector_is_torchs_error():
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        gs.linalg.svd(gs.ones(3, dtype=gs.float64))


# ---- qr -------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 3, 6, 4)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_matches_torch_up_to_signs(shape, mode):
    a = RNG.uniform(-1, 1, shape)
    g, t = both(a)
    Q, R = gs.linalg.qr(g, mode=mode)
    tQ, tR = torch.linalg.qr(t, mode=mode)
    assert Q.shape == tuple(tQ.shape) and R.shape == tuple(tR.shape)
    r = np_of(R)
    np.testing.assert_allclose(np.tril(r, -1), 0)
    close(np.abs(r), np.abs(np_of(tR)))  # LAPACK's signs in both
    if mode != "r":
        q = np_of(Q)
        np.testing.assert_allclose(q @ r, a, atol=1e-12)
        assert_identity(np.swapaxes(q, -1, -2) @ q)
        close(q, np_of(tQ))  # same LAPACK routine: the same signs
    assert R.grad_fn is None or R.grad_fn.name() == "LinalgQrBackward0"


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 4, 3)])
def test_qr_gradient_is_torchs(shape):
    a = RNG.uniform(-1, 1, shape)
    g, t = both(a)
    w = RNG.uniform(-1, 1, shape[:-2] + (min(shape[-2:]), shape[-1]))

    def loss(mod, A, wr):
        Q, R = mod.linalg.qr(A)
        return (R * wr).sum() + (Q * Q * Q).sum()

    Q, R = gs.linalg.qr(g)
    assert Q.grad_fn.name() == R.grad_fn.name() == "LinalgQrBackward0"
    loss(gs, g, gs.tensor(w.tolist(), dtype=gs.float64)).backward()
    loss(torch, t, torch.tensor(w)).backward()
    close(g.grad, t.grad)


def test_qr_bad_mode_and_vector_are_torchs_errors():
    with pytest.raises(RuntimeError, match="unrecognized mode 'x'"):
        gs.linalg.qr(gs.ones(3, 3, dtype=gs.float64), mode="x")
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        gs.linalg.qr(gs.ones(3, dtype=gs.float64))


# ---- lstsq ----------------------------------------------------------------------------------

@pytest.mark.parametrize("a_shape,b_shape", [
    ((6, 3), (6, 2)), ((6, 3), (6,)), ((2, 5, 3), (2, 5)), ((1, 5, 3), (2, 5, 4)),
    ((2, 5, 3), (2, 5, 1)), ((3, 5), (3, 2)), ((1, 5, 3), (3, 5)),
])
def test_lstsq_is_torchs(a_shape, b_shape):
    """torch 1.13's own vector case fails in backward (and, with broadcasting, forward): the
    reference for vectors is torch's matrix case with B as one column (and A expanded to the
    batch), which is what the vector case means."""
    a, b = RNG.uniform(-1, 1, a_shape), RNG.uniform(-1, 1, b_shape)
    ga, ta = both(a)
    gb, tb = both(b)
    vector = len(b_shape) == len(a_shape) - 1
    r = gs.linalg.lstsq(ga, gb)
    if vector:
        batch = torch.broadcast_shapes(a_shape[:-2], b_shape[:-1])
        tr = torch.linalg.lstsq(ta.expand(batch + a_shape[-2:]), tb.unsqueeze(-1))
        rank = tr.rank if a_shape[:-2] == batch else tr.rank[..., :1].reshape(a_shape[:-2])
        tr = types.SimpleNamespace(solution=tr.solution.squeeze(-1), residuals=tr.residuals,
                                   rank=rank, singular_values=tr.singular_values)
    else:
        tr = torch.linalg.lstsq(ta, tb)
    assert type(r).__name__ == "linalg_lstsq"
    assert r._fields == ("solution", "residuals", "rank", "singular_values")
    assert r.solution.shape == tuple(tr.solution.shape)
    close(r.solution, tr.solution)
    assert r.solution.grad_fn.name() == "LinalgLstsqBackward0"
    assert r.rank.dtype == gs.int64 and r.rank.tolist() == tr.rank.tolist()
    assert r.residuals.shape == tuple(tr.residuals.shape)
    assert r.singular_values.shape == tuple(tr.singular_values.shape)
    w = RNG.uniform(-1, 1, tuple(tr.solution.shape))
    (r.solution * gs.tensor(w.tolist(), dtype=gs.float64)).sum().backward()
    (tr.solution * torch.tensor(w)).sum().backward()
    close(ga.grad, ta.grad)
    close(gb.grad, tb.grad)


@pytest.mark.parametrize("driver", ["gels", "gelsd", "gelss"])
def test_lstsq_drivers_fill_torchs_fields(driver):
    a, b = RNG.uniform(-1, 1, (6, 3)), RNG.uniform(-1, 1, (6, 2))
    r = gs.linalg.lstsq(gs.tensor(a.tolist(), dtype=gs.float64),
                        gs.tensor(b.tolist(), dtype=gs.float64), driver=driver)
    tr = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
    for field in r._fields:
        assert getattr(r, field).shape == tuple(getattr(tr, field).shape), field
        close(getattr(r, field), getattr(tr, field))


def test_lstsq_errors_are_torchs():
    a, b = gs.ones(3, 2, dtype=gs.float64), gs.ones(4, 2, dtype=gs.float64)
    with pytest.raises(RuntimeError, match=r"input.size\(-2\) should match other.size\(-2\)"):
        gs.linalg.lstsq(a, b)
    with pytest.raises(RuntimeError, match="driver` should be one of"):
        gs.linalg.lstsq(a, a, driver="foo")
    with pytest.raises(RuntimeError, match=r"input.dim\(\) must be greater or equal"):
        gs.linalg.lstsq(gs.ones(5, 3, dtype=gs.float64), gs.ones(2, 5, 4, dtype=gs.float64))
    with pytest.raises(RuntimeError, match=r"input.size\(-2\) should match other.size\(-1\)"):
        gs.linalg.lstsq(gs.ones(2, 5, 3, dtype=gs.float64), gs.ones(2, 4, dtype=gs.float64))
    with pytest.raises(RuntimeError, match="input must have at least 2 dimensions"):
        gs.linalg.lstsq(gs.ones(3, dtype=gs.float64), gs.ones(3, dtype=gs.float64))


# ---- pinv and matrix_rank -------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_pinv_is_torchs(shape):
    a = RNG.uniform(-1, 1, shape)
    g, t = both(a)
    p, tp = gs.linalg.pinv(g), torch.linalg.pinv(t)
    close(p, tp)
    assert p.grad_fn.name() == tp.grad_fn.name() == "LinalgPinvBackward0"
    w = RNG.uniform(-1, 1, tuple(tp.shape))
    (p * gs.tensor(w.tolist(), dtype=gs.float64)).sum().backward()
    (tp * torch.tensor(w)).sum().backward()
    close(g.grad, t.grad)
    close(g.detach().pinverse(), t.detach().pinverse())


def test_pinv_and_matrix_rank_cut_small_singular_values_as_torch():
    # rank 2 in a 4 x 3, plus a tiny third direction
    a = RNG.uniform(-1, 1, (4, 2)) @ RNG.uniform(-1, 1, (2, 3))
    a = a + 1e-9 * np.outer(RNG.uniform(-1, 1, 4), RNG.uniform(-1, 1, 3))
    ga, ta = gs.tensor(a.tolist(), dtype=gs.float64), torch.tensor(a)
    for kw in ({}, {"atol": 1e-6}, {"rtol": 1e-6}, {"atol": 1e-12, "rtol": 0.0},
               {"hermitian": False}):
        close(gs.linalg.pinv(ga, **kw), torch.linalg.pinv(ta, **kw), 1e-8)
        assert gs.linalg.matrix_rank(ga, **kw).tolist() == torch.linalg.matrix_rank(ta, **kw).item()
    batch = RNG.uniform(-1, 1, (3, 4, 4))
    batch[1, 3] = batch[1, 2]  # a singular one
    r = gs.linalg.matrix_rank(gs.tensor(batch.tolist(), dtype=gs.float64))
    assert r.dtype == gs.int64
    assert r.tolist() == torch.linalg.matrix_rank(torch.tensor(batch)).tolist()
    sym = batch[0] + batch[0].T
    assert (gs.linalg.matrix_rank(gs.tensor(sym.tolist(), dtype=gs.float64), hermitian=True)
            .tolist() == torch.linalg.matrix_rank(torch.tensor(sym), hermitian=True).item())


def test_pinv_and_matrix_rank_of_a_vector_are_errors():
    with pytest.raises(RuntimeError, match="2 or more dimensions"):
        gs.linalg.pinv(gs.ones(3, dtype=gs.float64))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        gs.linalg.matrix_rank(gs.ones(3, dtype=gs.float64))


# ---- cholesky_solve -------------------------------------------------------------------------

@pytest.mark.parametrize("b_shape,l_shape,upper", [
    ((3, 2), (3, 3), False), ((3, 2), (3, 3), True), ((2, 3, 4), (3, 3), False),
    ((3, 1), (2, 3, 3), True), ((3, 3), (3, 3, 3), False),
])
def test_cholesky_solve_is_torchs(b_shape, l_shape, upper):
    x = RNG.uniform(-1, 1, l_shape)
    spd = x @ np.swapaxes(x, -1, -2) + 3 * np.eye(3)
    factor = np.linalg.cholesky(spd)
    if upper:
        factor = np.swapaxes(factor, -1, -2)
    gb, tb = both(RNG.uniform(-1, 1, b_shape))
    gl, tl = both(factor)
    out, tout = gs.cholesky_solve(gb, gl, upper=upper), torch.cholesky_solve(tb, tl, upper=upper)
    close(out, tout)
    assert out.grad_fn.name() == tout.grad_fn.name() == "CholeskySolveBackward0"
    w = RNG.uniform(-1, 1, tuple(tout.shape))
    (out * gs.tensor(w.tolist(), dtype=gs.float64)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    close(gb.grad, tb.grad)
    close(gl.grad, tl.grad)
    close(gb.detach().cholesky_solve(gl.detach(), upper), tout)


def test_cholesky_solve_errors_are_torchs():
    eye = gs.eye(3, dtype=gs.float64)
    with pytest.raises(RuntimeError, match="b should have at least 2 dimensions, but has 1"):
        gs.cholesky_solve(gs.ones(3, dtype=gs.float64), eye)
    with pytest.raises(RuntimeError, match="u should have at least 2 dimensions"):
        gs.cholesky_solve(gs.ones(3, 2, dtype=gs.float64), gs.ones(3, dtype=gs.float64))
    with pytest.raises(RuntimeError, match="each A matrix is 3 by 3 but each b matrix is 2 by 2"):
        gs.cholesky_solve(gs.ones(2, 2, dtype=gs.float64), eye)
    with pytest.raises((RuntimeError, TypeError), match="same"):
        gs.cholesky_solve(gs.ones(3, 2), eye)


def test_float32_factorisations_run():
    a = RNG.uniform(-1, 1, (4, 3))
    g = gs.tensor(a.tolist(), dtype=gs.float32)
    U, S, Vh = gs.linalg.svd(g, full_matrices=False)
    np.testing.assert_allclose((np_of(U) * np_of(S)) @ np_of(Vh), a, atol=1e-5)
    Q, R = gs.linalg.qr(g)
    np.testing.assert_allclose(np_of(Q) @ np_of(R), a, atol=1e-5)
    np.testing.assert_allclose(np_of(gs.linalg.pinv(g)), np.linalg.pinv(a), atol=1e-5)
    assert not math.isnan(gs.linalg.lstsq(g, g[:, :1]).solution.sum().item())
