# An image decoder as autoencoders and super-resolution nets write it: nn.ConvTranspose2d
# (stride, padding, output_padding, groups, dilation, output_size=), nn.PixelShuffle and
# PixelUnshuffle, nn.Upsample (nearest and bilinear), F.interpolate, the 2-D paddings
# (ZeroPad2d, ConstantPad2d, ReflectionPad2d, ReplicationPad2d), InstanceNorm2d, Unfold and
# Dropout2d, with weights set deterministically, three SGD steps and the input's gradient.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def fill(module, scale=0.25):
    with torch.no_grad():
        for k, p in enumerate(module.parameters()):
            n = p.numel()
            p.copy_((torch.sin(torch.arange(n, dtype=torch.float32) * 0.53 + k) * scale).reshape(p.shape))


def show(name, t, digits=6):
    print(name, tuple(t.shape), [round(v, digits) for v in t.flatten().tolist()[:8]])


decoder = nn.Sequential(
    nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1),
    nn.InstanceNorm2d(6, affine=True),
    nn.ReLU(),
    nn.ReflectionPad2d(1),
    nn.Conv2d(6, 8, 3),
    nn.PixelShuffle(2),
    nn.ZeroPad2d((1, 0, 0, 1)),
    nn.Conv2d(2, 4, 2),
    nn.Upsample(scale_factor=2, mode="bilinear"),
    nn.ReplicationPad2d(1),
    nn.PixelUnshuffle(2),
    nn.ConvTranspose2d(16, 4, (2, 3), groups=2, dilation=(1, 2), bias=False),
    nn.Dropout2d(0.2),
)
print(decoder)
print([(n, tuple(p.shape)) for n, p in decoder.named_parameters()])
fill(decoder)
decoder.eval()  # dropout off: the draws differ between torch and gradscope
z = torch.cos(torch.arange(2 * 4 * 3 * 3, dtype=torch.float32) * 0.3).reshape(2, 4, 3, 3)
target = torch.linspace(-1, 1, 2 * 4 * 14 * 17).reshape(2, 4, 14, 17)
opt = torch.optim.SGD(decoder.parameters(), lr=0.05)
for step in range(3):
    opt.zero_grad()
    out = decoder(z)
    loss = F.mse_loss(out, target)
    loss.backward()
    opt.step()
    print("step", step, tuple(out.shape), round(loss.item(), 6))
show("first weight grad", decoder[0].weight.grad)

up = nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)
fill(up)
x = torch.linspace(-2, 2, 3 * 4 * 4).reshape(1, 3, 4, 4).requires_grad_()
y = up(x, output_size=[8, 8])
show("output_size", y)
(y * y).sum().backward()
show("input grad", x.grad)
show("unbatched", up(x[0]).detach())
show("F.conv_transpose2d", F.conv_transpose2d(x, up.weight, None, stride=(1, 2), padding=(0, 1)).detach())

img = torch.arange(2 * 3 * 4, dtype=torch.float32).reshape(1, 2, 3, 4)
show("nearest", F.interpolate(img, scale_factor=2))
show("nearest size", F.interpolate(img, size=(5, 7)))
show("bilinear", F.interpolate(img, size=(4, 6), mode="bilinear"))
show("bilinear corners", F.interpolate(img, scale_factor=1.5, mode="bilinear", align_corners=True))
show("nearest 1-d", F.interpolate(img[0], scale_factor=3))
show("unfold", nn.Unfold((2, 3), padding=1, stride=(1, 2))(img))
show("F.unfold", F.unfold(img, 2, dilation=2))
show("constant pad", nn.ConstantPad2d((1, 2, 0, 1), 3.5)(img))
show("reflect pad", F.pad(img, (2, 1, 1, 2), mode="reflect"))
print(nn.Upsample(size=5), nn.Upsample(scale_factor=(2, 3), mode="bilinear", align_corners=True))
print(nn.InstanceNorm2d(3, track_running_stats=True), nn.Unfold(3, 2, 1, 2), up)

# fold: columns summed back into an image (overlapping windows add up), and its gradient
cols = F.unfold(img, (2, 3), padding=1, stride=(1, 2))
show("fold of unfold", F.fold(cols, (3, 4), (2, 3), padding=1, stride=(1, 2)))
folder = nn.Fold(output_size=(4, 5), kernel_size=2, dilation=(1, 2))
print(folder)
patches = torch.linspace(-1, 1, 2 * 8 * 9).reshape(2, 8, 9).requires_grad_()
folded = folder(patches)
show("Fold", folded.detach())
(folded * torch.linspace(0, 1, folded.numel()).reshape(folded.shape)).sum().backward()
show("fold grad", patches.grad)
show("fold unbatched", F.fold(patches[0].detach(), (4, 5), 2, dilation=(1, 2)))
try:
    F.fold(patches.detach(), (5, 5), 2)
except RuntimeError as e:
    print("error:", e)
