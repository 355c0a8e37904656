# In-place unary ops and activations as PyTorch records them: t.sin_() returns t itself, bumps
# its version by one and makes the op's own node (SinBackward0) t's grad_fn; the gradient
# through it equals the out-of-place op's. Activations with inplace=True write into their
# input; a leaf that requires grad is refused; a saved result written again is caught at
# backward; an integer tensor refuses a floating result.
import torch
import torch.nn as nn
import torch.nn.functional as F


def r(t):
    return [round(float(v), 8) for v in t.detach().reshape(-1)]


weights = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
for name in ["sin_", "cos_", "tan_", "relu_", "sigmoid_", "tanh_", "exp_", "log_", "sqrt_",
             "rsqrt_", "abs_", "neg_", "frac_", "reciprocal_", "square_", "log1p_", "expm1_",
             "log2_", "log10_", "asin_", "acos_", "atan_", "sinh_", "cosh_", "erf_"]:
    base = torch.tensor([0.31, 0.52, 0.77], dtype=torch.float64, requires_grad=True)
    y = base * 1
    version = y._version
    z = getattr(y, name)()
    (z * weights).sum().backward()
    inplace_grad = base.grad.clone()
    base.grad = None
    (getattr(base, name[:-1])() * weights).sum().backward()
    print(name, z is y, z.grad_fn.name(), y._version - version, r(y),
          torch.allclose(inplace_grad, base.grad, rtol=1e-12, atol=0))

# Through a transposed view: the base's grad_fn is CopySlices, the view's the op's node.
a = torch.tensor([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], dtype=torch.float64, requires_grad=True)
b = a * 1
v = b.t()
v.exp_()
print("view", v.grad_fn.name(), b.grad_fn.name(), r(b))
b.sum().backward()
print("view grad", r(a.grad))

activations = {
    "relu": lambda y: F.relu(y, inplace=True),
    "silu": lambda y: F.silu(y, inplace=True),
    "elu": lambda y: F.elu(y, 1.0, True),
    "hardtanh": lambda y: F.hardtanh(y, -0.5, 0.5, True),
    "leaky_relu": lambda y: F.leaky_relu(y, 0.2, True),
    "relu6": lambda y: F.relu6(y, inplace=True),
    "nn.SiLU": nn.SiLU(inplace=True),
    "nn.ELU": nn.ELU(inplace=True),
    "nn.LeakyReLU": nn.LeakyReLU(0.1, True),
    "nn.ReLU6": nn.ReLU6(inplace=True),
    "nn.Hardswish": nn.Hardswish(inplace=True),
}
for name, f in activations.items():
    x = torch.tensor([-1.5, -0.25, 0.3, 2.0], dtype=torch.float64, requires_grad=True)
    y = x * 1
    z = f(y)
    (z * torch.arange(1.0, 5.0, dtype=torch.float64)).sum().backward()
    print(name, z is y, r(y), r(x.grad))

leaf = torch.tensor([1.0], requires_grad=True)
for name, call in [("silu", lambda: F.silu(leaf, inplace=True)), ("sin_", leaf.sin_)]:
    try:
        call()
        print(name, "on a leaf: no error")
    except RuntimeError:
        print(name, "on a leaf: refused")

x = torch.tensor([0.5, 0.25], requires_grad=True)
y = x * 1
y.exp_()  # saves its result
y.mul_(2)
try:
    y.sum().backward()
    print("saved result written again: no error")
except RuntimeError:
    print("saved result written again: caught")

t = torch.tensor([1, 2, 3])
try:
    t.sin_()
except RuntimeError as e:
    print("int sin_:", e)
t.neg_()
print("int neg_", t.tolist())
