# The strict matrix products a script calls by name: torch.mm, bmm, mv, dot, outer and addmm
# (functions and methods), their values and gradients in float64, their grad_fn names, a
# bilinear attention score written with bmm, and the errors for operands of the wrong dims.
import torch

torch.manual_seed(0)
a = torch.tensor([[1.0, 2.0, -1.0], [0.5, 0.0, 3.0]], dtype=torch.float64, requires_grad=True)
b = torch.tensor([[2.0, -1.0], [0.0, 1.5], [1.0, 1.0]], dtype=torch.float64, requires_grad=True)
v = torch.tensor([0.5, -2.0, 1.0], dtype=torch.float64, requires_grad=True)
bias = torch.tensor([0.25, -0.75], dtype=torch.float64, requires_grad=True)

results = {
    "mm": torch.mm(a, b), "a.mm": a.mm(b), "mv": torch.mv(a, v), "dot": torch.dot(v, v),
    "v.dot": v.dot(v * 2), "outer": torch.outer(v, v[:2]),
    "addmm": torch.addmm(bias, a, b, beta=0.5, alpha=-2.0), "bias.addmm": bias.addmm(a, b),
}
for name, y in results.items():
    print(name, y.grad_fn.name(), [round(x, 6) for x in y.flatten().tolist()])
total = sum(y.sum() for y in results.values())
total.backward()
for name, t in [("a", a), ("b", b), ("v", v), ("bias", bias)]:
    print(name + ".grad", [round(x, 6) for x in t.grad.flatten().tolist()])

# scaled dot-product scores over a batch of 2 sequences of 3 steps, width 4
q = torch.linspace(-1.0, 1.0, 24).reshape(2, 3, 4).requires_grad_()
k = torch.linspace(0.5, -0.5, 24).reshape(2, 3, 4)
scores = torch.bmm(q, k.transpose(1, 2)) / 2.0
weights = scores.softmax(-1)
context = weights.bmm(k)
print("bmm", torch.bmm(q, k.transpose(1, 2)).grad_fn.name(), tuple(context.shape))
print("context", [round(x, 5) for x in context[1, 2].tolist()])
context.pow(2).sum().backward()
print("q.grad", [round(x, 5) for x in q.grad[0, 0].tolist()])

for label, call in [("mm of a vector", lambda: torch.mm(a, v)),
                    ("bmm of matrices", lambda: torch.bmm(a, b)),
                    ("bmm of unequal batches", lambda: torch.bmm(q, torch.ones(3, 4, 2))),
                    ("mv of a matrix", lambda: torch.mv(a, b)),
                    ("dot of a matrix", lambda: torch.dot(v, a)),
                    ("mm with a number", lambda: torch.mm(a, 2))]:
    try:
        call()
        print(label, "accepted")
    except (RuntimeError, TypeError) as e:
        print(label, type(e).__name__)
