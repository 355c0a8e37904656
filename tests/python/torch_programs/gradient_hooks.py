# Tensor.register_hook: hooks see the gradient flowing into a tensor, on non-leaves (before
# it reaches their grad_fn) and on leaves (before .grad), can replace it, and stop when
# removed; retain_grad keeps a non-leaf's gradient.
import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
seen = []


def record(name):
    def hook(grad):
        seen.append((name, [round(g, 5) for g in grad.tolist()]))
    return hook


def double(grad):
    return grad * 2


y = x * w
y.retain_grad()
h_record = y.register_hook(record("y"))
h_double = y.register_hook(double)
h_leaf = x.register_hook(record("x"))
z = (y * y).sum()
z.backward(retain_graph=True)
print("seen", seen)
print("y.grad", y.grad.tolist())
print("x.grad", x.grad.tolist())
print("w.grad", w.grad.tolist())

h_double.remove()
h_double.remove()  # twice is fine
seen.clear()
x.grad = None
w.grad = None
z.backward(retain_graph=True)
print("without double", seen, x.grad.tolist())

h_scale = w.register_hook(lambda g: g * 0.5)
seen.clear()
x.grad = None
w.grad = None
z.backward()
print("leaf hook", w.grad.tolist(), x.grad.tolist(), len(seen))

h_record.remove()
h_leaf.remove()
h_scale.remove()
a = torch.tensor([2.0, 3.0], requires_grad=True)
b = a.exp()
with b.register_hook(lambda g: g + 1):
    pass  # a handle is a context manager that removes the hook
b.register_hook(lambda g: g * 10)
b.sum().backward()
print("one hook left", [round(g, 4) for g in a.grad.tolist()])

try:
    torch.tensor([1.0]).register_hook(lambda g: g)
    print("no error")
except RuntimeError:
    print("RuntimeError for a tensor that does not require grad")


def boom(grad):
    raise ValueError("boom in a hook")


c = a * 3
c.register_hook(boom)
try:
    c.sum().backward()
except ValueError as e:
    print("ValueError", e)
