"""torch's NumPy-style conveniences (gradscope/numpy_style.py) against Debian's torch 1.13: the
same calls give the same shapes, dtypes and values (windows to float rounding), the errors
torch gives, and float64 finite-difference gradient checks of the differentiable ones. meson
registers this file only when torch imports (tests/python/meson.build)."""
import math

import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")


def values(lib, seed, *shape, dtype="float64"):
    v = np.random.RandomState(seed).uniform(-2, 2, shape)
    return lib.tensor(v.tolist(), dtype=getattr(lib, dtype))


CASES = {
    "atleast_1d": lambda m: m.atleast_1d(m.tensor(3.0)),
    "atleast_2d_many": lambda m: m.atleast_2d(m.tensor(1.0), values(m, 1, 3), values(m, 2, 2, 2)),
    "atleast_3d_list": lambda m: m.atleast_3d([m.tensor(1.0), values(m, 1, 3), values(m, 2, 2, 4)]),
    "column_stack": lambda m: m.column_stack([values(m, 1, 3), values(m, 2, 3, 2), values(m, 3, 3)]),
    "row_stack": lambda m: m.row_stack([values(m, 1, 3), values(m, 2, 2, 3)]),
    "dstack": lambda m: m.dstack([values(m, 1, 3), values(m, 2, 3)]),
    "ravel_t": lambda m: values(m, 1, 3, 4).t().ravel(),
    "fliplr_flipud": lambda m: (m.fliplr(values(m, 1, 3, 4)), values(m, 2, 3).flipud()),
    "msort": lambda m: m.msort(values(m, 1, 4, 3)),
    "diagflat": lambda m: (m.diagflat(values(m, 1, 2, 2)), m.diagflat(values(m, 2, 3), -1)),
    "vander": lambda m: (m.vander(values(m, 1, 4)), m.vander(m.tensor([1, 2, 3]), N=5),
                         m.vander(values(m, 2, 3, dtype="float32"), increasing=True)),
    "float_power": lambda m: (m.float_power(values(m, 1, 3, dtype="float32"), 2),
                              m.tensor([2, 3]).float_power(m.tensor([0.5, 2.0]))),
    "degrees": lambda m: (m.deg2rad(values(m, 1, 3)), m.rad2deg(values(m, 2, 3, dtype="float32")),
                          m.deg2rad(m.tensor([180, 90]))),
    "signs": lambda m: (m.positive(values(m, 1, 3)), m.negative(values(m, 2, 3)),
                        values(m, 3, 4).fix()),
    "infinities": lambda m: (m.isposinf(m.tensor([1.0, math.inf, -math.inf, math.nan])),
                             m.isneginf(m.tensor([1.0, math.inf, -math.inf])),
                             m.isposinf(m.tensor([1, 2])), m.isreal(values(m, 1, 2))),
    "angle": lambda m: m.angle(m.tensor([-1.5, 0.0, 2.0, math.nan])),
    "conj_real": lambda m: (m.conj(values(m, 1, 2)), m.real(values(m, 2, 2)),
                            m.resolve_conj(values(m, 3, 2))),
    "mvlgamma": lambda m: (m.mvlgamma(values(m, 1, 3).abs() + 2, 3), m.mvlgamma(m.tensor([0.2]), 3)),
    "inner": lambda m: (m.inner(values(m, 1, 3), values(m, 2, 3)),
                        m.inner(values(m, 3, 2, 3), values(m, 4, 4, 3)),
                        m.inner(m.tensor(2.0), values(m, 5, 2))),
    "vdot_dist": lambda m: (m.vdot(values(m, 1, 3), values(m, 2, 3)),
                            m.dist(values(m, 3, 2, 3), values(m, 4, 3)),
                            values(m, 5, 4).dist(values(m, 6, 4), 1)),
    "pdist": lambda m: (m.pdist(values(m, 1, 4, 3)), m.pdist(values(m, 2, 3, 2), p=1)),
    "cosine_similarity": lambda m: m.cosine_similarity(values(m, 1, 3, 4), values(m, 2, 3, 4)),
    "nanmedian": lambda m: (m.nanmedian(m.tensor([[1.0, math.nan, 3.0, 0.5],
                                                  [math.nan, math.nan, 2.0, 4.0]]), 1),
                            m.nanmedian(m.tensor([2.0, math.nan, 1.0])),
                            m.tensor([[1.0, 5.0], [math.nan, 2.0]]).nanmedian(0, keepdim=True)),
    "empty_strided": lambda m: m.empty_strided((2, 3), (1, 2)).stride(),
    "asarray": lambda m: (m.asarray([1, 2, 3]), m.asarray([1.5, 2.0], dtype=m.float64)),
    "windows": lambda m: tuple(f(n, p) for f in (m.hann_window, m.hamming_window,
                                                  m.blackman_window, m.bartlett_window,
                                                  m.kaiser_window)
                               for n in (0, 1, 5, 8) for p in (True, False)),
    "windows_f64": lambda m: (m.hann_window(7, dtype=m.float64),
                              m.kaiser_window(6, False, 5.0, dtype=m.float64),
                              m.hamming_window(6, True, 0.6, 0.4, dtype=m.float64)),
    "methods": lambda m: (values(m, 1, 2, 3).adjoint(), m.tensor([2.0]).is_nonzero(),
                          m.tensor(0).is_nonzero(), values(m, 2, 2).is_complex()),
}


def flat(x):
    if isinstance(x, (tuple, list)):
        return [flat(v) for v in x]
    return x


def compare(a, b, name):
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b), name
        for x, y in zip(a, b):
            compare(x, y, name)
        return
    if isinstance(a, torch.Tensor):
        assert tuple(a.shape) == tuple(b.shape), name
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], name
        np.testing.assert_allclose(np.asarray(b.tolist(), dtype=float),
                                   np.asarray(a.tolist(), dtype=float),
                                   rtol=2e-6 if a.dtype == torch.float32 else 1e-12,
                                   atol=1e-6 if a.dtype == torch.float32 else 1e-12,
                                   err_msg=name)
        return
    assert a == b, name


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_as_torch(name):
    compare(CASES[name](torch), CASES[name](gs), name)


@pytest.mark.parametrize("call", [
    lambda m: m.fliplr(m.zeros(3)),
    lambda m: m.flipud(m.tensor(1.0)),
    lambda m: m.vander(m.zeros(2, 2)),
    lambda m: m.pdist(m.zeros(3)),
    lambda m: m.inner(m.zeros(2, 3), m.zeros(4)),
    lambda m: m.mvlgamma(m.tensor([0.2]), 0),
    lambda m: m.positive(m.tensor([True])),
    lambda m: m.tensor([1.0, 2.0]).is_nonzero(),
    lambda m: m.empty_strided((2, 3), (1,)),
])
def test_errors_as_torch(call):
    with pytest.raises(RuntimeError) as want:
        call(torch)
    with pytest.raises(RuntimeError) as got:
        call(gs)
    assert str(got.value) == str(want.value)


def test_deterministic_switch():
    gs.use_deterministic_algorithms(True, warn_only=True)
    assert gs.are_deterministic_algorithms_enabled()
    assert gs.is_deterministic_algorithms_warn_only_enabled()
    gs.use_deterministic_algorithms(False)
    assert not gs.are_deterministic_algorithms_enabled()


GRADCHECKS = {
    "vander": (lambda x: gs.vander(x, N=4), (3,)),
    "float_power": (lambda x: gs.float_power(x.abs() + 0.5, 2.5), (4,)),
    "deg2rad": (lambda x: gs.deg2rad(x) * gs.rad2deg(x), (3,)),
    "inner": (lambda x: gs.inner(x, x.flip(1) * 2), (2, 3)),
    "dist": (lambda x: gs.dist(x, x.flip(0)), (4,)),
    "pdist": (lambda x: gs.pdist(x), (4, 3)),
    "nanmedian": (lambda x: gs.nanmedian(x, 1).values, (3, 5)),
    "mvlgamma": (lambda x: gs.mvlgamma(x.abs() + 2, 2), (3,)),
    "stacks": (lambda x: gs.dstack([x, x * 2]).sum(2) + gs.column_stack([x[0], x[1]]).t(), (2, 3)),
}


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradcheck(name):
    fn, shape = GRADCHECKS[name]
    x = values(gs, 7, *shape).requires_grad_()
    assert gs.autograd.gradcheck(fn, (x,), eps=1e-6, atol=1e-5)
