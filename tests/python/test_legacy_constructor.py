"""torch.Tensor(...) (the legacy constructor tutorials use: float32 whatever the data, sizes as
ints or a torch.Size) and nn.Parameter's repr ("Parameter containing:") against torch 1.13."""
import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("data", [[0], [1, 2], [[1, 2], [3, 4]], [1.5, 2], [True, False],
                                  np.array([1, 2], dtype=np.int64), (2, 3)],
                         ids=["zero", "ints", "nested", "floats", "bools", "ndarray", "tuple"])
def test_data_becomes_float32(data):
    g, t = gs.Tensor(data), torch.Tensor(data)
    assert str(g.dtype).split(".")[1] == str(t.dtype).split(".")[1] == "float32"
    assert g.tolist() == t.tolist()


@pytest.mark.parametrize("sizes", [(2, 3), (4,), (0, 2), ()], ids=["2x3", "4", "0x2", "none"])
def test_sizes_make_a_float32_tensor_of_that_shape(sizes):
    g, t = gs.Tensor(*sizes), torch.Tensor(*sizes)
    assert list(g.shape) == list(t.shape)
    assert str(g.dtype).endswith("float32")


def test_a_size_object_is_sizes_not_data():
    assert list(gs.Tensor(gs.Size([2, 5])).shape) == list(torch.Tensor(torch.Size([2, 5])).shape)


def test_negative_size_is_refused():
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        gs.Tensor(2, -1)


def test_the_char_rnn_tutorials_loss_accumulates_floats():
    for m in (gs, torch):
        loss = m.Tensor([0])
        loss += m.tensor(0.25)
        assert loss.tolist() == [0.25]


def test_parameter_repr_is_torchs():
    w = [[0.5, -1.0], [2.0, 0.25]]
    g = gs.nn.Parameter(gs.tensor(w))
    t = torch.nn.Parameter(torch.tensor(w))
    assert repr(g) == repr(t) and str(g) == str(t)
    assert repr(g).startswith("Parameter containing:\ntensor(")
    # a module's parameter too, and not its .data or a detached copy
    lin = gs.nn.Linear(2, 1)
    assert repr(lin.bias).startswith("Parameter containing:\n")
    assert repr(lin.bias.data).startswith("tensor(")
    assert repr(lin.bias.detach()).startswith("tensor(")
    assert repr(gs.nn.Parameter(gs.zeros(1), requires_grad=False)) == \
        repr(torch.nn.Parameter(torch.zeros(1), requires_grad=False))
