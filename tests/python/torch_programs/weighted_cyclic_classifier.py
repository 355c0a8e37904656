# A weighted, label-smoothed classifier: CrossEntropyLoss with class weights, ignore_index
# and label smoothing, trained under CyclicLR (triangular2, cycling SGD's momentum), with a
# weight-normed first layer, a spectral-normed head and a GELU of torch's tanh form held in
# an nn.ModuleDict; then NLLLoss's weighted mean, soft (probability) targets, a
# ParameterDict edited as a dict, and weight_norm removed again.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import CyclicLR

xs = np.linspace(-1, 1, 48, dtype=np.float32)
x = torch.tensor(np.stack([xs, xs ** 2, np.sin(3 * xs), np.cos(2 * xs)], axis=1))
labels = torch.tensor((xs > -0.4).astype(np.int64) + (xs > 0.1).astype(np.int64) +
                      (xs > 0.6).astype(np.int64))
labels[::11] = -1  # unlabelled rows, left out by ignore_index


def fill(m, seed):
    with torch.no_grad():
        for i, p in enumerate(m.parameters()):
            n = p.numel()
            values = ((np.arange(n) * 7919 + (i + seed) * 104729) % 1000) / 2000.0 - 0.25
            p.copy_(torch.tensor(values.astype(np.float32).reshape(tuple(p.shape))))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleDict({"hidden": nn.Linear(4, 16), "act": nn.GELU("tanh"),
                                     "head": nn.Linear(16, 4)})
        fill(self, 0)
        nn.utils.weight_norm(self.layers["hidden"])
        nn.utils.spectral_norm(self.layers["head"])
        # torch draws u and v at random: start both libraries from the same vectors
        with torch.no_grad():
            head = self.layers["head"]
            head.weight_u.copy_(F.normalize(torch.linspace(-1.0, 1.0, 4) + 0.3, dim=0))
            head.weight_v.copy_(F.normalize(torch.cos(torch.arange(16.0)), dim=0))

    def forward(self, inputs):
        h = self.layers["act"](self.layers["hidden"](inputs))
        return self.layers["head"](h)


net = Net()
print(net)
print("parameters", [(k, tuple(p.shape)) for k, p in net.named_parameters()])
print("state", list(net.state_dict()))
weights = torch.tensor([0.5, 2.0, 1.0, 1.5])
loss_fn = nn.CrossEntropyLoss(weight=weights, ignore_index=-1, label_smoothing=0.1)
print(loss_fn, "weight" in loss_fn.state_dict())
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
sched = CyclicLR(opt, base_lr=0.01, max_lr=0.2, step_size_up=3, step_size_down=5,
                 mode="triangular2", base_momentum=0.8, max_momentum=0.95)
for step in range(20):
    opt.zero_grad()
    loss = loss_fn(net(x), labels)
    loss.backward()
    opt.step()
    sched.step()
    group = opt.param_groups[0]
    print(f"step {step} loss {loss.item():.5f} lr {group['lr']:.6f} "
          f"momentum {group['momentum']:.5f}")
print("sigma-normed head", [round(v, 4) for v in net.layers["head"].weight_u.tolist()])
net.eval()
with torch.no_grad():
    logits = net(x)
    accuracy = (logits.argmax(1) == labels).float().sum() / (labels != -1).sum()
print("accuracy", round(accuracy.item(), 4))
for reduction in ("mean", "sum", "none"):
    nll = F.nll_loss(logits.log_softmax(1), labels, weight=weights, ignore_index=-1,
                     reduction=reduction)
    print("nll", reduction, [round(v, 4) for v in nll.reshape(-1).tolist()[:6]])
soft = F.softmax(torch.arange(16.0).reshape(4, 4) / 5, dim=1)
print("soft targets", round(F.cross_entropy(logits[:4], soft, weight=weights,
                                            label_smoothing=0.2).item(), 5))
print("gelu", [round(v, 5) for v in F.gelu(torch.linspace(-2, 2, 5), approximate="tanh").tolist()])

scales = nn.ParameterDict({"b": nn.Parameter(torch.ones(2)), "a": nn.Parameter(torch.zeros(3))})
scales.update([("c", nn.Parameter(torch.full((1,), 0.5)))])
popped = scales.pop("a")
key, last = scales.popitem()
scales.setdefault("d", nn.Parameter(torch.ones(4)))
print("parameter dict", list(scales.keys()), tuple(popped.shape), key, list(scales.state_dict()))

hidden = net.layers["hidden"]
before = hidden(x[:3]).detach()
nn.utils.remove_weight_norm(hidden)
print("after removal", [k for k, _ in hidden.named_parameters()],
      torch.allclose(before, hidden(x[:3]), atol=1e-6))
