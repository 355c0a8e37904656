# The recurrent cells a hand-written loop uses (seq2seq decoders, custom RNNs): nn.RNNCell
# (tanh and relu), nn.LSTMCell and nn.GRUCell with their parameter names and shapes, two steps
# from a zero state, an unbatched step, the gradients of both steps, and torch's repr of the
# cells and of multi-layer RNN, LSTM and GRU modules.
import torch
import torch.nn as nn

torch.manual_seed(0)
print(nn.LSTM(3, 4), nn.RNN(3, 4, nonlinearity='relu'), nn.GRU(3, 4, 2, bias=False, batch_first=True, dropout=0.5, bidirectional=True))
print(nn.RNNCell(3, 4), nn.RNNCell(3, 4, nonlinearity='relu', bias=False), nn.LSTMCell(3, 4), nn.GRUCell(3, 4, dtype=torch.float64))
for cls in (nn.RNNCell, nn.LSTMCell, nn.GRUCell):
    c = cls(3, 4)
    print(cls.__name__, [(n, tuple(p.shape)) for n, p in c.named_parameters()])
    with torch.no_grad():
        for k, p in enumerate(c.parameters()):
            p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.3 + k).reshape(p.shape) * 0.5)
    x = torch.linspace(-1, 1, 6).reshape(2, 3).requires_grad_()
    out = c(x)
    h = out[0] if isinstance(out, tuple) else out
    out2 = c(x, out)
    h2 = out2[0] if isinstance(out2, tuple) else out2
    one = c(x[0])
    print(cls.__name__, [round(v, 5) for v in h2.flatten().tolist()], tuple((one[0] if isinstance(one, tuple) else one).shape))
    (h2 ** 2).sum().backward()
    print("grad", [round(v, 5) for v in x.grad.flatten().tolist()], [round(v, 5) for v in c.weight_hh.grad.flatten().tolist()[:6]])
