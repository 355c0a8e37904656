"""Errors in Python's words: the engine's messages name Tensor.backward, t.detach() and
Tensor.requires_grad_ rather than the C functions, and bool tensors cross DLPack to torch."""
import numpy as np
import pytest

import gradscope as gs


def test_backward_without_grad_names_python_calls():
    with pytest.raises(RuntimeError) as e:
        gs.ones(2).sum().backward()
    msg = str(e.value)
    assert msg.startswith("Tensor.backward: ")
    assert "Tensor.requires_grad_()" in msg and "gs_" not in msg


def test_requires_grad_on_a_non_leaf_names_requires_grad_():
    y = gs.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match=r"^Tensor\.requires_grad_: .* is not a leaf"):
        y.requires_grad_(False)


def test_export_of_a_tensor_that_requires_grad_suggests_detach():
    with pytest.raises(ValueError) as e:
        gs.ones(2, requires_grad=True).__dlpack__()
    assert "t.detach()" in str(e.value) and "gs_detach" not in str(e.value)


def test_backward_with_a_wrong_gradient_names_backward():
    with pytest.raises(RuntimeError, match=r"^Tensor\.backward: "):
        gs.ones(2, requires_grad=True).sum().backward(gs.ones(3))


def test_bool_tensor_crosses_dlpack_as_uint8():
    torch = pytest.importorskip("torch")
    t = gs.tensor([True, False, True])
    out = torch.from_dlpack(t)
    assert out.dtype == torch.uint8
    assert out.bool().tolist() == [True, False, True]
    assert np.from_dlpack(gs.tensor([False, True])).astype(bool).tolist() == [False, True]
    assert t.numpy().dtype == np.bool_  # the zero-copy NumPy view keeps bool
