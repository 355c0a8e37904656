# Saved-tensor hooks and the non-reentrant checkpoint as people use them: a small MLP trained a
# few steps with its hidden block under torch.utils.checkpoint.checkpoint(use_reentrant=False)
# (keyword arguments, an input that does not require grad, torch.autograd.grad through it),
# next to the plain model; torch.autograd.graph.saved_tensors_hooks that count the tensors an
# MLP's forward saves and that store them as NumPy arrays until backward; save_on_cpu; and
# disable_saved_tensors_hooks.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd.graph import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc1 = nn.Linear(n, n)
        self.fc2 = nn.Linear(n, n)

    def forward(self, x, residual=False):
        h = self.fc2(torch.tanh(self.fc1(x)))
        return h + x if residual else h


class Net(nn.Module):
    def __init__(self, use_checkpoint):
        super().__init__()
        self.inp = nn.Linear(6, 10)
        self.block = Block(10)
        self.out = nn.Linear(10, 3)
        self.use_checkpoint = use_checkpoint

    def forward(self, x):
        h = F.relu(self.inp(x))
        if self.use_checkpoint:
            h = checkpoint(self.block, h, use_reentrant=False, residual=True)
        else:
            h = self.block(h, residual=True)
        return self.out(h)


def load_weights(net, g):
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.tensor(g.uniform(-0.5, 0.5, tuple(p.shape)).astype(np.float32)))


g = np.random.RandomState(11)
x = torch.tensor(g.normal(size=(16, 6)).astype(np.float32))
y = torch.tensor(g.randint(0, 3, size=16), dtype=torch.int64)

# Training: the checkpointed model follows the plain one step for step.
nets = {name: Net(name == "checkpointed") for name in ["plain", "checkpointed"]}
for net in nets.values():
    load_weights(net, np.random.RandomState(5))
opts = {name: torch.optim.SGD(net.parameters(), lr=0.2) for name, net in nets.items()}
for step in range(4):
    line = []
    for name, net in nets.items():
        opts[name].zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opts[name].step()
        line.append(f"{name} {loss.item():.6f}")
    print(f"step {step}: " + ", ".join(line))
a, b = nets["plain"], nets["checkpointed"]
print("same weights after training:",
      all(torch.allclose(p, q, atol=1e-6) for p, q in zip(a.parameters(), b.parameters())))

# torch.autograd.grad through a checkpointed segment whose input does not require grad.
w = torch.tensor(g.normal(size=(6, 6)).astype(np.float32), requires_grad=True)
seg = checkpoint(lambda t, m: torch.sin(t @ m), x[:4], w, use_reentrant=False)
(gw,) = torch.autograd.grad(seg.pow(2).sum(), w)
(gw_plain,) = torch.autograd.grad(torch.sin(x[:4] @ w).pow(2).sum(), w)
print(f"autograd.grad through checkpoint: {gw.sum().item():.5f} plain {gw_plain.sum().item():.5f}")

# Hooks that count what the forward saves and keep it as NumPy arrays until backward.
counts = {"pack": 0, "unpack": 0}


def pack(t):
    counts["pack"] += 1
    return t.detach().numpy().copy()


def unpack(arr):
    counts["unpack"] += 1
    return torch.from_numpy(arr)


net = Net(False)
load_weights(net, np.random.RandomState(5))
with saved_tensors_hooks(pack, unpack):
    loss = F.mse_loss(net(x), torch.zeros(16, 3))
print("packed during forward:", counts["pack"], "unpacked so far:", counts["unpack"])
loss.backward()
print("unpacked by backward:", counts["unpack"])
print(f"loss {loss.item():.6f} grad of out.weight {net.out.weight.grad.abs().sum().item():.5f}")
net.zero_grad()
F.mse_loss(net(x), torch.zeros(16, 3)).backward()
print(f"without hooks: grad of out.weight {net.out.weight.grad.abs().sum().item():.5f}")

# save_on_cpu on a CPU-only run keeps the same gradients.
for pin in (False, True):
    net.zero_grad()
    with save_on_cpu(pin_memory=pin):
        out = F.mse_loss(net(x), torch.zeros(16, 3))
    out.backward()
    print(f"save_on_cpu(pin_memory={pin}): {net.out.weight.grad.abs().sum().item():.5f}")

# A library that cannot work with saved-tensor hooks turns them off.
with disable_saved_tensors_hooks("this block needs its saved tensors as they are"):
    try:
        with saved_tensors_hooks(pack, unpack):
            pass
    except RuntimeError as e:
        print("refused:", e)
