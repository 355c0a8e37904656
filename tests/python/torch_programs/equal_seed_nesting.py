# torch.equal, manual_seed determinism and nested no_grad/enable_grad blocks, as scripts use them.
import torch

a = torch.tensor([1.0, 2.0, 3.0])
print("equal", torch.equal(a, a.clone()), torch.equal(a, a + 1), torch.equal(a, a[:2]))
print("equal shape", torch.equal(torch.zeros(2, 3), torch.zeros(3, 2)))
w = torch.ones(3, requires_grad=True)
print("equal grad", torch.equal(w * 1, torch.ones(3)))

torch.manual_seed(7)
r1 = torch.randn(4, 3)
lin1 = torch.nn.Linear(3, 2)
torch.manual_seed(7)
r2 = torch.randn(4, 3)
lin2 = torch.nn.Linear(3, 2)
print("seed", torch.equal(r1, r2), torch.equal(lin1.weight, lin2.weight))
print("seed differs", torch.equal(torch.randn(4, 3), r1))

with torch.no_grad():
    with torch.no_grad():
        x = w * 2
    y = w * 2
    with torch.enable_grad():
        z = w * 2
        with torch.no_grad():
            u = w * 2
        v = w * 2
print("nested", x.requires_grad, y.requires_grad, z.requires_grad, u.requires_grad,
      v.requires_grad, torch.is_grad_enabled())
