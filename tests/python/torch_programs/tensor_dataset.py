# TensorDataset indexing and a DataLoader without shuffling.
import torch
from torch.utils.data import DataLoader, TensorDataset

xs = torch.arange(20, dtype=torch.float32).reshape(10, 2)
ys = torch.arange(10) % 3
ds = TensorDataset(xs, ys)
print("len", len(ds))
x0, y0 = ds[0]
print("item 0", x0.tolist(), y0.item())
x7, y7 = ds[7]
print("item 7", x7.tolist(), y7.item())
total = 0.0
for bx, by in DataLoader(ds, batch_size=4):
    print("batch", tuple(bx.shape), by.tolist())
    total += bx.sum().item()
print("total", total)
print("last", len(list(DataLoader(ds, batch_size=4, drop_last=True))))
