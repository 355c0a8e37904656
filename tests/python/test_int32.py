"""int32 tensors as PyTorch's: gradscope.int32 (and the alias gradscope.int), promotion
(int32 op int64 is int64, int32 op float is float32, an int32 tensor with a Python int stays
int32, true division gives float32), sums in int64, zero copy with NumPy both ways, DLPack with
torch, creation with dtype=, and what is refused (requires_grad, int32 tensors in [])."""
import numpy as np
import pytest

import gradscope as gs


def check(t, values, dtype):
    assert isinstance(t, gs.Tensor), type(t)
    assert t.dtype == dtype, (t.dtype, dtype)
    assert t.tolist() == values


def test_int32_is_a_dtype_with_torchs_names():
    assert gs.int is gs.int32
    assert repr(gs.int32) == "gradscope.int32"
    assert gs.int32.itemsize == 4 and not gs.int32.is_floating_point
    t = gs.tensor([1, 2], dtype=gs.int32)
    check(t, [1, 2], gs.int32)
    assert repr(t) == "tensor([1, 2], dtype=gradscope.int32)"
    assert repr(gs.tensor([], dtype=gs.int32)) == "tensor([], dtype=gradscope.int32)"
    assert t.element_size() == 4
    assert isinstance(t[0].item(), int) and t[1].item() == 2


def test_promotion_follows_torch():
    a = gs.tensor([1, 2, 3], dtype=gs.int32)
    check(a + 1, [2, 3, 4], gs.int32)
    check(a + gs.tensor([1, 1, 1]), [2, 3, 4], gs.int64)
    check(a * 2.5, [2.5, 5.0, 7.5], gs.float32)
    check(a + gs.ones(3, dtype=gs.float64), [2.0, 3.0, 4.0], gs.float64)
    check(a / 2, [0.5, 1.0, 1.5], gs.float32)
    check(a // 2, [0, 1, 1], gs.int32)
    check(a % 2, [1, 0, 1], gs.int32)
    check(a > 1, [False, True, True], gs.bool)
    check(a + gs.tensor([True, False, True]), [2, 2, 4], gs.int32)
    # A 0-dim int64 tensor does not widen an int32 one (same category), as in torch.
    check(a * gs.tensor(2), [2, 4, 6], gs.int32)
    check(gs.tensor(5, dtype=gs.int32) * gs.tensor([1, 2]), [5, 10], gs.int64)


def test_arithmetic_wraps_in_32_bits():
    big = gs.tensor([2**31 - 1], dtype=gs.int32)
    check(big + 1, [-2**31], gs.int32)
    check(-gs.tensor([-2**31], dtype=gs.int32), [-2**31], gs.int32)
    check(gs.tensor([-7, 7], dtype=gs.int32) // gs.tensor([2, -2], dtype=gs.int32), [-4, -4],
          gs.int32)
    check(gs.tensor([-7, 7], dtype=gs.int32) % gs.tensor([2, -2], dtype=gs.int32), [1, -1],
          gs.int32)
    check(~gs.tensor([0, 5], dtype=gs.int32), [-1, -6], gs.int32)


def test_reductions_and_ordering():
    a = gs.tensor([[3, -1], [4, 2]], dtype=gs.int32)
    check(a.sum(), 8, gs.int64)
    check(a.sum(0), [7, 1], gs.int64)
    check(a.max(), 4, gs.int32)
    check(a.min(), -1, gs.int32)
    check(a.argmax(), 2, gs.int64)
    check(a.flatten().cumsum(0), [3, 2, 6, 8], gs.int64)
    values, indices = a.flatten().sort(descending=True)
    check(values, [4, 3, 2, -1], gs.int32)
    check(indices, [2, 0, 3, 1], gs.int64)
    v, i = gs.topk(a.flatten(), 2)
    check(v, [4, 3], gs.int32)
    check(i, [2, 0], gs.int64)


def test_casts_both_ways():
    f = gs.tensor([1.7, -1.7, 3e9, float("nan")])
    check(f.int(), [1, -1, -2**31, -2**31], gs.int32)
    check(f.to(gs.int32), [1, -1, -2**31, -2**31], gs.int32)
    check(gs.tensor([2**40 + 5]).int(), [5], gs.int32)
    a = gs.tensor([1, -2], dtype=gs.int32)
    check(a.long(), [1, -2], gs.int64)
    check(a.float(), [1.0, -2.0], gs.float32)
    check(a.double(), [1.0, -2.0], gs.float64)
    check(a.bool(), [True, True], gs.bool)


def test_creation_with_dtype():
    check(gs.zeros(2, dtype=gs.int32), [0, 0], gs.int32)
    check(gs.ones(2, dtype=gs.int32), [1, 1], gs.int32)
    check(gs.full((2,), 7, dtype=gs.int32), [7, 7], gs.int32)
    check(gs.arange(3, dtype=gs.int32), [0, 1, 2], gs.int32)
    r = gs.randint(0, 5, (100,), dtype=gs.int32)
    assert r.dtype == gs.int32 and all(0 <= v < 5 for v in r.tolist())
    check(gs.cat([gs.tensor([1], dtype=gs.int32), gs.tensor([2])]), [1, 2], gs.int64)
    check(gs.stack([gs.tensor([1], dtype=gs.int32)] * 2), [[1], [1]], gs.int32)


def test_matmul_of_int32():
    a = gs.tensor([[1, 2], [3, 4]], dtype=gs.int32)
    check(a @ a, [[7, 10], [15, 22]], gs.int32)
    with pytest.raises(TypeError, match="same dtype"):
        a @ a.long()


def test_index_select_and_embedding_take_int32_indexes():
    idx = gs.tensor([2, 0], dtype=gs.int32)
    check(gs.arange(5).index_select(0, idx), [2, 0], gs.int64)
    w = gs.arange(6.0).reshape(3, 2).requires_grad_()
    out = gs.nn.functional.embedding(idx, w)
    out.sum().backward()
    assert w.grad.tolist() == [[1.0, 1.0], [0.0, 0.0], [1.0, 1.0]]
    # An int32 numpy array indexes as torch converts it; an int32 tensor in [] is refused, as
    # torch 1.13 refuses it.
    check(gs.arange(5)[np.array([4, 1], dtype=np.int32)], [4, 1], gs.int64)
    with pytest.raises(IndexError, match="long, byte or bool"):
        gs.arange(5)[idx]
    with pytest.raises(TypeError, match="expected an i64 index, got i32"):
        gs.arange(5).gather(0, idx)


def test_int32_tensors_do_not_require_grad():
    with pytest.raises(TypeError, match="only floating tensors can require grad, got i32"):
        gs.tensor([1, 2], dtype=gs.int32).requires_grad_()


def test_numpy_zero_copy_both_ways():
    arr = np.arange(4, dtype=np.int32)
    t = gs.from_numpy(arr)
    check(t, [0, 1, 2, 3], gs.int32)
    arr[0] = 9
    assert t[0].item() == 9  # the same memory
    back = t.numpy()
    assert back.dtype == np.int32 and back.tolist() == [9, 1, 2, 3]
    back[1] = 7
    assert t.tolist() == [9, 7, 2, 3]
    assert memoryview(t).format == "i" and memoryview(t).itemsize == 4
    copied = gs.tensor(arr)  # torch.tensor copies, keeping int32
    check(copied, [9, 7, 2, 3], gs.int32)
    arr[2] = 0
    assert copied[2].item() == 2


def test_dlpack_with_torch_both_ways():
    torch = pytest.importorskip("torch")
    t = gs.tensor([1, -2, 3], dtype=gs.int32)
    theirs = torch.from_dlpack(t)
    assert theirs.dtype == torch.int32 and theirs.tolist() == [1, -2, 3]
    theirs[0] = 5
    assert t[0].item() == 5
    ours = gs.from_dlpack(torch.tensor([4, 5], dtype=torch.int32))
    check(ours, [4, 5], gs.int32)
