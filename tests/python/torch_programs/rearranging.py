# Making and rearranging tensors the ways scripts do beyond the basics: the *_like family with
# dtype=, Tensor.new_*, as_tensor, view_as/reshape_as/type_as, unbind/unflatten/mT, hstack,
# vstack, tile, repeat_interleave, broadcast_tensors, meshgrid (ij and xy), flip, roll,
# tril/triu, diag/diagonal, diff, nonzero/argwhere, count_nonzero, kron, tensordot, einsum
# (matrix products, traces, diagonals, outer products, a chain of three), and the gradient of
# a loss made of all of them (float64).
import torch

torch.manual_seed(0)
x = torch.arange(12.0, dtype=torch.float64).reshape(3, 4).requires_grad_()
v = torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64, requires_grad=True)
w = torch.linspace(-1, 1, 8, dtype=torch.float64).reshape(4, 2).requires_grad_()


def show(name, y):
    values = [round(a, 6) for a in y.detach().double().flatten().tolist()]
    print(name, tuple(y.shape), y.dtype, values)


show("zeros_like", torch.zeros_like(x, dtype=torch.float32))
show("ones_like", torch.ones_like(x, dtype=torch.int64))
show("full_like", torch.full_like(x, 2.5))
show("empty_like", torch.empty_like(x).zero_())
show("new_zeros", x.new_zeros(2, 2))
show("new_ones", x.new_ones((2,)))
show("new_full", x.new_full((2, 2), 7))
show("new_tensor", x.new_tensor([1, 2]))
show("as_tensor", torch.as_tensor([1, 2, 3]))
show("as_tensor f64", torch.as_tensor([1.0, 2.0], dtype=torch.float64))
print("as_tensor same", torch.as_tensor(x) is x)
print("random", tuple(torch.rand_like(x).shape), torch.randn_like(x).dtype,
      torch.randint_like(x, 5).dtype, sorted(torch.randperm(5).tolist()))
show("logspace", torch.logspace(0, 2, 3))
print("default dtype", torch.get_default_dtype())
show("view_as", x.view_as(torch.ones(4, 3)))
show("reshape_as", x.t().reshape_as(torch.ones(12)))
show("type_as", v.type_as(torch.ones(1)))
print("floating", x.is_floating_point(), torch.ones(1, dtype=torch.int64).is_floating_point(),
      x.nelement())
show("mT", torch.ones(2, 3, 4).mT)
show("where", x.where(x > 5, torch.zeros(1, dtype=torch.float64)))
for i, u in enumerate(torch.unbind(x, 1)):
    show(f"unbind {i}", u)
show("unflatten", x.unflatten(1, (2, 2)))
show("hstack", torch.hstack([v, v]))
show("vstack", torch.vstack([v, v]))
show("tile", torch.tile(v, (2,)))
show("repeat_interleave", v.repeat_interleave(2))
show("repeat_interleave counts", torch.repeat_interleave(x, torch.tensor([1, 0, 2]), dim=0))
a, b = torch.broadcast_tensors(v.reshape(3, 1), torch.ones(4, dtype=torch.float64))
show("broadcast", a)
for indexing in ("ij", "xy"):
    g1, g2 = torch.meshgrid(torch.arange(3), torch.arange(2), indexing=indexing)
    show("meshgrid " + indexing, g1)
    show("meshgrid " + indexing, g2)
show("flip", torch.flip(x, [0, 1]))
show("roll", torch.roll(x, 1, 1))
show("roll two dims", torch.roll(x, (1, -1), (0, 1)))
show("roll flat", x.roll(5))
show("tril", torch.tril(x))
show("triu 1", x.triu(1))
show("tril -1", x.tril(-1))
show("diag", torch.diag(v))
show("diag 1", torch.diag(v, 1))
show("diag -1", torch.diag(v, -1))
show("diag of matrix", x.diag())
show("diag 1 of matrix", x.diag(1))
show("diagonal -1", torch.diagonal(x, -1))
show("diff", torch.diff(v))
show("diff dim 0", x.diff(dim=0))
show("nonzero", torch.nonzero(x > 6))
show("argwhere", torch.argwhere(v > 0))
print("nonzero tuple", [t.tolist() for t in torch.nonzero(x > 9, as_tuple=True)])
show("count_nonzero", torch.count_nonzero(x - 4, dim=1))
show("kron", torch.kron(v, torch.tensor([1.0, 10.0], dtype=torch.float64)))
show("kron eye", torch.kron(torch.eye(2), torch.ones(2, 2)))
show("tensordot 1", torch.tensordot(x, torch.ones(4, 2, dtype=torch.float64), dims=1))
show("tensordot lists", torch.tensordot(torch.ones(2, 3, 4), torch.ones(3, 4, 5),
                                        dims=([1, 2], [0, 1])))
for eq, ops in [("ij,jk->ik", (x, w)), ("ij->ji", (x,)), ("ij->", (x,)), ("i,i->", (v, v)),
                ("i,j->ij", (v, v)), ("bij,bjk->bik", (torch.ones(2, 3, 4), torch.ones(2, 4, 5))),
                ("ii->i", (torch.eye(3) * 2,)), ("ii", (torch.eye(3) * 2,)),
                ("ij,ij->i", (x, x)), ("ik,jk", (x, x)),
                ("ab,bc,cd->ad", (x, w, torch.ones(2, 3, dtype=torch.float64)))]:
    show("einsum " + eq, torch.einsum(eq, *ops))

loss = (torch.einsum("ij,jk->ik", x, w).pow(2).sum()
        + (torch.flip(x, [1]).tril() * torch.roll(x, 1, 0)).sum()
        + torch.diag(v).pow(2).sum() + x.diagonal(1).pow(2).sum()
        + torch.kron(v, v).sum() + torch.repeat_interleave(v, 2).pow(3).sum()
        + torch.tensordot(x, w, dims=1).sum() + torch.einsum("ii->i", x[:, :3]).sum() * 3)
loss.backward()
show("x.grad", x.grad)
show("v.grad", v.grad)
show("w.grad", w.grad)

for label, call in [("roll misaligned", lambda: torch.roll(x, (1, 2), 0)),
                    ("tril of a vector", lambda: torch.tril(v)),
                    ("diag of 3-D", lambda: torch.diag(torch.ones(2, 2, 2))),
                    ("meshgrid indexing", lambda: torch.meshgrid(v, v, indexing="yx")),
                    ("einsum dims", lambda: torch.einsum("ijk,jk->i", x, w))]:
    try:
        call()
        print(label, "accepted")
    except (RuntimeError, IndexError) as e:
        print(label, type(e).__name__)
