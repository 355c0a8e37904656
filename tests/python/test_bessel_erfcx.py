"""torch.i0, Tensor.i0, torch.special.i0/i0e/i1/i1e and torch.special.erfcx against Debian's
torch 1.13: values over their domains (series, asymptotic ranges, overflow, +-inf, NaN) in
float64 and float32, integer inputs (the default dtype), float64 gradients by finite
differences and against torch's, and the grad_fn names. meson registers this file only when
torch imports (tests/python/meson.build)."""
import numpy as np
import pytest

import gradscope as gs
import gradscope.special as gspecial

torch = pytest.importorskip("torch")

GRID = np.concatenate([np.linspace(-40, 40, 321), [0.0, -0.0, 1e-300, 1e-9, -1e-9, 29.99, 30.01,
                                                   100.0, -250.0, 700.0, 713.9, -715.0,
                                                   float("inf"), float("-inf"),
                                                   float("nan")]]).tolist()
ERFCX_GRID = np.concatenate([np.linspace(-27, 60, 349), [25.99, 26.01, 1e3, 1e10, 1e300, -26.6,
                                                         -30.0, float("inf"), float("-inf"),
                                                         float("nan")]]).tolist()
FUNCTIONS = {"i0": GRID, "i0e": GRID, "i1": GRID, "i1e": GRID, "erfcx": ERFCX_GRID}


def mine_of(name):
    return gs.i0 if name == "i0" else getattr(gspecial, name)


def theirs_of(name):
    return getattr(torch.special, name)


def close(mine, theirs, rtol):
    a, b = np.asarray(mine, dtype=float), np.asarray(theirs, dtype=float)
    assert np.array_equal(np.isnan(a), np.isnan(b))
    special = ~np.isfinite(b) | (b == 0)
    assert np.array_equal(a[special & ~np.isnan(b)], b[special & ~np.isnan(b)])
    np.testing.assert_allclose(a[~special], b[~special], rtol=rtol, atol=0)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_values_match_torch_in_float64(name):
    xs = FUNCTIONS[name]
    mine = mine_of(name)(gs.tensor(xs, dtype=gs.float64)).tolist()
    theirs = theirs_of(name)(torch.tensor(xs, dtype=torch.float64)).tolist()
    close(mine, theirs, rtol=1e-13)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_float32_and_integers_as_torch(name):
    xs = [x for x in FUNCTIONS[name] if abs(x) < 80]
    mine = mine_of(name)(gs.tensor(xs, dtype=gs.float32))
    theirs = theirs_of(name)(torch.tensor(xs, dtype=torch.float32))
    assert str(mine.dtype) == str(theirs.dtype).replace("torch", "gradscope")
    close(mine.tolist(), theirs.tolist(), rtol=2e-6)
    ints = [-3, 0, 2, 7]
    mine_i = mine_of(name)(gs.tensor(ints))
    theirs_i = theirs_of(name)(torch.tensor(ints))
    assert str(mine_i.dtype).split(".")[-1] == str(theirs_i.dtype).split(".")[-1] == "float32"
    close(mine_i.tolist(), theirs_i.tolist(), rtol=2e-6)


def test_tensor_i0_and_torch_i0_and_inplace():
    xs = [-2.5, 0.0, 1.0, 3.0]
    t = gs.tensor(xs, dtype=gs.float64)
    expect = torch.i0(torch.tensor(xs, dtype=torch.float64)).tolist()
    assert t.i0().tolist() == gs.i0(t).tolist() == gspecial.i0(t).tolist()
    close(t.i0().tolist(), expect, rtol=1e-14)
    u = t.clone()
    assert u.i0_() is u
    close(u.tolist(), expect, rtol=1e-14)


# points away from i1's removable singularity at 0, plus 0 itself (the 0.5 limit)
GRAD_POINTS = [-35.0, -3.2, -0.7, 0.0, 0.4, 2.0, 12.5, 31.0]


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_float64_gradients_match_torch_and_finite_differences(name):
    x = gs.tensor(GRAD_POINTS, dtype=gs.float64, requires_grad=True)
    mine_of(name)(x).sum().backward()
    tx = torch.tensor(GRAD_POINTS, dtype=torch.float64, requires_grad=True)
    theirs_of(name)(tx).sum().backward()
    np.testing.assert_allclose(x.grad.tolist(), tx.grad.tolist(), rtol=1e-12, atol=1e-14)
    h = 1e-6
    f = mine_of(name)
    for i, p in enumerate(GRAD_POINTS):
        up = f(gs.tensor([p + h], dtype=gs.float64)).item()
        down = f(gs.tensor([p - h], dtype=gs.float64)).item()
        if not np.isfinite(up):  # erfcx overflows below -26.6: its gradient is -inf there
            assert x.grad.tolist()[i] == tx.grad.tolist()[i] == float("-inf")
            continue
        assert abs((up - down) / (2 * h) - x.grad.tolist()[i]) <= 1e-6 * max(1.0, abs(up))


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_second_derivatives_match_torch(name):
    pts = [-3.2, -0.7, 0.4, 2.0]
    x = gs.tensor(pts, dtype=gs.float64, requires_grad=True)
    (g,) = gs.autograd.grad(mine_of(name)(x).sum(), x, create_graph=True)
    g.sum().backward()
    tx = torch.tensor(pts, dtype=torch.float64, requires_grad=True)
    (tg,) = torch.autograd.grad(theirs_of(name)(tx).sum(), tx, create_graph=True)
    tg.sum().backward()
    np.testing.assert_allclose(x.grad.tolist(), tx.grad.tolist(), rtol=1e-11, atol=1e-14)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_grad_fn_names_are_torchs(name):
    x = gs.tensor([0.5, 1.5], requires_grad=True)
    tx = torch.tensor([0.5, 1.5], requires_grad=True)
    assert mine_of(name)(x).grad_fn.name() == theirs_of(name)(tx).grad_fn.name()
