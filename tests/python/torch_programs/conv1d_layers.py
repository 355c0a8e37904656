# A 1-D convolutional classifier as people write them for audio and sensor data: nn.Conv1d
# (padding, stride, dilation, groups, padding='same'), MaxPool1d, AvgPool1d, GroupNorm,
# InstanceNorm1d (with running statistics), PReLU, Dropout1d/2d and F.pad's four modes, with
# weights set deterministically, three SGD steps and the gradients that reach the input.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(2, 6, 5, padding=2)
        self.norm1 = nn.GroupNorm(3, 6)
        self.act1 = nn.PReLU(6)
        self.pool1 = nn.MaxPool1d(2)
        self.conv2 = nn.Conv1d(6, 8, 3, stride=2, dilation=2, groups=2, bias=False)
        self.norm2 = nn.InstanceNorm1d(8, affine=True, track_running_stats=True)
        self.act2 = nn.PReLU()
        self.conv3 = nn.Conv1d(8, 8, 4, padding='same')
        self.drop = nn.Dropout1d(0.3)
        self.pool2 = nn.AvgPool1d(3, stride=1, padding=1, count_include_pad=False)
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        x = self.pool1(self.act1(self.norm1(self.conv1(x))))
        x = self.act2(self.norm2(self.conv2(x)))
        x = self.pool2(self.drop(self.conv3(x)))
        return self.fc(x.mean(-1))


net = Net()
print(net)
print([(n, tuple(p.shape)) for n, p in net.state_dict().items()])
with torch.no_grad():
    for k, p in enumerate(net.parameters()):
        n = p.numel()
        p.copy_((torch.sin(torch.arange(n, dtype=torch.float32) * 0.37 + k) * 0.4).reshape(p.shape))

x = (torch.cos(torch.arange(2 * 2 * 24, dtype=torch.float32) * 0.21) * 1.5).reshape(2, 2, 24)
target = torch.tensor([0, 2])
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
net.eval()  # dropout off: the draws differ between torch and gradscope
for step in range(3):
    opt.zero_grad()
    net.norm2.train()  # running statistics move while the rest stays deterministic
    loss = F.cross_entropy(net(x), target)
    loss.backward()
    opt.step()
    print("step", step, round(loss.item(), 6))
print("running", [round(v, 5) for v in net.norm2.running_mean.tolist()],
      [round(v, 5) for v in net.norm2.running_var.tolist()], net.norm2.num_batches_tracked.item())
net.eval()
print("eval", [round(v, 6) for v in net(x).flatten().tolist()])

xi = x.clone().requires_grad_()
out = net.conv1(xi)
out = F.max_pool1d(out, 3, stride=2, padding=1) + 0
(out ** 2).sum().backward()
print("input grad", [round(v, 6) for v in xi.grad.flatten().tolist()[:10]])

v = torch.arange(10, dtype=torch.float32).reshape(1, 2, 5)
for mode in ("constant", "reflect", "replicate", "circular"):
    print(mode, F.pad(v, (2, 1), mode=mode).tolist())
print(F.pad(v, (1, 1, 1, 0), value=-1.0).shape, F.pad(v, (-1, 2)).tolist())
print(F.avg_pool1d(v, 2).tolist(), F.max_pool1d(v, 3, 1).tolist())
print(F.group_norm(v, 1).sum().item() < 1e-5, F.instance_norm(v).abs().sum().item() > 0)
print(nn.Dropout2d(0.5), nn.Dropout1d(), nn.InstanceNorm1d(3), nn.GroupNorm(2, 4, affine=False))
d = nn.Dropout2d(1.0)
print(d(torch.ones(2, 3, 2, 2)).sum().item(), d.eval()(torch.ones(2, 3, 2, 2)).sum().item())
