"""5-D F.grid_sample (a volume read at a 3-D grid) against torch 1.13: values and float64
gradients of input and grid over 'bilinear' (trilinear) and 'nearest', every padding mode and
align_corners, with grid points inside and far outside the volume; float32 values; the
grad_fn name; a grid from 3-D F.affine_grid; and torch's refusals (bicubic, a 2-coordinate
grid). meson registers this file only where torch is installed."""
import itertools

import numpy as np
import pytest

import gradscope as gs
from torch_compare import same_values_and_gradients
import gradscope.nn.functional as GF

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402

CASES = list(itertools.product(("bilinear", "nearest"), ("zeros", "border", "reflection"),
                               (False, True)))


def _volume_and_grid(seed, reach):
    """A random volume [N, C, D, H, W] and grid [N, Do, Ho, Wo, 3] in [-reach, reach]."""
    rng = np.random.default_rng(seed)
    n, c = int(rng.integers(1, 3)), int(rng.integers(1, 4))
    d, h, w, do, ho, wo = (int(v) for v in rng.integers(1, 5, size=6))
    return rng.normal(size=(n, c, d, h, w)), rng.uniform(-reach, reach, size=(n, do, ho, wo, 3))


@pytest.mark.parametrize("mode,padding,align", CASES)
@pytest.mark.parametrize("seed,reach", [(1, 1.1), (4, 3.5), (9, 1.0)])
def test_values_and_gradients_match_torch(mode, padding, align, seed, reach):
    x, grid = _volume_and_grid(seed, reach)
    same_values_and_gradients(
        lambda a, g: GF.grid_sample(a, g, mode, padding, align),
        lambda a, g: TF.grid_sample(a, g, mode, padding, align), x, grid, tol=1e-10)


@pytest.mark.parametrize("mode,padding,align", CASES)
def test_float32(mode, padding, align):
    x, grid = _volume_and_grid(5, 1.5)
    g = GF.grid_sample(gs.tensor(x, dtype=gs.float32), gs.tensor(grid, dtype=gs.float32), mode,
                       padding, align)
    t = TF.grid_sample(torch.tensor(x, dtype=torch.float32),
                       torch.tensor(grid, dtype=torch.float32), mode, padding, align)
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-5, atol=1e-5)


def test_float64_gradcheck_and_grad_fn():
    x, grid = _volume_and_grid(2, 0.9)
    a = gs.tensor(x, requires_grad=True)
    g = gs.tensor(grid, requires_grad=True)
    out = GF.grid_sample(a, g, align_corners=False)
    assert out.grad_fn.name() == "GridSampler3DBackward0"
    assert gs.autograd.gradcheck(lambda a, g: GF.grid_sample(a, g, "bilinear", "border", True),
                                 (a, g), eps=1e-6, atol=1e-6)


def test_affine_grid_3d_then_grid_sample_matches_torch():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 2, 3, 4, 5))
    theta = np.array([[[0.9, 0.1, 0.0, 0.1], [0.0, 1.1, 0.2, 0.0], [0.1, 0.0, 0.8, -0.1]]] * 2)
    same_values_and_gradients(
        lambda a, th: GF.grid_sample(a, GF.affine_grid(th, (2, 2, 3, 3, 4), False), "bilinear",
                                     "zeros", False),
        lambda a, th: TF.grid_sample(a, TF.affine_grid(th, (2, 2, 3, 3, 4), False), "bilinear",
                                     "zeros", False), x, theta, tol=1e-10)


def test_refuses_what_torch_refuses():
    x = np.zeros((1, 2, 3, 4, 5))
    for grid, mode, words in ((np.zeros((1, 2, 2, 2, 3)), "bicubic", "bicubic interpolation only "
                               "supports 4D input"),
                              (np.zeros((1, 2, 2, 2, 2)), "bilinear", "size 3 in last dimension")):
        with pytest.raises(Exception, match=words):
            GF.grid_sample(gs.tensor(x), gs.tensor(grid), mode, align_corners=False)
        with pytest.raises(Exception, match=words):
            TF.grid_sample(torch.tensor(x), torch.tensor(grid), mode, align_corners=False)
