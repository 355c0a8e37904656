# Fine-tuning by slicing off a model's head (backbone = model[:-1]), a layer shared by two
# places (nn.Sequential(lin, act, lin)), in-place activations and list edits of containers:
# the backbone holds the SAME modules as the model, so training it trains the model.
from collections import OrderedDict

import torch
import torch.nn as nn


def fill(module, k):
    with torch.no_grad():
        for j, p in enumerate(module.parameters()):
            p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.7 + k + j)
                    .reshape(p.shape) * 0.4)


def show(name, t):
    print(name, [round(v, 5) for v in t.flatten().tolist()])


shared = nn.Linear(4, 4)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True), shared, nn.Tanh(), shared,
                      nn.Linear(4, 2))
fill(model, 1)
print(model)
print("parameters", len(list(model.parameters())), sum(p.numel() for p in model.parameters()))
print("named", [n for n, _ in model.named_parameters()])
print("modules", [n for n, _ in model.named_modules()])
print("state", list(model.state_dict().keys()))

x = torch.tensor([[0.5, -1.0, 2.0], [1.0, 0.0, -0.5], [-0.2, 0.3, 0.4], [0.1, -0.7, 0.9]])
show("out", model(x))

# The head is sliced off: the backbone is a new Sequential over the same modules.
backbone = model[:-1]
print(backbone)
print("same", backbone[0] is model[0], backbone[2] is backbone[4], model[1:][0] is model[1])
print("backbone parameters", len(list(backbone.parameters())))
print("slice keys", list(model[2:].state_dict().keys()))
head = nn.Linear(4, 3)
fill(head, 5)
finetuned = nn.Sequential(OrderedDict([("backbone", backbone), ("head", head)]))
print(finetuned)
print("finetuned named", [n for n, _ in finetuned.named_parameters()])

targets = torch.tensor([0, 2, 1, 2])
opt = torch.optim.SGD(finetuned.parameters(), lr=0.2, momentum=0.5)
for step in range(6):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(finetuned(x), targets)
    loss.backward()
    opt.step()
    print("step", step, round(loss.item(), 6))
show("shared weight", shared.weight)
show("model out after finetune", model(x))  # the model's own modules were trained

# Freezing the backbone by its own parameters, then training the head alone.
for p in backbone.parameters():
    p.requires_grad_(False)
opt = torch.optim.SGD([p for p in finetuned.parameters() if p.requires_grad], lr=0.1)
before = shared.weight.clone()
for step in range(3):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(finetuned(x), targets)
    loss.backward()
    opt.step()
    print("head step", step, round(loss.item(), 6))
print("backbone unchanged", torch.equal(before, shared.weight))

# List edits: del, insert, append, ModuleList slices, ParameterList slices.
del backbone[1]
print(backbone)
backbone.insert(1, nn.ReLU6(inplace=True))
backbone.append(nn.Hardtanh(-0.5, 0.5, inplace=True))
print(backbone)
show("edited", backbone(x))
print("model still", len(model), type(model[1]).__name__)
layers = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 3)])
fill(layers, 3)
part = layers[1:]
print(part)
print("part same", part[0] is layers[1], len(list(part.parameters())))
del layers[0]
print("layers keys", list(layers.state_dict().keys()))
plist = nn.ParameterList([nn.Parameter(torch.ones(2) * i) for i in range(3)])
tail = plist[1:]
print("plist", len(tail), tail[0] is plist[1], [p.sum().item() for p in tail])

# In-place activation modules write into their input and return it.
t = torch.tensor([-1.0, 0.5, 7.0, -3.0])
for act in [nn.ReLU(inplace=True), nn.LeakyReLU(0.1, inplace=True), nn.ELU(inplace=True),
            nn.Hardtanh(inplace=True), nn.SiLU(inplace=True), nn.Dropout(0.5, inplace=True)]:
    act.eval()
    u = t.clone()
    r = act(u)
    print(type(act).__name__, r is u, [round(v, 5) for v in u.tolist()])

# Replacing a parameter's data with a view, as torch allows.
w = nn.Parameter(torch.zeros(3))
base = torch.arange(6.0)
w.data = base[2:5]
print("data view", w.tolist(), w.requires_grad)
