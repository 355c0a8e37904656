# Writing by index: one-hot labels with scatter_, a histogram with scatter_add, index_add of
# rows with alpha, index_fill, take and take_along_dim with argsort, and their gradients.
import torch

labels = torch.tensor([2, 0, 3, 2])
one_hot = torch.zeros(4, 5).scatter_(1, labels.unsqueeze(1), 1.0)
print("one_hot", one_hot.tolist())
bins = torch.zeros(5, dtype=torch.int64).scatter_add(0, labels, torch.ones(4, dtype=torch.int64))
print("histogram", bins.tolist(), bins.dtype)

x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 3.0, -0.5], [2.0, 0.25, 1.0]], requires_grad=True)
src = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
rows = torch.tensor([[0, 2, 1], [1, 0, 2]])
s = x.scatter(0, rows, src)
print("scatter", s.tolist(), s.grad_fn.name())
v = x.scatter(1, torch.tensor([[2], [0], [1]]), -3.0)
print("scatter value", v.tolist(), v.grad_fn.name())
a = x.index_add(0, torch.tensor([2, 2]), src, alpha=0.5)
print("index_add", a.tolist(), a.grad_fn.name())
f = x.index_fill(1, torch.tensor([0]), 9.0)
print("index_fill", f.tolist(), f.grad_fn.name())
t = x.take(torch.tensor([[8, -9], [4, 4]]))
print("take", t.tolist(), t.grad_fn.name())
sorted_rows = torch.take_along_dim(x, x.argsort(dim=1, descending=True), dim=1)
print("take_along_dim", sorted_rows.tolist(), sorted_rows.grad_fn.name())
sa = x.scatter_add(1, torch.tensor([[0, 0, 1]]), src[:1])
print("scatter_add", sa.tolist(), sa.grad_fn.name())

weights = torch.arange(1.0, 10.0).reshape(3, 3)
loss = ((s + v + a + f + sa) * weights).sum() + (t * t).sum() + sorted_rows[:, 0].sum()
loss.backward()
print("x.grad", x.grad.tolist())
print("src.grad", src.grad.tolist())

buf = torch.ones(2, 4)
buf.index_add_(1, torch.tensor([3, 1, 3]), torch.full((2, 3), 2.0))
buf.index_fill_(0, torch.tensor([1]), -1.0)
print("in place", buf.tolist())
print("multiply", torch.ones(2, 3).scatter(1, torch.tensor([[1, 1]]), 3.0, reduce="multiply").tolist())
