"""Tensor.scatter_reduce, scatter_reduce_ and torch.scatter_reduce against Debian's torch
1.13: every reduction with and without include_self, over dims 0, 1 and -1 and an index
smaller than src, integer dtypes, float64 gradients of input and src (ties of amax/amin split
as torch splits them, zeros in prod) compared with torch's and checked by finite differences,
the grad_fn name, and torch's errors. meson registers this file only when torch imports
(tests/python/meson.build)."""
import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")

REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]
rng = np.random.default_rng(7)


def operands(dim, src_shape=(3, 4)):
    """self [4, 5], src (of the index's shape: torch 1.13's backward refuses a larger one),
    index [3, 4] in range, with repeats."""
    self_ = rng.uniform(-2, 2, (4, 5))
    src = rng.uniform(-2, 2, src_shape)
    size = 4 if dim == 0 else 5
    index = rng.integers(0, size, (3, 4))
    return self_, src, index


def both(self_, src, index, dtype=np.float64, grad=False):
    g = (gs.tensor(self_.astype(dtype), requires_grad=grad), gs.tensor(src.astype(dtype),
         requires_grad=grad), gs.tensor(index))
    t = (torch.tensor(self_.astype(dtype), requires_grad=grad),
         torch.tensor(src.astype(dtype), requires_grad=grad), torch.tensor(index))
    return g, t


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_values_and_gradients_match_torch(reduce, include_self, dim):
    self_, src, index = operands(1 if dim == -1 else dim)
    (a, b, i), (ta, tb, ti) = both(self_, src, index, grad=True)
    out = a.scatter_reduce(dim, i, b, reduce, include_self=include_self)
    tout = ta.scatter_reduce(dim, ti, tb, reduce, include_self=include_self)
    np.testing.assert_allclose(out.tolist(), tout.tolist(), rtol=1e-14, atol=1e-15)
    assert out.grad_fn.name() == tout.grad_fn.name() == "ScatterReduceBackward0"
    w = rng.uniform(-1, 1, tuple(self_.shape))
    (out * gs.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(a.grad.tolist(), ta.grad.tolist(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(b.grad.tolist(), tb.grad.tolist(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False])
def test_float64_gradcheck(reduce, include_self):
    self_, src, index = operands(0)
    index = np.array([[0, 2, 2, 1], [3, 2, 0, 1], [0, 0, 2, 1]])  # distinct values: no ties

    def f(x, s):
        return x.scatter_reduce(0, gs.tensor(index), s, reduce, include_self=include_self)
    x = gs.tensor(self_, requires_grad=True)
    s = gs.tensor(src, requires_grad=True)
    assert gs.autograd.gradcheck(f, (x, s), eps=1e-6, atol=1e-6)


def test_ties_split_and_zeros_in_prod_as_torch():
    self_ = np.array([[1.0, 2.0, 0.0], [3.0, 3.0, 5.0]])
    src = np.array([[3.0, 2.0, 0.0], [3.0, 0.0, 0.0]])
    index = np.array([[1, 0, 0], [1, 0, 1]])
    for reduce in ["amax", "amin", "prod"]:
        for include_self in [True, False]:
            (a, b, i), (ta, tb, ti) = both(self_, src, index, grad=True)
            out = a.scatter_reduce(0, i, b, reduce, include_self=include_self)
            tout = ta.scatter_reduce(0, ti, tb, reduce, include_self=include_self)
            assert out.tolist() == tout.tolist()
            out.sum().backward()
            tout.sum().backward()
            assert a.grad.tolist() == ta.grad.tolist(), (reduce, include_self)
            assert b.grad.tolist() == tb.grad.tolist(), (reduce, include_self)


def test_inplace_function_form_and_integers():
    self_, src, index = operands(1, (3, 6))  # src larger than the index: its corner is read
    for dtype in [np.int64, np.int32, np.float32]:
        (a, b, i), (ta, tb, ti) = both((self_ * 10).round(), (src * 10).round(), index, dtype)
        for reduce in REDUCTIONS:
            expect = ta.clone().scatter_reduce_(1, ti, tb, reduce, include_self=False)
            c = a.clone()
            assert c.scatter_reduce_(1, i, b, reduce, include_self=False) is c
            assert c.tolist() == expect.tolist(), (dtype, reduce)
            assert gs.scatter_reduce(a, 1, i, b, reduce).tolist() == \
                torch.scatter_reduce(ta, 1, ti, tb, reduce).tolist()
            assert str(c.dtype).split(".")[-1] == str(expect.dtype).split(".")[-1]


def test_errors_as_torch():
    a, i, b = gs.ones(3, 3), gs.tensor([[0, 1]]), gs.ones(1, 2)
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean, "
                                           "amax or amin, got max"):
        a.scatter_reduce(0, i, b, "max")
    with pytest.raises(RuntimeError):
        a.scatter_reduce(0, gs.tensor([[0, 3]]), b, "sum")  # index out of range
    with pytest.raises(RuntimeError):
        a.scatter_reduce(0, i.double(), b, "sum")  # index not int64
    with pytest.raises(RuntimeError):
        a.scatter_reduce(0, i, b.double(), "sum")  # src of another dtype
    with pytest.raises(TypeError):
        a.scatter_reduce(0, i, b)  # reduce is required, as torch's
