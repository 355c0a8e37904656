# The activations and losses torch.nn has beyond ReLU/GELU and the cross-entropy family: a
# small model made of them (print(model) shows torch's text), their values and gradients at
# the kinks torch defines, and each loss with every reduction and its gradients.
import torch
import torch.nn as nn
import torch.nn.functional as F



def r(t):
    """Values rounded to 5 digits after the point, -0.0 shown as 0.0."""
    if isinstance(t, (int, float)):
        return round(t, 5) + 0.0
    if isinstance(t, list):
        return [r(v) for v in t]
    return r(t.tolist())


def grid(*shape, lo=-2.0, hi=2.0, step=7):
    """Spread values of shape (a permuted linspace: no random numbers, the same in both)."""
    n = 1
    for s in shape:
        n *= s
    order = torch.tensor([(i * step) % n for i in range(n)])
    return torch.linspace(lo, hi, n)[order].reshape(shape)


model = nn.Sequential(
    nn.Linear(4, 6), nn.SiLU(), nn.Linear(6, 6), nn.ELU(alpha=0.5), nn.Hardtanh(-2.0, 2.0),
    nn.Mish(), nn.LeakyReLU(0.2), nn.Softplus(beta=2, threshold=10), nn.Linear(6, 3),
    nn.LogSoftmax(dim=1),
)
with torch.no_grad():  # the same weights in both engines
    for i, p in enumerate(model.parameters()):
        p.copy_(grid(*p.shape, lo=-1.0, hi=1.0, step=5) * (i + 2) / 4)
print(model)
mods = [nn.SELU(), nn.ReLU6(), nn.Hardsigmoid(), nn.Hardswish(), nn.LogSigmoid(), nn.Softsign(),
        nn.Softmax(dim=1), nn.Softmin(dim=1), nn.GLU(), nn.ELU(inplace=True),
        nn.Hardtanh(inplace=True), nn.ReLU6(inplace=True), nn.LeakyReLU(inplace=True),
        nn.SiLU(inplace=True), nn.Mish(inplace=True), nn.SELU(inplace=True), nn.Softmax(),
        nn.L1Loss(), nn.SmoothL1Loss(), nn.HuberLoss(), nn.BCELoss(), nn.KLDivLoss(),
        nn.CosineSimilarity(), nn.PairwiseDistance()]
for m in mods:
    print(m)

# Kinks: -3, 0, 3, 6 and the hardtanh bounds, where torch's one-sided slopes apply.
points = [-7.0, -3.0, -2.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0, 4.5, 6.0, 8.0, 25.0]
functions = {
    "silu": F.silu, "elu": lambda x: F.elu(x, 0.7), "selu": F.selu, "softplus": F.softplus,
    "softplus_b2": lambda x: F.softplus(x, beta=2.0, threshold=3.0), "relu6": F.relu6,
    "hardtanh": lambda x: F.hardtanh(x, -1.0, 1.0), "hardsigmoid": F.hardsigmoid,
    "hardswish": F.hardswish, "logsigmoid": F.logsigmoid, "mish": F.mish,
    "softsign": F.softsign, "leaky_relu": lambda x: F.leaky_relu(x, 0.1, inplace=False),
}
for name, f in functions.items():
    x = torch.tensor(points, requires_grad=True)
    y = f(x)
    y.sum().backward()
    print(name, r(y))
    print(name, "grad", r(x.grad))

x = grid(3, 4).requires_grad_()
for name, f in [("softmin", lambda t: F.softmin(t, dim=1)), ("glu", lambda t: F.glu(t, dim=1)),
                ("softmax0", nn.Softmax(dim=0)), ("logsoftmax", nn.LogSoftmax(dim=1))]:
    x.grad = None
    y = f(x)
    (y * grid(*y.shape, lo=-1.0, hi=1.5, step=5)).sum().backward()
    print(name, r(y))
    print(name, "grad", r(x.grad))

# The model forward and backward.
inp = grid(5, 4, lo=-3.0, hi=3.0)
out = model(inp)
print("model out", r(out))
out.sum().backward()
print("model grad", r(model[0].weight.grad))

# Losses, every reduction.
pred = torch.tensor([[0.5, -1.2, 2.0], [0.1, 0.9, -3.0]], requires_grad=True)
goal = torch.tensor([[1.0, -1.0, 0.0], [0.1, 2.5, -1.0]])
prob = torch.tensor([[0.2, 0.7, 0.999], [0.5, 0.01, 0.0]], requires_grad=True)
label = torch.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
logp = torch.log_softmax(torch.tensor([[0.3, 1.0, -0.5], [2.0, 0.0, 0.1]]), dim=1)
logp.requires_grad_(True)
tdist = torch.tensor([[0.2, 0.5, 0.3], [0.0, 0.6, 0.4]])
losses = {
    "l1": lambda red: F.l1_loss(pred, goal, reduction=red),
    "smooth_l1": lambda red: F.smooth_l1_loss(pred, goal, reduction=red),
    "smooth_l1_b05": lambda red: nn.SmoothL1Loss(reduction=red, beta=0.5)(pred, goal),
    "huber": lambda red: F.huber_loss(pred, goal, reduction=red),
    "huber_d2": lambda red: nn.HuberLoss(reduction=red, delta=2.0)(pred, goal),
    "bce": lambda red: F.binary_cross_entropy(prob, label, reduction=red),
    "bce_w": lambda red: nn.BCELoss(weight=torch.tensor([1.0, 2.0, 0.5]), reduction=red)(prob, label),
    "l1_module": lambda red: nn.L1Loss(reduction=red)(pred, goal),
    "kl": lambda red: F.kl_div(logp, tdist, reduction=red),
    "kl_log": lambda red: nn.KLDivLoss(reduction=red, log_target=True)(
        logp, torch.log_softmax(tdist + 0.1, dim=1)),
}
for name, f in losses.items():
    reductions = ["mean", "sum", "none"] + (["batchmean"] if name.startswith("kl") else [])
    for red in reductions:
        for t in (pred, prob, logp):
            t.grad = None
        loss = f(red)
        loss.sum().backward()
        grads = [r(t.grad) for t in (pred, prob, logp) if t.grad is not None]
        print(name, red, r(loss), grads)

a = grid(4, 5).requires_grad_()
b = grid(4, 5, lo=-1.0, hi=3.0, step=3).requires_grad_()
for name, f in [("cos", lambda: F.cosine_similarity(a, b)),
                ("cos_dim0", lambda: nn.CosineSimilarity(dim=0, eps=1e-6)(a, b)),
                ("pdist", lambda: F.pairwise_distance(a, b)),
                ("pdist_p1_keep", lambda: nn.PairwiseDistance(p=1.0, keepdim=True)(a, b))]:
    a.grad = b.grad = None
    y = f()
    y.sum().backward()
    print(name, r(y), r(a.grad), r(b.grad))
