# Learning-rate schedulers: StepLR, MultiStepLR, CosineAnnealingLR and LambdaLR move the
# optimizer's param_groups[0]["lr"] epoch by epoch; Adam with StepLR and clip_grad_norm_ trains
# a small regression, and the loss follows the rates.
import numpy as np
import torch
import torch.nn as nn
from torch.optim.lr_scheduler import CosineAnnealingLR, LambdaLR, MultiStepLR, StepLR

xs = np.linspace(-1, 1, 48, dtype=np.float32).reshape(-1, 1)
x = torch.tensor(np.concatenate([xs, xs ** 2, np.sin(3 * xs)], axis=1))
y = torch.tensor((0.7 * xs - 1.3 * xs ** 2 + 0.2).astype(np.float32))


def model():
    m = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    with torch.no_grad():
        for i, p in enumerate(m.parameters()):
            n = p.numel()
            values = ((np.arange(n) * 7919 + i * 104729) % 1000) / 2500.0 - 0.2
            p.copy_(torch.tensor(values.astype(np.float32).reshape(tuple(p.shape))))
    return m


def rates(make, epochs=12, opt_class=torch.optim.SGD, **opt_args):
    m = model()
    opt = opt_class(m.parameters(), lr=0.1, **opt_args)
    sched = make(opt)
    lrs = []
    for _ in range(epochs):
        lrs.append(opt.param_groups[0]["lr"])
        opt.zero_grad()
        loss = ((m(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        sched.step()
    return lrs, sched.get_last_lr(), loss.item()


for name, make in [
        ("StepLR", lambda o: StepLR(o, step_size=3, gamma=0.5)),
        ("MultiStepLR", lambda o: MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.3)),
        ("CosineAnnealingLR", lambda o: CosineAnnealingLR(o, T_max=5, eta_min=0.01)),
        ("LambdaLR", lambda o: LambdaLR(o, lambda epoch: 1.0 / (1 + epoch))),
]:
    lrs, last, loss = rates(make)
    print(name, " ".join(f"{lr:.8f}" for lr in lrs), f"last {last[0]:.8f} loss {loss:.6f}")

# Adam + StepLR + clip_grad_norm_, and a rate set by hand through param_groups.
m = model()
opt = torch.optim.Adam(m.parameters(), lr=0.05)
sched = StepLR(opt, step_size=4, gamma=0.5)
for epoch in range(10):
    opt.zero_grad()
    loss = ((m(x) - y) ** 2).mean()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(m.parameters(), max_norm=0.5)
    opt.step()
    sched.step()
    print(f"epoch {epoch} lr {sched.get_last_lr()[0]:.6f} loss {loss.item():.6f} norm {norm.item():.6f}")
for group in opt.param_groups:
    group["lr"] = 0.001
opt.zero_grad()
((m(x) - y) ** 2).mean().backward()
opt.step()
print(f"by hand lr {opt.param_groups[0]['lr']:.6f} initial {opt.param_groups[0]['initial_lr']:.6f} "
      f"loss {((m(x) - y) ** 2).mean().item():.6f}")
