"""Checkpointing an optimizer: state_dict() of SGD with and without momentum and of Adam (with
amsgrad) after some steps, saved with torch.save and loaded into a fresh optimizer, which then
steps exactly as the original; the state's names, steps and shapes."""
import io

import torch
import torch.nn as nn


def model():
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    with torch.no_grad():  # the same weights in both engines
        for i, p in enumerate(m.parameters()):
            p.copy_(torch.linspace(-1.0, 1.0, p.numel()).reshape(p.shape) * (i + 1) / 5)
    return m


x = torch.tensor([[1.0, 0.5, -0.5], [0.0, -1.0, 2.0], [0.5, 0.5, 0.5]])
y = torch.tensor([[1.0], [-1.0], [0.25]])


def train(m, opt, steps):
    for _ in range(steps):
        opt.zero_grad()
        loss = ((m(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
    return round(loss.item(), 6)


for make in (lambda p: torch.optim.SGD(p, lr=0.1),
             lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
             lambda p: torch.optim.Adam(p, lr=0.01),
             lambda p: torch.optim.Adam(p, lr=0.01, amsgrad=True, weight_decay=0.01),
             lambda p: torch.optim.AdamW(p, lr=0.01)):
    m = model()
    opt = make(m.parameters())
    print(type(opt).__name__, opt.state_dict()["state"])
    print(train(m, opt, 3))
    sd = opt.state_dict()
    first = sd["state"][0]
    print(sorted(first), [tuple(v.shape) if hasattr(v, "shape") and v is not None else v
                          for k, v in sorted(first.items())])
    if "step" in first:
        print("step", first["step"].item())
    buffer = io.BytesIO()
    torch.save({"model": m.state_dict(), "optimizer": sd}, buffer)
    buffer.seek(0)
    checkpoint = torch.load(buffer)
    m2 = model()
    m2.load_state_dict(checkpoint["model"])
    opt2 = make(m2.parameters())
    opt2.load_state_dict(checkpoint["optimizer"])
    print(train(m, opt, 2), train(m2, opt2, 2))
    print(torch.equal(m(x), m2(x)))
