# An MLP trained on the bundled 8x8 digits with SGD, deterministic weights.
import gzip
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "data", "digits.csv.gz")
rows = np.loadtxt(gzip.open(path, "rt"), delimiter=",", dtype=np.float32)[:512]
x = torch.tensor(rows[:, :64] / 16.0)
y = torch.tensor(rows[:, 64].astype(np.int64))

model = nn.Sequential(nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 10))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        n = p.numel()
        values = ((np.arange(n) * 7919 + i * 104729) % 1000) / 5000.0 - 0.1
        p.copy_(torch.tensor(values.astype(np.float32).reshape(tuple(p.shape))))
opt = torch.optim.SGD(model.parameters(), lr=0.5)
for epoch in range(8):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    print(f"epoch {epoch} loss {loss.item():.5f}")
with torch.no_grad():
    acc = (model(x).argmax(dim=1) == y).float().mean().item()
print(f"accuracy {acc:.4f}")
