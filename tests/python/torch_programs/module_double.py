# Module.double()/float()/to(dtype)/type(dtype): parameters and buffers converted in place (the
# objects the program holds stay the same, with requires_grad and grad), an optimizer made
# before the conversion steps the float64 parameters, BatchNorm's num_batches_tracked stays
# int64, an LSTM runs in float64, and `p.data = t` replaces a parameter's data.
import torch
import torch.nn as nn


def fill(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.linspace(-0.5, 0.5, p.numel(), dtype=torch.float64).reshape(p.shape)
                   * (1 + 0.1 * i))


model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
fill(model)
w = model[0].weight
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x = torch.linspace(-1, 1, 18, dtype=torch.float64).reshape(6, 3).float()
y = (x ** 2).sum(1, keepdim=True)
model(x).sum().backward()
g = w.grad
print("returns self", model.double() is model)
print("same objects", model[0].weight is w, w.grad is g)
print("dtypes", [p.dtype for p in model.parameters()], g.dtype, w.requires_grad)
print("grad kept", [round(v, 5) for v in g[0].tolist()])
x64, y64 = x.double(), y.double()
opt.zero_grad()
for step in range(5):
    opt.zero_grad()
    loss = ((model(x64) - y64) ** 2).mean()
    loss.backward()
    opt.step()
    print("step", step, loss.dtype, f"{loss.item():.12f}")
print("weight", [f"{v:.12f}" for v in model[2].weight[0].tolist()])

bn = nn.BatchNorm1d(3).double()
print("bn", [(k, v.dtype) for k, v in bn.state_dict().items()])
out = bn(x64)
print("bn out", out.dtype, [round(v, 6) for v in bn.running_mean.tolist()],
      bn.num_batches_tracked.item())

lstm = nn.LSTM(3, 2, num_layers=2)
fill(lstm)
lstm.to(torch.float64)
seq, (h, c) = lstm(x64.reshape(6, 1, 3))
print("lstm", seq.dtype, [f"{v:.10f}" for v in h[-1, 0].tolist()])

model.float()
print("back to float", [p.dtype for p in model.parameters()], model[0].weight is w)
print("float loss", f"{((model(x) - y) ** 2).mean().item():.5f}")
model.type(torch.float64)
print("type", model[2].bias.dtype, model[2].bias.grad.dtype)

lin = nn.Linear(2, 2)
b = lin.bias
b.data = torch.tensor([1.5, -2.0], dtype=torch.float64)
print("data assigned", lin.bias is b, b.dtype, b.requires_grad, b.tolist())
try:
    lin.to(torch.int64)
except TypeError as e:
    print("TypeError", e)
