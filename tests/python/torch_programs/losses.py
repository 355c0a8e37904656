# The loss modules, their reductions and gradients.
import torch
import torch.nn as nn

logits = torch.tensor([[2.0, -1.0, 0.5], [0.1, 0.2, 0.3], [-1.0, 3.0, 0.0]], requires_grad=True)
target = torch.tensor([0, 2, 1])
for red in ("mean", "sum"):
    loss = nn.CrossEntropyLoss(reduction=red)(logits, target)
    print("ce", red, round(loss.item(), 6))
loss = nn.CrossEntropyLoss()(logits, target)
loss.backward()
print("ce grad", [[round(v, 6) for v in row] for row in logits.grad.tolist()])
logp = torch.log_softmax(logits.detach(), dim=1)
print("nll", round(nn.NLLLoss()(logp, target).item(), 6))
pred = torch.tensor([0.5, 1.5, -2.0], requires_grad=True)
goal = torch.tensor([1.0, 1.0, 0.0])
mse = nn.MSELoss()(pred, goal)
mse.backward()
print("mse", round(mse.item(), 6), [round(v, 6) for v in pred.grad.tolist()])
print("mse sum", nn.MSELoss(reduction="sum")(pred, goal).item())
z = torch.tensor([0.3, -1.2, 2.0], requires_grad=True)
y = torch.tensor([1.0, 0.0, 1.0])
bce = nn.BCEWithLogitsLoss()(z, y)
bce.backward()
print("bce", round(bce.item(), 6), [round(v, 6) for v in z.grad.tolist()])
