"""Tensor.index_reduce, index_reduce_ and torch.index_reduce against Debian's torch 1.13: every
reduction ('prod', 'mean', 'amax', 'amin') with and without include_self, over dims 0, 1 and
-1 with repeated positions, float64 gradients of input and source compared with torch's (zeros
in prod, ties of amax/amin split as torch splits them) and checked by finite differences,
integer dtypes, the grad_fn name, and torch's errors. meson registers this file only when
torch imports (tests/python/meson.build)."""
import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:index_reduce")  # torch 1.13: "in beta"

REDUCTIONS = ["prod", "mean", "amax", "amin"]
rng = np.random.default_rng(31)


def operands(dim):
    """self [4, 5]; index of 6 positions (with repeats) along dim; source: self's shape with
    6 along dim."""
    self_ = rng.uniform(-2, 2, (4, 5))
    size = self_.shape[dim]
    index = rng.integers(0, size, 6)
    shape = list(self_.shape)
    shape[dim] = 6
    return self_, rng.uniform(-2, 2, shape), index


def both(self_, src, index, dtype=np.float64, grad=False):
    g = (gs.tensor(self_.astype(dtype), requires_grad=grad),
         gs.tensor(src.astype(dtype), requires_grad=grad), gs.tensor(index))
    t = (torch.tensor(self_.astype(dtype), requires_grad=grad),
         torch.tensor(src.astype(dtype), requires_grad=grad), torch.tensor(index))
    return g, t


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_values_and_gradients_match_torch(reduce, include_self, dim):
    self_, src, index = operands(dim)
    (a, b, i), (ta, tb, ti) = both(self_, src, index, grad=True)
    out = a.index_reduce(dim, i, b, reduce, include_self=include_self)
    tout = ta.index_reduce(dim, ti, tb, reduce, include_self=include_self)
    np.testing.assert_allclose(out.tolist(), tout.tolist(), rtol=1e-14, atol=1e-15)
    assert out.grad_fn.name() == tout.grad_fn.name() == "IndexReduceBackward0"
    w = rng.uniform(-1, 1, tuple(self_.shape))
    (out * gs.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(a.grad.tolist(), ta.grad.tolist(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(b.grad.tolist(), tb.grad.tolist(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False])
def test_float64_gradcheck(reduce, include_self):
    self_ = rng.uniform(-2, 2, (3, 4))
    src = rng.uniform(-2, 2, (3, 3))

    def f(x, s):
        return x.index_reduce(1, gs.tensor([3, 0, 3]), s, reduce, include_self=include_self)
    x = gs.tensor(self_, requires_grad=True)
    s = gs.tensor(src, requires_grad=True)
    assert gs.autograd.gradcheck(f, (x, s), eps=1e-6, atol=1e-6)


def test_ties_split_and_zeros_in_prod_as_torch():
    self_ = np.array([[1.0, 2.0, 0.0], [3.0, 3.0, 5.0]])
    src = np.array([[3.0, 2.0, 0.0], [3.0, 0.0, 0.0], [1.0, 2.0, 4.0]])
    index = np.array([1, 1, 0])
    for reduce in ["amax", "amin", "prod"]:
        for include_self in [True, False]:
            (a, b, i), (ta, tb, ti) = both(self_, src, index, grad=True)
            out = a.index_reduce(0, i, b, reduce, include_self=include_self)
            tout = ta.index_reduce(0, ti, tb, reduce, include_self=include_self)
            assert out.tolist() == tout.tolist()
            out.sum().backward()
            tout.sum().backward()
            assert a.grad.tolist() == ta.grad.tolist(), (reduce, include_self)
            assert b.grad.tolist() == tb.grad.tolist(), (reduce, include_self)


def test_inplace_function_form_and_integers():
    self_, src, index = operands(1)
    for dtype in [np.int64, np.int32, np.float32]:
        (a, b, i), (ta, tb, ti) = both((self_ * 10).round(), (src * 10).round(), index, dtype)
        for reduce in REDUCTIONS:
            for include_self in [True, False]:
                expect = ta.clone().index_reduce_(1, ti, tb, reduce, include_self=include_self)
                c = a.clone()
                assert c.index_reduce_(1, i, b, reduce, include_self=include_self) is c
                assert c.tolist() == expect.tolist(), (dtype, reduce, include_self)
                assert str(c.dtype).split(".")[-1] == str(expect.dtype).split(".")[-1]
            assert gs.index_reduce(a, 1, i.int(), b, reduce).tolist() == \
                torch.index_reduce(ta, 1, ti.int(), tb, reduce).tolist()


def test_errors_as_torch():
    a, i, b = gs.ones(3, 3), gs.tensor([0, 1]), gs.ones(2, 3)
    with pytest.raises(RuntimeError, match="Expected reduce to be one of prod, mean, amax or "
                                           "amin but got sum"):
        a.index_reduce(0, i, b, "sum")
    with pytest.raises((RuntimeError, IndexError), match="out of range"):
        a.index_reduce(0, gs.tensor([0, 3]), b, "prod")
    with pytest.raises((RuntimeError, ValueError), match="source of shape"):
        a.index_reduce(0, i, gs.ones(3, 3), "prod")  # source's dim 0 is not len(index)
    with pytest.raises((RuntimeError, TypeError), match="dtype"):
        a.index_reduce(0, i, b.double(), "mean")
    with pytest.raises(TypeError):
        a.index_reduce(0, i, b)  # reduce is required, as torch's
