"""torch.nn.init: the gains, the deterministic fills (constant, ones, zeros, eye, dirac), and the
random initialisers' bounds and spreads (their draws differ between engines, not their laws)."""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
init = nn.init
print([round(init.calculate_gain(n), 6) for n in ("linear", "conv2d", "sigmoid", "tanh", "relu",
                                                  "selu")])
print(round(init.calculate_gain("leaky_relu"), 6), round(init.calculate_gain("leaky_relu", 0.2), 6))

lin = nn.Linear(300, 200)
w = lin.weight
print(init.constant_(lin.bias, 0.25) is lin.bias, lin.bias[:3].tolist(), lin.bias.requires_grad)
init.ones_(lin.bias)
print(lin.bias.sum().item())
init.zeros_(lin.bias)
print(lin.bias.abs().sum().item())
m = torch.empty(3, 4)
print(init.eye_(m).tolist())
k = torch.empty(2, 2, 3, 3)
print(init.dirac_(k).sum().item(), k[0, 0, 1, 1].item(), k[1, 1, 1, 1].item(), k[0, 1].abs().sum().item())

fan_in, fan_out = 300, 200
bound = math.sqrt(6.0 / (fan_in + fan_out))
init.xavier_uniform_(w)
print(w.abs().max().item() <= bound, w.abs().max().item() > 0.9 * bound,
      abs(w.std().item() / (bound / math.sqrt(3)) - 1) < 0.05)
init.xavier_normal_(w, gain=2.0)
print(abs(w.std().item() / (2.0 * math.sqrt(2.0 / (fan_in + fan_out))) - 1) < 0.05)
init.kaiming_uniform_(w, a=math.sqrt(5))
kb = math.sqrt(3.0) * init.calculate_gain("leaky_relu", math.sqrt(5)) / math.sqrt(fan_in)
print(w.abs().max().item() <= kb, abs(w.std().item() / (kb / math.sqrt(3)) - 1) < 0.05)
init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
print(abs(w.std().item() / (math.sqrt(2.0) / math.sqrt(fan_out)) - 1) < 0.05)
init.uniform_(w, -0.5, 0.5)
print(w.min().item() >= -0.5, w.max().item() <= 0.5, abs(w.mean().item()) < 0.01)
init.normal_(w, 1.0, 0.1)
print(abs(w.mean().item() - 1.0) < 0.01, abs(w.std().item() - 0.1) < 0.005)
init.trunc_normal_(w, 0.0, 1.0, -0.5, 0.5)
print(w.min().item() >= -0.5, w.max().item() <= 0.5)
q = torch.empty(4, 6)
init.orthogonal_(q)
print([[round(v, 5) + 0.0 for v in row] for row in (q @ q.t()).tolist()])
s = torch.empty(10, 3)
init.sparse_(s, 0.3)
print([(s[:, c] == 0).sum().item() >= 3 for c in range(3)])
for bad in (lambda: init.xavier_uniform_(torch.empty(5)), lambda: init.calculate_gain("swish"),
            lambda: init.kaiming_uniform_(w, mode="fan")):
    try:
        bad()
    except ValueError as e:
        print("ValueError", e)
