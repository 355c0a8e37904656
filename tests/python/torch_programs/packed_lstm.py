# A two-layer bidirectional LSTM over a packed batch of unsorted variable-length sequences:
# pack_padded_sequence, the LSTM on the PackedSequence, pad_packed_sequence, gradients back
# through the packing to the padded input, and a few SGD steps. Weights are set the same way
# in both frameworks.
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


def fill(module):
    with torch.no_grad():
        for i, (_, p) in enumerate(module.named_parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((k * 0.37 + i).sin().mul(0.3).view(p.shape))


def rounded(t):
    return [round(v, 5) for v in t.flatten().tolist()]


torch.manual_seed(0)
lstm = nn.LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True)
fill(lstm)
print("parameters", [name for name, _ in lstm.named_parameters()])

x = (torch.arange(4 * 5 * 3, dtype=torch.float32) * 0.21).cos().view(4, 5, 3)
x.requires_grad_(True)
lengths = [5, 3, 4, 1]
packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
print("packed", type(packed).__name__, list(packed.data.shape), packed.batch_sizes.tolist())
print("sorted_indices", packed.sorted_indices.tolist(), packed.unsorted_indices.tolist())

out, (h, c) = lstm(packed)
print("out", type(out).__name__, list(out.data.shape), out.batch_sizes.tolist())
padded, out_lengths = pad_packed_sequence(out, batch_first=True)
print("padded", list(padded.shape), out_lengths.tolist())
print("padded values", rounded(padded))
print("h_n", list(h.shape), rounded(h))
print("c_n", list(c.shape), rounded(c))

loss = padded.pow(2).sum() + h.sum() + c.mean()
loss.backward()
print("loss", round(loss.item(), 5))
print("x.grad", rounded(x.grad))
for name, p in lstm.named_parameters():
    print("grad", name, round(p.grad.abs().sum().item(), 4))

# Initial states in the caller's batch order, and total_length.
h0 = (torch.arange(4 * 4 * 4, dtype=torch.float32) * 0.1).sin().view(4, 4, 4) * 0.5
c0 = (torch.arange(4 * 4 * 4, dtype=torch.float32) * 0.3).cos().view(4, 4, 4) * 0.5
out2, (h2, c2) = lstm(packed, (h0, c0))
padded2, _ = pad_packed_sequence(out2, batch_first=True, total_length=6, padding_value=-1.0)
print("with h0", list(padded2.shape), rounded(padded2[:, -2:]), rounded(h2[0]))

# A few training steps on the packed batch.
opt = torch.optim.SGD(lstm.parameters(), lr=0.05)
target = torch.linspace(-1, 1, 8)
for step in range(3):
    opt.zero_grad()
    seq = pack_padded_sequence(x.detach(), lengths, batch_first=True, enforce_sorted=False)
    _, (h, _) = lstm(seq)
    last = torch.cat([h[-2], h[-1]], 1)
    loss = (last.mean(0) - target).pow(2).mean()
    loss.backward()
    opt.step()
    print("step", step, round(loss.item(), 6))
