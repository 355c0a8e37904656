# ReduceLROnPlateau and OneCycleLR (with momentum cycling) over a small classifier, a dataset
# cut with random_split and read through a WeightedRandomSampler and a BatchSampler. The
# random draws are gradscope's own (not torch's stream), so the program prints what does not
# depend on which samples were drawn: the sizes, that the split covers the data once, that a
# zero weight is never drawn, and the training of the full data in a fixed order.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import OneCycleLR, ReduceLROnPlateau
from torch.utils.data import (BatchSampler, DataLoader, Dataset, SequentialSampler,
                              TensorDataset, WeightedRandomSampler, random_split)

xs = np.linspace(-1, 1, 40, dtype=np.float32)
x = torch.tensor(np.stack([xs, xs ** 2, np.cos(3 * xs)], axis=1))
labels = torch.tensor(((xs > -0.3).astype(np.int64) + (xs > 0.4).astype(np.int64)))
data = TensorDataset(x, labels)


def model():
    m = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 3))
    with torch.no_grad():
        for i, p in enumerate(m.parameters()):
            n = p.numel()
            values = ((np.arange(n) * 7919 + i * 104729) % 1000) / 2000.0 - 0.25
            p.copy_(torch.tensor(values.astype(np.float32).reshape(tuple(p.shape))))
    return m


# random_split: sizes, and the parts cover the dataset once
train, val = random_split(data, [30, 10], generator=torch.Generator().manual_seed(0))
parts = sorted(train.indices + val.indices)
print("split", len(train), len(val), parts == list(range(40)))
thirds = random_split(range(10), [0.5, 0.3, 0.2])
print("fractions", [len(t) for t in thirds])

# WeightedRandomSampler: class 0 has weight 0, so no sample of it is drawn
weights = [0.0 if int(c) == 0 else (1.0 if int(c) == 1 else 3.0) for c in labels]
loader = DataLoader(data, batch_size=8, sampler=WeightedRandomSampler(weights, 36))
sizes, zero_drawn = [], 0
for xb, yb in loader:
    sizes.append(len(yb))
    zero_drawn += int((yb == 0).sum())
print("weighted batches", len(loader), sizes, "class 0 drawn", zero_drawn)


class Rows(Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return x[i], int(labels[i]), float(i) / 4


rows = DataLoader(Rows(), batch_sampler=BatchSampler(SequentialSampler(range(10)), 4, False))
for xb, yb, fb in rows:
    print("rows", tuple(xb.shape), yb.tolist(), str(yb.dtype), [round(v, 2) for v in fb.tolist()])

# OneCycleLR over SGD with momentum: the rate and the momentum cycle step by step
m = model()
opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
fixed = DataLoader(data, batch_size=8, shuffle=False)
sched = OneCycleLR(opt, max_lr=0.5, epochs=6, steps_per_epoch=len(fixed))
for epoch in range(6):
    total = 0.0
    for xb, yb in fixed:
        opt.zero_grad()
        loss = F.cross_entropy(m(xb), yb, label_smoothing=0.05)
        loss.backward()
        opt.step()
        sched.step()
        total += loss.item()
    group = opt.param_groups[0]
    print(f"onecycle {epoch} loss {total / len(fixed):.5f} lr {group['lr']:.6f} "
          f"momentum {group['momentum']:.5f}")

# ReduceLROnPlateau over Adam (beta1 cycling is OneCycleLR's; here the rate drops when the
# loss stalls)
m = model()
opt = torch.optim.Adam(m.parameters(), lr=0.05)
plateau = ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=1, threshold=0.25,
                            cooldown=1, min_lr=1e-3)
for epoch in range(16):
    opt.zero_grad()
    loss = F.cross_entropy(m(x), labels, ignore_index=2)
    loss.backward()
    opt.step()
    plateau.step(loss.item())
    print(f"plateau {epoch} loss {loss.item():.5f} lr {opt.param_groups[0]['lr']:.5f} "
          f"bad {plateau.num_bad_epochs} cooldown {plateau.cooldown_counter}")
state = plateau.state_dict()
print("plateau state", sorted(k for k in state if not k.startswith("_")), state["best"] > 0)
