"""gradscope.nn.utils.rnn: variable-length sequences for RNN, LSTM and GRU, as
torch.nn.utils.rnn's.

PackedSequence, pack_padded_sequence, pack_sequence and pad_packed_sequence are the engine's
(python/packed.c over include/gradscope/packed.h): a PackedSequence is one object to dispose
scopes, and nn.RNN/LSTM/GRU run it step by step over the sequences still active. pad_sequence
is cat and stack of the sequences and their padding, written here. Gradients flow through all
of them: from the packed data back to the padded input, and from the padded output back to
the packed data.
"""
import gradscope
from gradscope import _gradscope
from gradscope._missing import unsupported as _unsupported

PackedSequence = _gradscope._rnn.PackedSequence


def _packed_to(self, *args, **kwargs):
    """packed.to(dtype), .to(device), ...: its data converted as Tensor.to converts it, the
    batch sizes and indices kept (as torch's); itself when nothing changes."""
    before = self.data
    data = before.to(*args, **kwargs)
    if data is before:
        return self
    return PackedSequence(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)


def _packed_float(self):
    """The packed data as float32."""
    return _packed_to(self, gradscope.float32)


def _packed_double(self):
    """The packed data as float64."""
    return _packed_to(self, gradscope.float64)


def _packed_cpu(self):
    """Itself: it is on the CPU."""
    return self


for _name, _value in [("to", _packed_to), ("float", _packed_float), ("double", _packed_double),
                      ("cpu", _packed_cpu)]:
    _gradscope._extend_type(PackedSequence, _name, _value)


def _lengths_tensor(lengths):
    """lengths as an int64 tensor, from a list, a tuple or a tensor of any integer dtype."""
    if isinstance(lengths, gradscope.Tensor):
        return lengths if lengths.dtype == gradscope.int64 else lengths.long()
    return gradscope.tensor([int(n) for n in lengths], dtype=gradscope.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs input [T, B, *] ([B, T, *] with batch_first) holding sequences of the given
    lengths; with enforce_sorted the lengths must be decreasing, otherwise the batch is sorted
    and sorted_indices/unsorted_indices say how."""
    return _gradscope._rnn.pack_padded_sequence(input, _lengths_tensor(lengths),
                                                batch_first=batch_first,
                                                enforce_sorted=enforce_sorted)


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of tensors [L_i, *] (same trailing shape)."""
    return _gradscope._rnn.pack_sequence(list(sequences), enforce_sorted=enforce_sorted)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """(padded [T, B, *] or [B, T, *], lengths int64 [B]) in the original batch order; T is
    the longest length, or total_length (which must not be shorter)."""
    return _gradscope._rnn.pad_packed_sequence(sequence, batch_first=batch_first,
                                               padding_value=float(padding_value),
                                               total_length=total_length)


def pad_sequence(sequences, batch_first=False, padding_value=0.0):
    """Stacks tensors [L_i, *] into [T, B, *] ([B, T, *] with batch_first), T the longest,
    each padded with padding_value after its end."""
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("pad_sequence(): received an empty list of sequences")
    for i, s in enumerate(sequences):
        if not isinstance(s, gradscope.Tensor):
            raise TypeError(f"pad_sequence(): sequence {i} is {type(s).__name__}, not a Tensor")
        if s.dim() == 0:
            raise RuntimeError(f"pad_sequence(): sequence {i} is a 0-dim tensor; each must "
                               "have a length (dim 0)")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.shape[0]
        if missing:
            pad = gradscope.full((missing,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype)
            s = gradscope.cat([s, pad], 0)
        padded.append(s)
    return gradscope.stack(padded, 0 if batch_first else 1)


__getattr__ = _unsupported(__name__)
