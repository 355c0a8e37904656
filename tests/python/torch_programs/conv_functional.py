# Convolution and pooling as functions, with deterministic weights, and their gradients.
import torch
import torch.nn.functional as F

x = (torch.sin(torch.arange(2 * 2 * 5 * 5, dtype=torch.float32) * 0.37)).reshape(2, 2, 5, 5)
x.requires_grad_()
w = (torch.cos(torch.arange(3 * 2 * 3 * 3, dtype=torch.float32) * 0.21)).reshape(3, 2, 3, 3)
w.requires_grad_()
b = torch.tensor([0.1, -0.2, 0.3], requires_grad=True)
y = F.conv2d(x, w, b, stride=1, padding=1)
print("conv", tuple(y.shape), round(y.sum().item(), 4), round(y[1, 2, 3, 4].item(), 5))
z = F.conv2d(x, w, None, stride=2)
print("stride 2", tuple(z.shape), [round(v, 4) for v in z.flatten()[:4].tolist()])
p = F.max_pool2d(y, 2)
a = F.avg_pool2d(y, 2, stride=1)
print("pools", tuple(p.shape), tuple(a.shape), round(p.sum().item(), 4), round(a.mean().item(), 5))
(p.sum() + a.pow(2).mean()).backward()
print("grad x", round(x.grad.abs().sum().item(), 4), round(x.grad[0, 1, 2, 2].item(), 5))
print("grad w", [round(v, 4) for v in w.grad.sum(dim=(1, 2, 3)).tolist()])
print("grad b", [round(v, 4) for v in b.grad.tolist()])
