# ModuleDict, Sequential, Identity, Flatten; the model's printed text and module walks.
import torch
import torch.nn as nn


class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Flatten(), nn.Linear(4, 3), nn.ReLU())
        self.heads = nn.ModuleDict({"a": nn.Linear(3, 2), "b": nn.Identity()})

    def forward(self, x, head):
        return self.heads[head](self.body(x))


model = Heads()
print(model)
print("children", [n for n, _ in model.named_children()])
print("modules", [n for n, _ in model.named_modules()])
print("params", [(n, tuple(p.shape)) for n, p in model.named_parameters()])
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.linspace(-1.0, 1.0, p.numel()).reshape(p.shape))
x = torch.arange(8, dtype=torch.float32).reshape(2, 2, 2) / 8
print("a", [[round(v, 5) for v in r] for r in model(x, "a").tolist()])
print("b", [[round(v, 5) for v in r] for r in model(x, "b").tolist()])
model.heads["a"].requires_grad_(False)
print("frozen", [n for n, p in model.named_parameters() if not p.requires_grad])
seen = []
model.apply(lambda m: seen.append(m._get_name()))
print("apply", seen)
print("dict keys", list(model.heads.keys()), len(model.body))
