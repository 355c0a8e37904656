# RMSprop (plain, centered with momentum, with weight decay) and Adagrad (with lr_decay and an
# initial accumulator) training the same small regression, step for step; a closure,
# their reprs, state_dict's state names, and a parameter group with its own rate.
import torch
import torch.nn as nn

torch.manual_seed(0)
x = torch.linspace(-1, 1, 24).reshape(8, 3)
y = (x * torch.tensor([0.5, -1.0, 2.0])).sum(1, keepdim=True).sin()


def fresh():
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))
    with torch.no_grad():
        for k, p in enumerate(model.parameters()):
            p.copy_((torch.arange(p.numel()) * 0.37 + k).sin()
                    .reshape(p.shape) * 0.5)
    return model


settings = [
    ("RMSprop", lambda ps: torch.optim.RMSprop(ps, lr=0.01)),
    ("RMSprop centered momentum", lambda ps: torch.optim.RMSprop(ps, lr=0.005, momentum=0.9,
                                                                 centered=True)),
    ("RMSprop weight decay", lambda ps: torch.optim.RMSprop(ps, lr=0.01, weight_decay=0.1,
                                                            alpha=0.9)),
    ("Adagrad", lambda ps: torch.optim.Adagrad(ps, lr=0.1)),
    ("Adagrad decay", lambda ps: torch.optim.Adagrad(ps, lr=0.1, lr_decay=0.01,
                                                     initial_accumulator_value=0.1,
                                                     weight_decay=0.01)),
]
for name, make in settings:
    model = fresh()
    opt = make(model.parameters())
    losses = []
    for step in range(6):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(round(loss.item(), 6))
    print(name, losses)
    print(" weight", [round(v, 6) for v in model[2].weight.flatten().tolist()])
    print(" state", sorted(opt.state_dict()["state"][0].keys()))

model = fresh()
opt = torch.optim.RMSprop([{"params": model[0].parameters()},
                           {"params": model[2].parameters(), "lr": 0.001}], lr=0.01)
print(opt)


def closure():
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    return loss


print("closure", round(opt.step(closure).item(), 6), round(opt.step(closure).item(), 6))
for bad in [lambda: torch.optim.RMSprop(model.parameters(), lr=-1),
            lambda: torch.optim.Adagrad(model.parameters(), eps=-1)]:
    try:
        bad()
    except ValueError as e:
        print("ValueError", e)
