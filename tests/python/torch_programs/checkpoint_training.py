# Activation checkpointing as people use it: a small MLP whose hidden blocks (one with dropout)
# run through torch.utils.checkpoint.checkpoint, and a Sequential through checkpoint_sequential,
# trained a few steps with SGD. The checkpointed model's loss and gradients are printed next to
# the plain model's (the same weights, the same random numbers: they must agree), and torch's
# warning when no input requires grad is checked.
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint, checkpoint_sequential


class Block(nn.Module):
    def __init__(self, n, p):
        super().__init__()
        self.fc = nn.Linear(n, n)
        self.drop = nn.Dropout(p)

    def forward(self, x):
        return self.drop(torch.tanh(self.fc(x))) + x


class Net(nn.Module):
    def __init__(self, use_checkpoint):
        super().__init__()
        self.inp = nn.Linear(8, 16)
        self.blocks = nn.ModuleList([Block(16, 0.0), Block(16, 0.25)])
        self.out = nn.Linear(16, 3)
        self.use_checkpoint = use_checkpoint

    def forward(self, x):
        h = F.relu(self.inp(x))
        for b in self.blocks:
            h = checkpoint(b, h) if self.use_checkpoint else b(h)
        return self.out(h)


def load_weights(net, g):
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.tensor(g.uniform(-0.4, 0.4, tuple(p.shape)).astype(np.float32)))


g = np.random.RandomState(3)
x = torch.tensor(g.normal(size=(12, 8)).astype(np.float32))
y = torch.tensor(g.randint(0, 3, size=12), dtype=torch.int64)

nets = {}
for name in ["plain", "checkpointed"]:
    net = Net(name == "checkpointed")
    load_weights(net, np.random.RandomState(7))
    nets[name] = net

# One step of each from the same random state: dropout inside the checkpoint draws the same
# mask when it is recomputed, so loss and gradients equal the plain model's.
# (The masks are the library's own random numbers: only the agreement is printed.)
grads, losses = {}, {}
for name, net in nets.items():
    torch.manual_seed(11)
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    grads[name] = [p.grad.clone() for p in net.parameters()]
    losses[name] = loss.item()
print("losses agree", abs(losses["plain"] - losses["checkpointed"]) < 1e-6)
print("gradients agree", all(torch.allclose(a, b, atol=1e-6)
                             for a, b in zip(grads["plain"], grads["checkpointed"])))

# Training the checkpointed model a few steps (dropout off, so the numbers are comparable).
net = nets["checkpointed"]
net.blocks[1].drop = nn.Dropout(0.0)
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
torch.manual_seed(5)
for step in range(8):
    opt.zero_grad()
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    if step % 2 == 1:
        print(f"step {step} loss {loss.item():.5f}")

# checkpoint_sequential over an nn.Sequential, against running it plainly.
torch.manual_seed(0)
seq = nn.Sequential(nn.Linear(8, 10), nn.Tanh(), nn.Linear(10, 10), nn.ReLU(), nn.Linear(10, 4))
load_weights(seq, np.random.RandomState(9))
xi = x.clone().requires_grad_(True)
out = checkpoint_sequential(seq, 2, xi)
out.pow(2).sum().backward()
g_ckpt = [xi.grad.clone()] + [p.grad.clone() for p in seq.parameters()]
seq.zero_grad()
xi.grad = None
seq(xi).pow(2).sum().backward()
g_plain = [xi.grad.clone()] + [p.grad.clone() for p in seq.parameters()]
print(f"sequential out {out.sum().item():.6f} grad_fn {type(out.grad_fn).__name__ != ''}")
print("sequential gradients agree", all(torch.allclose(a, b, atol=1e-6)
                                        for a, b in zip(g_ckpt, g_plain)))

# No input requires grad: torch warns, and the segment's parameters get no gradient.
lin = nn.Linear(8, 2)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    z = checkpoint(lin, x)
print("warned", [str(w.message) for w in caught], "requires_grad", z.requires_grad)
