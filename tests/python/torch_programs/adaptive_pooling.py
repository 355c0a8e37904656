# Adaptive pooling as a ResNet-style head and on its own: F.adaptive_avg_pool2d/max_pool2d to
# sizes that divide the input and sizes that do not (overlapping cells), None keeping a dim,
# the 1-D forms, the modules' repr in a Sequential, and the gradients (float64).
import torch
import torch.nn as nn
import torch.nn.functional as F

x = torch.linspace(-2, 3, 2 * 3 * 5 * 7, dtype=torch.float64).reshape(2, 3, 5, 7).sin()
x.requires_grad_()
cases = [
    ("avg 1", lambda: F.adaptive_avg_pool2d(x, 1)),
    ("avg (2, 3)", lambda: F.adaptive_avg_pool2d(x, (2, 3))),
    ("avg (None, 4)", lambda: F.adaptive_avg_pool2d(x, (None, 4))),
    ("max (3, 2)", lambda: F.adaptive_max_pool2d(x, (3, 2))),
    ("avg 1d", lambda: F.adaptive_avg_pool1d(x[0], 3)),
    ("max 1d", lambda: F.adaptive_max_pool1d(x[0], 4)),
    ("avg (5, 7)", lambda: F.adaptive_avg_pool2d(x, (5, 7))),
]
for name, f in cases:
    y = f()
    print(name, tuple(y.shape), [round(a, 6) for a in y.flatten().tolist()[:12]])
head = nn.Sequential(nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.AdaptiveMaxPool1d(2))
print(head)
loss = (F.adaptive_avg_pool2d(x, (2, 3)).pow(2).sum() + F.adaptive_max_pool2d(x, (3, 2)).sum()
        + head(x).sum())
loss.backward()
print("x.grad", [round(a, 6) for a in x.grad.flatten().tolist()[:40]])
for label, call in [("output size 0", lambda: F.adaptive_avg_pool2d(x, 0)),
                    ("2-D input", lambda: F.adaptive_avg_pool2d(x[0, 0], 2))]:
    try:
        call()
        print(label, "accepted")
    except RuntimeError:
        print(label, "RuntimeError")
