# Autograd basics: gradients of a small expression, accumulation, no_grad.
import torch

x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
w = torch.tensor([0.5, 0.25, -1.0], requires_grad=True)
y = (x * w + x * x).sum()
y.backward()
print("y", y.item())
print("x.grad", x.grad.tolist())
print("w.grad", w.grad.tolist())
z = (x.exp() * w).mean()
z.backward()  # accumulates
print("x.grad", x.grad.tolist())
with torch.no_grad():
    q = x * 2
print("q.requires_grad", q.requires_grad, "is_leaf", x.is_leaf, q.is_leaf)
m = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
(m @ m).relu().sum().backward()
print("m.grad", m.grad.tolist())
