# Seeded randomness: after torch.manual_seed the initial weights, the torch.randn data, the
# shuffled batches and the dropout masks are torch's, so the printed numbers are too.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

torch.manual_seed(0)
print([round(v, 6) for v in torch.rand(3).tolist()], [round(v, 6) for v in torch.randn(3).tolist()])
print(torch.randint(0, 10, (5,)).tolist(), torch.randperm(5).tolist())
x = torch.randn(64, 4)
y = (x[:, 0] - 0.5 * x[:, 1] > 0).long()
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.1), nn.Linear(16, 2))
print([round(v, 6) for v in model[0].weight[0].tolist()])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(list(range(64)), batch_size=16, shuffle=True)
for epoch in range(3):
    total = 0.0
    for idx in loader:
        loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    print(epoch, idx.tolist()[:4], f"{total:.5f}")
model.eval()
print("accuracy", (model(x).argmax(1) == y).float().mean().item())
