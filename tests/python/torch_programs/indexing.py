# Indexing: integer lists and tensors, masks, index assignment, and ordering ops.
import torch

t = torch.arange(12, dtype=torch.float32).reshape(3, 4) - 5.0
print("rows", t[[0, 2]].tolist())
print("neg", t[torch.tensor([-1, 0])].tolist())
print("cols", t[:, [1, 3]].tolist())
print("mask", t[t > 0].tolist())
print("row mask", t[torch.tensor([True, False, True])].tolist())
u = t.clone()
u[[0, 2]] = 0.0
print("put rows", u.tolist())
u[u < 0] = -1.0
print("put mask", u.tolist())
u[1] = torch.tensor([9.0, 8.0, 7.0, 6.0])
print("put row", u.tolist())
v, i = t.topk(2, dim=1)
print("topk", v.tolist(), i.tolist())
s = torch.sort(t, dim=0, descending=True)
print("sort", s.values.tolist(), s.indices.tolist())
print("argsort", t.argsort(dim=1, descending=True).tolist())
print("cumsum", t.cumsum(dim=1).tolist())
x = torch.tensor([3.0, 1.0, 2.0, 5.0], requires_grad=True)
(x[[0, 0, 3]] * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print("grad index", x.grad.tolist())
x.grad = None
x[x > 1.5].pow(2).sum().backward()
print("grad mask", x.grad.tolist())
x.grad = None
x.topk(2).values.sum().backward()
print("grad topk", x.grad.tolist())
x.grad = None
(x.cumsum(0) * torch.tensor([1.0, 0.0, 2.0, 1.0])).sum().backward()
print("grad cumsum", x.grad.tolist())
