# torch.set_default_dtype / get_default_dtype: with float64 the default, Python floats,
# tensor(), zeros(), randn(), arange() with a float, linspace and the layers' parameters are
# float64 (integer arguments still give int64), tensors print without dtype= for float64 and
# with it for float32; a model built then trains in float64; an integer default is refused.
import torch
import torch.nn as nn

print("start", torch.get_default_dtype())
torch.set_default_dtype(torch.float64)
print("now", torch.get_default_dtype())
print("made", torch.tensor([1.5]).dtype, torch.zeros(2).dtype, torch.ones(2, 2).dtype,
      torch.randn(2).dtype, torch.rand(2).dtype, torch.empty(1).dtype,
      torch.arange(0.0, 1.0, 0.25).dtype, torch.arange(3).dtype, torch.linspace(0, 1, 3).dtype,
      torch.eye(2).dtype, torch.tensor(2.0).dtype)
print("promoted", (torch.tensor([1, 2]) * 1.5).dtype, (torch.tensor([1, 2]) / 2).dtype)
print(torch.tensor([1.5, -0.25]), torch.tensor([1.5], dtype=torch.float32))
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
print("params", [p.dtype for p in model.parameters()])
print("lstm", nn.LSTM(2, 3).weight_hh_l0.dtype, "bn", nn.BatchNorm1d(2).running_var.dtype)
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (1 + 0.1 * i))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.linspace(-1, 1, 12).reshape(4, 3)
y = x.sum(1, keepdim=True) ** 2
for step in range(4):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    print("step", step, loss.dtype, f"{loss.item():.12f}")
try:
    torch.set_default_dtype(torch.int64)
except TypeError as e:
    print("TypeError:", e)
torch.set_default_dtype(torch.float32)
print("back", torch.get_default_dtype(), torch.tensor([0.5]).dtype, nn.Linear(1, 1).bias.dtype)
