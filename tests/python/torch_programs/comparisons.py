"""Whole-tensor comparisons: torch.equal, isclose/allclose (tolerances, inf, nan), all/any
whole and along a dim, isnan/isinf/isfinite, as functions and methods."""
import torch

a = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
b = a.clone()
b[1, 2] = 6.00001
nan_inf = torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0])
print("equal", torch.equal(a, a.clone()), torch.equal(a, b), a.equal(a.t().t()))
print("equal shapes", torch.equal(a, a.reshape(3, 2)), torch.equal(a[0], a[0, :]))
print("equal nan", torch.equal(nan_inf, nan_inf.clone()))
print("equal ints", torch.equal(torch.tensor([1, 2]), torch.tensor([1, 2])))
print("isclose", torch.isclose(a, b).tolist())
print("isclose tight", torch.isclose(a, b, rtol=0, atol=1e-7).tolist())
print("allclose", torch.allclose(a, b), torch.allclose(a, b, rtol=0, atol=1e-7), a.allclose(b))
print("isclose inf nan", torch.isclose(nan_inf, nan_inf.clone()).tolist())
print("isclose equal_nan", torch.isclose(nan_inf, nan_inf.clone(), equal_nan=True).tolist())
print("isnan", torch.isnan(nan_inf).tolist(), nan_inf.isnan().tolist())
print("isinf", torch.isinf(nan_inf).tolist(), nan_inf.isinf().tolist())
print("isfinite", torch.isfinite(nan_inf).tolist(), nan_inf.isfinite().tolist())
m = a > 2.5
print("all any", bool(m.all()), bool(m.any()), bool(torch.all(a > 0)), bool(torch.any(a > 9)))
print("all dim", m.all(dim=1).tolist(), m.any(dim=0).tolist(), torch.all(m, 1).tolist())
print("all keepdim", list(m.all(1, keepdim=True).shape), m.any(0, keepdim=True).tolist())
print("any on floats", bool(torch.tensor([0.0, 0.0]).any()), bool(torch.tensor([0.0, 2.0]).any()))
print("all of empty", bool(torch.ones(0).all()), bool(torch.ones(0).any()))
print("allclose scalar-like", torch.allclose(a, a + 1e-9))
