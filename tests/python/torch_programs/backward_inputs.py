"""Tensor.backward and torch.autograd.backward with inputs=: only those tensors (leaves or
not) get .grad; an unreached input keeps its grad; an empty list is refused."""
import torch
torch.manual_seed(0)
w = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
b = torch.tensor([0.1, -0.2], requires_grad=True)
x = torch.tensor([[1.0, 2.0], [3.0, -1.0]])
h = (x @ w + b).tanh()
loss = (h * h).sum()
loss.backward(inputs=[w], retain_graph=True)
print("w.grad", [[round(v, 6) for v in r] for r in w.grad.tolist()])
print("b.grad", b.grad)
torch.autograd.backward([loss], inputs=b, retain_graph=True)
print("b.grad", [round(v, 6) for v in b.grad.tolist()])
loss.backward(inputs=(w, b), retain_graph=True)
print("w.grad", [[round(v, 6) for v in r] for r in w.grad.tolist()])
print("b.grad", [round(v, 6) for v in b.grad.tolist()])
h.backward(torch.ones(2, 2), inputs=[h], retain_graph=True)  # a non-leaf input
print("h.grad", h.grad.tolist(), h.is_leaf)
c = torch.tensor([1.0], requires_grad=True)
loss.backward(inputs=[c, w])  # c is not reached: its grad stays None
print("c.grad", c.grad)
print("w.grad", [[round(v, 6) for v in r] for r in w.grad.tolist()])
try:
    loss.backward(inputs=[])
except RuntimeError as e:
    print("empty inputs refused")
