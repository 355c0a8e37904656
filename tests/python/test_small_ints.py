"""uint8, int8 and int16 tensors as PyTorch's: gradscope.uint8, int8 and int16 (and the alias
gradscope.short), torch 1.13's promotion (uint8 with int8 is int16, an integer tensor with a
Python float is float32, comparisons give bool), wrapping at each width, integer division
without a crash (int8 -128 // -1), sums in int64, .byte()/.char()/.short(), zero copy with
NumPy both ways, DLPack with torch, and the index rules (a uint8 tensor is a mask with 1.13's
deprecation warning; int8 and int16 tensors are refused in [], arrays of them index)."""
import warnings

import numpy as np
import pytest

import gradscope as gs

SMALL = [(gs.uint8, np.uint8, 1), (gs.int8, np.int8, 1), (gs.int16, np.int16, 2)]


def check(t, values, dtype):
    assert isinstance(t, gs.Tensor), type(t)
    assert t.dtype == dtype, (t.dtype, dtype)
    assert t.tolist() == values


@pytest.mark.parametrize("dtype,np_dtype,size", SMALL)
def test_small_ints_are_dtypes_with_torchs_names(dtype, np_dtype, size):
    name = np.dtype(np_dtype).name
    assert repr(dtype) == "gradscope." + name
    assert dtype.itemsize == size and not dtype.is_floating_point
    t = gs.tensor([1, 2], dtype=dtype)
    check(t, [1, 2], dtype)
    assert repr(t) == "tensor([1, 2], dtype=gradscope.%s)" % name
    assert t.element_size() == size
    assert isinstance(t[0].item(), int) and t[1].item() == 2
    assert gs.tensor([1, 2], dtype=np_dtype).dtype is dtype  # NumPy's dtypes name them too
    assert gs.short is gs.int16


def test_promotion_follows_torch():
    u = gs.tensor([0, 200, 255], dtype=gs.uint8)
    c = gs.tensor([-1, 5, 127], dtype=gs.int8)
    s = gs.tensor([1, 2, 3], dtype=gs.int16)
    check(u + c, [-1, 205, 382], gs.int16)
    check(u + s, [1, 202, 258], gs.int16)
    check(c * s, [-1, 10, 381], gs.int16)
    check(u + 1000, [232, 176, 231], gs.uint8)  # a Python int keeps the dtype, and wraps
    check(u * 0.5, [0.0, 100.0, 127.5], gs.float32)
    check(u / 2, [0.0, 100.0, 127.5], gs.float32)
    check(u > c, [True, True, True], gs.bool)  # compared in int16: 255 > 127
    check(u + gs.tensor([1, 1, 1]), [1, 201, 256], gs.int64)
    check(c + gs.tensor([1, 1, 1], dtype=gs.int32), [0, 6, 128], gs.int32)
    check(u + gs.tensor([True, False, True]), [1, 200, 0], gs.uint8)
    check(c + gs.tensor(1000), [-25, -19, 103], gs.int8)  # a 0-dim int64 does not widen
    check(s + gs.tensor(0.5, dtype=gs.float64), [1.5, 2.5, 3.5], gs.float64)


def test_arithmetic_wraps_at_each_width():
    u = gs.tensor([0, 1, 200, 255], dtype=gs.uint8)
    c = gs.tensor([-128, -1, 5, 127], dtype=gs.int8)
    s = gs.tensor([-32768, -1, 7, 32767], dtype=gs.int16)
    check(-u, [0, 255, 56, 1], gs.uint8)
    check(u + u, [0, 2, 144, 254], gs.uint8)
    check(u * u, [0, 1, 64, 1], gs.uint8)
    check(~u, [255, 254, 55, 0], gs.uint8)
    check(c.abs(), [-128, 1, 5, 127], gs.int8)
    check(c ** 3, [0, -1, 125, 127], gs.int8)
    check(s + s, [0, -2, 14, -2], gs.int16)
    check(-s, [-32768, 1, -7, -32767], gs.int16)


def test_integer_division_and_remainder():
    c = gs.tensor([-128, -1, 5, 127], dtype=gs.int8)
    s = gs.tensor([-32768, -1, 7, 32767], dtype=gs.int16)
    u = gs.tensor([0, 1, 200, 255], dtype=gs.uint8)
    check(c // -1, [-128, 1, -5, -127], gs.int8)  # no SIGFPE: -128 // -1 wraps
    check(s // -1, [-32768, 1, -7, -32767], gs.int16)
    check(c % -3, [-2, -1, -1, -2], gs.int8)
    check(u // 3, [0, 0, 66, 85], gs.uint8)
    check(u % 7, [0, 1, 4, 3], gs.uint8)
    for t in (c, s, u):
        with pytest.raises((RuntimeError, ValueError), match="division by zero"):
            t // 0  # torch raises RuntimeError; both refuse
        with pytest.raises((RuntimeError, ValueError), match="division by zero"):
            t % gs.zeros(4, dtype=t.dtype)
    with pytest.raises((RuntimeError, ValueError), match="division by zero"):
        u // gs.tensor(256)  # 256 is 0 once read as uint8


def test_reductions_and_casts():
    u = gs.tensor([0, 1, 200, 255], dtype=gs.uint8)
    check(u.sum(), 456, gs.int64)
    check(u.cumsum(0), [0, 1, 201, 456], gs.int64)
    check(u.max(), 255, gs.uint8)
    check(u.argmax(), 3, gs.int64)
    check(gs.tensor([300, -1, 1000]).byte(), [44, 255, 232], gs.uint8)
    check(gs.tensor([300, -1, 1000]).char(), [44, -1, -24], gs.int8)
    check(gs.tensor([40000, -1]).short(), [-25536, -1], gs.int16)
    check(gs.tensor([1.7, -1.5, 255.9]).byte(), [1, 255, 255], gs.uint8)
    assert u.byte() is u and u.short().char().dtype is gs.int8


@pytest.mark.parametrize("dtype,np_dtype,size", SMALL)
def test_numpy_round_trip_is_zero_copy(dtype, np_dtype, size):
    a = np.arange(4, dtype=np_dtype)
    t = gs.from_numpy(a)
    assert t.dtype is dtype and t.data_ptr() == a.ctypes.data
    a[0] = 9
    assert t[0].item() == 9
    back = t.numpy()
    assert back.dtype == np_dtype and np.shares_memory(back, a)
    assert memoryview(t).itemsize == size
    copied = gs.tensor(a)
    a[1] = 7
    assert copied.dtype is dtype and copied[1].item() == 1


@pytest.mark.parametrize("dtype,np_dtype,size", SMALL)
def test_dlpack_with_torch_keeps_the_dtype(dtype, np_dtype, size):
    torch = pytest.importorskip("torch")
    t = gs.tensor([1, -2, 3], dtype=dtype)
    out = torch.from_dlpack(t)
    assert str(out.dtype) == "torch." + np.dtype(np_dtype).name
    assert out.tolist() == t.tolist()
    back = gs.from_dlpack(torch.tensor([5, 6], dtype=out.dtype))
    assert back.dtype is dtype and back.tolist() == [5, 6]


def test_uint8_tensor_indexes_as_a_mask_with_a_warning():
    x = gs.arange(10, 14)
    with pytest.warns(UserWarning, match="indexing with dtype torch.uint8 is now deprecated"):
        check(x[gs.tensor([1, 0, 1, 1], dtype=gs.uint8)], [10, 12, 13], gs.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = gs.zeros(4)
        y[np.array([0, 1, 0, 1], np.uint8)] = 5.0
    assert y.tolist() == [0.0, 5.0, 0.0, 5.0]


def test_int8_and_int16_tensors_are_not_indexes_but_arrays_are():
    x = gs.arange(10, 14)
    for dtype in (gs.int8, gs.int16):
        with pytest.raises(IndexError, match="must be long, byte or bool tensors"):
            x[gs.tensor([1], dtype=dtype)]
    check(x[np.array([3, 0], np.int8)], [13, 10], gs.int64)
    check(x[np.array([1, 2], np.int16)], [11, 12], gs.int64)


def test_integer_tensors_cannot_require_grad():
    with pytest.raises((RuntimeError, TypeError)):
        gs.tensor([1], dtype=gs.uint8).requires_grad_()
