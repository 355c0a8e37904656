"""t[...] and t[...] = v against torch 1.13, run side by side: several index tensors paired
elementwise (t[rows, cols]), mixed with ints, slices, None, Ellipsis and bool masks, with
torch's placement of the indexed dims. Each subscript, from a table of written forms and from
a seeded generator over 1-4-D tensors, is checked for values, shapes, grad_fn names,
gradients, assignment (values, gradients, version bumps) and torch's errors; then index_put
with accumulate."""
import random

import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")


# A subscript is written once, as terms each module turns into its own objects:
# ("i", data) an int64 tensor, ("m", data) a bool mask, ("l", data) a plain list,
# ("a", data) an int64 NumPy array; ints, slices, None and Ellipsis stand for themselves.
def build(m, sub):
    def term(x):
        if isinstance(x, tuple) and x and x[0] in ("i", "m", "l", "a"):
            kind, data = x
            if kind == "i":
                return m.tensor(data, dtype=m.int64)
            if kind == "m":
                return m.tensor(data, dtype=m.bool)
            if kind == "a":
                return np.array(data, dtype=np.int64)
            return list(data)
        return x

    if isinstance(sub, list):  # a bare list subscript: torch's sequence rules apply
        return [term(x) for x in sub]
    if isinstance(sub, tuple) and not (sub and sub[0] in ("i", "m", "l", "a")):
        return tuple(term(x) for x in sub)
    return term(sub)


def pair(shape, seed):
    """The same float64 leaf in both, values from seed."""
    data = np.random.default_rng(seed).standard_normal(shape)
    return (gs.tensor(data, dtype=gs.float64, requires_grad=True),
            torch.tensor(data, dtype=torch.float64, requires_grad=True))


def outcome(fn):
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - compared with the other side's
        return None, e


def same_error(g_err, t_err):
    assert g_err is not None, f"torch raised {t_err!r}, gradscope did not"
    assert isinstance(g_err, type(t_err)), f"{g_err!r} vs torch's {t_err!r}"
    t_msg = str(t_err).split("\n")[0]
    if "out of bounds" in t_msg or "shape mismatch" in t_msg or "too many indices" in t_msg \
            or "The shape of the mask" in t_msg:
        assert t_msg in str(g_err), f"{g_err!r} vs torch's {t_err!r}"


def check_getitem(shape, sub, seed=0):
    g, t = pair(shape, seed)
    t_out, t_err = outcome(lambda: t[build(torch, sub)])
    g_out, g_err = outcome(lambda: g[build(gs, sub)])
    if t_err is not None:
        same_error(g_err, t_err)
        return None
    assert g_err is None, f"gradscope raised {g_err!r} where torch gave {tuple(t_out.shape)}"
    assert tuple(g_out.shape) == tuple(t_out.shape)
    np.testing.assert_array_equal(g_out.detach().numpy(), t_out.detach().numpy())
    t_name = t_out.grad_fn.name() if t_out.grad_fn else None
    g_name = g_out.grad_fn.name() if g_out.grad_fn else None
    assert g_name == t_name
    w = np.random.default_rng(seed + 1).standard_normal(tuple(t_out.shape))
    (t_out * torch.tensor(w)).sum().backward()
    (g_out * gs.tensor(w)).sum().backward()
    same_grad(g, t)
    return tuple(t_out.shape)


def distinct_positions(shape, sub):
    """Whether the subscript picks no element twice (assignment is then well defined)."""
    n = int(np.prod(shape))
    picked = torch.arange(n).reshape(shape)[build(torch, sub)]
    return picked.numel() == picked.unique().numel()


def check_setitem(shape, sub, seed=0):
    t_shape = check_getitem(shape, sub, seed)
    if t_shape is None or not distinct_positions(shape, sub):
        return
    rng = np.random.default_rng(seed + 2)
    # a value of the indexed shape, one broadcast from its last dim, a number
    values = [rng.standard_normal(t_shape), rng.standard_normal(t_shape[-1:]), 2.5]
    for v in values:
        g, t = pair(shape, seed)
        gx, tx = g.detach().clone(), t.detach().clone()
        tv = torch.tensor(v) if isinstance(v, np.ndarray) else v
        gv = gs.tensor(v) if isinstance(v, np.ndarray) else v
        g_version, t_version = gx._version, tx._version
        tx[build(torch, sub)] = tv
        gx[build(gs, sub)] = gv
        np.testing.assert_array_equal(gx.numpy(), tx.numpy())
        assert gx._version - g_version == tx._version - t_version
    # through autograd: the leaf's and the value's gradients, the write's node name
    g, t = pair(shape, seed)
    v = rng.standard_normal(t_shape)
    tv = torch.tensor(v, requires_grad=True)
    gv = gs.tensor(v, dtype=gs.float64, requires_grad=True)
    tx, gx = t * 1.0, g * 1.0
    tx[build(torch, sub)] = tv
    gx[build(gs, sub)] = gv
    assert gx.grad_fn.name() == tx.grad_fn.name()
    w = rng.standard_normal(shape)
    (tx * torch.tensor(w)).sum().backward()
    (gx * gs.tensor(w)).sum().backward()
    same_grad(g, t)
    same_grad(gv, tv)


def same_grad(g, t):
    assert (g.grad is None) == (t.grad is None)
    if t.grad is not None:
        np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


R2 = ("i", [0, 2, 0])
C2 = ("i", [1, -1, 3])
MASK34 = ("m", [[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 0]])
TABLE = [
    ((3, 4), (R2, C2)),                           # paired, a position twice
    ((3, 4), (("i", [[0], [2]]), ("i", [1, 3]))), # broadcast [2, 1] with [2]
    ((3, 4), (("l", [0, 1]), ("l", [2, 3]))),     # lists
    ((3, 4), (("a", [0, 1]), ("a", [2, 3]))),     # arrays
    ((3, 4), [[0, 1], [2, 3]]),                   # a list of lists is a tuple (torch's rule)
    ((3, 4), ("i", [[0, 1], [2, -1]])),           # one 2-D index
    ((3, 4), (slice(None), ("i", [3, 0, 3]))),
    ((3, 4), (slice(1, None), R2)),
    ((3, 4), MASK34),
    ((3, 4), ("m", [True, False, True])),
    ((3, 4), (("m", [True, False, True]), ("i", [1, 2]))),  # mask's nonzero paired
    ((3, 4), (("m", [True, False, True]), 1)),
    ((3, 4), (Ellipsis, ("i", [0, 0]))),
    ((3, 4), (None, R2, C2)),
    ((3, 4), (R2, None, C2)),                     # separated by None: broadcast shape first
    ((3, 4), True),
    ((3, 4), False),
    ((3, 4), (0, True)),
    ((2, 3, 4), (("i", [0, 1]), slice(None), ("i", [1, 2]))),  # separated by a slice
    ((2, 3, 4), (slice(None), ("i", [0, 1]), ("i", [1, 2]))),  # adjacent, after a slice
    ((2, 3, 4), (("i", [0, 1]), 1, ("i", [1, 2]))),            # an int between: adjacent
    ((2, 3, 4), (None, ("i", [0, 1]), None, ("i", [1, 2]))),
    ((2, 3, 4), (Ellipsis, ("i", [[0], [1]]), ("i", [1, 2, 3]))),
    ((2, 3, 4), (("i", [1]), Ellipsis, ("i", [2, 3]))),
    ((2, 3, 4), (slice(None), MASK34)),
    ((2, 3, 4), (("m", [True, False]), MASK34)),
    ((2, 3, 4), (("i", [1, 0]), slice(None, None, 2), ("i", [[3], [0]]))),
    ((2, 3, 4, 2), (slice(None), ("i", [2, 0]), slice(None), ("i", [1, 0]))),
    ((2, 3, 4, 2), (("i", [1]), ("i", [0, 2]), ("i", [[3], [1]]), ("i", [1]))),
    ((2, 3, 4, 2), (0, slice(None), ("i", [0, 3]), 1)),
    ((4,), ("i", [[3, -4], [1, 1]])),
    ((4,), ("i", [])),
    # torch's errors: out of bounds, in its words; indexes that do not broadcast; masks that
    # do not fit; too many indices
    ((3, 4), (("i", [5]),)),
    ((3, 4), (slice(None), ("i", [4]))),
    ((3, 4), (("i", [1]), ("i", [-5]))),
    ((2, 3, 4), (("i", [0]), ("i", [0]), ("i", [9]))),
    ((3, 4), (("i", [0, 1]), ("i", [0, 1, 2]))),
    ((2, 3, 4), (("m", [[1, 0, 1], [0, 1, 1]]), 0)),
    ((2, 3, 4), ("m", [True, False, True])),
    ((3, 4), (("i", [0]), ("i", [0]), ("i", [0]))),
]


@pytest.mark.parametrize("shape,sub", TABLE, ids=[f"{i}" for i in range(len(TABLE))])
def test_written_subscripts(shape, sub):
    check_setitem(shape, sub, seed=len(str(sub)))


def random_subscript(rng, shape):
    """A subscript over shape: each dim an int, a slice, an index tensor (of shapes that
    broadcast together, some entries negative, some out of range rarely) or part of a bool
    mask, with None and Ellipsis among them."""
    nd = len(shape)
    bshape = [rng.randint(1, 3) for _ in range(rng.randint(1, 2))]
    terms, d = [], 0
    while d < nd:
        kind = rng.choice(["int", "slice", "index", "index", "mask", "skip"])
        size = shape[d]
        if kind == "int":
            terms.append(rng.randint(-size, size - 1))
        elif kind == "slice":
            terms.append(slice(rng.choice([None, 0, 1]), rng.choice([None, -1, size]),
                               rng.choice([None, 1, 2])))
        elif kind == "index":
            ishape = [b if rng.random() < 0.7 else 1 for b in bshape][rng.randint(0, 1):]
            hi = size if rng.random() < 0.95 else size + 2
            data = np.array([rng.randint(-size, hi - 1) for _ in range(int(np.prod(ishape)))],
                            dtype=np.int64).reshape(ishape)
            terms.append(("i", data.tolist()) if rng.random() < 0.8 else ("a", data.tolist()))
        elif kind == "mask":
            k = min(rng.randint(1, 2), nd - d)
            mshape = shape[d:d + k]
            bits = np.array([rng.random() < 0.5 for _ in range(int(np.prod(mshape)))])
            terms.append(("m", bits.reshape(mshape).tolist()))
            d += k - 1
        else:
            terms.append(slice(None))
        d += 1
        if rng.random() < 0.1:
            terms.append(None)
    if rng.random() < 0.2:  # an Ellipsis in place of the trailing full slices or at the start
        while terms and terms[-1] == slice(None):
            terms.pop()
        terms.append(Ellipsis) if rng.random() < 0.5 else terms.insert(0, Ellipsis)
    return tuple(terms)


@pytest.mark.parametrize("seed", range(12))
def test_random_subscripts(seed):
    rng = random.Random(seed)
    for _ in range(25):
        shape = tuple(rng.randint(1, 4) for _ in range(rng.randint(1, 4)))
        sub = random_subscript(rng, shape)
        try:
            check_setitem(shape, sub, seed=rng.randint(0, 1000))
        except AssertionError as e:
            raise AssertionError(f"shape {shape}, subscript {sub}: {e}") from e


def test_paired_read_accumulates_gradient_into_repeats():
    g, t = pair((3, 4), 3)
    rows, cols = [0, 0, 0, 2], [1, 1, 1, 3]
    g[rows, cols].sum().backward()
    t[rows, cols].sum().backward()
    assert g.grad.numpy()[0, 1] == 3.0
    np.testing.assert_array_equal(g.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_forms(accumulate):
    base = np.arange(12.0).reshape(3, 4)
    idx = ([0, 2, 0], [1, 3, 1]) if accumulate else ([0, 2], [1, 3])
    v = np.array([1.0, 2.0, 4.0][:len(idx[0])])
    ti = tuple(torch.tensor(i) for i in idx)
    gi = tuple(gs.tensor(i) for i in idx)
    t_new = torch.index_put(torch.tensor(base), ti, torch.tensor(v), accumulate=accumulate)
    g_new = gs.index_put(gs.tensor(base), gi, gs.tensor(v), accumulate=accumulate)
    np.testing.assert_array_equal(g_new.numpy(), t_new.numpy())
    np.testing.assert_array_equal(gs.tensor(base).index_put(gi, gs.tensor(v), accumulate).numpy(),
                                  t_new.numpy())
    tx, gx = torch.tensor(base), gs.tensor(base)
    g_version, t_version = gx._version, tx._version
    assert gx.index_put_(gi, gs.tensor(v), accumulate=accumulate) is gx
    tx.index_put_(ti, torch.tensor(v), accumulate=accumulate)
    np.testing.assert_array_equal(gx.numpy(), tx.numpy())
    assert gx._version - g_version == tx._version - t_version == 1
    # gradients, and the node's name, out of place
    tb = torch.tensor(base, requires_grad=True)
    gb = gs.tensor(base, requires_grad=True)
    tv = torch.tensor(v, requires_grad=True)
    gv = gs.tensor(v, requires_grad=True)
    t_out = torch.index_put(tb, ti, tv, accumulate=accumulate)
    g_out = gs.index_put(gb, gi, gv, accumulate=accumulate)
    assert g_out.grad_fn.name() == t_out.grad_fn.name() == "IndexPutBackward0"
    w = np.random.default_rng(0).standard_normal((3, 4))
    (t_out * torch.tensor(w)).sum().backward()
    (g_out * gs.tensor(w)).sum().backward()
    np.testing.assert_allclose(gb.grad.numpy(), tb.grad.numpy())
    np.testing.assert_allclose(gv.grad.numpy(), tv.grad.numpy())


def test_index_put_with_a_mask_not_none():
    base = np.arange(12.0).reshape(3, 4)
    mask = [True, False, True]
    tx, gx = torch.tensor(base), gs.tensor(base)
    with pytest.raises(TypeError) as t_err:
        tx.index_put_((None, torch.tensor([0, 3])), torch.tensor(-1.0))
    with pytest.raises(TypeError) as g_err:
        gx.index_put_((None, gs.tensor([0, 3])), gs.tensor(-1.0))
    assert str(t_err.value) == str(g_err.value)
    tx.index_put_((torch.tensor(mask),), torch.tensor(7.0, dtype=torch.float64), accumulate=True)
    gx.index_put_((gs.tensor(mask),), gs.tensor(7.0, dtype=gs.float64), accumulate=True)
    np.testing.assert_array_equal(gx.numpy(), tx.numpy())


def test_assignment_dtype_must_match_as_torch():
    with pytest.raises(RuntimeError) as t_err:
        torch.zeros(3)[[0, 1]] = torch.tensor([1, 2])
    with pytest.raises(RuntimeError) as g_err:
        gs.zeros(3)[[0, 1]] = gs.tensor([1, 2])
    assert str(t_err.value) == str(g_err.value)


def test_value_that_does_not_broadcast_is_torchs_error():
    with pytest.raises(RuntimeError) as t_err:
        torch.zeros(3, 4)[[0, 1], [1, 2]] = torch.ones(3, 1)
    with pytest.raises(RuntimeError) as g_err:
        gs.zeros(3, 4)[[0, 1], [1, 2]] = gs.ones(3, 1)
    assert str(t_err.value) in str(g_err.value)


def test_numpy_value_is_written():
    x = gs.zeros(3, 4)
    x[[0, 1], [1, 2]] = np.array([5.0, 6.0])
    assert x.numpy()[0, 1] == 5.0 and x.numpy()[1, 2] == 6.0


def test_write_into_a_saved_tensor_is_the_version_error():
    for m in (torch, gs):
        x = m.ones(3, requires_grad=True)
        y = x.exp()
        y[[0, 2]] = 0.0
        with pytest.raises(RuntimeError, match="modified by an inplace operation|version"):
            y.sum().backward()


def test_write_into_a_leaf_that_requires_grad_is_refused():
    for m in (torch, gs):
        with pytest.raises(RuntimeError, match="leaf"):
            m.zeros(3, requires_grad=True)[[0]] = 1.0


def test_double_backward_through_paired_indexing():
    g, t = pair((3, 4), 5)
    rows, cols = [0, 2, 0], [1, 3, 1]
    outs = []
    for x, m in ((g, gs), (t, torch)):
        y = (x[rows, cols] ** 3).sum()
        (dx,) = m.autograd.grad(y, x, create_graph=True)
        (dx * dx).sum().backward()
        outs.append(x.grad.numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12)


def test_a_range_indexes_as_a_list():
    # "What is torch.nn really?": -input[range(target.shape[0]), target].mean()
    for m in (gs, torch):
        t = m.arange(12.0).reshape(3, 4)
        assert t[range(3), m.tensor([0, 1, 2])].tolist() == [0.0, 5.0, 10.0]
        assert t[range(0, 3, 2), 1].tolist() == [1.0, 9.0]
        assert t[range(2)].tolist() == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]]
        t[range(2), 0] = 5.0
        assert t[:, 0].tolist() == [5.0, 5.0, 8.0]
