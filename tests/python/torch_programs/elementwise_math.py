# Elementwise math: rounding, logarithms, inverse and hyperbolic trigonometry, erf, fmod, atan2,
# lerp, the logical ops and the in-place forms, in float32 and float64, values and gradients.
import math

import torch


def r(t):
    """Values rounded to 5 digits (NaN and infinities as strings), so libm's last bits agree."""
    out = []
    for v in t.flatten().tolist():
        if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
            out.append(str(v))
        elif isinstance(v, float):
            out.append(round(v, 5) + 0.0)  # + 0.0: -0.0 prints as 0.0 on both
        else:
            out.append(v)
    return out


for dtype in (torch.float32, torch.float64):
    print("dtype", dtype)
    x = torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.75, -7.25, float("nan")], dtype=dtype)
    for name in ("ceil", "round", "trunc", "frac", "sign", "square", "reciprocal"):
        print(name, r(getattr(torch, name)(x)), r(getattr(x, name)()))
    print("round decimals", r(torch.round(torch.tensor([1.2345, 1250.0], dtype=dtype), decimals=2)),
          r(torch.tensor([1234.5, 1250.0], dtype=dtype).round(decimals=-2)))
    u = torch.tensor([-0.9, -0.3, 0.0, 0.4, 0.8], dtype=dtype)
    p = torch.tensor([0.125, 0.5, 1.0, 2.0, 100.0], dtype=dtype)
    for name in ("asin", "acos", "atan", "sinh", "cosh", "erf", "expm1", "log1p"):
        print(name, r(getattr(torch, name)(u)))
    for name in ("log2", "log10", "log1p"):
        print(name, r(getattr(torch, name)(p)), r(getattr(p, name)()))
    print("edges", r(torch.log1p(torch.tensor([-1.0], dtype=dtype))),
          r(torch.erf(torch.tensor([float("inf"), float("-inf")], dtype=dtype))),
          r(torch.atan2(torch.tensor([0.0], dtype=dtype), torch.tensor([-1.0], dtype=dtype))))
    a = torch.tensor([-7.0, 7.0, -7.5, 5.5], dtype=dtype)
    b = torch.tensor([3.0, -3.0, 2.0, -1.5], dtype=dtype)
    print("fmod", r(torch.fmod(a, b)), r(a.fmod(2.0)), "remainder", r(torch.remainder(a, b)))
    print("atan2", r(torch.atan2(a, b)), r(a.atan2(b)))
    print("true_divide", r(torch.true_divide(a, b)), r(a.true_divide(2)))
    print("clip", r(torch.clip(a, -2, 2)), r(a.clip(min=0)), r(torch.clamp_min(a, 0)),
          r(a.clamp_max(1)))
    w = torch.tensor([0.0, 0.25, 0.5, 1.0], dtype=dtype)
    print("lerp", r(torch.lerp(a, b, w)), r(a.lerp(b, 0.75)))

    # gradients
    xg = torch.tensor([0.3, -0.6, 0.45, 0.7], dtype=dtype, requires_grad=True)
    yg = torch.tensor([1.5, -2.0, 0.8, -0.4], dtype=dtype, requires_grad=True)
    ops = {
        "frac": lambda: (xg * 3).frac(), "reciprocal": lambda: xg.reciprocal(),
        "square": lambda: xg.square(), "log1p": lambda: xg.log1p(), "expm1": lambda: xg.expm1(),
        "log2": lambda: (xg + 1).log2(), "log10": lambda: (xg + 1).log10(),
        "asin": lambda: xg.asin(), "acos": lambda: xg.acos(), "atan": lambda: xg.atan(),
        "sinh": lambda: xg.sinh(), "cosh": lambda: xg.cosh(), "erf": lambda: xg.erf(),
        "atan2": lambda: torch.atan2(xg, yg), "fmod": lambda: torch.fmod(yg * 4, xg),
        "lerp": lambda: torch.lerp(xg, yg, xg.detach().abs()),
        "lerp scalar": lambda: xg.lerp(yg, 0.3),
        "rounding": lambda: xg.ceil() + xg.round() + xg.trunc() + xg.sign() + xg,
    }
    for name, f in ops.items():
        xg.grad = None
        yg.grad = None
        (f() * torch.tensor([1.0, 2.0, -1.0, 0.5], dtype=dtype)).sum().backward()
        print("grad", name, r(xg.grad), r(yg.grad) if yg.grad is not None else None)

    # in place
    t = torch.tensor([0.2, 0.5, 0.8], dtype=dtype)
    t.asin_().sinh_().log1p_()
    print("inplace chain", r(t))
    t = torch.tensor([2.5, -0.5, 1.5], dtype=dtype)
    print("inplace rounding", r(t.clone().ceil_()), r(t.clone().round_()), r(t.clone().trunc_()),
          r(t.clone().frac_()), r(t.clone().sign_()), r(t.clone().clamp_min_(0)),
          r(t.clone().clamp_max_(0)), r(t.clone().clip_(-0.2, 0.2)))
    t2 = t.clone()
    t2.pow_(2)
    print("pow_", r(t2), r(t.clone().fmod_(1.0)), r(t.clone().atan2_(t)), r(t.clone().lerp_(t2, 0.5)))
    base = torch.tensor([1.0, 2.0, 3.0], dtype=dtype, requires_grad=True)
    h = base * 1.0
    h.pow_(torch.tensor([2.0, 0.5, 3.0], dtype=dtype))
    h.sum().backward()
    print("grad pow_", r(base.grad))

# integers and bools
i = torch.tensor([-3, 0, 2, 5])
print("int keep", r(torch.ceil(i)), r(i.round()), r(i.trunc()), r(i.sign()), r(i.square()))
print("int promote", torch.reciprocal(i).dtype, r(torch.reciprocal(i)), torch.log1p(i).dtype,
      r(torch.erf(i)), torch.atan2(i, i).dtype)
print("int fmod", r(torch.fmod(torch.tensor([-7, 7, -7]), torch.tensor([3, -3, -3]))))
print("logical", r(torch.logical_and(i, torch.tensor([1.0, 1.0, 0.0, 0.5]))),
      r(torch.logical_or(i, 0.0 * i)), r(i.logical_xor(i > 1)), torch.logical_and(i, i).dtype)
m = torch.tensor([1.0, 0.0, 2.0])
m.logical_or_(torch.tensor([0, 0, 1]))
print("logical_or_", r(m))
