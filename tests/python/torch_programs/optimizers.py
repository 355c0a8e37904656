# SGD with momentum and weight decay, and Adam, on a small quadratic.
import torch

target = torch.tensor([1.0, -2.0, 0.5])
for name in ("sgd", "sgd_momentum", "adam"):
    w = torch.zeros(3, requires_grad=True)
    if name == "sgd":
        opt = torch.optim.SGD([w], lr=0.1)
    elif name == "sgd_momentum":
        opt = torch.optim.SGD([w], lr=0.05, momentum=0.9, weight_decay=0.01)
    else:
        opt = torch.optim.Adam([w], lr=0.1)
    for step in range(20):
        opt.zero_grad()
        loss = ((w - target) ** 2).sum() + 0.1 * (w ** 4).sum()
        loss.backward()
        opt.step()
    print(name, round(loss.item(), 6), [round(v, 5) for v in w.tolist()])
    print(name, "lr", opt.param_groups[0]["lr"])
