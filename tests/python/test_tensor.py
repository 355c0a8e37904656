"""test_tensor.py: the Tensor type: creation, dtypes, operators, views by indexing, methods
with PyTorch's names and keywords, repr, errors with the engine's message, stale handles."""
import math

import numpy as np
import pytest

import gradscope as gs


def test_tensor_from_nested_lists_infers_the_dtype_as_pytorch():
    assert gs.tensor([[1, 2], [3, 4]]).dtype is gs.int64
    assert gs.tensor([1.0, 2]).dtype is gs.float32
    assert gs.tensor([True, False]).dtype is gs.bool
    t = gs.tensor([[1, 2], [3, 4]], dtype=gs.float64)
    assert t.dtype is gs.float64 and t.shape == (2, 2)
    assert t.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_ragged_data_is_refused():
    with pytest.raises(ValueError, match="ragged"):
        gs.tensor([[1, 2], [3]])


def test_tensor_from_an_array_copies():
    a = np.arange(4.0)
    t = gs.tensor(a)
    a[0] = 99
    assert t.dtype is gs.float64 and t.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_creation_functions():
    assert gs.zeros(2, 3).tolist() == [[0.0] * 3] * 2
    assert gs.ones((2,), dtype=gs.int64).tolist() == [1, 1]
    assert gs.full((2,), 7.5).tolist() == [7.5, 7.5]
    assert gs.arange(5).tolist() == [0, 1, 2, 3, 4] and gs.arange(5).dtype is gs.int64
    assert gs.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert gs.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    gs.manual_seed(1)
    a = gs.randn(3, 4).tolist()
    gs.manual_seed(1)
    assert gs.randn(3, 4).tolist() == a
    assert gs.zeros_like(gs.ones(2, dtype=gs.float64)).dtype is gs.float64


def test_arithmetic_operators_and_promotion():
    a = gs.tensor([1.0, 2.0, 3.0])
    b = gs.tensor([4.0, 5.0, 6.0])
    assert (a + b).tolist() == [5.0, 7.0, 9.0]
    assert (b - a).tolist() == [3.0, 3.0, 3.0]
    assert (a * b).tolist() == [4.0, 10.0, 18.0]
    assert (b / a).tolist() == [4.0, 2.5, 2.0]
    assert (a ** 2.0).tolist() == [1.0, 4.0, 9.0]
    assert (-a).tolist() == [-1.0, -2.0, -3.0]
    assert (2.0 - a).tolist() == [1.0, 0.0, -1.0]
    assert (1.0 / gs.tensor([2.0, 4.0])).tolist() == [0.5, 0.25]
    i = gs.tensor([1, 2])
    assert (i + 1).dtype is gs.int64 and (i + 1).tolist() == [2, 3]
    assert (i + 0.5).dtype is gs.float32
    assert (gs.ones(2, dtype=gs.float64) + 0.5).dtype is gs.float64


def test_matmul_operator():
    a = gs.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert (a @ a).tolist() == [[7.0, 10.0], [15.0, 22.0]]
    assert a.matmul(gs.tensor([1.0, 1.0])).tolist() == [3.0, 7.0]


def test_comparisons_give_bool_tensors():
    a = gs.tensor([1.0, 2.0, 3.0])
    assert (a > 1.5).tolist() == [False, True, True]
    assert (a == gs.tensor([1.0, 0.0, 3.0])).tolist() == [True, False, True]
    assert (a <= 2.0).dtype is gs.bool
    assert {a: 1}[a] == 1  # hashable by identity, as torch.Tensor


def test_in_place_operators_write_through_and_bump_the_version():
    a = gs.tensor([1.0, 2.0])
    alias = a
    v = a._version
    a += 1.0
    assert alias is a and a.tolist() == [2.0, 3.0] and a._version > v
    a *= gs.tensor([2.0, 2.0])
    a -= 1.0
    a /= 2.0
    assert a.tolist() == [1.5, 2.5]
    a.add_(gs.tensor([1.0, 1.0]), alpha=0.5)
    assert a.tolist() == [2.0, 3.0]
    a.zero_()
    assert a.tolist() == [0.0, 0.0]


def test_indexing_returns_views_that_share_storage():
    t = gs.arange(12, dtype=gs.float32).view(3, 4)
    row = t[1]
    col = t[:, 2]
    block = t[0:2, 1:3]
    strided = t[::2]
    new_axis = t[None, 1]
    assert row.tolist() == [4.0, 5.0, 6.0, 7.0]
    assert col.tolist() == [2.0, 6.0, 10.0]
    assert block.shape == (2, 2) and strided.shape == (2, 4) and new_axis.shape == (1, 4)
    assert t[..., 3].tolist() == [3.0, 7.0, 11.0]
    for v in (row, col, block, strided, new_axis):
        assert v.storage_id() == t.storage_id()
    row[0] = 100.0
    assert t[1, 0].item() == 100.0
    t[2] = gs.tensor([9.0, 9.0, 9.0, 9.0])
    assert col.tolist() == [2.0, 6.0, 9.0]
    with pytest.raises(IndexError):
        t[3]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0]


def test_methods_with_pytorch_names_and_keywords():
    t = gs.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert t.sum().item() == 21.0
    assert t.sum(dim=1).tolist() == [6.0, 15.0]
    assert t.sum(dim=0, keepdim=True).shape == (1, 3)
    assert t.mean(dim=(0, 1)).item() == 3.5
    assert t.view(3, 2).shape == (3, 2) and t.reshape(-1).shape == (6,)
    assert t.transpose(0, 1).tolist() == [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    assert t.T.tolist() == t.transpose(0, 1).tolist()
    assert t.permute(1, 0).shape == (3, 2)
    assert t.unsqueeze(0).shape == (1, 2, 3) and t.unsqueeze(0).squeeze().shape == (2, 3)
    assert gs.relu(t - 3.0).tolist() == [[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]
    s = t.softmax(dim=1).sum(dim=1).tolist()
    assert all(abs(x - 1.0) < 1e-6 for x in s)
    values, indices = t.max(dim=1)
    assert values.tolist() == [3.0, 6.0] and indices.tolist() == [2, 2]
    assert t.argmax().item() == 5
    assert gs.cat([t, t], dim=0).shape == (4, 3)
    assert gs.stack([t, t]).shape == (2, 2, 3)
    assert [c.shape for c in t.chunk(3, dim=1)] == [(2, 1)] * 3
    assert t.numel() == 6 and t.dim() == 2 and t.size(1) == 3 and t.stride() == (3, 1)
    assert t.clamp(min=2.0, max=5.0).tolist() == [[2.0, 2.0, 3.0], [4.0, 5.0, 5.0]]
    assert gs.where(t > 3.0, t, 0.0).tolist() == [[0.0, 0.0, 0.0], [4.0, 5.0, 6.0]]


def test_repr_reads_like_pytorch():
    assert repr(gs.tensor([1.0, 2.0, 3.0])) == "tensor([1., 2., 3.])"
    assert repr(gs.tensor([[1, 2], [3, 4]])) == "tensor([[1, 2],\n        [3, 4]])"
    assert repr(gs.tensor([0.5, 1.25], dtype=gs.float64)) == \
        "tensor([0.5000, 1.2500], dtype=gradscope.float64)"
    assert repr(gs.tensor(3.0)) == "tensor(3.)"
    assert repr(gs.tensor([True, False])) == "tensor([ True, False])"
    x = gs.tensor([1.0], requires_grad=True)
    assert repr(x) == "tensor([1.], requires_grad=True)"
    assert repr(x * 2.0).startswith("tensor([2.], grad_fn=<")
    assert "..." in repr(gs.zeros(2000))


def test_engine_errors_become_python_exceptions_with_its_message():
    a = gs.ones(2, 3)
    with pytest.raises(RuntimeError, match=r"matmul.*\[2, 3\]"):
        a @ gs.ones(2, 3)
    with pytest.raises(RuntimeError, match="view"):
        a.T.view(6)
    with pytest.raises(TypeError):
        a + "x"
    with pytest.raises(RuntimeError, match="only one-element"):
        float(a)


def test_a_stale_handle_raises_and_never_crashes():
    t = gs.ones(3)
    view = t[1:]
    t.dispose()
    assert not t.is_alive
    with pytest.raises(RuntimeError, match="stale"):
        t + 1.0
    with pytest.raises(RuntimeError, match="stale"):
        t.shape
    with pytest.raises(RuntimeError, match="stale"):
        t.numpy()
    assert "disposed" in repr(t)
    assert view.tolist() == [1.0, 1.0]  # the view keeps the storage
    del t  # dropping a stale handle does nothing


def test_dropping_an_owned_tensor_disposes_it():
    before = gs.live_tensor_count()
    t = gs.ones(1000)
    assert gs.live_tensor_count() == before + 1
    del t
    assert gs.live_tensor_count() == before


def test_iterating_gives_views_of_the_rows():
    t = gs.arange(6).view(3, 2)
    rows = list(t)
    assert [r.tolist() for r in rows] == [[0, 1], [2, 3], [4, 5]]
    assert all(r.storage_id() == t.storage_id() for r in rows)
    with pytest.raises(TypeError):
        iter(gs.tensor(1.0))


def test_equal_compares_shape_and_elements_as_torch_equal():
    a = gs.tensor([1.0, 2.0, 3.0])
    assert gs.equal(a, a.clone())
    assert not gs.equal(a, a + 1)
    assert not gs.equal(a, a[:2])
    assert not gs.equal(gs.zeros(2, 3), gs.zeros(3, 2))
    assert not gs.equal(gs.tensor([float("nan")]), gs.tensor([float("nan")]))
    with pytest.raises(TypeError, match="expected two Tensors, got int and Tensor"):
        gs.equal(1, a)
