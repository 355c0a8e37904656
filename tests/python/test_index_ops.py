"""The index-writing and order ops (scatter, scatter_add, index_add, index_fill, take,
take_along_dim, prod, cumprod, median, cummax, cummin, unique, cross, trace) against torch 1.13
run in the same test: values, dtypes, gradients, grad_fn names, and the errors for bad
arguments."""
import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")

X = [[1.0, 2.0, 0.0, 4.0], [3.0, -1.0, 2.0, 5.0], [0.5, 2.0, 3.0, -2.0]]
ROWS = [[0, 1, 2, 0], [2, 0, 1, 1]]


def both(data, dtype="float64", grad=True):
    """The same tensor in gradscope and in torch (floating ones requiring grad)."""
    g = gs.tensor(data, dtype=getattr(gs, dtype))
    t = torch.tensor(data, dtype=getattr(torch, dtype))
    if grad:
        g.requires_grad_(), t.requires_grad_()
    return g, t


def index(data):
    return gs.tensor(data), torch.tensor(data)


def check(g_out, t_out, inputs=()):
    """Same values, dtype and grad_fn name; then the same gradients of a weighted sum."""
    assert str(g_out.dtype) == str(t_out.dtype).replace("torch.", "gradscope.")
    np.testing.assert_allclose(np.array(g_out.tolist()), np.array(t_out.tolist()), rtol=1e-12)
    if not inputs:
        return
    assert g_out.grad_fn.name() == t_out.grad_fn.name()
    w = np.arange(1.0, t_out.numel() + 1).reshape(tuple(t_out.shape))
    (g_out * gs.tensor(w.tolist(), dtype=gs.float64)).sum().backward()
    (t_out * torch.tensor(w)).sum().backward()
    for g_in, t_in in inputs:
        np.testing.assert_allclose(np.array(g_in.grad.tolist()), t_in.grad.numpy(), rtol=1e-10,
                                   atol=1e-12)


def test_scatter_forms_are_torchs():
    (gx, tx), (gs_, ts) = both(X), both([[1.0, 2, 3, 4], [5, 6, 7, 8]])
    gi, ti = index(ROWS)
    check(gx.scatter(0, gi, gs_), tx.scatter(0, ti, ts), [(gx, tx), (gs_, ts)])
    (gx, tx) = both(X)
    check(gx.scatter(0, gi, 2.5), tx.scatter(0, ti, 2.5), [(gx, tx)])
    (gx, tx), (gs_, ts) = both(X), both([[1.0, 2, 3, 4], [5, 6, 7, 8]])
    check(gx.scatter_add(0, gi, gs_), tx.scatter_add(0, ti, ts), [(gx, tx), (gs_, ts)])
    gx, tx = both(X, grad=False)
    check(gx.scatter(1, gi[:, :2], 3.0, reduce="multiply"),
          tx.scatter(1, ti[:, :2], 3.0, reduce="multiply"))
    check(gs.scatter(gx, 1, gi[:, :2], gx[:2, :2], reduce="add"),
          torch.scatter(tx, 1, ti[:, :2], tx[:2, :2], reduce="add"))


def test_one_hot_by_scatter_in_place_and_integer_dtypes():
    g, t = gs.zeros(3, 4), torch.zeros(3, 4)
    gi, ti = index([[1], [0], [3]])
    assert g.scatter_(1, gi, 1.0) is g
    t.scatter_(1, ti, 1.0)
    check(g, t)
    gn, tn = both([[1, 2, 3], [4, 5, 6]], "int64", grad=False)
    gi, ti = index([[2, 0, 1]])
    check(gn.scatter_add(1, gi, gn[:1]), tn.scatter_add(1, ti, tn[:1]))
    check(gn.scatter(1, gi, 7), tn.scatter(1, ti, 7))
    gn.scatter_add_(1, gi, gn[1:].clone()), tn.scatter_add_(1, ti, tn[1:].clone())
    check(gn, tn)


def test_index_add_and_index_fill_are_torchs():
    (gx, tx), (gs_, ts) = both(X), both([[1.0, 2, 3], [4, 5, 6], [7, 8, 9]])
    gi, ti = index([2, 0, 2])
    check(gx.index_add(1, gi, gs_, alpha=2), tx.index_add(1, ti, ts, alpha=2),
          [(gx, tx), (gs_, ts)])
    gx, tx = both(X)
    check(gx.index_fill(1, gi, -1.5), tx.index_fill(1, ti, -1.5), [(gx, tx)])
    gn, tn = both([[1, 2], [3, 4], [5, 6]], "int64", grad=False)
    gj, tj = index([0, 0])
    check(gn.index_add(0, gj, gn[1:], alpha=3), tn.index_add(0, tj, tn[1:], alpha=3))
    gn.index_add_(0, gj, gn[1:].clone()), tn.index_add_(0, tj, tn[1:].clone())
    check(gn, tn)
    gn.index_fill_(1, gs.tensor([1]), gs.tensor(9)), tn.index_fill_(1, torch.tensor([1]), 9)
    check(gn, tn)


def test_take_and_take_along_dim_are_torchs():
    gx, tx = both(X)
    gi, ti = index([[0, -1], [5, 5]])
    check(gx.take(gi), tx.take(ti), [(gx, tx)])
    gx, tx = both(X)
    order_g, order_t = gx.argsort(dim=1), tx.argsort(dim=1)
    check(gx.take_along_dim(order_g, dim=1), tx.take_along_dim(order_t, dim=1), [(gx, tx)])
    gx, tx = both(X)
    gi, ti = index([[1], [0], [3]])
    check(gs.take_along_dim(gx, gi[:1], 1), torch.take_along_dim(tx, ti[:1], 1), [(gx, tx)])
    gx, tx = both(X)
    check(gs.take_along_dim(gx, gs.tensor([1, 7])), torch.take_along_dim(tx, torch.tensor([1, 7])),
          [(gx, tx)])


@pytest.mark.parametrize("call", [
    lambda m, x: x.prod(), lambda m, x: x.prod(1), lambda m, x: x.prod(0, keepdim=True),
    lambda m, x: x.cumprod(1), lambda m, x: m.cumprod(x, 0), lambda m, x: m.prod(x[:, 1:]),
    lambda m, x: x.logcumsumexp(1), lambda m, x: m.logcumsumexp(x * 300, 0),
])
def test_products_and_their_gradients_with_zeros_are_torchs(call):
    for data in (X, [[1.0, 0.0, 0.0], [2.0, 3.0, 0.0]], [[2.0, -1.0], [0.5, 3.0]]):
        gx, tx = both(data)
        check(call(gs, gx), call(torch, tx), [(gx, tx)])


def test_integer_products_are_int64():
    gn, tn = both([[2, 3], [4, 5]], "int32", grad=False)
    check(gn.prod(), tn.prod())
    check(gn.prod(1), tn.prod(1))
    check(gn.cumprod(0), tn.cumprod(0))
    check(gn.prod(dtype=gs.float64), tn.prod(dtype=torch.float64))


def test_median_cummax_cummin_are_torchs():
    gx, tx = both(X)
    check(gx.median(), tx.median(), [(gx, tx)])
    for dim, keepdim in ((1, False), (0, True), (-1, True)):
        gx, tx = both(X)
        g, t = gx.median(dim, keepdim=keepdim), tx.median(dim, keepdim=keepdim)
        check(g.indices, t.indices)
        check(g.values, t.values, [(gx, tx)])
    ties = [[1.0, 3.0, 3.0, 2.0, 5.0]]  # torch keeps the later index of a tie
    for fn in ("cummax", "cummin"):
        gx, tx = both(ties)
        g, t = getattr(gx, fn)(1), getattr(tx, fn)(1)
        check(g.indices, t.indices)
        check(g[0], t[0], [(gx, tx)])
    # median of everything shares its gradient among the elements equal to it
    gx, tx = both([2.0, 1.0, 2.0, 3.0, 2.0])
    check(gx.median(), tx.median(), [(gx, tx)])


def test_unique_is_torchs():
    gn, tn = both([3, 1, 2, 1, 3, 3], "int64", grad=False)
    for kwargs in ({}, {"return_inverse": True}, {"return_counts": True},
                   {"return_inverse": True, "return_counts": True}):
        g, t = gs.unique(gn, **kwargs), torch.unique(tn, **kwargs)
        for a, b in zip(g if kwargs else [g], t if kwargs else [t]):
            check(a, b)
    gx, tx = both([[2.5, -1.0], [2.5, 0.0]], grad=False)
    check(gx.unique(), tx.unique())
    gm, tm = both([[2, 1, 9], [1, 7, 0], [2, 1, 9], [1, 5, 3]], "int64", grad=False)
    for dim in (0, 1, -1):  # the distinct slices, sorted lexicographically
        for a, b in zip(gs.unique(gm, dim=dim, return_inverse=True, return_counts=True),
                        torch.unique(tm, dim=dim, return_inverse=True, return_counts=True)):
            check(a, b)
    gr, tr = both([1, 1, 2, 2, 2, 1, 3], "int64", grad=False)
    for a, b in zip(gs.unique_consecutive(gr, return_inverse=True, return_counts=True),
                    torch.unique_consecutive(tr, return_inverse=True, return_counts=True)):
        check(a, b)
    check(gm.unique_consecutive(dim=1), tm.unique_consecutive(dim=1))


def test_cross_and_trace_are_torchs():
    (ga, ta), (gb, tb) = both([[1.0, 2, 3], [4, 5, 6]]), both([[0.5, -1, 2], [3, 0, 1]])
    check(gs.cross(ga, gb), torch.cross(ta, tb), [(ga, ta), (gb, tb)])
    (ga, ta), (gb, tb) = both([[1.0, 2], [3, 4], [5, 6]]), both([[2.0, 0], [1, 1], [0, 3]])
    check(ga.cross(gb, dim=0), ta.cross(tb, dim=0), [(ga, ta), (gb, tb)])
    gx, tx = both(X)
    check(gx.trace(), tx.trace(), [(gx, tx)])
    check(gs.trace(gx.detach()), torch.trace(tx.detach()))
    gn, tn = both([[1, 2], [3, 4]], "int64", grad=False)
    check(gn.trace(), tn.trace())


def test_bad_arguments_name_what_was_expected():
    x = gs.tensor(X)
    with pytest.raises(IndexError, match=r"index\[0, 1\] = 5 is out of range for dim 0 of size 3"):
        x.scatter(0, gs.tensor([[0, 5]]), 1.0)
    with pytest.raises(IndexError, match="index 3 is out of range for dim 0 of size 3"):
        x.index_add(0, gs.tensor([3]), gs.ones(1, 4))
    with pytest.raises(RuntimeError, match=r"expected source of shape \[2, 4\]"):
        x.index_add(0, gs.tensor([0, 1]), gs.ones(2, 3))
    with pytest.raises(IndexError, match="index 12 is out of range for a tensor of 12 elements"):
        x.take(gs.tensor([12]))
    with pytest.raises(RuntimeError, match="expected size 3 along dim 1"):
        gs.cross(x, x, dim=1)
    with pytest.raises(RuntimeError, match="expected a 2-D matrix, got 1-D"):
        gs.tensor([1.0, 2.0]).trace()
    with pytest.raises(RuntimeError, match="reduce argument must be either add or multiply"):
        x.scatter(0, gs.tensor([[0]]), 1.0, reduce="max")
    with pytest.raises(ValueError, match="reduce='multiply' has no gradient"):
        x.requires_grad_().scatter(0, gs.tensor([[0]]), 2.0, reduce="multiply")
