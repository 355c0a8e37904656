# torch.autograd.grad and torch.autograd.backward: gradients returned as a tuple without
# touching .grad, grad_outputs, several outputs, non-leaf inputs, allow_unused, and the
# errors for unused inputs and inputs that do not require grad.
import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
h = x * w
y = (h.exp() + h * h).sum()
gx, gw = torch.autograd.grad(y, [x, w], retain_graph=True)
print("gx", [round(g, 4) for g in gx.tolist()])
print("gw", [round(g, 4) for g in gw.tolist()])
print(".grad untouched", x.grad, w.grad)
(gh,) = torch.autograd.grad(y, h, retain_graph=True)
print("non-leaf input", [round(g, 4) for g in gh.tolist()])
print("a tuple", type(torch.autograd.grad(y, x, retain_graph=True)).__name__)

u = torch.tensor([1.0], requires_grad=True)
try:
    torch.autograd.grad(y, [x, u], retain_graph=True)
except RuntimeError:
    print("RuntimeError for an unused input")
g = torch.autograd.grad(y, [x, u], retain_graph=True, allow_unused=True)
print("allow_unused", [round(v, 4) for v in g[0].tolist()], g[1])
try:
    torch.autograd.grad(y, [torch.tensor([1.0])], retain_graph=True)
except RuntimeError:
    print("RuntimeError for an input that does not require grad")

v = h * 2
(gv,) = torch.autograd.grad(v, x, grad_outputs=torch.tensor([1.0, 0.0, -1.0]), retain_graph=True)
print("grad_outputs", gv.tolist())
a, b = h.sum(), (h * 3).sum()
ga = torch.autograd.grad([a, b], [w], retain_graph=True)
print("two outputs", ga[0].tolist())

torch.autograd.backward([a, b], retain_graph=True)
print("backward of two", x.grad.tolist(), w.grad.tolist())
x.grad = None
torch.autograd.backward(v, grad_tensors=torch.tensor([1.0, 1.0, 1.0]), retain_graph=True)
print("backward with a gradient", x.grad.tolist())
(gy,) = torch.autograd.grad(y, x)
print("without retain_graph", [round(g, 4) for g in gy.tolist()])
try:
    torch.autograd.grad(y, x)
except RuntimeError:
    print("RuntimeError for a second pass through a freed graph")
