# A GRU over sequences packed with pack_sequence (sorted, time-major), pad_sequence for the
# same batch padded, gradients flowing to every sequence, a Linear on the packed output
# re-wrapped as a PackedSequence, and the plain RNN on the same pack.
import torch
import torch.nn as nn
from torch.nn.utils.rnn import (PackedSequence, pack_padded_sequence, pack_sequence,
                                pad_packed_sequence, pad_sequence)


def fill(module, salt):
    with torch.no_grad():
        for i, (_, p) in enumerate(module.named_parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((k * 0.29 + i + salt).cos().mul(0.4).view(p.shape))


def rounded(t):
    return [round(v, 5) for v in t.flatten().tolist()]


torch.manual_seed(0)
seqs = [(torch.arange(n * 2, dtype=torch.float32) * (0.3 + n / 10)).sin().view(n, 2)
        for n in (4, 3, 1)]
for s in seqs:
    s.requires_grad_(True)

padded_in = pad_sequence(seqs, padding_value=0.5)
print("pad_sequence", list(padded_in.shape), rounded(padded_in))
print("batch_first", list(pad_sequence(seqs, batch_first=True).shape))

packed = pack_sequence(seqs)
print("pack_sequence", packed.batch_sizes.tolist(), packed.sorted_indices, rounded(packed.data))

gru = nn.GRU(2, 3)
fill(gru, 0.0)
out, h = gru(packed)
padded, lengths = pad_packed_sequence(out)
print("gru padded", list(padded.shape), lengths.tolist(), rounded(padded))
print("gru h_n", list(h.shape), rounded(h))
head = nn.Linear(3, 2)
fill(head, 2.0)
scored = PackedSequence(head(out.data), out.batch_sizes, out.sorted_indices,
                        out.unsorted_indices)
scores, _ = pad_packed_sequence(scored, batch_first=True, padding_value=-9.0)
print("re-packed head", list(scores.shape), rounded(scores))
(padded.sum() * 0.5 + h.pow(2).sum() + scores.clamp(min=-1).sum()).backward()
for i, s in enumerate(seqs):
    print("seq grad", i, rounded(s.grad))
for name, p in gru.named_parameters():
    print("grad", name, round(p.grad.abs().sum().item(), 4))

# The same batch through pack_padded_sequence of the padded tensor gives the same output.
again = pack_padded_sequence(padded_in, [4, 3, 1])
out2, h2 = gru(again)
print("same data", rounded(out2.data) == rounded(out.data), rounded(h2) == rounded(h))

rnn = nn.RNN(2, 3, nonlinearity="tanh")
fill(rnn, 1.0)
out3, h3 = rnn(packed)
padded3, _ = pad_packed_sequence(out3, total_length=5)
print("rnn padded", list(padded3.shape), rounded(padded3))
print("rnn h_n", rounded(h3))
