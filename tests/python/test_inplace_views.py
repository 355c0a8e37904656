"""In-place shape ops (unsqueeze_, squeeze_, t_, transpose_, swapdims_, resize_, resize_as_,
as_strided_) against torch 1.13: the tensor itself changes shape over its own storage, views
made before keep theirs and see later writes, _version goes up, and what autograd tracks is
refused as torch refuses it."""
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")


def geometry(t):
    return list(t.shape), list(t.stride()), t.storage_offset(), t.is_contiguous()


def both(make):
    return make(gs), make(torch)


OPS = [
    ("unsqueeze_", lambda t: t.unsqueeze_(0)),
    ("unsqueeze_-1", lambda t: t.unsqueeze_(-1)),
    ("squeeze_", lambda t: t.unsqueeze_(1).squeeze_()),
    ("squeeze_dim", lambda t: t.unsqueeze_(0).squeeze_(0)),
    ("t_", lambda t: t.t_()),
    ("transpose_", lambda t: t.transpose_(0, 1)),
    ("swapdims_", lambda t: t.swapdims_(1, 0)),
    ("as_strided_", lambda t: t.as_strided_((2, 2), (1, 2), 1)),
    ("resize_smaller", lambda t: t.resize_(2, 2)),
    ("resize_list", lambda t: t.resize_([3, 2])),
]


@pytest.mark.parametrize("name,op", OPS, ids=[o[0] for o in OPS])
def test_in_place_shape_op_is_torchs(name, op):
    g, t = both(lambda m: m.arange(6.0).reshape(2, 3))
    gv, tv = g[1], t[1]  # a view made before: keeps its shape
    assert op(g) is g and op(t) is t
    assert geometry(g) == geometry(t)
    assert g.tolist() == t.tolist()
    # torch's resize_ leaves _version as it was; gradscope counts it as the in-place change it
    # is, so a node that saved the tensor refuses it in backward instead of reading a new shape
    bumped = 1 if name.startswith("resize_") else 0
    assert g._version == t._version + bumped and gv._version == tv._version + bumped
    assert geometry(gv) == geometry(tv)
    g.fill_(7.0)
    t.fill_(7.0)
    assert gv.tolist() == tv.tolist()  # one storage still


def test_unsqueeze_on_an_int_target_as_the_char_rnn_tutorial():
    g, t = both(lambda m: m.tensor([3, 1, 4]))
    g.unsqueeze_(-1)
    t.unsqueeze_(-1)
    assert g.tolist() == t.tolist() and g.shape == t.shape


def test_resize_grows_and_resize_as():
    g, t = both(lambda m: m.zeros(4))
    assert g.resize_(2).fill_(1).tolist() == t.resize_(2).fill_(1).tolist()
    g.resize_(2, 3)
    t.resize_(2, 3)
    assert list(g.shape) == list(t.shape) == [2, 3]
    assert g.reshape(-1)[:2].tolist() == t.reshape(-1)[:2].tolist() == [1.0, 1.0]
    g.resize_as_(gs.ones(5))
    t.resize_as_(torch.ones(5))
    assert list(g.shape) == list(t.shape) == [5]


def test_leaf_requiring_grad_is_refused_unless_no_grad():
    g, t = both(lambda m: m.ones(3, requires_grad=True))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        t.unsqueeze_(0)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        g.unsqueeze_(0)
    with torch.no_grad():
        t.unsqueeze_(0)
    with gs.no_grad():
        g.unsqueeze_(0)
    assert list(g.shape) == list(t.shape) == [1, 3]
    assert g.is_leaf and g.requires_grad


def test_a_saved_tensor_changed_in_place_stops_backward():
    for m in (gs, torch):
        w = m.ones(2, requires_grad=True)
        c = m.tensor([1.0, 2.0])
        y = w * c
        c.unsqueeze_(0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_a_non_leaf_autograd_recorded_is_refused_by_name():
    made = gs.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match=r"recorded its shape .*x = x.unsqueeze\(dim\)"):
        made.unsqueeze_(0)
    assert list(made.shape) == [2]


def test_out_of_storage_geometry_is_refused():
    g = gs.zeros(4)
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 16"):
        g.as_strided_((3, 3), (3, 1))
    assert list(g.shape) == [4]
