"""searchsorted, bucketize, mode, kthvalue, cartesian_prod, combinations and tril/triu_indices
against torch 1.13: the same indices (ties and NaNs included), values, dtypes, gradients and
error messages. meson registers this file only where torch is installed."""
import numpy as np
import pytest
import torch

import gradscope as gs


def both(a, dtype=np.float64):
    a = np.asarray(a, dtype=dtype)
    return gs.tensor(a), torch.tensor(a)


def same(g, t):
    assert tuple(g.shape) == tuple(t.shape)
    assert str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_array_equal(g.detach().numpy(), t.detach().numpy())


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_random_against_torch(right):
    rng = np.random.default_rng(7)
    for trial in range(200):
        n = int(rng.integers(1, 9))
        bounds = np.sort(rng.integers(0, 6, size=n)).astype(np.float64)
        if trial % 5 == 0:
            bounds[-1] = np.nan  # torch's search never stops at a NaN bound
        values = rng.integers(-1, 8, size=(int(rng.integers(1, 4)), 5)).astype(np.float64)
        if trial % 7 == 0:
            values[0, 0] = np.nan
        gb, tb = both(bounds)
        gv, tv = both(values)
        same(gs.searchsorted(gb, gv, right=right), torch.searchsorted(tb, tv, right=right))
        side = "right" if right else "left"
        same(gs.searchsorted(gb, gv, side=side), torch.searchsorted(tb, tv, side=side))


def test_searchsorted_batched_sorter_scalar_and_int32():
    gb, tb = both([[1, 3, 5, 7], [2, 4, 6, 8]])
    gv, tv = both([[3, 6, 9], [3, 6, 9]])
    same(gs.searchsorted(gb, gv), torch.searchsorted(tb, tv))
    same(gs.searchsorted(gb, gv, out_int32=True), torch.searchsorted(tb, tv, out_int32=True))
    g1, t1 = both([1, 3, 5, 7])
    same(gs.searchsorted(g1, 5, side="right"), torch.searchsorted(t1, 5, side="right"))
    gu, tu = both([5, 1, 3])
    order = [1, 2, 0]
    same(gs.searchsorted(gu, gs.tensor([2.0, 4.0]), sorter=gs.tensor(order)),
         torch.searchsorted(tu, torch.tensor([2.0, 4.0]), sorter=torch.tensor(order)))
    gi, ti = both([1, 3], dtype=np.int64)  # integer bounds, float values
    same(gs.searchsorted(gi, gs.tensor([1.0, 2.0])), torch.searchsorted(ti, torch.tensor([1.0, 2.0])))


def test_bucketize_against_torch():
    gb, tb = both([1, 3, 5, 7, 9], dtype=np.int64)
    gv, tv = both([[1, 5, 9], [0, 4, 10]], dtype=np.int64)
    for right in (False, True):
        same(gs.bucketize(gv, gb, right=right), torch.bucketize(tv, tb, right=right))
    same(gs.bucketize(3, gb), torch.bucketize(3, tb))


def errors(call_g, call_t):
    with pytest.raises(Exception) as gerr:
        call_g()
    with pytest.raises(Exception) as terr:
        call_t()
    assert type(gerr.value) is type(terr.value)
    assert str(gerr.value) == str(terr.value)


def test_search_errors_are_torchs():
    errors(lambda: gs.searchsorted(gs.tensor([[1.0, 3.0]]), gs.tensor([1.0, 2.0])),
           lambda: torch.searchsorted(torch.tensor([[1.0, 3.0]]), torch.tensor([1.0, 2.0])))
    errors(lambda: gs.searchsorted(gs.tensor([1.0, 3.0]), gs.tensor([1.0]), right=True, side="left"),
           lambda: torch.searchsorted(torch.tensor([1.0, 3.0]), torch.tensor([1.0]), right=True, side="left"))
    errors(lambda: gs.bucketize(gs.tensor([1.0]), gs.tensor([[1.0]])),
           lambda: torch.bucketize(torch.tensor([1.0]), torch.tensor([[1.0]])))


def test_mode_against_torch():
    rng = np.random.default_rng(3)
    for trial in range(100):
        shape = tuple(int(s) for s in rng.integers(1, 5, size=int(rng.integers(1, 4))))
        a = rng.integers(0, 4, size=shape).astype(np.float64)  # rows of <= 16: torch's ties are exact
        dim = int(rng.integers(-len(shape), len(shape)))
        keep = bool(trial % 2)
        g, t = both(a)
        gm, tm = gs.mode(g, dim, keep), torch.mode(t, dim, keep)
        same(gm.values, tm.values)
        same(gm.indices, tm.indices)
    g, t = both([[1, 2, 2, 3, 3, 0], [5, 5, 1, 1, 1, 5]])
    same(g.mode().indices, t.mode().indices)
    same(gs.mode(gs.tensor(3.0)).values, torch.mode(torch.tensor(3.0)).values)
    errors(lambda: gs.mode(gs.tensor([]), 0), lambda: torch.mode(torch.tensor([]), 0))


def test_kthvalue_follows_torchs_quickselect_on_ties():
    rng = np.random.default_rng(11)
    for trial in range(300):
        shape = tuple(int(s) for s in rng.integers(1, 7, size=int(rng.integers(1, 4))))
        a = rng.integers(0, 3 if trial % 2 else 50, size=shape).astype(np.float64)
        if trial % 9 == 0:
            a.reshape(-1)[0] = np.nan
        dim = int(rng.integers(-len(shape), len(shape)))
        k = int(rng.integers(1, shape[dim] + 1))
        g, t = both(a)
        gk, tk = gs.kthvalue(g, k, dim, trial % 3 == 0), torch.kthvalue(t, k, dim, trial % 3 == 0)
        np.testing.assert_array_equal(gk.values.numpy(), tk.values.numpy())
        same(gk.indices, tk.indices)
    errors(lambda: gs.kthvalue(gs.tensor([1.0]), 0), lambda: torch.kthvalue(torch.tensor([1.0]), 0))


def test_mode_and_kthvalue_gradients_reach_the_chosen_elements():
    a = np.array([[3.0, 1, 1, 3, 2], [0, 7, 7, 1, 1]])
    g = gs.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    w = np.array([2.0, -3.0])
    (gs.kthvalue(g, 3).values * gs.tensor(w)).sum().backward()
    (torch.kthvalue(t, 3).values * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(g.grad.numpy(), t.grad.numpy())
    g.grad, t.grad = None, None
    (gs.mode(g, 1, True).values * 5).sum().backward()
    (torch.mode(t, 1, True).values * 5).sum().backward()
    np.testing.assert_array_equal(g.grad.numpy(), t.grad.numpy())


def test_cartesian_prod_and_combinations_against_torch():
    gx, tx = both([1.0, 2.0])
    gy, ty = both([3.0, 4.0, 5.0])
    same(gs.cartesian_prod(gx, gy), torch.cartesian_prod(tx, ty))
    same(gs.cartesian_prod(gx), torch.cartesian_prod(tx))
    gz, tz = both([1, 2, 3, 4], dtype=np.int64)
    for r in range(0, 5):
        for rep in (False, True):
            same(gs.combinations(gz, r, rep), torch.combinations(tz, r, rep))
    errors(lambda: gs.cartesian_prod(gs.tensor([[1.0]])), lambda: torch.cartesian_prod(torch.tensor([[1.0]])))
    g = gs.tensor([1.0, 2.0], requires_grad=True)
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    h = gs.tensor([3.0, 4.0, 5.0], requires_grad=True)
    u = torch.tensor([3.0, 4.0, 5.0], requires_grad=True)
    (gs.cartesian_prod(g, h) ** 2).sum().backward()
    (torch.cartesian_prod(t, u) ** 2).sum().backward()
    np.testing.assert_array_equal(g.grad.numpy(), t.grad.numpy())
    np.testing.assert_array_equal(h.grad.numpy(), u.grad.numpy())
    (gs.combinations(g * 1, 2, True).prod(1)).sum().backward()
    (torch.combinations(t * 1, 2, True).prod(1)).sum().backward()
    np.testing.assert_array_equal(g.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("row,col,offset", [(3, 4, 1), (3, 3, -1), (4, 2, 0), (0, 3, 0), (5, 5, 9), (2, 6, -4)])
def test_triangle_indices_against_torch(row, col, offset):
    same(gs.tril_indices(row, col, offset), torch.tril_indices(row, col, offset))
    same(gs.triu_indices(row, col, offset), torch.triu_indices(row, col, offset))
