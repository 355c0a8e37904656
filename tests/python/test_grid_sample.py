"""F.grid_sample, F.affine_grid and bicubic F.interpolate / nn.Upsample against torch 1.13:
values and float64 gradients over every mode, padding mode and align_corners, on random
shapes with grid points inside and far outside the image; float32 values; grad_fn names,
torch's argument checks and warnings, and double backward through the bicubic and affine
nodes. meson registers this file only where torch is installed."""
import itertools
import warnings

import numpy as np
import pytest
import torch

import gradscope as gs
from torch_compare import same_values_and_gradients
import gradscope.nn as gnn
import gradscope.nn.functional as GF
import torch.nn as tnn
import torch.nn.functional as TF

MODES = ("bilinear", "nearest", "bicubic")
PADDINGS = ("zeros", "border", "reflection")
CASES = list(itertools.product(MODES, PADDINGS, (False, True)))


def _image_and_grid(seed, reach):
    """A random image [N, C, H, W] and grid [N, Ho, Wo, 2] with points in [-reach, reach]."""
    rng = np.random.default_rng(seed)
    n, c = rng.integers(1, 3), rng.integers(1, 4)
    h, w, ho, wo = (int(v) for v in rng.integers(1, 7, size=4))
    x = rng.normal(size=(n, c, h, w))
    grid = rng.uniform(-reach, reach, size=(n, ho, wo, 2))
    return x, grid


@pytest.mark.parametrize("mode,padding,align", CASES)
@pytest.mark.parametrize("seed,reach", [(1, 1.2), (3, 4.5)])
def test_grid_sample_values_and_gradients(mode, padding, align, seed, reach):
    x, grid = _image_and_grid(seed, reach)
    same_values_and_gradients(
        lambda a, g: GF.grid_sample(a, g, mode, padding, align),
        lambda a, g: TF.grid_sample(a, g, mode, padding, align), x, grid, tol=1e-10)


@pytest.mark.parametrize("mode,padding,align", CASES)
def test_grid_sample_grid_points_on_pixels_and_edges(mode, padding, align):
    """Points exactly on pixel centers, on the edges (-1, 1) and half way between pixels: where
    rounding, clipping and reflection decide."""
    h, w = 4, 5
    xs = np.array([-1.0, 1.0, 0.0, -0.75, 0.5, 1.25, -1.5, 0.1])
    ys = np.array([-1.0, 1.0, 0.0, -0.5, 0.25, -1.25, 1.5, 0.3])
    grid = np.stack(np.meshgrid(xs, ys), axis=-1)[None]
    x = np.arange(h * w, dtype=np.float64).reshape(1, 1, h, w) ** 1.5
    same_values_and_gradients(
        lambda a: GF.grid_sample(a, gs.tensor(grid), mode, padding, align),
        lambda a: TF.grid_sample(a, torch.tensor(grid), mode, padding, align), x, tol=1e-10)


@pytest.mark.parametrize("mode,padding,align", CASES)
def test_grid_sample_float32(mode, padding, align):
    x, grid = _image_and_grid(7, 1.5)
    g = GF.grid_sample(gs.tensor(x, dtype=gs.float32), gs.tensor(grid, dtype=gs.float32), mode,
                       padding, align)
    t = TF.grid_sample(torch.tensor(x, dtype=torch.float32),
                       torch.tensor(grid, dtype=torch.float32), mode, padding, align)
    assert g.dtype == gs.float32
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-5, atol=1e-5)


def test_grid_sample_nearest_gives_the_grid_a_zero_gradient():
    x, grid = _image_and_grid(5, 1.2)
    ga = gs.tensor(x, requires_grad=True)
    gg = gs.tensor(grid, requires_grad=True)
    GF.grid_sample(ga, gg, "nearest", align_corners=False).sum().backward()
    assert gg.grad is not None and not gg.grad.numpy().any()
    assert ga.grad.numpy().any()


def test_grid_sample_grad_fn_and_transposed_inputs():
    x, grid = _image_and_grid(6, 1.1)
    out = GF.grid_sample(gs.tensor(x, requires_grad=True), gs.tensor(grid), align_corners=True)
    assert out.grad_fn.name() == "GridSampler2DBackward0"
    # a non-contiguous image and grid read as their values say
    xt = np.ascontiguousarray(x.transpose(0, 1, 3, 2))
    same_values_and_gradients(
        lambda a, g: GF.grid_sample(a.transpose(2, 3), g.transpose(1, 2), "bicubic", "border", False),
        lambda a, g: TF.grid_sample(a.transpose(2, 3), g.transpose(1, 2), "bicubic", "border", False),
        xt, np.ascontiguousarray(grid.transpose(0, 2, 1, 3)), tol=1e-10)


def _raises_like(fn_g, fn_t):
    with pytest.raises(Exception) as te:
        fn_t()
    with pytest.raises(type(te.value)) as ge:
        fn_g()
    return str(ge.value), str(te.value)


def test_grid_sample_refuses_what_torch_refuses():
    x = np.zeros((2, 3, 4, 5))
    grid = np.zeros((2, 3, 3, 2))
    for gkw, tkw in (({"mode": "area"}, {"mode": "area"}),
                     ({"padding_mode": "wrap"}, {"padding_mode": "wrap"})):
        g, t = _raises_like(lambda: GF.grid_sample(gs.tensor(x), gs.tensor(grid), **gkw),
                            lambda: TF.grid_sample(torch.tensor(x), torch.tensor(grid), **tkw))
        assert g == t
    g, t = _raises_like(
        lambda: GF.grid_sample(gs.tensor(x), gs.tensor(grid[:1]), align_corners=False),
        lambda: TF.grid_sample(torch.tensor(x), torch.tensor(grid[:1]), align_corners=False))
    assert "same batch size" in g and "same batch size" in t
    g, t = _raises_like(
        lambda: GF.grid_sample(gs.tensor(x), gs.tensor(grid[..., :1]), align_corners=False),
        lambda: TF.grid_sample(torch.tensor(x), torch.tensor(grid[..., :1]), align_corners=False))
    assert "size 2 in last dimension" in g and "size 2 in last dimension" in t


def test_align_corners_none_warns_as_torch():
    x, grid = _image_and_grid(8, 1.0)
    theta = np.array([[[1.0, 0.2, 0.1], [-0.1, 0.9, 0.0]]])
    for call in (lambda: GF.grid_sample(gs.tensor(x), gs.tensor(grid)),
                 lambda: GF.affine_grid(gs.tensor(theta), (1, 1, 3, 4))):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        assert any("align_corners=False since 1.3.0" in str(w.message) for w in caught)


@pytest.mark.parametrize("size", [(2, 3, 4, 5), (1, 1, 1, 6), (3, 2, 7, 1), (2, 1, 3, 4, 5),
                                  (1, 2, 1, 2, 3)])
@pytest.mark.parametrize("align", [False, True])
def test_affine_grid_values_and_gradients(size, align):
    rng = np.random.default_rng(len(size) * 10 + sum(size))
    k = len(size) - 2
    theta = rng.normal(size=(size[0], k, k + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's unit-size warning with align_corners
        same_values_and_gradients(lambda t: GF.affine_grid(t, size, align),
                                  lambda t: TF.affine_grid(t, size, align), theta)
        g = GF.affine_grid(gs.tensor(theta, requires_grad=True), size, align)
    assert g.grad_fn.name() == "AffineGridGeneratorBackward0"


def test_affine_grid_refuses_what_torch_refuses():
    theta = np.zeros((2, 2, 3))
    for size in ((2, 3, 4), (2, 3, 4, 5, 6, 7), (2, 3, 0, 4)):
        g, t = _raises_like(lambda: GF.affine_grid(gs.tensor(theta), size, False),
                            lambda: TF.affine_grid(torch.tensor(theta), size, False))
        assert g == t
    g, t = _raises_like(lambda: GF.affine_grid(gs.tensor(theta), (2, 3, 4, 5, 6), False),
                        lambda: TF.affine_grid(torch.tensor(theta), (2, 3, 4, 5, 6), False))
    assert g == t


def test_spatial_transformer_composition():
    """affine_grid into grid_sample: theta's gradient through both nodes."""
    rng = np.random.default_rng(11)
    theta = np.array([[[0.9, -0.2, 0.1], [0.15, 1.1, -0.05]],
                      [[1.2, 0.3, 0.0], [-0.3, 0.8, 0.2]]]) + rng.normal(scale=0.01, size=(2, 2, 3))
    x = rng.normal(size=(2, 3, 6, 7))
    for mode, padding in (("bilinear", "zeros"), ("bicubic", "reflection"), ("bilinear", "border")):
        same_values_and_gradients(
            lambda t, a: GF.grid_sample(a, GF.affine_grid(t, (2, 3, 5, 4), False), mode, padding,
                                        False),
            lambda t, a: TF.grid_sample(a, TF.affine_grid(t, (2, 3, 5, 4), False), mode, padding,
                                        False), theta, x, tol=1e-10)


BICUBIC = [({"size": (7, 9)}, False), ({"size": (7, 9)}, True), ({"size": (2, 3)}, None),
           ({"size": 1}, True), ({"size": 5}, False), ({"scale_factor": 2}, False),
           ({"scale_factor": 1.7}, True), ({"scale_factor": (0.5, 2.5)}, False),
           ({"scale_factor": 1.3, "recompute_scale_factor": True}, False),
           ({"scale_factor": 0.6}, None)]


@pytest.mark.parametrize("kwargs,align", BICUBIC)
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 1, 1, 3), (1, 2, 6, 1)])
def test_bicubic_interpolate(kwargs, align, shape):
    x = np.random.default_rng(sum(shape)).normal(size=shape)
    try:
        TF.interpolate(torch.tensor(x), mode="bicubic", align_corners=align, **kwargs)
    except RuntimeError:  # an output size of 0: refused in torch's words
        g, t = _raises_like(
            lambda: GF.interpolate(gs.tensor(x), mode="bicubic", align_corners=align, **kwargs),
            lambda: TF.interpolate(torch.tensor(x), mode="bicubic", align_corners=align, **kwargs))
        assert g == t
        return
    same_values_and_gradients(
        lambda t: GF.interpolate(t, mode="bicubic", align_corners=align, **kwargs),
        lambda t: TF.interpolate(t, mode="bicubic", align_corners=align, **kwargs), x, tol=1e-10)
    g = GF.interpolate(gs.tensor(x, requires_grad=True), mode="bicubic", align_corners=align,
                       **kwargs)
    assert g.grad_fn.name() == "UpsampleBicubic2DBackward1"


def test_bicubic_float32_and_refusals():
    x = np.random.default_rng(3).normal(size=(2, 2, 5, 4))
    g = GF.interpolate(gs.tensor(x, dtype=gs.float32), scale_factor=2.2, mode="bicubic")
    t = TF.interpolate(torch.tensor(x, dtype=torch.float32), scale_factor=2.2, mode="bicubic")
    assert g.dtype == gs.float32
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-5, atol=1e-5)
    g, t = _raises_like(lambda: GF.interpolate(gs.tensor(x[0]), size=3, mode="bicubic"),
                        lambda: TF.interpolate(torch.tensor(x[0]), size=3, mode="bicubic"))
    assert g == t


def test_upsample_module_bicubic():
    x = np.random.default_rng(4).normal(size=(1, 2, 3, 4))
    gm = gnn.Upsample(scale_factor=2, mode="bicubic", align_corners=True)
    tm = tnn.Upsample(scale_factor=2, mode="bicubic", align_corners=True)
    assert repr(gm) == repr(tm)
    same_values_and_gradients(gm, tm, x, tol=1e-10)


def test_double_backward_through_bicubic_and_affine_grid():
    rng = np.random.default_rng(9)
    x = rng.normal(size=(1, 2, 4, 3))
    theta = rng.normal(size=(1, 2, 3))

    def penalty(lib, F, a, t):
        y = F.interpolate(a, size=(6, 5), mode="bicubic", align_corners=False)
        grid = F.affine_grid(t, (1, 2, 3, 3), False)
        out = (y[..., :3, :3] * grid.permute(0, 3, 1, 2).sum(1, keepdim=True)).sum()
        ga, gt = lib.autograd.grad(out, (a, t), create_graph=True)
        return (ga * ga).sum() + (gt * gt).sum()

    same_values_and_gradients(lambda a, t: penalty(gs, GF, a, t),
                              lambda a, t: penalty(torch, TF, a, t), x, theta, tol=1e-10)
