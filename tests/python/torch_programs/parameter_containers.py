# nn.ParameterList and nn.ParameterDict: parameters registered under torch's names (in
# parameters(), named_parameters() and state_dict as "layers.0", "scales.out"), plain tensors
# made Parameters, the containers' reprs, a model built on them trained with SGD, and a
# state_dict round trip into a second model.
import torch
import torch.nn as nn


class Mixture(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.weights = nn.ParameterList(
            nn.Parameter(torch.linspace(-0.6, 0.6, a * b, dtype=torch.float64).reshape(a, b).float())
            for a, b in zip(sizes[:-1], sizes[1:]))
        self.scales = nn.ParameterDict({"hidden": nn.Parameter(torch.ones(sizes[1])),
                                        "out": torch.full((sizes[-1],), 0.5)})
        self.weights.append(torch.eye(sizes[-1]))
        self.scales["bias"] = nn.Parameter(torch.zeros(sizes[-1]))

    def forward(self, x):
        h = torch.tanh(x @ self.weights[0]) * self.scales["hidden"]
        for w in list(self.weights)[1:]:
            h = h @ w
        return h * self.scales["out"] + self.scales["bias"]


model = Mixture([3, 4, 2])
print(model)
print("names", [n for n, _ in model.named_parameters()])
print("state keys", list(model.state_dict().keys()))
print("lengths", len(model.weights), len(model.scales), "out" in model.scales, "x" in model.scales)
print("keys", list(model.scales.keys()), [tuple(p.shape) for p in model.scales.values()])
print("is parameter", isinstance(model.weights[2], nn.Parameter), model.scales["out"].requires_grad)
print("last", model.weights[-1].tolist())

opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 15, dtype=torch.float64).reshape(5, 3).float()
y = torch.stack([x.sum(1), x[:, 0] - x[:, 2]], 1)
for step in range(4):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    print("step", step, f"{loss.item():.5f}")

twin = Mixture([3, 4, 2])
twin.load_state_dict(model.state_dict())
print("round trip", all(torch.equal(a, b) for a, b in zip(model.parameters(), twin.parameters())))
print("same output", torch.allclose(model(x), twin(x)))
try:
    model.scales[3] = torch.zeros(1)
except TypeError as e:
    print("TypeError:", e)
try:
    model.weights[7]
except IndexError as e:
    print("IndexError:", e)
