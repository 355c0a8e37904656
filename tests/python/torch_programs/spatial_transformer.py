# A spatial transformer network as Jaderberg et al. write it: a small localization net predicts
# an affine theta per image (initialised to the identity), F.affine_grid turns it into a
# sampling grid and F.grid_sample warps the image (bilinear, zeros padding), then a classifier
# reads the warped image; three Adam steps. Then every grid_sample mode and padding on a fixed
# rotation, bicubic nn.Upsample and F.interpolate, and the gradients each gives its inputs.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def fill(module, scale=0.2):
    with torch.no_grad():
        for k, p in enumerate(module.parameters()):
            n = p.numel()
            p.copy_((torch.sin(torch.arange(n, dtype=torch.float32) * 0.61 + k) * scale).reshape(p.shape))


def show(name, t, digits=5):
    print(name, tuple(t.shape), [round(v, digits) for v in t.flatten().tolist()[:8]])


class STN(nn.Module):
    def __init__(self):
        super().__init__()
        self.localization = nn.Sequential(nn.Conv2d(1, 4, 3), nn.MaxPool2d(2), nn.ReLU())
        self.fc_loc = nn.Sequential(nn.Linear(4 * 3 * 3, 8), nn.Tanh(), nn.Linear(8, 6))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(64, 3))

    def init_identity(self):
        with torch.no_grad():
            self.fc_loc[2].weight.mul_(0.1)
            self.fc_loc[2].bias.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float32))

    def forward(self, x):
        theta = self.fc_loc(self.localization(x).flatten(1)).view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        warped = F.grid_sample(x, grid, align_corners=False)
        return self.classifier(warped), theta, grid


model = STN()
print(model)
fill(model)
model.init_identity()
images = torch.cos(torch.arange(4 * 64, dtype=torch.float32) * 0.37).reshape(4, 1, 8, 8)
labels = torch.tensor([0, 2, 1, 2])
opt = torch.optim.Adam(model.parameters(), lr=0.01)
for step in range(3):
    opt.zero_grad()
    logits, theta, grid = model(images)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    opt.step()
    print("step", step, round(loss.item(), 5), theta.grad_fn.name(), grid.grad_fn.name())
show("theta", theta)
show("fc_loc grad", model.fc_loc[2].weight.grad)
show("conv grad", model.localization[0].weight.grad)

# Every mode and padding on a rotation that carries points outside the image, in float64.
x = torch.linspace(-1, 1, 2 * 3 * 5 * 6, dtype=torch.float64).reshape(2, 3, 5, 6).requires_grad_()
angle = 0.4
theta = torch.tensor([[math.cos(angle), -math.sin(angle), 0.2],
                      [math.sin(angle), math.cos(angle), -0.1]], dtype=torch.float64).repeat(2, 1, 1)
theta = (theta * torch.tensor([1.0, 1.3], dtype=torch.float64).view(1, 2, 1)).requires_grad_()
for align in (False, True):
    grid = F.affine_grid(theta, (2, 3, 4, 7), align_corners=align)
    for mode in ("bilinear", "nearest", "bicubic"):
        for padding in ("zeros", "border", "reflection"):
            out = F.grid_sample(x, grid, mode=mode, padding_mode=padding, align_corners=align)
            gx, gt = torch.autograd.grad((out * out).sum(), (x, theta))
            print(mode, padding, align, out.grad_fn.name(), round(out.sum().item(), 4),
                  round(gx.abs().sum().item(), 4), [round(v, 4) for v in gt.flatten().tolist()])

# Bicubic resizing as a module and as a function, both alignments, in float32.
x = x.detach().float().requires_grad_()
up = nn.Upsample(scale_factor=2, mode="bicubic", align_corners=True)
print(up)
y = up(x)
show("upsample bicubic", y)
z = F.interpolate(x, size=(3, 8), mode="bicubic", align_corners=False)
show("interpolate bicubic", z)
(y.sum() + (z * z).sum()).backward()
print(y.grad_fn.name(), z.grad_fn.name())
show("x grad", x.grad)
