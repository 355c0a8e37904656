"""gradscope.nn.utils.rnn: PackedSequence over the engine's packed sequence (one object to
scopes), pack/pad with gradients, recurrent layers taking and returning PackedSequence, and
the errors bad input gets. The numbers against PyTorch are in torch_programs/packed_lstm.py
and packed_gru.py."""
import gc

import pytest

import gradscope as gs
from gradscope.nn.utils.rnn import (PackedSequence, pack_padded_sequence, pack_sequence,
                                    pad_packed_sequence, pad_sequence)


def padded_batch():
    # T=3, B=2: sequence 0 has length 3, sequence 1 length 2.
    return (gs.arange(12.0).view(3, 2, 2) / 10).requires_grad_(True)


def test_pack_and_pad_round_trip_with_gradients():
    x = padded_batch()
    p = pack_padded_sequence(x, [3, 2])
    assert isinstance(p, PackedSequence)
    assert p.batch_sizes.tolist() == [2, 2, 1] and p.sorted_indices is None
    assert p.data.shape == (5, 2)
    out, lengths = pad_packed_sequence(p, batch_first=True, total_length=4)
    assert out.shape == (2, 4, 2) and lengths.tolist() == [3, 2]
    assert out[1, 2:].tolist() == [[0.0, 0.0], [0.0, 0.0]]
    out.sum().backward()
    # Padding positions (step 2 of sequence 1) get no gradient.
    assert x.grad.tolist() == [[[1.0, 1.0], [1.0, 1.0]], [[1.0, 1.0], [1.0, 1.0]],
                               [[1.0, 1.0], [0.0, 0.0]]]


def test_unsorted_lengths_keep_the_permutation():
    x = padded_batch()
    p = pack_padded_sequence(x, gs.tensor([2, 3]), enforce_sorted=False)
    assert p.sorted_indices.tolist() == [1, 0] and p.unsorted_indices.tolist() == [1, 0]
    out, lengths = pad_packed_sequence(p)
    assert lengths.tolist() == [2, 3]
    assert out[:2].tolist() == x[:2].tolist() and out[2, 0].tolist() == [0.0, 0.0]


def test_a_packed_sequence_unpacks_as_torchs_namedtuple():
    p = pack_sequence([gs.ones(3, 1), gs.ones(2, 1)])
    data, batch_sizes, sorted_indices, unsorted_indices = p
    assert len(p) == 4 and data.shape == (5, 1) and batch_sizes.tolist() == [2, 2, 1]
    assert sorted_indices is None and unsorted_indices is None
    assert repr(p).startswith("PackedSequence(data=tensor(")


def test_parts_keep_the_packed_sequence_alive():
    data = pack_sequence([gs.ones(2, 1), gs.ones(1, 1)]).data
    gc.collect()
    assert data.tolist() == [[1.0], [1.0], [1.0]]


def test_a_scope_disposes_the_packed_sequence_as_one_object():
    with gs.dispose_scope("batch"):
        p = pack_sequence([gs.ones(2, 1), gs.ones(1, 1)])
        assert p.is_alive
    assert not p.is_alive
    with pytest.raises(RuntimeError, match="stale"):
        p.data


def test_recurrent_layers_take_and_return_packed_sequences():
    for cls in (gs.nn.LSTM, gs.nn.GRU, gs.nn.RNN):
        rnn = cls(2, 3)
        x = padded_batch()
        out, state = rnn(pack_padded_sequence(x, [3, 2]))
        assert isinstance(out, PackedSequence) and out.data.shape == (5, 3)
        h = state[0] if cls is gs.nn.LSTM else state
        assert h.shape == (1, 2, 3)
        padded, _ = pad_packed_sequence(out)
        (padded.sum() + h.sum()).backward()
        assert x.grad is not None and x.grad[2, 1].tolist() == [0.0, 0.0]
        assert all(p.grad is not None for p in rnn.parameters())


def test_a_packed_sequence_is_built_from_parts_as_torchs():
    x = padded_batch()
    p = pack_padded_sequence(x, [2, 3], enforce_sorted=False)
    w = gs.tensor([[2.0, 0.0], [0.0, 3.0]], requires_grad=True)
    q = PackedSequence(p.data @ w, p.batch_sizes, p.sorted_indices, p.unsorted_indices)
    out, lengths = pad_packed_sequence(q)
    assert lengths.tolist() == [2, 3]
    assert out[1, 0].tolist() == [x[1, 0, 0].item() * 2, x[1, 0, 1].item() * 3]
    out.sum().backward()
    assert w.grad is not None and x.grad is not None
    # The missing index list is the other's inverse; without both, the batch is sorted.
    assert PackedSequence(p.data, p.batch_sizes, p.sorted_indices).unsorted_indices.tolist() \
        == [1, 0]
    assert PackedSequence(p.data, p.batch_sizes).sorted_indices is None
    with pytest.raises(RuntimeError, match="expected packed data of 4 rows"):
        PackedSequence(gs.ones(3, 1), gs.tensor([2, 2]))
    with pytest.raises(ValueError, match="non-increasing"):
        PackedSequence(gs.ones(3, 1), gs.tensor([1, 2]))
    with pytest.raises(ValueError, match="inverse of unsorted_indices"):
        PackedSequence(gs.ones(3, 1), gs.tensor([2, 1]), gs.tensor([0, 0]))
    with pytest.raises(TypeError, match="Tensors or None"):
        PackedSequence(gs.ones(3, 1), gs.tensor([2, 1]), "x")


def test_pad_sequence_pads_and_passes_gradients():
    a = gs.ones(3, 2, requires_grad=True)
    b = gs.full((1, 2), 2.0, requires_grad=True)
    out = pad_sequence([a, b], padding_value=-1.0)
    assert out.shape == (3, 2, 2)
    assert out[:, 1].tolist() == [[2.0, 2.0], [-1.0, -1.0], [-1.0, -1.0]]
    assert pad_sequence([a, b], batch_first=True).shape == (2, 3, 2)
    (out * 3).sum().backward()
    assert b.grad.tolist() == [[3.0, 3.0]] and a.grad.tolist() == [[3.0, 3.0]] * 3


def test_bad_input_gets_clear_errors():
    x = padded_batch()
    with pytest.raises(ValueError, match="sorted|decreasing"):
        pack_padded_sequence(x, [2, 3])
    with pytest.raises((ValueError, IndexError), match="length"):
        pack_padded_sequence(x, [4, 2])
    with pytest.raises(TypeError):
        pad_packed_sequence(x)
    with pytest.raises(TypeError, match="PackedSequence"):
        gs.nn.LSTM(2, 3)([1, 2])
    # hx that is not a pair: a TypeError (it was a SystemError, found by a packed-input fuzz)
    with pytest.raises(TypeError, match=r"hx must be a tuple \(h0, c0\)"):
        gs.nn.LSTM(2, 3)(pack_sequence([gs.ones(2, 2)]), gs.zeros(1, 1, 3))
    with pytest.raises(ValueError, match="total_length"):
        pad_packed_sequence(pack_sequence([gs.ones(2, 1)]), total_length=-3)
    with pytest.raises(RuntimeError, match="empty list"):
        pad_sequence([])
    with pytest.raises(TypeError, match="sequence 1"):
        pad_sequence([gs.ones(2), [1.0]])
    with pytest.raises(TypeError, match="Tensors"):
        pack_sequence([gs.ones(2, 1), "x"])


def test_packed_to_converts_the_data_and_keeps_the_layout():
    seqs = [gs.tensor([[1.0], [2.0], [3.0]]), gs.tensor([[4.0]])]
    packed = pack_sequence(seqs)
    assert packed.to("cpu") is packed and packed.cpu() is packed
    as64 = packed.double()
    assert as64.data.dtype == gs.float64 and as64.data.tolist() == packed.data.tolist()
    assert as64.batch_sizes.tolist() == packed.batch_sizes.tolist()
    assert packed.to(gs.float64).data.dtype == gs.float64 and as64.float().data.dtype == gs.float32
    with pytest.raises(RuntimeError, match="CPU only"):
        packed.to("cuda")
