# A custom Module holding a ModuleList, trained with SGD.
import torch
import torch.nn as nn


class Stack(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.tanh(x)
        return x


model = Stack([3, 4, 2])
with torch.no_grad():
    for k, p in enumerate(model.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float32) + k).reshape(p.shape) * 0.5)
print("names", [n for n, _ in model.named_parameters()])
print("count", sum(p.numel() for p in model.parameters()))
x = torch.tensor([[0.5, -1.0, 2.0], [1.0, 0.0, -0.5], [0.2, 0.3, 0.4]])
y = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    print("step", step, round(loss.item(), 6))
print("out", [[round(v, 5) for v in r] for r in model(x).tolist()])
