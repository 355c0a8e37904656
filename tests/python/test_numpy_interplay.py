"""NumPy interplay as PyTorch's: gradscope's operators win over NumPy's (arrays and NumPy
scalars on either side give tensors), NumPy scalars act as Python numbers (no export of a
tensor that requires grad), and arrays convert as torch converts them, int32 included."""
import numpy as np
import pytest

import gradscope as gs


def assert_tensor(t, values, dtype):
    assert isinstance(t, gs.Tensor), type(t)
    assert t.dtype == dtype
    assert t.tolist() == values


def test_array_on_either_side_gives_a_tensor():
    assert_tensor(gs.ones(2) + np.ones(2, np.float32), [2.0, 2.0], gs.float32)
    assert_tensor(np.ones(2, np.float32) + gs.ones(2), [2.0, 2.0], gs.float32)
    assert_tensor(np.full(2, 3.0, np.float32) - gs.ones(2), [2.0, 2.0], gs.float32)
    # A float64 array is a float64 operand, as in torch: the result is float64.
    assert_tensor(gs.ones(2) + np.ones(2), [2.0, 2.0], gs.float64)


def test_numpy_scalars_act_as_python_numbers():
    assert_tensor(np.float64(2) * gs.ones(2), [2.0, 2.0], gs.float32)
    assert_tensor(gs.ones(2) * np.float32(2), [2.0, 2.0], gs.float32)
    assert_tensor(gs.ones(2) * np.int64(3), [3.0, 3.0], gs.float32)
    assert_tensor(gs.ones(2, dtype=gs.int64) * np.float64(2.5), [2.5, 2.5], gs.float32)
    assert_tensor(gs.ones(2) * np.array(2.0), [2.0, 2.0], gs.float32)  # a 0-d array
    assert_tensor(gs.ones(2) < np.float32(2), [True, True], gs.bool)


def test_numpy_scalar_with_requires_grad_records_the_op():
    w = gs.ones(2, requires_grad=True)
    y = w * np.float32(2)
    assert y.grad_fn is not None
    y.sum().backward()
    assert w.grad.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("np_dtype", [np.int8, np.int16, np.int32, np.uint8, np.int64])
def test_integer_arrays_convert(np_dtype):
    # Each keeps its dtype, as torch's; an int32 tensor with a narrower array stays int32.
    kept = {np.int8: gs.int8, np.int16: gs.int16, np.int32: gs.int32, np.uint8: gs.uint8,
            np.int64: gs.int64}[np_dtype]
    assert_tensor(gs.tensor(np.array([1, 2], np_dtype)), [1, 2], kept)
    assert_tensor(gs.ones(2, dtype=gs.int64) + np.array([1, 2], np_dtype), [2, 3], gs.int64)
    with_i32 = gs.int64 if np_dtype is np.int64 else gs.int32
    assert_tensor(gs.ones(2, dtype=gs.int32) + np.array([1, 2], np_dtype), [2, 3], with_i32)


def test_zero_dim_arrays_and_numpy_scalars_give_zero_dim_tensors():
    # torch.tensor(np.array(3.0)) is 0-d; a non-contiguous array is copied in its own order.
    for value, dtype in [(np.array(3.0), gs.float64), (np.float32(2), gs.float32),
                         (np.array(7, np.uint16), gs.int64), (np.int32(-4), gs.int32)]:
        t = gs.tensor(value)
        assert t.dim() == 0 and t.dtype == dtype and t.item() == value.item()
    assert gs.tensor(np.arange(6).reshape(2, 3).T).tolist() == [[0, 3], [1, 4], [2, 5]]


def test_uint16_arrays_widen_to_int64():
    assert_tensor(gs.tensor(np.array([1, 65535], np.uint16)), [1, 65535], gs.int64)


def test_float16_array_converts_to_float32():
    assert_tensor(gs.tensor(np.array([0.5, 1.5], np.float16)), [0.5, 1.5], gs.float32)


def test_index_assignment_from_an_array():
    t = gs.zeros(2, 3)
    t[0] = np.ones(3)
    t[1] = [4, 5, 6]
    t[1, 0] = np.float32(7)
    assert t.tolist() == [[1.0, 1.0, 1.0], [7.0, 5.0, 6.0]]


def test_ufuncs_still_take_tensors_as_arrays():
    out = np.exp(gs.zeros(2))
    assert isinstance(out, np.ndarray) and out.tolist() == [1.0, 1.0]
