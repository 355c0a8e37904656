# Products and order statistics: prod (with a zero: its gradient is the product of the
# others), cumprod, median of all and along a dim, cummax/cummin, unique with inverse and
# counts, cross products, the trace and logcumsumexp, with their gradients and grad_fn names.
import torch

x = torch.tensor([[1.5, 2.0, 0.0, -1.0], [0.5, -2.0, 3.0, 1.0], [2.0, 1.0, -0.5, 4.0]],
                 requires_grad=True)
p = x.prod()
pd = x.prod(1)
pk = x.prod(0, keepdim=True)
cp = x.cumprod(1)
print("prod", p.item(), pd.tolist(), pk.tolist(), p.grad_fn.name(), pd.grad_fn.name())
print("cumprod", cp.tolist(), cp.grad_fn.name())
(p + (pd * torch.tensor([1.0, 2.0, 3.0])).sum() + pk.sum() + cp.sum()).backward()
print("prod grad", x.grad.tolist())

x.grad = None
m = x.median()
md = x.median(dim=1)
mk = torch.median(x, 0, keepdim=True)
print("median", m.item(), md.values.tolist(), md.indices.tolist(), mk.indices.tolist())
print("median names", m.grad_fn.name(), md.values.grad_fn.name())
cmax, cmin = x.cummax(1), torch.cummin(x, dim=0)
print("cummax", cmax.values.tolist(), cmax.indices.tolist(), cmax.values.grad_fn.name())
print("cummin", cmin.values.tolist(), cmin.indices.tolist(), cmin.values.grad_fn.name())
(m + md.values.sum() + 2 * mk.values.sum() + cmax.values.sum() + cmin[0].sum()).backward()
print("order grad", x.grad.tolist())

words = torch.tensor([4, 1, 4, 2, 1, 4])
values, inverse, counts = torch.unique(words, return_inverse=True, return_counts=True)
print("unique", values.tolist(), inverse.tolist(), counts.tolist())
print("unique floats", torch.tensor([0.5, -1.0, 0.5, 2.0]).unique().tolist())
print("int prod", words.prod().item(), words.cumprod(0).tolist(), words.prod().dtype)

a = torch.tensor([[1.0, 0.0, 0.0], [0.5, 2.0, -1.0]], requires_grad=True)
b = torch.tensor([[0.0, 1.0, 0.0], [1.0, 1.0, 3.0]], requires_grad=True)
c = torch.cross(a, b, dim=1)
print("cross", c.tolist(), c.grad_fn.name())
sq = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], requires_grad=True)
tr = torch.trace(sq @ sq)
print("trace", tr.item(), sq.trace().item(), tr.grad_fn.name())
((c * torch.tensor([1.0, 2.0, 3.0])).sum() + tr).backward()
print("cross grads", a.grad.tolist(), b.grad.tolist())
print("trace grad", sq.grad.tolist())

z = torch.tensor([[0.5, -1.0, 30.0, 2.0], [100.0, 1.0, -2.0, 0.0]], requires_grad=True)
lc = z.logcumsumexp(1)
print("logcumsumexp", [[round(v, 5) for v in r] for r in lc.tolist()], lc.grad_fn.name())
(lc * torch.tensor([1.0, -2.0, 0.5, 3.0])).sum().backward()
print("logcumsumexp grad", [[round(v, 5) for v in r] for r in z.grad.tolist()])

# unique along a dim (rows or columns sorted lexicographically) and unique_consecutive
table = torch.tensor([[2, 1, 9], [1, 7, 0], [2, 1, 9], [1, 5, 3]])
rows, row_of, row_counts = torch.unique(table, dim=0, return_inverse=True, return_counts=True)
print("unique rows", rows.tolist(), row_of.tolist(), row_counts.tolist())
print("unique columns", table.unique(dim=1).tolist())
runs = torch.tensor([1, 1, 2, 2, 2, 1, 3, 3])
print("consecutive", [t.tolist() for t in torch.unique_consecutive(runs, return_inverse=True,
                                                                   return_counts=True)])
print("consecutive rows", torch.unique_consecutive(torch.tensor([[1., 2.], [1., 2.], [3., 4.]]),
                                                   dim=0).tolist())
