"""test_zero_copy.py: NumPy and PyTorch share memory with gradscope: from_numpy, numpy(), the
buffer protocol and DLPack both ways. Same pointers, writes visible both ways, and lifetimes
both ways (the array outlives the tensor and the reverse)."""
import gc

import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")


def test_from_numpy_shares_memory_and_honours_strides():
    a = np.arange(12.0).reshape(3, 4)
    t = gs.from_numpy(a)
    assert t.data_ptr() == a.ctypes.data and t.dtype is gs.float64
    a[0, 0] = 42.0
    assert t[0, 0].item() == 42.0
    t[1, 1] = -1.0
    assert a[1, 1] == -1.0
    s = gs.from_numpy(a[:, ::2])
    assert s.stride() == (4, 2) and s.tolist() == a[:, ::2].tolist()
    assert s.data_ptr() == a.ctypes.data


def test_from_numpy_keeps_the_array_alive():
    a = np.arange(5, dtype=np.float32)
    ptr = a.ctypes.data
    t = gs.from_numpy(a)
    del a
    gc.collect()
    assert t.data_ptr() == ptr and t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_from_numpy_refuses_what_the_engine_cannot_express():
    with pytest.raises(TypeError, match="uint16"):
        gs.from_numpy(np.zeros(3, dtype=np.uint16))
    with pytest.raises(ValueError, match="negative"):
        gs.from_numpy(np.arange(3.0)[::-1])
    with pytest.raises(ValueError, match="read-only"):
        gs.from_numpy(np.broadcast_to(np.arange(3.0), (2, 3)))
    with pytest.raises(ValueError, match="byte order"):
        gs.from_numpy(np.arange(3.0).astype(">f8"))
    with pytest.raises(TypeError):
        gs.from_numpy([1.0, 2.0])


def test_numpy_is_a_view_whose_base_keeps_the_storage_alive():
    t = gs.arange(6, dtype=gs.float32).view(2, 3)
    a = t.numpy()
    assert a.ctypes.data == t.data_ptr() and a.shape == (2, 3)
    a[1, 2] = 50.0
    assert t[1, 2].item() == 50.0
    t[0, 0] = 7.0
    assert a[0, 0] == 7.0
    tt = t.T.numpy()
    assert tt.strides == (4, 12)
    t.dispose()
    del t
    gc.collect()
    assert a.tolist() == [[7.0, 1.0, 2.0], [3.0, 4.0, 50.0]]


def test_numpy_refuses_a_tensor_that_requires_grad():
    x = gs.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="requires grad"):
        x.numpy()
    assert x.detach().numpy().tolist() == [1.0, 1.0]


def test_buffer_protocol():
    t = gs.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=gs.float64)
    m = memoryview(t)
    assert m.format == "d" and m.shape == (2, 2) and m.strides == (16, 8)
    assert np.asarray(t).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    m[0, 1] = 9.0
    assert t[0, 1].item() == 9.0
    m.release()
    assert np.frombuffer(gs.ones(3, dtype=gs.int64), dtype=np.int64).tolist() == [1, 1, 1]


def test_torch_from_dlpack_sees_the_same_memory():
    t = gs.arange(6, dtype=gs.float32).view(2, 3)
    tt = torch.from_dlpack(t)
    assert tt.data_ptr() == t.data_ptr() and tt.shape == (2, 3)
    tt[0, 1] = 11.0
    assert t[0, 1].item() == 11.0
    t[1, 0] = 12.0
    assert tt[1, 0].item() == 12.0
    t.dispose()
    del t
    gc.collect()
    assert tt.tolist() == [[0.0, 11.0, 2.0], [12.0, 4.0, 5.0]]  # torch keeps the storage


def test_gradscope_from_dlpack_of_a_torch_tensor():
    u = torch.arange(8, dtype=torch.float64).reshape(2, 4)[:, 1::2]
    g = gs.from_dlpack(u)
    assert g.data_ptr() == u.data_ptr() and g.stride() == (4, 2) and g.dtype is gs.float64
    g[0, 0] = -3.0
    assert u[0, 0].item() == -3.0
    ptr = u.data_ptr()
    del u
    gc.collect()
    assert g.data_ptr() == ptr and g.tolist() == [[-3.0, 3.0], [5.0, 7.0]]
    i = gs.from_dlpack(torch.tensor([1, 2, 3]))
    assert i.dtype is gs.int64 and i.tolist() == [1, 2, 3]


def test_numpy_from_dlpack():
    t = gs.tensor([1.0, 2.0])
    a = np.from_dlpack(t)
    assert a.ctypes.data == t.data_ptr()
    t[0] = 5.0  # NumPy 1.24 marks DLPack imports read-only: write from our side
    assert a[0] == 5.0


def test_a_dlpack_capsule_is_consumed_once():
    t = gs.ones(2)
    cap = t.__dlpack__()
    g = gs.from_dlpack(cap)
    with pytest.raises(ValueError, match="consumed"):
        gs.from_dlpack(cap)
    assert g.data_ptr() == t.data_ptr()
    assert t.__dlpack_device__() == (1, 0)
