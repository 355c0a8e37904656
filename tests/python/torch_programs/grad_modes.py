# Grad modes: no_grad as a decorator and a block, enable_grad, set_grad_enabled, requires_grad_.
import torch

w = torch.tensor([1.0, 2.0], requires_grad=True)


@torch.no_grad()
def frozen(x):
    return (x * w).sum()


print("frozen", frozen(torch.ones(2)).requires_grad)
with torch.no_grad():
    a = w * 3
    with torch.enable_grad():
        b = w * 3
print("block", a.requires_grad, b.requires_grad, torch.is_grad_enabled())
torch.set_grad_enabled(False)
c = w + 1
torch.set_grad_enabled(True)
print("set", c.requires_grad, (w + 1).requires_grad)
d = torch.zeros(2)
d.requires_grad_()
(d * w).sum().backward()
print("requires_grad_", d.grad.tolist(), w.grad.tolist(), d.is_leaf)
e = (w * 2).detach()
print("detach", e.requires_grad, e.is_leaf)
with torch.inference_mode():
    f = w * 2
print("inference_mode", f.requires_grad, torch.is_grad_enabled())
