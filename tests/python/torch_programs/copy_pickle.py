"""copy.deepcopy and pickle as training scripts use them: the best model kept with
copy.deepcopy(model), a state_dict deep-copied and loaded back, tensors pickled, .grad assigned,
and the refusals (a non-leaf's deepcopy)."""
import copy
import pickle

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
        self.register_buffer("steps", torch.zeros(1))
        self.scale = 0.5

    def forward(self, x):
        return self.body(x) * self.scale


torch.manual_seed(0)
net = Net()
with torch.no_grad():  # the same weights in both engines
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.linspace(-1.0, 1.0, p.numel()).reshape(p.shape) * (i + 1) / 5)
x = torch.tensor([[1.0, 0.5, -0.5], [0.0, -1.0, 2.0]])
best = copy.deepcopy(net)
saved = copy.deepcopy(net.state_dict())
print(type(best).__name__, best.scale, list(saved.keys()))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    net(x).pow(2).sum().backward()
    opt.step()
print(torch.equal(best(x), net(x)), [round(v, 6) for v in best(x).flatten().tolist()])
print([round(v, 6) for v in net(x).flatten().tolist()])
net.load_state_dict(saved)
print(torch.equal(best(x), net(x)))
print(best.body[0].weight is not net.body[0].weight, best.steps.tolist())

t = torch.tensor([[1.5, -2.0], [0.25, 4.0]], requires_grad=True)
(t * t).sum().backward()
c = copy.deepcopy(t)
print(c.tolist(), c.requires_grad, c.grad.tolist(), c.is_leaf)
u = pickle.loads(pickle.dumps(t))
print(u.tolist(), u.requires_grad, u.grad)
w = nn.Linear(2, 2).weight
w.grad = torch.full((2, 2), 3.0)
print(w.grad.tolist())
try:
    copy.deepcopy(t * 2)
except RuntimeError as e:
    print("RuntimeError", str(e)[:40])
try:
    w.grad = torch.ones(3)
except RuntimeError as e:
    print("RuntimeError", e)
