# In-place ops, version counters, views sharing memory.
import torch

x = torch.tensor([-1.0, 2.0, -3.0, 4.0])
print("v0", x._version)
x.relu_()
print("relu_", x.tolist(), x._version)
x.clamp_(0.5, 3.0)
print("clamp_", x.tolist(), x._version)
x.add_(1.0)
x.mul_(2.0)
print("add mul", x.tolist(), x._version)
v = x[1:]
print("view offset", v.storage_offset(), v.data_ptr() - x.data_ptr() == 4, v.is_contiguous())
v[0] = 100.0
print("write through view", x.tolist(), x._version, v._version)
d = x.detach()
d.zero_()
print("detach shares", x.tolist(), x._version)
c = x.clone()
c.fill_(7.0)
print("clone copies", x.tolist(), c.tolist())
y = torch.arange(6.0).reshape(2, 3)
t = y.t()
print("t", t.is_contiguous(), t.stride(), t.contiguous().stride(), y.stride())
print("flatten", y.flatten().tolist(), y.flatten(0).shape)
z = torch.tensor([1.0, -2.0], requires_grad=True)
w = z * 2
w.relu_()
w.sum().backward()
print("grad through relu_", z.grad.tolist())
