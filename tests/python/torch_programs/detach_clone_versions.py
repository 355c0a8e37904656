# detach shares storage and version, clone copies, in-place writes bump _version.
import torch

a = torch.ones(3, requires_grad=True)
b = a * 2
d = b.detach()
print("versions", b._version, d._version)
d.add_(1)
print("after add_", b._version, d._version, b.tolist())
c = b.clone()
c.mul_(10)
print("clone", b.tolist(), c.tolist())
e = a.exp()
f = e.detach()
f.zero_()
try:
    e.sum().backward()
    print("backward ran")
except RuntimeError:
    print("backward refused: a saved tensor was modified in place")
print("leaf", a.is_leaf, b.is_leaf, d.is_leaf, d.requires_grad)
