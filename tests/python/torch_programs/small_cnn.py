# A small CNN on the bundled 8x8 digits: conv -> relu -> max-pool -> linear, a few SGD steps,
# then BatchNorm2d in train and eval mode, avg-pool and the trigonometric and moment ops.
# Deterministic weights, so torch and gradscope must print the same numbers.
import gzip
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "data", "digits.csv.gz")
rows = np.loadtxt(gzip.open(path, "rt"), delimiter=",", dtype=np.float32)[:256]
# A small deterministic ramp keeps the blank pixels apart: with exact ties inside a pooling
# window the chosen maximum (and so the gradient) would hang on the last bit of the
# convolution, which differs with the thread count of BLAS, in torch as in gradscope.
ramp = ((np.arange(rows.shape[0] * 64) * 37) % 101 / 1000.0).astype(np.float32)
x = torch.tensor(rows[:, :64] / 16.0 + ramp.reshape(-1, 64)).reshape(-1, 1, 8, 8)
y = torch.tensor(rows[:, 64].astype(np.int64))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 6, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(6 * 4 * 4, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv(x)))
        return self.fc(x.flatten(1))


def fill(model, salt):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            values = ((np.arange(n) * 7919 + (i + salt) * 104729) % 1000) / 5000.0 - 0.1
            p.copy_(torch.tensor(values.astype(np.float32).reshape(tuple(p.shape))))


model = Net()
fill(model, 0)
print(model)
opt = torch.optim.SGD(model.parameters(), lr=0.3, momentum=0.5)
for step in range(6):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.5f} conv grad {model.conv.weight.grad.abs().sum().item():.5f}")
with torch.no_grad():
    acc = (model(x).argmax(dim=1) == y).float().mean().item()
print(f"accuracy {acc:.4f}")

# The functional forms, with stride, padding and dilation.
w = torch.tensor(((np.arange(2 * 1 * 3 * 3) % 7) / 7.0 - 0.4).astype(np.float32).reshape(2, 1, 3, 3))
out = F.conv2d(x[:4], w, stride=2, padding=1)
print("conv2d", tuple(out.shape), f"{out.sum().item():.5f}")
out = F.conv2d(x[:4], w, dilation=2)
print("conv2d dilated", tuple(out.shape), f"{out.sum().item():.5f}")
print("max_pool2d", f"{F.max_pool2d(x[:4], 3, stride=2, padding=1).sum().item():.5f}")
print("avg_pool2d", f"{F.avg_pool2d(x[:4], 2).sum().item():.5f}",
      f"{nn.AvgPool2d(3, stride=1, padding=1)(x[:4]).sum().item():.5f}")

# BatchNorm2d: train mode normalises by the batch and moves the running estimates; eval mode
# uses them.
net = nn.Sequential(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(3 * 6 * 6, 10))
fill(net, 3)
print(net)
print([name for name, _ in net.named_parameters()])
print([name for name, _ in net.named_buffers()])
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(3):
    opt.zero_grad()
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    print(f"bn step {step} loss {loss.item():.5f}")
bn = net[1]
print("running_mean", [round(v, 5) for v in bn.running_mean.tolist()])
print("running_var", [round(v, 5) for v in bn.running_var.tolist()])
net.eval()
with torch.no_grad():
    print(f"eval loss {F.cross_entropy(net(x), y).item():.5f}")
bn1 = nn.BatchNorm1d(4)
feats = x[:8].reshape(8, 64)[:, 20:24] * 3.0
print("bn1d", [round(v, 5) for v in (bn1(feats) ** 2).sum(dim=0).tolist()],
      [round(v, 5) for v in bn1.running_var.tolist()])

# sin/cos/tan, var/std and masked_fill, with their gradients.
t = torch.tensor([[0.5, -1.0, 2.0], [0.25, 1.5, -0.75]], requires_grad=True)
u = t.sin() * 2 + torch.cos(t) + t.tan().sum() + t.var() + t.std(dim=1).sum() + t.var(1, unbiased=False).sum()
u = u.masked_fill(t > 1.0, -3.0)
u.sum().backward()
print("trig", [round(v, 5) for v in u.flatten().tolist()])
print("grad", [round(v, 5) for v in t.grad.flatten().tolist()])
