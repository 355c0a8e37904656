# Reductions over dims, keepdim, and their gradients.
import torch

x = torch.tensor([[1.0, -2.0, 3.0], [4.0, 0.5, -6.0]], requires_grad=True)
print("sum", x.sum().item(), x.sum(dim=0).tolist(), x.sum(1, keepdim=True).tolist())
print("mean", x.mean().item(), x.mean(dim=1).tolist())
print("var std", round(x.var().item(), 5), [round(v, 5) for v in x.std(dim=1).tolist()])
print("var biased", [round(v, 5) for v in x.var(dim=0, unbiased=False).tolist()])
print("max", x.max().item(), x.max(dim=1).values.tolist(), x.max(dim=1).indices.tolist())
print("min", x.min(dim=0)[0].tolist(), x.argmin(dim=1).tolist(), x.argmax().item())
print("amax", x.amax(dim=1).tolist())
print("logsumexp", [round(v, 5) for v in x.logsumexp(dim=1).tolist()])
sm = torch.softmax(x, dim=1)
print("softmax", [[round(v, 4) for v in r] for r in sm.tolist()])
(x.logsumexp(dim=1).sum() + x.var() + (x * sm.detach()).sum()).backward()
print("grad", [[round(v, 5) for v in r] for r in x.grad.tolist()])
