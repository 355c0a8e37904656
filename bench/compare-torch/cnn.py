#!/usr/bin/env python3
"""cnn.py: a small CNN trained on the bundled 8x8 digits, written for PyTorch; run as is for
torch and under `python3 -m gradscope.as_torch` for gradscope (cnn.sh runs both). Weights are
deterministic (no random init), batches in a fixed order, so both sides train the same model
and reach the same accuracy. Prints cnn_step_ms= (the mean training step after the first
epoch), cnn_median_step_ms=, cnn_seconds=, train_loss= and test_accuracy=."""
import gzip
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

try:  # gradscope's threads are OpenBLAS's (OPENBLAS_NUM_THREADS), set by cnn.sh
    torch.set_num_threads(int(os.environ.get("GS_TORCH_THREADS", "1")))
except Exception:
    pass
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
rows = np.loadtxt(gzip.open(os.path.join(root, "data", "digits.csv.gz"), "rt"), delimiter=",",
                  dtype=np.float32)
x_all = torch.tensor(rows[:, :64] / 16.0).reshape(-1, 1, 8, 8)
y_all = torch.tensor(rows[:, 64].astype(np.int64))
x_train, y_train, x_test, y_test = x_all[:1500], y_all[:1500], x_all[1500:], y_all[1500:]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 2 * 2, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


model = Net()
with torch.no_grad():
    for k, p in enumerate(model.parameters()):
        n = p.numel()
        scale = (3.0 / max(1, n // p.shape[0])) ** 0.5
        p.copy_((torch.sin(torch.arange(n, dtype=torch.float32) * 0.7 + k) * scale).reshape(p.shape))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
batch, epochs = 50, 8
steps = []
start = time.perf_counter()
for epoch in range(epochs):
    for i in range(0, 1500, batch):
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = F.cross_entropy(model(x_train[i:i + batch]), y_train[i:i + batch])
        loss.backward()
        opt.step()
        if epoch > 0:
            steps.append(time.perf_counter() - t0)
seconds = time.perf_counter() - start
with torch.no_grad():
    acc = (model(x_test).argmax(1) == y_test).float().mean().item()
# The mean, not the median: gradscope's steps are bimodal (most ~1 ms, some much slower), so
# the median would flatter it; the mean is the time a training run takes per step.
print(f"cnn_step_ms={statistics.mean(steps) * 1e3:.4f}")
print(f"cnn_median_step_ms={statistics.median(steps) * 1e3:.4f}")
print(f"cnn_seconds={seconds:.3f}")
print(f"train_loss={loss.item():.4f}")
print(f"test_accuracy={acc:.4f}")
