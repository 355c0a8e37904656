# Adadelta, Adamax, NAdam (with a StepLR), RAdam (past its rectification threshold), ASGD
# (its averaged parameters), Rprop and LBFGS (fixed step and strong Wolfe, with a closure)
# training the same small regression; their reprs, state_dict's state names, a checkpoint
# reloaded into a fresh optimizer, and a parameter group with its own rate. In float64: the
# optimizers match torch to the last bits, float32 forward passes only to about one ulp.
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)
torch.manual_seed(0)
x = torch.linspace(-1, 1, 24).reshape(8, 3)
y = (x * torch.tensor([0.5, -1.0, 2.0])).sum(1, keepdim=True).sin()


def fresh():
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))
    with torch.no_grad():
        for k, p in enumerate(model.parameters()):
            p.copy_((torch.arange(p.numel()) * 0.37 + k).sin().reshape(p.shape) * 0.5)
    return model


def loss_of(model):
    return ((model(x) - y) ** 2).mean()


def rounded(values):
    return [round(v, 5) for v in values]


settings = [
    ("Adadelta", lambda ps: torch.optim.Adadelta(ps, lr=0.5, weight_decay=0.01)),
    ("Adamax", lambda ps: torch.optim.Adamax(ps, lr=0.01, betas=(0.8, 0.99))),
    ("NAdam", lambda ps: torch.optim.NAdam(ps, lr=0.01, momentum_decay=0.01)),
    ("RAdam", lambda ps: torch.optim.RAdam(ps, lr=0.01, betas=(0.8, 0.9))),
    ("ASGD", lambda ps: torch.optim.ASGD(ps, lr=0.05, t0=3, lambd=0.01)),
    ("Rprop", lambda ps: torch.optim.Rprop(ps, lr=0.01, etas=(0.4, 1.3))),
]
for name, make in settings:
    model = fresh()
    opt = make(model.parameters())
    sched = torch.optim.lr_scheduler.StepLR(opt, 4, gamma=0.5) if name == "NAdam" else None
    losses = []
    for step in range(10):
        opt.zero_grad()
        loss = loss_of(model)
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        losses.append(loss.item())
    print(name, rounded(losses))
    print(" weight", rounded(model[2].weight.flatten().tolist()))
    state = opt.state_dict()["state"][0]
    print(" state", list(state.keys()))
    if name == "ASGD":
        print(" ax", rounded(state["ax"].flatten().tolist()[:5]))
    # a checkpoint reloaded into a fresh optimizer over the same parameters steps on alike
    saved = opt.state_dict()
    again = make(model.parameters())
    again.load_state_dict(saved)
    again.zero_grad()
    loss_of(model).backward()
    again.step()
    print(" reloaded", round(loss_of(model).item(), 5))

model = fresh()
opt = torch.optim.NAdam([{"params": model[0].parameters()},
                         {"params": model[2].parameters(), "lr": 0.001}], lr=0.01)
print(opt)

for search in [None, "strong_wolfe"]:
    model = fresh()
    opt = torch.optim.LBFGS(model.parameters(), lr=0.5 if search is None else 1.0, max_iter=5,
                            history_size=4, line_search_fn=search)

    def closure():
        opt.zero_grad()
        loss = loss_of(model)
        loss.backward()
        return loss

    losses = [opt.step(closure).item() for _ in range(4)]
    state = opt.state[model[0].weight]
    print("LBFGS", search, rounded(losses), state["n_iter"], state["func_evals"],
          len(state["old_dirs"]))
print(torch.optim.LBFGS(model.parameters()))

for bad in [lambda: torch.optim.Adadelta(model.parameters(), rho=1.5),
            lambda: torch.optim.Rprop(model.parameters(), etas=(1.5, 2.0)),
            lambda: torch.optim.NAdam(model.parameters(), momentum_decay=-1)]:
    try:
        bad()
    except ValueError as e:
        print("ValueError", e)
