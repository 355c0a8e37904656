"""torch.optim as classes: isinstance, several parameter groups with their own rates, a custom
Optimizer subclass with per-parameter state and its state_dict, zero_grad's two forms, the
optimizer's repr, and the errors for an empty or unordered parameter list."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
with torch.no_grad():  # the same start in both engines (their generators differ)
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) / 3)
x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])
y = torch.tensor([[1.0], [-1.0]])

sgd = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
print(isinstance(sgd, torch.optim.SGD), isinstance(sgd, torch.optim.Optimizer))
print(sgd)
print(sorted(sgd.defaults.items()))

adam = torch.optim.Adam([{"params": model[0].parameters()},
                         {"params": model[2].parameters(), "lr": 0.05}], lr=0.01)
print(len(adam.param_groups), [g["lr"] for g in adam.param_groups],
      [len(g["params"]) for g in adam.param_groups])
for step in range(5):
    adam.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    adam.step()
    print(step, round(loss.item(), 6))
adam.param_groups[1]["lr"] = 0.0  # a frozen group: its parameters stay as they are
before = [round(v, 6) for v in model[2].weight.flatten().tolist()]
adam.zero_grad()
((model(x) - y) ** 2).mean().backward()
adam.step()
print(before == [round(v, 6) for v in model[2].weight.flatten().tolist()])

adam.zero_grad()
print(model[0].bias.grad.tolist())
adam.zero_grad(set_to_none=True)
print(model[0].bias.grad)


class ClippedSGD(torch.optim.Optimizer):
    """A program's own optimizer: it steps by the gradient clipped to [-1, 1] and counts steps."""

    def __init__(self, params, lr=0.01):
        super().__init__(params, dict(lr=lr))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.add_(p.grad.clamp(-1.0, 1.0), alpha=-group["lr"])
                self.state[p]["steps"] = self.state[p].get("steps", 0) + 1
        return loss


def closure():
    own.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    return loss


own = ClippedSGD(model.parameters(), lr=0.001)
print(isinstance(own, torch.optim.Optimizer), type(own).__name__)
for _ in range(3):
    print(round(own.step(closure).item(), 6))
sd = own.state_dict()
print(sorted(sd["state"].items()), sd["param_groups"])
own.param_groups[0]["lr"] = 0.5
own.load_state_dict(sd)
print(own.param_groups[0]["lr"])
own.add_param_group({"params": [torch.zeros(2, requires_grad=True)], "lr": 0.2})
print(len(own.param_groups), own.param_groups[1]["lr"])

for bad in ([], {model[0].weight}):
    try:
        torch.optim.SGD(bad, lr=0.1)
    except (ValueError, TypeError) as e:
        print(type(e).__name__, str(e)[:40])
try:
    torch.optim.SGD(model.parameters())
except (ValueError, TypeError) as e:
    print(type(e).__name__, e)
