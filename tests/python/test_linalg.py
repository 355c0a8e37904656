"""gradscope.linalg (torch.linalg's norms, solve, inv, det, slogdet) against torch 1.13 run in
the same test, in float64: values and gradients to 1e-10, grad_fn names, batching and
broadcasting, and the errors for singular matrices and shapes that do not fit."""
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)


def data(*shape, shift=0.0):
    """Random values in [-1, 1), plus shift times the identity on the last two dims when
    shift is given: a well-conditioned square matrix (or batch of them)."""
    a = RNG.uniform(-1, 1, shape)
    if shift:
        a = a + shift * np.eye(shape[-1])
    return a


def both(array):
    """The same float64 tensor in gradscope and in torch, both requiring grad."""
    g = gs.tensor(array.tolist(), dtype=gs.float64).requires_grad_()
    t = torch.tensor(array, dtype=torch.float64).requires_grad_()
    return g, t


def check(g_out, t_out, inputs, name=True):
    """Same values and grad_fn name (but torch's amax and amin, which end matrix_norm's
    ord +-1 and +-inf, are gradscope's max and min, named MaxBackward0/1 and MinBackward0/1);
    then the same gradients of a weighted sum."""
    np.testing.assert_allclose(np.array(g_out.tolist()), t_out.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    if name:
        expected = t_out.grad_fn.name()
        if expected in ("AmaxBackward0", "AminBackward0"):
            expected = ("MaxBackward", "MinBackward")[expected == "AminBackward0"]
            assert g_out.grad_fn.name()[:-1] == expected
        else:
            assert g_out.grad_fn.name() == expected
    w = np.arange(1.0, t_out.numel() + 1).reshape(tuple(t_out.shape)) / t_out.numel()
    (g_out * gs.tensor(w.tolist(), dtype=gs.float64)).sum().backward()
    (t_out * torch.tensor(w)).sum().backward()
    for g_in, t_in in inputs:
        np.testing.assert_allclose(np.array(g_in.grad.tolist()), t_in.grad.numpy(), rtol=1e-10,
                                   atol=1e-12)


@pytest.mark.parametrize("ord,dim,keepdim", [
    (2, None, False), (1, 1, False), (3, (0, 2), True), (math.inf, -1, False),
    (-math.inf, None, False), (0.5, 2, True),
])
def test_vector_norm_is_torchs(ord, dim, keepdim):
    g, t = both(data(2, 3, 4, shift=0.0) + 0.1)
    check(gs.linalg.vector_norm(g, ord, dim, keepdim), torch.linalg.vector_norm(t, ord, dim, keepdim),
          [(g, t)])


@pytest.mark.parametrize("ord,dim,keepdim", [
    ("fro", (-2, -1), False), (1, (-2, -1), False), (-1, (1, 2), True),
    (math.inf, (-2, -1), False), (-math.inf, (2, 0), False),
])
def test_matrix_norm_is_torchs(ord, dim, keepdim):
    g, t = both(data(2, 3, 4))
    check(gs.linalg.matrix_norm(g, ord, dim, keepdim),
          torch.linalg.matrix_norm(t, ord, dim, keepdim), [(g, t)])


@pytest.mark.parametrize("shape,ord,dim", [
    ((5,), None, None), ((2, 3, 4), None, None), ((3, 4), None, None), ((5,), 3, None),
    ((3, 4), "fro", None), ((3, 4), 1, None), ((3, 4), math.inf, None), ((2, 3, 4), None, (0, 2)),
    ((2, 3, 4), 1, 1), ((2, 3, 4), -1, (1, 2)),
])
def test_norm_dispatches_as_torch(shape, ord, dim):
    g, t = both(data(*shape))
    check(gs.linalg.norm(g, ord, dim), torch.linalg.norm(t, ord, dim), [(g, t)])


@pytest.mark.parametrize("ord,dim,keepdim", [
    ("nuc", (-2, -1), False), (2, (-2, -1), False), (-2, (1, 2), False), ("nuc", (2, 0), True),
])
def test_singular_value_norms_are_torchs(ord, dim, keepdim):
    g, t = both(data(2, 3, 4))
    check(gs.linalg.matrix_norm(g, ord, dim, keepdim),
          torch.linalg.matrix_norm(t, ord, dim, keepdim), [(g, t)], name=not keepdim)


@pytest.mark.parametrize("shape,upper", [((4, 4), False), ((2, 3, 3), False), ((3, 3), True)])
def test_cholesky_is_torchs(shape, upper):
    x = data(*shape)
    g, t = both(x @ np.swapaxes(x, -1, -2) + 2.0 * np.eye(shape[-1]))
    check(gs.linalg.cholesky(g, upper=upper), torch.linalg.cholesky(t, upper=upper), [(g, t)],
          name=not upper)


@pytest.mark.parametrize("shape,uplo", [((4, 4), "L"), ((2, 3, 3), "L"), ((3, 3), "U")])
def test_eigvalsh_is_torchs(shape, uplo):
    x = data(*shape)
    g, t = both(x + np.swapaxes(x, -1, -2))
    check(gs.linalg.eigvalsh(g, uplo), torch.linalg.eigvalsh(t, uplo), [(g, t)],
          name=uplo == "L")


@pytest.mark.parametrize("shape,uplo", [((4, 4), "L"), ((2, 3, 3), "L"), ((3, 3), "U")])
def test_eigh_is_torchs(shape, uplo):
    """Values, and gradients through both outputs by a loss their signs do not change."""
    x = data(*shape)
    g, t = both(x + np.swapaxes(x, -1, -2))
    gr, tr = gs.linalg.eigh(g, uplo), torch.linalg.eigh(t, uplo)
    np.testing.assert_allclose(np.array(gr.eigenvalues.tolist()), tr.eigenvalues.detach().numpy(),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.abs(np.array(gr.eigenvectors.tolist())),
                               np.abs(tr.eigenvectors.detach().numpy()), rtol=1e-10, atol=1e-12)
    if uplo == "L":
        assert gr.eigenvectors.grad_fn.name() == tr.eigenvectors.grad_fn.name()
        assert gr.eigenvalues.grad_fn.name() == tr.eigenvalues.grad_fn.name()
    weights = np.arange(1.0, 1 + np.prod(shape)).reshape(shape)
    g_loss = (gr.eigenvectors * gr.eigenvectors * gs.tensor(weights.tolist(), dtype=gs.float64)).sum()
    t_loss = (tr.eigenvectors * tr.eigenvectors * torch.tensor(weights)).sum()
    (g_loss + (gr.eigenvalues * 3).sum()).backward()
    (t_loss + (tr.eigenvalues * 3).sum()).backward()
    np.testing.assert_allclose(np.array(g.grad.tolist()), t.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3)])
def test_svdvals_is_torchs(shape):
    g, t = both(data(*shape))
    check(gs.linalg.svdvals(g), torch.linalg.svdvals(t), [(g, t)])


def test_cholesky_of_a_matrix_that_is_not_positive_definite():
    a = gs.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=gs.float64)
    with pytest.raises(gs.linalg.LinAlgError,
                       match="linalg.cholesky: expected a positive-definite matrix, got one "
                             "whose leading minor of order 2 is not positive-definite"):
        gs.linalg.cholesky(a)


@pytest.mark.parametrize("a_shape,b_shape", [
    ((4, 4), (4, 2)), ((4, 4), (4,)), ((2, 4, 4), (2, 4)), ((2, 4, 4), (4, 3)),
    ((4, 4), (3, 4, 2)), ((3, 1, 4, 4), (2, 4, 1)), ((2, 4, 4), (4,)),
])
def test_solve_is_torchs(a_shape, b_shape):
    (ga, ta), (gb, tb) = both(data(*a_shape, shift=3.0)), both(data(*b_shape))
    check(gs.linalg.solve(ga, gb), torch.linalg.solve(ta, tb), [(ga, ta), (gb, tb)])


def test_solve_on_the_right_is_torchs():
    (ga, ta), (gb, tb) = both(data(4, 4, shift=3.0)), both(data(2, 4))
    check(gs.linalg.solve(ga, gb, left=False), torch.linalg.solve(ta, tb, left=False),
          [(ga, ta), (gb, tb)], name=False)


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (1, 1)])
def test_inv_is_torchs(shape):
    g, t = both(data(*shape, shift=2.5))
    check(gs.linalg.inv(g), torch.linalg.inv(t), [(g, t)])


@pytest.mark.parametrize("shape,shift", [((4, 4), 2.5), ((2, 3, 3), -2.5), ((5, 5), 0.0)])
def test_det_is_torchs(shape, shift):
    g, t = both(data(*shape, shift=shift))
    check(gs.linalg.det(g), torch.linalg.det(t), [(g, t)])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_det_has_torchs_exact_bits(dtype):
    # torch factors the row-major buffer as it is (LAPACK sees A^T) and multiplies U's diagonal
    # in the tensor's dtype: det([[1, 2], [3, 4]]) prints -2. in float32, not -1.9999999
    gen = torch.Generator().manual_seed(7)
    cases = [torch.tensor([[1.0, 2.0], [3.0, 4.0]])]
    cases += [torch.randn(2, n, n, generator=gen) for n in (1, 2, 3, 5, 8, 17, 40)]
    for t in cases:
        t = t.to(getattr(torch, dtype))
        g = gs.tensor(t.tolist(), dtype=getattr(gs, dtype))
        assert gs.det(g).tolist() == torch.det(t).tolist()
        assert gs.linalg.slogdet(g).sign.tolist() == torch.linalg.slogdet(t).sign.tolist()


@pytest.mark.parametrize("shape,shift", [((4, 4), 2.5), ((2, 3, 3), -2.5), ((2, 2, 5, 5), 0.0)])
def test_slogdet_is_torchs(shape, shift):
    g, t = both(data(*shape, shift=shift))
    gr, tr = gs.linalg.slogdet(g), torch.linalg.slogdet(t)
    np.testing.assert_array_equal(np.array(gr.sign.tolist()), tr.sign.detach().numpy())
    check(gr.logabsdet, tr.logabsdet, [(g, t)])


def test_torch_level_names_are_torchs():
    x = data(3, 3, shift=-2.0)
    for name in ("det", "inverse", "logdet"):
        g, t = both(x)
        check(getattr(gs, name)(g), getattr(torch, name)(t), [(g, t)])
        g, t = both(x)
        check(getattr(g, name)(), getattr(t, name)(), [(g, t)])
    g, t = both(x @ x.T + np.eye(3))
    check(gs.logdet(g), torch.logdet(t), [(g, t)])
    g, t = both(x)
    check(g.slogdet()[1], t.slogdet()[1], [(g, t)])
    assert gs.slogdet(g).sign.item() == torch.slogdet(t).sign.item()


def test_determinants_of_singular_matrices():
    z = [[1.0, 2.0], [2.0, 4.0]]
    assert gs.linalg.det(gs.tensor(z, dtype=gs.float64)).item() == 0.0
    sign, logabsdet = gs.linalg.slogdet(gs.tensor(z, dtype=gs.float64))
    assert sign.item() == 0.0 and logabsdet.item() == -math.inf
    assert gs.linalg.det(gs.zeros(0, 0, dtype=gs.float64)).item() == 1.0


def test_float32_follows_torch():
    a = data(3, 3, shift=2.0)
    g, t = gs.tensor(a.tolist(), dtype=gs.float32), torch.tensor(a, dtype=torch.float32)
    for fn in ("inv", "det"):
        out = getattr(gs.linalg, fn)(g)
        assert out.dtype == gs.float32
        np.testing.assert_allclose(np.array(out.tolist()), getattr(torch.linalg, fn)(t).numpy(),
                                   rtol=1e-5)


def test_the_double_backward_of_inv_is_torchs():
    g, t = both(data(3, 3, shift=2.5))
    (gg,) = gs.autograd.grad(gs.linalg.inv(g).sum(), [g], create_graph=True)
    (tg,) = torch.autograd.grad(torch.linalg.inv(t).sum(), [t], create_graph=True)
    check(gg, tg, [(g, t)], name=False)


def test_singular_matrices_raise_linalg_error():
    z = gs.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=gs.float64)
    assert issubclass(gs.linalg.LinAlgError, RuntimeError)
    with pytest.raises(gs.linalg.LinAlgError, match="linalg.solve: expected an invertible matrix, got a singular one"):
        gs.linalg.solve(z, gs.ones(2, dtype=gs.float64))
    with pytest.raises(gs.linalg.LinAlgError, match=r"linalg.inv: .*\(batch element 1\)"):
        gs.linalg.inv(gs.stack([gs.eye(2, dtype=gs.float64), z]))


def test_shapes_that_do_not_fit_say_what_was_expected():
    a = gs.eye(3, dtype=gs.float64)
    with pytest.raises(RuntimeError, match=r"expected B with 3 rows \(A is 3x3\), got B of 4x1"):
        gs.linalg.solve(a, gs.ones(4, dtype=gs.float64))
    with pytest.raises(RuntimeError, match="square matrices, but they are 3 by 4 matrices"):
        gs.linalg.det(gs.ones(3, 4, dtype=gs.float64))
    with pytest.raises(RuntimeError, match="2 or more dims"):
        gs.linalg.inv(gs.ones(3, dtype=gs.float64))
    with pytest.raises(RuntimeError, match="batch dims that broadcast"):
        gs.linalg.solve(gs.ones(2, 3, 3, dtype=gs.float64), gs.ones(4, 3, 1, dtype=gs.float64))
    with pytest.raises(TypeError, match="same floating dtype"):
        gs.linalg.solve(a, gs.ones(3, dtype=gs.float32))
    with pytest.raises(TypeError, match="floating"):
        gs.linalg.det(gs.ones(3, 3, dtype=gs.int64))


def test_torch_linalg_is_gradscope_linalg_under_as_torch(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("import torch, torch.linalg, gradscope\n"
                      "from torch.linalg import solve\n"
                      "assert torch.linalg is torch.linalg and solve is gradscope.linalg.solve\n"
                      "assert torch.linalg.LinAlgError is gradscope.linalg.LinAlgError\n"
                      "print(torch.linalg.det(torch.eye(3) * 2).item())\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(gs.__file__)))
    r = subprocess.run([sys.executable, "-m", "gradscope.as_torch", str(script)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "8.0\n"
