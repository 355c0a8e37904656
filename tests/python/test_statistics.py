"""bincount, quantile/nanquantile (every interpolation, q a number or a tensor, dim and
keepdim, NaNs), block_diag and Tensor.unfold against Debian's torch 1.13: values, dtypes,
shapes, gradients and errors. meson registers this file only when torch imports."""
import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")

M = [[1.0, 9.0, 3.0, 4.0], [5.0, 2.0, 8.0, 6.0], [0.5, 0.25, 0.0, -1.0]]


def both(fn):
    return fn(gs), fn(torch)


def same(a, b, tol=1e-12):
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    np.testing.assert_allclose(np.asarray(a.tolist(), dtype=float),
                               np.asarray(b.tolist(), dtype=float), rtol=tol, atol=tol)


@pytest.mark.parametrize("case", [
    lambda L: L.bincount(L.tensor([0, 1, 1, 4])),
    lambda L: L.bincount(L.tensor([0, 1, 1]), weights=L.tensor([0.5, 1.0, 2.0], dtype=L.float64)),
    lambda L: L.bincount(L.tensor([1]), minlength=4),
    lambda L: L.bincount(L.tensor([], dtype=L.int64)),
    lambda L: L.tensor([2, 2, 0]).bincount(),
])
def test_bincount(case):
    same(*both(case))


def test_bincount_refuses_what_torch_refuses():
    for bad in ([-1], [[1]]):
        with pytest.raises(RuntimeError, match="1-d non-negative integral"):
            gs.bincount(gs.tensor(bad))


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_every_interpolation(interpolation):
    for make in (lambda L: L.tensor(M, dtype=L.float64).quantile(L.tensor([0.1, 0.5, 0.9], dtype=L.float64), dim=0, interpolation=interpolation),
                 lambda L: L.tensor(M, dtype=L.float64).quantile(0.4, dim=1, keepdim=True, interpolation=interpolation),
                 lambda L: L.quantile(L.tensor(M, dtype=L.float64), 0.75, interpolation=interpolation),
                 lambda L: L.quantile(L.tensor(M, dtype=L.float64), 0.3, keepdim=True, interpolation=interpolation),
                 lambda L: L.quantile(L.tensor(M, dtype=L.float64), L.tensor([0.25, 1.0], dtype=L.float64), dim=-1, keepdim=True, interpolation=interpolation)):
        same(*both(make))


def test_quantile_nans_and_gradient():
    nan = float("nan")
    rows = [[1.0, nan, 3.0], [nan, nan, nan], [2.0, 4.0, 1.0]]
    same(*both(lambda L: L.quantile(L.tensor(rows, dtype=L.float64), 0.5, dim=1)))
    same(*both(lambda L: L.nanquantile(L.tensor(rows, dtype=L.float64), 0.5, dim=1)))
    grads = []
    for L in (gs, torch):
        a = L.tensor([1.0, 3.0, 2.0, 7.0], dtype=L.float64, requires_grad=True)
        L.quantile(a, 0.3).backward()
        grads.append(a.grad)
    same(*grads)
    with pytest.raises(RuntimeError, match="range"):
        gs.quantile(gs.tensor([1.0]), 1.5)


def test_block_diag():
    same(*both(lambda L: L.block_diag(L.ones(2, 2), L.tensor([[3.0]]), L.tensor([5.0, 6.0]),
                                     L.tensor(7.0))))
    same(*both(lambda L: L.block_diag(L.tensor([1, 2]), L.tensor([[1.5]], dtype=L.float64))))
    grads = []
    for L in (gs, torch):
        a = L.ones(2, 3, requires_grad=True)
        (L.block_diag(a, L.ones(1, 1)) * L.arange(12.0).reshape(3, 4)).sum().backward()
        grads.append(a.grad)
    same(*grads)


def test_unfold_windows_are_views():
    for args in ((1, 2, 2), (0, 1, 1), (-1, 3, 1), (1, 5, 1)):
        same(*both(lambda L: L.arange(10.0).reshape(2, 5).unfold(*args)))
    grads = []
    for L in (gs, torch):
        w = L.arange(6.0, requires_grad=True)
        (w.unfold(0, 3, 2) * L.tensor([1.0, 2.0, 3.0])).sum().backward()
        grads.append(w.grad)
    same(*grads)
    x = gs.zeros(6)
    x.unfold(0, 2, 2)[1, 0] = 5.0  # a view: the write reaches x
    assert x.tolist() == [0.0, 0.0, 5.0, 0.0, 0.0, 0.0]
    with pytest.raises(RuntimeError, match="maximum size"):
        gs.zeros(3).unfold(0, 4, 1)
