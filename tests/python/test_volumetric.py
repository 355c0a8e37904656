"""The volumetric (3-D) layers against torch 1.13: F.conv3d, conv_transpose3d, max_pool3d
(with its indices), avg_pool3d, the 3-D adaptive pools, batch and instance norm over volumes
and dropout3d, on random shapes, strides, paddings, dilations, groups, ceil_mode and
count_include_pad; values and float64 gradients, grad_fn names as torch's, the modules'
reprs, parameter shapes and errors."""
import numpy as np
import pytest
import torch

import gradscope as gs
import gradscope.nn as gnn
import gradscope.nn.functional as gF
from torch_compare import same_values_and_gradients

TF = torch.nn.functional


def _rng(seed):
    return np.random.default_rng(seed)


def _conv_case(r):
    """A random valid conv3d: input shape, weight shape and keyword arguments."""
    groups = int(r.choice([1, 2, 3]))
    cin, cout = groups * int(r.integers(1, 3)), groups * int(r.integers(1, 3))
    k = tuple(int(v) for v in r.integers(1, 4, size=3))
    stride = tuple(int(v) for v in r.integers(1, 3, size=3))
    dilation = tuple(int(v) for v in r.integers(1, 3, size=3))
    padding = tuple(int(v) for v in r.integers(0, 3, size=3))
    size = tuple(max(int(r.integers(2, 6)), dilation[i] * (k[i] - 1) + 1 - 2 * padding[i])
                 for i in range(3))
    n = int(r.integers(1, 3))
    return (n, cin) + size, (cout, cin // groups) + k, dict(stride=stride, padding=padding,
                                                             dilation=dilation, groups=groups)


@pytest.mark.parametrize("seed", range(12))
def test_conv3d_values_and_gradients_match_torch(seed):
    r = _rng(seed)
    xs, ws, kw = _conv_case(r)
    x, w, b = r.standard_normal(xs), r.standard_normal(ws), r.standard_normal(ws[0])
    same_values_and_gradients(lambda x, w, b: gF.conv3d(x, w, b, **kw),
                              lambda x, w, b: TF.conv3d(x, w, b, **kw), x, w, b, tol=1e-10)


@pytest.mark.parametrize("padding", ["same", "valid"])
def test_conv3d_padding_strings(padding):
    r = _rng(5)
    x, w = r.standard_normal((2, 2, 5, 4, 6)), r.standard_normal((3, 2, 2, 3, 4))
    kw = dict(padding=padding, dilation=(2, 1, 1))
    same_values_and_gradients(lambda x, w: gF.conv3d(x, w, None, **kw),
                              lambda x, w: TF.conv3d(x, w, None, **kw), x, w, tol=1e-10)


def test_conv3d_unbatched_and_grad_fn():
    r = _rng(1)
    x, w = r.standard_normal((2, 3, 4, 5)), r.standard_normal((4, 2, 2, 2, 2))
    same_values_and_gradients(lambda x, w: gF.conv3d(x, w, padding=1),
                              lambda x, w: TF.conv3d(x, w, padding=1), x, w, tol=1e-10)
    y = gF.conv3d(gs.tensor(x, requires_grad=True), gs.tensor(w))
    assert y.grad_fn.name() == "ConvolutionBackward0"


@pytest.mark.parametrize("seed", range(8))
def test_conv_transpose3d_matches_torch(seed):
    r = _rng(100 + seed)
    groups = int(r.choice([1, 2]))
    cin, cout = groups * int(r.integers(1, 3)), groups * int(r.integers(1, 3))
    k = tuple(int(v) for v in r.integers(1, 4, size=3))
    stride = tuple(int(v) for v in r.integers(1, 3, size=3))
    dilation = tuple(int(v) for v in r.integers(1, 3, size=3))
    padding = tuple(int(r.integers(0, dilation[i] * (k[i] - 1) // 2 + 1)) for i in range(3))
    outpad = tuple(int(r.integers(0, max(stride[i], dilation[i]))) for i in range(3))
    kw = dict(stride=stride, padding=padding, output_padding=outpad, groups=groups,
              dilation=dilation)
    x = r.standard_normal((2, cin) + tuple(int(v) for v in r.integers(2, 5, size=3)))
    w, b = r.standard_normal((cin, cout // groups) + k), r.standard_normal(cout)
    same_values_and_gradients(lambda x, w, b: gF.conv_transpose3d(x, w, b, **kw),
                              lambda x, w, b: TF.conv_transpose3d(x, w, b, **kw), x, w, b,
                              tol=1e-10)


def _pool_case(r, is_max):
    k = tuple(int(v) for v in r.integers(1, 4, size=3))
    stride = tuple(int(v) for v in r.integers(1, 3, size=3))
    padding = tuple(int(r.integers(0, k[i] // 2 + 1)) for i in range(3))
    dilation = tuple(int(v) for v in r.integers(1, 3, size=3)) if is_max else (1, 1, 1)
    size = tuple(int(r.integers(dilation[i] * (k[i] - 1) + 1, 7)) for i in range(3))
    shape = ((int(r.integers(1, 3)),) if r.integers(0, 2) else ()) + (2,) + size
    return shape, k, stride, padding, dilation, bool(r.integers(0, 2))


@pytest.mark.parametrize("seed", range(12))
def test_max_pool3d_values_indices_and_gradients_match_torch(seed):
    r = _rng(200 + seed)
    shape, k, s, p, d, ceil = _pool_case(r, True)
    x = r.standard_normal(shape)
    same_values_and_gradients(lambda x: gF.max_pool3d(x, k, s, p, d, ceil),
                              lambda x: TF.max_pool3d(x, k, s, p, d, ceil), x)
    _, gi = gF.max_pool3d(gs.tensor(x), k, s, p, d, ceil, return_indices=True)
    _, ti = TF.max_pool3d(torch.tensor(x), k, s, p, d, ceil, return_indices=True)
    np.testing.assert_array_equal(gi.numpy(), ti.numpy())
    y = gF.max_pool3d(gs.tensor(x, requires_grad=True), k, s, p, d, ceil)
    assert y.grad_fn.name() == "MaxPool3DWithIndicesBackward0"


@pytest.mark.parametrize("seed", range(12))
def test_avg_pool3d_matches_torch(seed):
    r = _rng(300 + seed)
    shape, k, s, p, _, ceil = _pool_case(r, False)
    include = bool(r.integers(0, 2))
    x = r.standard_normal(shape)
    same_values_and_gradients(lambda x: gF.avg_pool3d(x, k, s, p, ceil, include),
                              lambda x: TF.avg_pool3d(x, k, s, p, ceil, include), x)
    y = gF.avg_pool3d(gs.tensor(x, requires_grad=True), k, s, p, ceil, include)
    assert y.grad_fn.name() == "AvgPool3DBackward0"


def test_pool3d_float32_matches_torch():
    x = _rng(7).standard_normal((2, 3, 6, 5, 8)).astype(np.float32)
    g, t = gs.tensor(x), torch.tensor(x)
    np.testing.assert_allclose(gF.max_pool3d(g, 2).numpy(), TF.max_pool3d(t, 2).numpy())
    np.testing.assert_allclose(gF.avg_pool3d(g, (3, 2, 3), 1, 1).numpy(),
                               TF.avg_pool3d(t, (3, 2, 3), 1, 1).numpy(), rtol=1e-6)


@pytest.mark.parametrize("size", [(1, 1, 1), (2, 3, 2), (3, None, 4)])
def test_adaptive_pools_3d_match_torch(size):
    x = _rng(9).standard_normal((2, 3, 5, 6, 7))
    same_values_and_gradients(lambda x: gF.adaptive_avg_pool3d(x, size),
                              lambda x: TF.adaptive_avg_pool3d(x, size), x)
    same_values_and_gradients(lambda x: gF.adaptive_max_pool3d(x, size),
                              lambda x: TF.adaptive_max_pool3d(x, size), x)


def test_batch_norm3d_and_instance_norm3d_match_torch():
    x = _rng(11).standard_normal((3, 4, 3, 2, 5)).astype(np.float32)
    gm, tm = gnn.BatchNorm3d(4), torch.nn.BatchNorm3d(4)
    for _ in range(2):
        np.testing.assert_allclose(gm(gs.tensor(x)).detach().numpy(),
                                   tm(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gm.running_var.numpy(), tm.running_var.numpy(), rtol=1e-5)
    assert int(gm.num_batches_tracked.item()) == 2
    gi, ti = gnn.InstanceNorm3d(4, affine=True), torch.nn.InstanceNorm3d(4, affine=True)
    np.testing.assert_allclose(gi(gs.tensor(x)).detach().numpy(),
                               ti(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(Exception, match="5D"):
        gm(gs.tensor(x[0]))


def test_dropout3d_zeroes_whole_channels():
    x = gs.ones(4, 6, 2, 3, 2)
    y = gF.dropout3d(x, 0.5).numpy().reshape(4, 6, -1)
    per_channel = y.min(-1) == y.max(-1)
    assert per_channel.all() and set(np.unique(y)) <= {0.0, 2.0}
    assert gnn.Dropout3d(0.5).eval()(x).numpy().sum() == x.numpy().sum()
    assert gF.dropout3d(gs.ones(6, 2, 3, 2), 1.0).numpy().sum() == 0


def test_reprs_and_parameters_match_torch():
    pairs = [
        ("Conv3d", (2, 4, 3), dict(padding="same")),
        ("Conv3d", (2, 4, (3, 1, 2)), dict(stride=2, padding=1, dilation=(1, 2, 1), groups=2,
                                            bias=False)),
        ("Conv3d", (2, 4, 3), dict(padding=1, padding_mode="replicate")),
        ("ConvTranspose3d", (2, 4, 3), dict(stride=2, output_padding=1)),
        ("MaxPool3d", (2,), dict(stride=1, ceil_mode=True)),
        ("AvgPool3d", ((2, 1, 2),), {}),
        ("AdaptiveAvgPool3d", ((1, None, 2),), {}),
        ("AdaptiveMaxPool3d", (2,), {}),
        ("BatchNorm3d", (5,), dict(momentum=0.2)),
        ("InstanceNorm3d", (3,), dict(affine=True)),
        ("Dropout3d", (0.2,), {}),
    ]
    for name, args, kwargs in pairs:
        g, t = getattr(gnn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
        assert repr(g) == repr(t)
        assert [(n, tuple(p.shape)) for n, p in g.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in t.named_parameters()]


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv3d_module_padding_modes_match_torch(mode):
    x = _rng(13).standard_normal((1, 2, 4, 5, 4)).astype(np.float32)
    t = torch.nn.Conv3d(2, 3, 3, padding=1, padding_mode=mode)
    g = gnn.Conv3d(2, 3, 3, padding=1, padding_mode=mode)
    g.weight.data.copy_(gs.tensor(t.weight.detach().numpy()))
    g.bias.data.copy_(gs.tensor(t.bias.detach().numpy()))
    np.testing.assert_allclose(g(gs.tensor(x)).detach().numpy(),
                               t(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)


def test_errors_in_torch_words():
    x = gs.zeros(1, 2, 3, 3, 3)
    with pytest.raises(Exception, match="kernel size"):
        gF.conv3d(x, gs.zeros(1, 2, 5, 5, 5))
    with pytest.raises(Exception, match="5-D"):
        gF.conv3d(x, gs.zeros(1, 2, 3, 3))
    with pytest.raises(Exception, match="half of kernel"):
        gF.max_pool3d(x, 2, padding=2)
    with pytest.raises(Exception, match="strided"):
        gF.conv3d(x, gs.zeros(1, 2, 2, 2, 2), stride=2, padding="same")


def test_conv_transpose3d_module_output_size_matches_torch():
    t = torch.nn.ConvTranspose3d(2, 4, 3, stride=2, groups=2)
    g = gnn.ConvTranspose3d(2, 4, 3, stride=2, groups=2)
    g.weight.data.copy_(gs.tensor(t.weight.detach().numpy()))
    g.bias.data.copy_(gs.tensor(t.bias.detach().numpy()))
    x = _rng(17).standard_normal((1, 2, 3, 4, 2)).astype(np.float32)
    size = (8, 10, 6)  # one more than the least size in each dim
    np.testing.assert_allclose(g(gs.tensor(x), output_size=size).detach().numpy(),
                               t(torch.tensor(x), output_size=size).detach().numpy(),
                               rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="valid sizes"):
        g(gs.tensor(x), output_size=(9, 10, 6))
