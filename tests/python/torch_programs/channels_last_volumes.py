# Issue 31's ops as a script uses them: a small CNN moved to channels_last (model and input)
# trained a few SGD steps; per-class statistics of its features with index_reduce (mean, amax,
# prod, include_self both ways) and their gradients; a volume resampled by a 3-D affine grid
# with 5-D grid_sample (trilinear and nearest, each padding mode), gradients to the volume
# and to theta.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
x = torch.linspace(-1, 1, 4 * 3 * 6 * 6).reshape(4, 3, 6, 6).cos()
labels = torch.tensor([0, 2, 1, 2])
model = nn.Sequential(nn.Conv2d(3, 5, 3, padding=1), nn.BatchNorm2d(5), nn.ReLU(),
                      nn.MaxPool2d(2), nn.Flatten(), nn.Linear(5 * 3 * 3, 3))
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.linspace(-2.0, 3.0, p.numel()).reshape(p.shape).sin() * 0.4)
model = model.to(memory_format=torch.channels_last)
xc = x.to(memory_format=torch.channels_last)
print("strides", model[0].weight.stride(), xc.stride(),
      xc.is_contiguous(), xc.is_contiguous(memory_format=torch.channels_last))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(4):
    opt.zero_grad()
    loss = F.cross_entropy(model(xc), labels)
    loss.backward()
    opt.step()
    print("step", step, round(loss.item(), 5))
print("grads", [round(p.grad.abs().sum().item(), 4) for p in model.parameters()])
like = torch.zeros_like(xc)
print("zeros_like", like.stride(), torch.empty(2, 3, 4, 5, memory_format=torch.channels_last).stride())

feats = model[:2](xc).mean((2, 3)).detach().requires_grad_()
for reduce in ["mean", "amax", "prod"]:
    for include_self in [True, False]:
        start = torch.ones(3, feats.shape[1])
        out = start.index_reduce(0, labels, feats, reduce, include_self=include_self)
        out.sum().backward()
        print(reduce, include_self, out.grad_fn.name(),
              [round(v, 5) for v in out.flatten().tolist()],
              [round(v, 5) for v in feats.grad.flatten().tolist()])
        feats.grad = None

vol = torch.linspace(0, 1, 2 * 2 * 3 * 4 * 5, dtype=torch.float64).reshape(2, 2, 3, 4, 5)
vol = vol.sin().requires_grad_()
theta = torch.tensor([[[0.9, 0.2, 0.0, 0.1], [-0.1, 1.1, 0.1, 0.0], [0.0, 0.1, 0.8, -0.2]]] * 2,
                     dtype=torch.float64, requires_grad=True)
grid = F.affine_grid(theta, (2, 2, 3, 3, 4), align_corners=False)
for mode in ["bilinear", "nearest"]:
    for padding in ["zeros", "border", "reflection"]:
        y = F.grid_sample(vol, grid * 1.7, mode=mode, padding_mode=padding, align_corners=False)
        (y * y).sum().backward()
        print(mode, padding, tuple(y.shape), y.grad_fn.name(), round(y.sum().item(), 6),
              round(vol.grad.abs().sum().item(), 6), [round(v, 6) for v in theta.grad[0, 0].tolist()])
        vol.grad = None
        theta.grad = None
