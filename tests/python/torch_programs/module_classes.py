"""Built-in modules as classes: isinstance and type names, a subclass of nn.Linear with its own
constructor and forward (calling super().forward), forward hooks and pre-hooks that change the
input and output and are removed, buffers (persistent or not) in buffers() and state_dict(),
nn.Parameter as a class, and print(model) of it all."""
import torch
import torch.nn as nn


class Scaled(nn.Linear):
    """A Linear to one output whose result is scaled: its own __init__ arguments."""

    def __init__(self, n, scale):
        super().__init__(n, 1)
        self.scale = scale
        self.register_buffer("calls", torch.zeros(1))
        self.register_buffer("scratch", torch.zeros(2), persistent=False)

    def forward(self, x):
        with torch.no_grad():
            self.calls.add_(1)
        return super().forward(x) * self.scale


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True), nn.Linear(4, 2), Scaled(2, 0.5))
with torch.no_grad():  # the same weights in both engines
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-1.0, 1.0, p.numel()).reshape(p.shape) * (i + 1) / 4)
print(model)
for m in model:
    print(type(m).__name__, isinstance(m, nn.Module), isinstance(m, nn.Linear),
          isinstance(m, nn.ReLU), isinstance(m, Scaled))
print(issubclass(Scaled, nn.Linear), issubclass(nn.Linear, nn.Module), nn.Linear.__name__)
print([n for n, _ in model.named_parameters()])
print([n for n, _ in model.named_buffers()], list(model.state_dict().keys()))
print(isinstance(model[0].weight, nn.Parameter), isinstance(torch.ones(2), nn.Parameter),
      isinstance(nn.Parameter(torch.ones(2)), nn.Parameter))

x = torch.tensor([[1.0, -2.0, 0.5], [0.25, 1.5, -1.0]])
print([round(v, 6) for v in model(x).flatten().tolist()])

seen = []
pre = model[0].register_forward_pre_hook(lambda m, args: (args[0] * 2,))
post = model[2].register_forward_hook(lambda m, args, out: out + 1)
spy = model[3].register_forward_hook(
    lambda m, args, out: seen.append((type(m).__name__, tuple(args[0].shape), tuple(out.shape))))
print([round(v, 6) for v in model(x).flatten().tolist()], seen)
pre.remove()
post.remove()
post.remove()  # twice is fine
print([round(v, 6) for v in model(x).flatten().tolist()], len(seen))
with spy:
    pass
model(x)
print(len(seen), model[3].calls.item())

loss = model(x).sum()
loss.backward()
print([round(v, 6) for v in model[3].weight.grad.flatten().tolist()])
try:
    model[3].register_buffer("calls", torch.zeros(1))
except KeyError as e:
    print("KeyError", e)
try:
    model[3].register_buffer("bad", 3)
except TypeError as e:
    print("TypeError", e)
