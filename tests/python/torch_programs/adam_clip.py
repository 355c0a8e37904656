# Adam with gradient clipping by total norm.
import torch
import torch.nn as nn

lin = nn.Linear(4, 2)
with torch.no_grad():
    lin.weight.copy_(torch.arange(8, dtype=torch.float32).reshape(2, 4) * 0.1 - 0.3)
    lin.bias.copy_(torch.tensor([0.05, -0.05]))
x = torch.arange(12, dtype=torch.float32).reshape(3, 4) / 6.0
target = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
opt = torch.optim.Adam(lin.parameters(), lr=0.05)
for step in range(5):
    opt.zero_grad()
    loss = ((lin(x) - target) ** 2).mean() * 10
    loss.backward()
    total = nn.utils.clip_grad_norm_(lin.parameters(), max_norm=1.0)
    opt.step()
    print(f"step {step} loss {loss.item():.6f} norm {float(total):.6f}")
print("weight", [round(v, 6) for v in lin.weight.flatten().tolist()])
