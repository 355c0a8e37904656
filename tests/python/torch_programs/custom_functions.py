# Custom autograd Functions as people write them: a straight-through sign (binarised weights),
# a clamp whose gradient passes through (gradient clipping by hand), a fused linear layer with
# save_for_backward and needs_input_grad, and a Function with two outputs. A small binarised
# network is trained on the bundled digits with them, and the custom gradients are checked
# against the ops' own with gradcheck-style comparisons.
import gzip
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch.autograd import Function


class SignSTE(Function):
    """sign(x) forward; the gradient passes straight through where |x| <= 1."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.where(x >= 0, torch.ones_like(x), -torch.ones_like(x))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (x.abs() <= 1).to(grad.dtype)


class LinearFn(Function):
    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        return x @ w.t() + b

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        gx = grad @ w if ctx.needs_input_grad[0] else None
        gw = grad.t() @ x if ctx.needs_input_grad[1] else None
        gb = grad.sum(0) if ctx.needs_input_grad[2] else None
        return gx, gw, gb


class ClampPass(Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        return x.clamp(lo, hi)

    @staticmethod
    def backward(ctx, grad):
        return grad, None, None


class MeanStd(Function):
    """Two outputs from one pass: the mean and the (biased) standard deviation of each row."""

    @staticmethod
    def forward(ctx, x):
        m = x.mean(1)
        s = ((x - m[:, None]) ** 2).mean(1).sqrt()
        ctx.save_for_backward(x, m, s)
        return m, s

    @staticmethod
    def backward(ctx, gm, gs):
        x, m, s = ctx.saved_tensors
        n = x.shape[1]
        return gm[:, None] / n + gs[:, None] * (x - m[:, None]) / (n * s[:, None])


path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "data", "digits.csv.gz")
rows = np.loadtxt(gzip.open(path, "rt"), delimiter=",", dtype=np.float32)[:600]
x = torch.tensor(rows[:, :64] / 16.0)
y = torch.tensor(rows[:, 64].astype(np.int64))

# The custom gradients against the ops' own, in float64.
rng = np.random.RandomState(3)
a = torch.tensor(rng.uniform(-1, 1, (5, 4)), requires_grad=True)
w = torch.tensor(rng.uniform(-1, 1, (3, 4)), requires_grad=True)
b = torch.tensor(rng.uniform(-1, 1, (3,)), requires_grad=True)
mine = torch.autograd.grad((LinearFn.apply(a, w, b) ** 2).sum(), (a, w, b))
ref = torch.autograd.grad((F.linear(a, w, b) ** 2).sum(), (a, w, b))
print("linear grads agree", all(torch.allclose(p, q, atol=1e-12) for p, q in zip(mine, ref)))
m, s = MeanStd.apply(a)
gm = torch.autograd.grad((m * 2 + s * 3).sum(), a)[0]
gr = torch.autograd.grad((a.mean(1) * 2 + a.std(1, unbiased=False) * 3).sum(), a)[0]
print("mean/std grads agree", torch.allclose(gm, gr, atol=1e-12), f"{float(s.sum()):.6f}")
lin, sgn = LinearFn.apply(a, w, b), SignSTE.apply(a)
print("grad_fn", lin.grad_fn.name(), sgn.grad_fn.name(), lin.grad_fn.next_functions[1][0].name())

# A network with binarised hidden weights, trained through the straight-through estimator.
g = np.random.RandomState(0)
w1 = torch.tensor(g.uniform(-0.5, 0.5, (48, 64)).astype(np.float32), requires_grad=True)
b1 = torch.zeros(48, requires_grad=True)
w2 = torch.tensor(g.uniform(-0.2, 0.2, (10, 48)).astype(np.float32), requires_grad=True)
b2 = torch.zeros(10, requires_grad=True)
opt = torch.optim.Adam([w1, b1, w2, b2], lr=0.01)
for step in range(30):
    opt.zero_grad()
    h = LinearFn.apply(x, SignSTE.apply(w1) * 0.1, b1)
    h = ClampPass.apply(h, -1.0, 1.0)
    logits = LinearFn.apply(h, w2, b2)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    opt.step()
    if step % 5 == 4:
        print(f"step {step} loss {loss.item():.5f} |w1.grad| {w1.grad.abs().sum().item():.4f}")
with torch.no_grad():
    h = (x @ (SignSTE.apply(w1) * 0.1).t() + b1).clamp(-1, 1)
    acc = ((h @ w2.t() + b2).argmax(1) == y).float().mean().item()
print(f"accuracy {acc:.4f}")
