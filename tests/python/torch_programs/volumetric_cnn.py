# A tiny 3-D CNN as people write them for video clips and medical volumes: nn.Conv3d (padding,
# stride, dilation, groups, padding='same'), BatchNorm3d, MaxPool3d (with return_indices),
# AvgPool3d, InstanceNorm3d, Dropout3d, AdaptiveAvgPool3d and a ConvTranspose3d decoder
# branch, with weights set deterministically, three SGD steps, the running statistics and the
# gradients that reach the input.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv3d(1, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm3d(4)
        self.pool1 = nn.MaxPool3d(2, return_indices=True)
        self.conv2 = nn.Conv3d(4, 6, (3, 2, 3), stride=(1, 2, 1), padding=(1, 0, 1),
                               dilation=(2, 1, 1), groups=2, bias=False)
        self.norm2 = nn.InstanceNorm3d(6, affine=True)
        self.conv3 = nn.Conv3d(6, 6, 2, padding='same')
        self.drop = nn.Dropout3d(0.25)
        self.pool2 = nn.AvgPool3d((1, 2, 2), stride=1, padding=(0, 1, 1), count_include_pad=False)
        self.head = nn.AdaptiveAvgPool3d(1)
        self.up = nn.ConvTranspose3d(4, 2, 2, stride=2)
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        pooled, idx = self.pool1(x)
        y = F.relu(self.norm2(self.conv2(pooled)))
        y = self.pool2(self.drop(self.conv3(y)))
        up = self.up(pooled)
        return self.fc(self.head(y).flatten(1)) + up.mean((1, 2, 3, 4)).unsqueeze(1), idx


net = Net()
print(net)
print([(n, tuple(p.shape)) for n, p in net.state_dict().items()])
with torch.no_grad():
    for k, p in enumerate(net.parameters()):
        n = p.numel()
        p.copy_((torch.sin(torch.arange(n, dtype=torch.float32) * 0.37 + k) * 0.4).reshape(p.shape))

x = (torch.cos(torch.arange(2 * 1 * 8 * 8 * 8, dtype=torch.float32) * 0.13) * 1.5)
x = x.reshape(2, 1, 8, 8, 8)
target = torch.tensor([0, 2])
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
for step in range(3):
    net.train()
    net.drop.eval()  # dropout off: the draws differ between torch and gradscope
    opt.zero_grad()
    out, idx = net(x)
    loss = F.cross_entropy(out, target)
    loss.backward()
    opt.step()
    print("step", step, round(loss.item(), 5), out.grad_fn.name())
print("indices", idx.shape, idx.flatten()[:8].tolist())
print("running", [round(v, 4) for v in net.bn1.running_mean.tolist()],
      [round(v, 4) for v in net.bn1.running_var.tolist()], net.bn1.num_batches_tracked.item())
net.eval()
print("eval", [round(v, 4) for v in net(x)[0].flatten().tolist()])

xi = x.clone().requires_grad_()
h = net.conv1(xi)
print(h.grad_fn.name())
h = F.max_pool3d(h, 3, stride=2, padding=1, dilation=1, ceil_mode=True)
print(h.grad_fn.name(), tuple(h.shape))
h = F.avg_pool3d(h, 2, stride=1)
print(h.grad_fn.name(), tuple(h.shape))
(h ** 2).sum().backward()
print("input grad", [round(v, 4) for v in xi.grad.flatten().tolist()[:10]])
print(F.adaptive_max_pool3d(x, (2, 1, 3)).shape, F.conv3d(x, torch.ones(1, 1, 1, 1, 1)).shape)
d = nn.Dropout3d(1.0)
print(d(torch.ones(2, 3, 2, 2, 2)).sum().item(), d.eval()(torch.ones(2, 3, 2, 2, 2)).sum().item())
