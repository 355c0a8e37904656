# Hooks on grad_fn nodes: register_prehook sees (and may replace) the gradient flowing into a
# node; register_hook sees the gradients the node made for its inputs and the one it was
# given, and may replace them (None: that input gets no gradient). Their order beside a
# tensor hook, removal, a hook that leaves everything as it is, and a wrong return's error;
# and tensors printed with their grad_fn as torch names it.
import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = x * w
z = (y * 3).sum()
print("printed as torch prints them:", y, z, y.exp()[1:], x.view(3, 1).t())
seen = []


def post(grad_inputs, grad_outputs):
    seen.append(("post", [None if g is None else g.tolist() for g in grad_inputs],
                 [g.tolist() for g in grad_outputs]))
    return (grad_inputs[0] * 10, None)


def pre(grad_outputs):
    seen.append(("pre", [g.tolist() for g in grad_outputs]))
    return (grad_outputs[0] + 1,)


h1 = y.grad_fn.register_hook(post)
h2 = y.grad_fn.register_prehook(pre)
y.register_hook(lambda g: seen.append(("tensor", g.tolist())))
z.backward()
for s in seen:
    print(*s)
print("x.grad", x.grad.tolist(), "w.grad", w.grad)

h1.remove()
h2.remove()
x.grad = None
(x * w * 3).sum().backward()
print("after remove", x.grad.tolist(), w.grad.tolist())

a = torch.tensor([1.0, 2.0], requires_grad=True)
b = a.exp()
b.grad_fn.register_hook(lambda gi, go: None)
b.sum().backward()
print("kept", [round(v, 6) for v in a.grad.tolist()])

scale = torch.tensor(3.0)
c = a * scale
print("next_functions", [None if f is None else f.name() for f, _ in c.grad_fn.next_functions])
c.grad_fn.register_hook(lambda gi, go: (gi[0] * 0, None))
c.sum().backward()
print("zeroed", a.grad.tolist())

d = a * 3
d.grad_fn.register_hook(lambda gi, go: "no")
try:
    d.sum().backward()
except TypeError:
    print("a hook returning a string: TypeError")
