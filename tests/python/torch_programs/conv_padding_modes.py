# Conv2d's remaining options as a script uses them: a small image net whose convolutions pad
# by reflection, replication and wrap-around (padding_mode), an even kernel with
# padding='same', all made in float64 by dtype= and device='cpu', trained a few Adam steps on
# a channels_last input; the layers' attributes and print text, the grad_fn under each
# convolution, F.pad's circular mode, and the strides of elementwise results and clones of a
# channels_last tensor (torch keeps the input's layout).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("cpu")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(2, 4, 3, padding=1, padding_mode="reflect", device=device,
                            dtype=torch.float64)
        self.c2 = nn.Conv2d(4, 4, (3, 2), padding=(1, 2), padding_mode="circular",
                            dtype=torch.float64)
        self.c3 = nn.Conv2d(4, 3, 4, padding="same", padding_mode="replicate", bias=False,
                            dtype=torch.float64)
        self.c4 = nn.Conv2d(3, 3, 2, padding="same", dtype=torch.float64)
        self.norm = nn.BatchNorm2d(3, dtype=torch.float64, device="cpu")
        self.head = nn.Linear(3, 2, dtype=torch.float64, device=device)

    def forward(self, x):
        x = torch.tanh(self.c1(x))
        x = F.relu(self.c2(x))
        x = self.norm(self.c4(self.c3(x)) + 0.5)
        return self.head(x.mean(dim=(2, 3)))


net = Net()
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.linspace(-1.0, 1.0, p.numel(), dtype=torch.float64)
                .reshape(p.shape).mul(i + 1).sin() * 0.5)
print(net)
for name in ("kernel_size", "stride", "padding", "dilation", "groups", "padding_mode",
             "_reversed_padding_repeated_twice"):
    print(name, [getattr(m, name) for m in (net.c1, net.c2, net.c3, net.c4)])

x = torch.linspace(-2, 2, 3 * 2 * 7 * 6, dtype=torch.float64).reshape(3, 2, 7, 6).cos()
x = x.to(memory_format=torch.channels_last)
target = torch.tensor([[0.5, -0.5], [1.0, 0.0], [-1.0, 0.25]], dtype=torch.float64)
opt = torch.optim.Adam(net.parameters(), lr=0.05)
for step in range(5):
    opt.zero_grad()
    out = net(x)
    loss = F.mse_loss(out, target)
    loss.backward()
    opt.step()
    print("step", step, f"{loss.item():.10f}",
          [f"{p.grad.abs().sum().item():.8f}" for p in net.parameters()])

h = x
for m in (net.c1, net.c2, net.c3, net.c4):
    h = m(h)
    print(type(m).__name__, tuple(h.shape), h.dtype, h.grad_fn.name(),
          [type(n).__name__ if n is None else n.name() for n, _ in h.grad_fn.next_functions])

# F.pad's circular mode and its gradient
t = torch.arange(12.0, dtype=torch.float64).reshape(1, 1, 3, 4).requires_grad_()
p = F.pad(t, (2, 1, 1, 3), mode="circular")
print(p.shape, p[0, 0].tolist())
(p * torch.arange(p.numel(), dtype=torch.float64).reshape(p.shape)).sum().backward()
print("circular grad", t.grad[0, 0].tolist())

# channels_last through elementwise ops and clones
cl = torch.linspace(0, 1, 2 * 3 * 4 * 5).reshape(2, 3, 4, 5).contiguous(
    memory_format=torch.channels_last)
bias = torch.ones(3, 1, 1)
for label, r in (("relu", F.relu(cl)), ("scaled", cl * 2 - 1), ("bias", cl + bias),
                 ("compare", cl > 0.5), ("double", cl.double()), ("sigmoid", torch.sigmoid(cl)),
                 ("clone", cl.clone()),
                 ("clone contiguous", cl.clone(memory_format=torch.contiguous_format)),
                 ("clone of row-major", cl.contiguous().clone(memory_format=torch.channels_last))):
    print(label, r.stride(), r.is_contiguous(memory_format=torch.channels_last))
