# A DataLoader over a TensorDataset, in order, with a partial last batch.
import torch
from torch.utils.data import DataLoader, TensorDataset

xs = torch.arange(20, dtype=torch.float32).reshape(10, 2)
ys = torch.arange(10)
loader = DataLoader(TensorDataset(xs, ys), batch_size=4)
for epoch in range(2):
    for i, (xb, yb) in enumerate(loader):
        print(epoch, i, list(xb.shape), xb.sum().item(), yb.tolist())
