# A training script with the extras real ones carry: mixed-precision switches (GradScaler and
# autocast, which disable themselves without CUDA), torch.jit markers, pruning with an optimizer
# made before it, stochastic weight averaging with SWALR and update_bn, and BatchNorm's
# momentum=None. Deterministic weights, so torch and gradscope print the same numbers.
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.utils.prune as prune
from torch.cuda.amp import GradScaler, autocast
from torch.optim.swa_utils import SWALR, AveragedModel, update_bn

warnings.simplefilter("ignore")  # the amp classes' "CUDA is not available" warnings

rng = np.random.default_rng(4)
xs = torch.tensor(rng.standard_normal((64, 6)).astype(np.float32))
ys = torch.tensor((rng.random(64) * 3).astype(np.int64))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.bn = nn.BatchNorm1d(16, momentum=None)
        self.fc2 = nn.Linear(16, 3)

    @torch.jit.ignore
    def describe(self):
        return "Net(6-16-3)"

    def forward(self, x):
        if not torch.jit.is_scripting():
            x = x * 1.0
        return self.fc2(torch.relu(self.bn(self.fc1(x))))


model = Net()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        n = p.numel()
        values = ((np.arange(n) * 7919 + i * 104729) % 1000) / 2500.0 - 0.2
        p.copy_(torch.tensor(values.astype(np.float32).reshape(tuple(p.shape))))
print(model.describe(), model.bn)

opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
prune.l1_unstructured(model.fc1, "weight", amount=0.3)
prune.ln_structured(model.fc2, "weight", amount=1, n=2, dim=0)
print("pruned", int((model.fc1.weight == 0).sum()), int((model.fc2.weight == 0).sum()),
      prune.is_pruned(model))

scaler = GradScaler()


def epoch_of_training():
    for start in range(0, 64, 16):
        opt.zero_grad()
        with autocast():
            loss = nn.functional.cross_entropy(model(xs[start:start + 16]), ys[start:start + 16])
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    return loss


for epoch in range(2):  # the pruned weights train through weight_orig
    print(f"pruned epoch {epoch} loss {epoch_of_training().item():.5f}")
prune.remove(model.fc1, "weight")
prune.remove(model.fc2, "weight")
print("zeros kept", int((model.fc1.weight == 0).sum()), sorted(model.fc1.state_dict()),
      prune.is_pruned(model))

swa_model = AveragedModel(model)  # a deep copy: after remove(), as torch can copy only leaves
swa_sched = SWALR(opt, swa_lr=0.02, anneal_epochs=2, anneal_strategy="linear")
for epoch in range(5):
    loss = epoch_of_training()
    if epoch >= 1:
        swa_model.update_parameters(model)
        swa_sched.step()
    print(f"epoch {epoch} loss {loss.item():.5f} lr {opt.param_groups[0]['lr']:.5f}")

update_bn([(xs[i:i + 16], ys[i:i + 16]) for i in range(0, 64, 16)], swa_model)
swa_model.eval()
with torch.no_grad():
    out = swa_model(xs)
print("averaged", int(swa_model.n_averaged), f"{out.abs().mean().item():.5f}",
      f"{swa_model.module.bn.running_mean.sum().item():.5f}")
print("accuracy", f"{(out.argmax(1) == ys).float().mean().item():.4f}")
