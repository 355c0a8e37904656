"""The special functions (lgamma, digamma, erfinv, erfc, exp2, asinh, acosh, atanh) against
Debian's torch 1.13: values over their domains, at the poles and outside them, in float64 and
float32, their gradients, the in-place forms, and the grad_fn names. meson registers this file
only when torch imports (tests/python/meson.build)."""
import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")

GRID = np.concatenate([np.linspace(-7.9, 7.9, 159), [1e-300, 1e-8, 0.5, 1.0, 2.0, 30.0, 1e3,
                                                     1e8, 171.5, -0.5, -1e-8]]).tolist()
DOMAINS = {
    "lgamma": GRID + [0.0, -0.0, -1.0, -2.0, float("inf"), float("-inf"), float("nan")],
    "digamma": GRID + [0.0, -0.0, -1.0, -3.0, float("inf"), float("nan")],
    "erfinv": np.linspace(-0.99, 0.99, 199).tolist() + [1.0, -1.0, 1.5, -2.0, 1e-300],
    "erfc": np.linspace(-6, 27, 300).tolist(),
    "exp2": np.linspace(-1000, 1025, 300).tolist(),
    "asinh": np.linspace(-1e3, 1e3, 301).tolist() + [1e-300, -1e300],
    "acosh": np.linspace(0.5, 1e3, 301).tolist() + [1.0, 1e300],
    "atanh": np.linspace(-1.0, 1.0, 201).tolist() + [1.5, -1 + 1e-15],
}


def close(mine, theirs, rtol):
    a, b = np.asarray(mine, dtype=float), np.asarray(theirs, dtype=float)
    assert np.array_equal(np.isnan(a), np.isnan(b)), (a[np.isnan(a) != np.isnan(b)],
                                                      b[np.isnan(a) != np.isnan(b)])
    finite = np.isfinite(b)
    assert np.array_equal(a[~finite & ~np.isnan(b)], b[~finite & ~np.isnan(b)])
    np.testing.assert_allclose(a[finite], b[finite], rtol=rtol, atol=1e-300)


@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_values_match_torch_in_float64(name):
    xs = DOMAINS[name]
    mine = getattr(gs, name)(gs.tensor(xs, dtype=gs.float64)).tolist()
    theirs = getattr(torch, name)(torch.tensor(xs, dtype=torch.float64)).tolist()
    # digamma near its poles cancels digits in both libraries' formulas alike
    close(mine, theirs, rtol=1e-9 if name == "digamma" else 1e-13)


def test_erfinv_in_the_far_tails_inverts_erfc_to_the_last_bits():
    """Beyond |y| = 0.99 torch 1.13's erfinv drifts (5.0420291 where erfc says 5.0420319 at
    1 - 1e-12); gradscope's is checked against erfc itself, which is exact there."""
    import math
    ys = [1 - 1e-3, 1 - 1e-6, 1 - 1e-9, 1 - 1e-12, -(1 - 1e-15), 1 - 2 ** -52]
    xs = gs.erfinv(gs.tensor(ys, dtype=gs.float64)).tolist()
    for y, x in zip(ys, xs):
        assert math.erfc(abs(x)) == pytest.approx(1 - abs(y), rel=1e-13)
        assert math.copysign(1, x) == math.copysign(1, y)


@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_values_match_torch_in_float32(name):
    xs = [x for x in DOMAINS[name] if abs(x) < 3e38 or x != x]
    mine = getattr(gs, name)(gs.tensor(xs, dtype=gs.float32)).tolist()
    theirs = getattr(torch, name)(torch.tensor(xs, dtype=torch.float32)).tolist()
    close(mine, theirs, rtol=1e-5 if name == "digamma" else 2e-6)


@pytest.mark.parametrize("name,lo,hi", [("lgamma", 0.2, 6.0), ("lgamma", -2.9, -2.1),
                                        ("digamma", 0.2, 9.0), ("digamma", -0.9, -0.1),
                                        ("erfinv", -0.95, 0.95), ("erfc", -3, 3),
                                        ("exp2", -3, 3), ("asinh", -5, 5), ("acosh", 1.1, 9),
                                        ("atanh", -0.9, 0.9)])
def test_gradients_and_names_match_torch(name, lo, hi):
    xs = np.linspace(lo, hi, 23).tolist()
    results = {}
    for lib in (gs, torch):
        x = lib.tensor(xs, dtype=lib.float64, requires_grad=True)
        y = getattr(lib, name)(x)
        (g,) = lib.autograd.grad((y * y).sum(), x)
        results[lib.__name__] = (g.tolist(), type(y.grad_fn).__name__ if lib is torch
                                 else y.grad_fn.name())
    np.testing.assert_allclose(results["gradscope"][0], results["torch"][0], rtol=1e-9)
    assert results["gradscope"][1] == results["torch"][1]


def test_in_place_forms_and_integer_inputs():
    for name in DOMAINS:
        x = gs.tensor([1.25, 1.5] if name == "acosh" else [0.25, 0.5], dtype=gs.float64)
        expect = getattr(gs, name)(x.clone())
        assert getattr(x, name + "_")() is x
        assert x.tolist() == expect.tolist()
    # integers compute in the default floating dtype, as torch's
    assert gs.lgamma(gs.tensor([3, 4])).dtype == gs.float32
    assert gs.lgamma(gs.tensor([3, 4])).tolist() == pytest.approx([np.log(2), np.log(6)])


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 7])
def test_polygamma_matches_torch(n):
    xs = [x for x in GRID if abs(x) < 1e6] + [0.0, -1.0, -2.0]
    mine = gs.polygamma(n, gs.tensor(xs, dtype=gs.float64)).tolist()
    theirs = torch.polygamma(n, torch.tensor(xs, dtype=torch.float64)).tolist()
    close(mine, theirs, rtol=1e-8)
    with pytest.raises(ValueError, match="non-negative order"):
        gs.polygamma(-1, gs.tensor([1.0]))


def test_lgamma_differentiated_four_times_follows_polygamma():
    """lgamma' = digamma, then polygamma(1), (2), (3): each formula records its own node."""
    x = gs.tensor([0.7, 2.5, 11.0, -1.5], dtype=gs.float64, requires_grad=True)
    tx = torch.tensor([0.7, 2.5, 11.0, -1.5], dtype=torch.float64)
    y = gs.lgamma(x)
    for order in range(4):
        (y,) = gs.autograd.grad(y.sum(), x, create_graph=True)
        expected = torch.digamma(tx) if order == 0 else torch.polygamma(order, tx)
        # torch's trigamma stops its series early: 4e-10 off at 0.7 (see below)
        np.testing.assert_allclose(y.tolist(), expected.tolist(), rtol=1e-8)
        assert y.requires_grad  # its history goes on, to the next order


def test_trigamma_against_a_direct_sum():
    """psi'(x) = sum over k of 1 / (x + k)^2: summed directly (with the integral's tail) it
    agrees with gradscope's to 1e-13, where torch 1.13's is 4e-10 off at 0.7."""
    import math
    for x in (0.7, 1.3, 4.2):
        n = 200000
        a = x + n
        direct = math.fsum(1 / (x + k) ** 2 for k in range(n)) + 1 / a + 1 / (2 * a * a) + 1 / (6 * a ** 3)
        assert gs.polygamma(1, gs.tensor([x], dtype=gs.float64)).item() == pytest.approx(direct, rel=1e-13)
