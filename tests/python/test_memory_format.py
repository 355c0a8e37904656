"""channels_last and channels_last_3d as real strides, against Debian's torch 1.13: the strides
of x.contiguous(memory_format=), x.to(memory_format=), empty(memory_format=), the *_like
functions and Module.to(memory_format=) equal torch's (size-0 and size-1 dims too);
is_contiguous(memory_format=) answers as torch's; conv2d, conv3d, batch_norm, max_pool2d,
linear layers and elementwise ops take channels-last inputs with the same values and float64
gradients as the row-major ones; elementwise results keep the input's layout and
clone(memory_format=) lays out as torch's (strides, values, gradients); the errors torch
gives. meson registers this file only when
torch imports (tests/python/meson.build)."""
import numpy as np
import pytest

import gradscope as gs
import gradscope.nn as gnn
import gradscope.nn.functional as GF

torch = pytest.importorskip("torch")
import torch.nn as tnn  # noqa: E402
import torch.nn.functional as TF  # noqa: E402

rng = np.random.default_rng(31)
FORMATS = [("channels_last", 4), ("channels_last_3d", 5)]
SHAPES_4D = [(2, 3, 4, 5), (2, 0, 4, 5), (2, 3, 1, 1), (2, 1, 4, 5), (1, 3, 4, 1), (3, 2, 0, 2)]
SHAPES_5D = [(2, 3, 4, 5, 6), (1, 2, 1, 3, 1), (2, 0, 2, 2, 2)]


def fmt(name):
    return getattr(gs, name), getattr(torch, name)


@pytest.mark.parametrize("shape", SHAPES_4D + SHAPES_5D)
def test_strides_and_is_contiguous_match_torch(shape):
    name = "channels_last" if len(shape) == 4 else "channels_last_3d"
    g_fmt, t_fmt = fmt(name)
    x = rng.normal(size=shape)
    g = gs.tensor(x).contiguous(memory_format=g_fmt)
    t = torch.tensor(x).contiguous(memory_format=t_fmt)
    assert g.stride() == t.stride()
    assert g.tolist() == t.tolist()
    for gf, tf in (fmt("channels_last"), fmt("channels_last_3d"),
                   (gs.contiguous_format, torch.contiguous_format)):
        assert g.is_contiguous(memory_format=gf) == t.is_contiguous(memory_format=tf)
        assert gs.tensor(x).is_contiguous(memory_format=gf) == \
            torch.tensor(x).is_contiguous(memory_format=tf)
    assert g.is_contiguous() == t.is_contiguous()
    assert gs.empty(*shape, memory_format=g_fmt).stride() == \
        torch.empty(*shape, memory_format=t_fmt).stride()
    # a permuted view that happens to be channels-last counts as such
    perm = (0, 2, 3, 1) if len(shape) == 4 else (0, 2, 3, 4, 1)
    back = (0, 3, 1, 2) if len(shape) == 4 else (0, 4, 1, 2, 3)
    xp = np.ascontiguousarray(np.transpose(x, perm))
    assert gs.tensor(xp).permute(*back).is_contiguous(memory_format=g_fmt) == \
        torch.tensor(xp).permute(*back).is_contiguous(memory_format=t_fmt)


@pytest.mark.parametrize("name,rank", FORMATS)
def test_to_like_and_empty_lay_out_as_torch(name, rank):
    g_fmt, t_fmt = fmt(name)
    shape = (2, 3, 4, 5, 2)[:rank]
    x = rng.normal(size=shape)
    g, t = gs.tensor(x), torch.tensor(x)
    gl, tl = g.to(memory_format=g_fmt), t.to(memory_format=t_fmt)
    assert gl.stride() == tl.stride()
    assert gl.to(memory_format=g_fmt) is gl  # already laid out: itself, as torch's
    assert gl.contiguous(memory_format=g_fmt) is gl
    assert gl.to(gs.float32).stride() == tl.to(torch.float32).stride()  # dtype keeps the layout
    assert gl.to(memory_format=gs.contiguous_format).stride() == \
        tl.to(memory_format=torch.contiguous_format).stride()
    assert gl.contiguous().stride() == tl.contiguous().stride()
    for fn in ("zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"):
        assert getattr(gs, fn)(gl).stride() == getattr(torch, fn)(tl).stride(), fn
        assert getattr(gs, fn)(g, memory_format=g_fmt).stride() == \
            getattr(torch, fn)(t, memory_format=t_fmt).stride(), fn
        assert getattr(gs, fn)(gl, memory_format=gs.contiguous_format).stride() == \
            getattr(torch, fn)(tl, memory_format=torch.contiguous_format).stride(), fn
    assert gs.full_like(gl, 2.0).stride() == torch.full_like(tl, 2.0).stride()
    made = gs.zeros_like(g, memory_format=g_fmt, requires_grad=True)
    assert made.is_leaf and made.requires_grad
    made = gs.empty(*shape, memory_format=g_fmt, requires_grad=True)
    assert made.is_leaf and made.requires_grad and made.is_contiguous(memory_format=g_fmt)


def test_gradient_through_the_layout_change_equals_the_contiguous_one():
    x = rng.normal(size=(2, 3, 4, 5))
    w = rng.normal(size=(2, 3, 4, 5))
    g = gs.tensor(x, requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    gl = g.contiguous(memory_format=gs.channels_last)
    tl = t.contiguous(memory_format=torch.channels_last)
    assert gl.grad_fn.name() == tl.grad_fn.name() == "CloneBackward0"
    (gl * gs.tensor(w)).sin().sum().backward()
    (tl * torch.tensor(w)).sin().sum().backward()
    np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-14, atol=1e-15)


def _same(g_out, t_out, g_ins, t_ins, tol=1e-10):
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().numpy(), rtol=tol,
                               atol=tol)
    w = rng.normal(size=tuple(t_out.shape))
    (g_out * gs.tensor(w)).sum().backward()
    (t_out * torch.tensor(w)).sum().backward()
    for gi, ti in zip(g_ins, t_ins):
        np.testing.assert_allclose(gi.grad.numpy(), ti.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("op", ["conv2d", "max_pool2d", "avg_pool2d", "batch_norm", "relu_add",
                                "adaptive_avg_pool2d", "interpolate", "flatten_linear"])
def test_ops_take_channels_last_inputs(op):
    x = rng.normal(size=(2, 3, 6, 5))
    wt = rng.normal(size=(4, 3, 3, 3))
    lin = rng.normal(size=(2, 3 * 6 * 5))
    calls = {
        "conv2d": (lambda F, x, w: F.conv2d(x, w, padding=1)),
        "max_pool2d": (lambda F, x, w: F.max_pool2d(x, 2)),
        "avg_pool2d": (lambda F, x, w: F.avg_pool2d(x, 2)),
        "batch_norm": (lambda F, x, w: F.batch_norm(x, None, None, training=True)),
        "relu_add": (lambda F, x, w: F.relu(x) + x * 2),
        "adaptive_avg_pool2d": (lambda F, x, w: F.adaptive_avg_pool2d(x, (2, 3))),
        "interpolate": (lambda F, x, w: F.interpolate(x, scale_factor=2, mode="bilinear",
                                                      align_corners=False)),
        "flatten_linear": (lambda F, x, w: F.linear(x.flatten(1), w)),
    }
    w_arr = lin if op == "flatten_linear" else wt
    gx, gw = gs.tensor(x, requires_grad=True), gs.tensor(w_arr, requires_grad=True)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w_arr, requires_grad=True)
    g_out = calls[op](GF, gx.contiguous(memory_format=gs.channels_last), gw)
    t_out = calls[op](TF, tx.contiguous(memory_format=torch.channels_last), tw)
    # and the same as on the row-major input
    plain = calls[op](GF, gs.tensor(x), gs.tensor(w_arr))
    np.testing.assert_allclose(g_out.detach().numpy(), plain.numpy(), rtol=1e-12, atol=1e-12)
    used = [gx] + ([gw] if op in ("conv2d", "flatten_linear") else [])
    _same(g_out, t_out, used, [tx] + ([tw] if op in ("conv2d", "flatten_linear") else []))


def test_conv3d_takes_channels_last_3d_inputs():
    x = rng.normal(size=(2, 2, 3, 4, 5))
    w = rng.normal(size=(3, 2, 2, 2, 2))
    gx, gw = gs.tensor(x, requires_grad=True), gs.tensor(w, requires_grad=True)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    _same(GF.conv3d(gx.contiguous(memory_format=gs.channels_last_3d), gw),
          TF.conv3d(tx.contiguous(memory_format=torch.channels_last_3d), tw), [gx, gw], [tx, tw])


def test_module_to_channels_last_as_torch():
    torch.manual_seed(0)
    tm = tnn.Sequential(tnn.Conv2d(3, 4, 3), tnn.BatchNorm2d(4), tnn.ReLU(), tnn.Flatten(),
                        tnn.Linear(4 * 3 * 3, 2)).double()
    gm = gnn.Sequential(gnn.Conv2d(3, 4, 3), gnn.BatchNorm2d(4), gnn.ReLU(), gnn.Flatten(),
                        gnn.Linear(4 * 3 * 3, 2)).double()
    gm.load_state_dict({k: gs.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    conv_weight = gm[0].weight
    assert gm.to(memory_format=gs.channels_last) is gm
    tm.to(memory_format=torch.channels_last)
    assert gm[0].weight is conv_weight and conv_weight.is_leaf and conv_weight.requires_grad
    for (name, gp), (_, tp) in zip(gm.named_parameters(), tm.named_parameters()):
        assert gp.stride() == tp.stride(), name
    x = rng.normal(size=(2, 3, 5, 5))
    gx = gs.tensor(x).to(memory_format=gs.channels_last)
    tx = torch.tensor(x).to(memory_format=torch.channels_last)
    _same(gm(gx), tm(tx), list(gm.parameters()), list(tm.parameters()))


ELEMENTWISE = {
    "exp": lambda lib, x, y, b: x.exp(),
    "neg": lambda lib, x, y, b: -x,
    "relu": lambda lib, x, y, b: lib.relu(x),
    "sigmoid": lambda lib, x, y, b: lib.sigmoid(x),
    "clamp": lambda lib, x, y, b: x.clamp(-0.5, 0.5),
    "pow": lambda lib, x, y, b: x.pow(2),
    "mul_scalar": lambda lib, x, y, b: x * 2,
    "rsub_scalar": lambda lib, x, y, b: 2 - x,
    "add_row_major": lambda lib, x, y, b: x + y,
    "row_major_first": lambda lib, x, y, b: y * x,
    "bias_after": lambda lib, x, y, b: x + b,
    "bias_first": lambda lib, x, y, b: b + x,
    "compare": lambda lib, x, y, b: x > 0,
    "where": lambda lib, x, y, b: lib.where(x > 0, x, y),
    "double": lambda lib, x, y, b: x.double(),
    "float": lambda lib, x, y, b: x.float(),
}
LAYOUTS = {
    "channels_last": lambda lib, t: t.contiguous(memory_format=lib.channels_last),
    "transposed": lambda lib, t: t.transpose(2, 3),
    "channels_last_slice": lambda lib, t: t.contiguous(memory_format=lib.channels_last)[:, :2],
    "row_major": lambda lib, t: t,
}


@pytest.mark.parametrize("op", list(ELEMENTWISE))
def test_elementwise_results_are_laid_out_as_torchs(op):
    """torch 1.13's elementwise ops preserve their input's memory format (TensorIterator lays
    the result out as the operand that orders the dims): the same strides, values and float64
    gradients, for each layout of the input."""
    for layout in LAYOUTS:
        _check_elementwise_layout(op, layout)


def _check_elementwise_layout(op, layout):
    x, b = rng.normal(size=(2, 3, 4, 4)), rng.normal(size=(3, 1, 1))
    results = []
    for lib in (gs, torch):
        leaf = lib.tensor(x, requires_grad=True)
        t = LAYOUTS[layout](lib, leaf)
        y = lib.tensor(rng.normal(size=tuple(t.shape)) if lib is gs else results[0][3])
        bias = lib.tensor(b[:t.shape[1]])
        out = ELEMENTWISE[op](lib, t, y, bias)
        if out.is_floating_point():
            (out * out).sum().backward()
        grad = leaf.grad.numpy() if leaf.grad is not None else None
        results.append((out.stride(), out.detach().numpy(), grad, y.numpy()))
    (gs_strides, gs_values, gs_grad, _), (t_strides, t_values, t_grad, _) = results
    assert gs_strides == t_strides, layout
    np.testing.assert_allclose(gs_values, t_values, rtol=1e-12, atol=1e-12)
    if t_grad is not None:
        np.testing.assert_allclose(gs_grad, t_grad, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("target", ["contiguous_format", "channels_last", "preserve_format",
                                    None])
@pytest.mark.parametrize("source", ["row_major", "channels_last"])
def test_clone_memory_format_as_torch(source, target):
    x = rng.normal(size=(2, 3, 4, 5))
    outs = []
    for lib in (gs, torch):
        leaf = lib.tensor(x, requires_grad=True)
        t = leaf if source == "row_major" else leaf.contiguous(memory_format=lib.channels_last)
        c = t.clone() if target is None else t.clone(memory_format=getattr(lib, target))
        (c * c).sum().backward()
        outs.append((c.stride(), c.detach().numpy(), leaf.grad.numpy(), c.grad_fn.name()))
    assert outs[0][0] == outs[1][0]
    np.testing.assert_array_equal(outs[0][1], outs[1][1])
    np.testing.assert_allclose(outs[0][2], outs[1][2], rtol=1e-12)
    assert outs[0][3] == outs[1][3]
    assert gs.clone(gs.ones(1, 2, 3, 4), memory_format=gs.channels_last).stride() == \
        torch.clone(torch.ones(1, 2, 3, 4), memory_format=torch.channels_last).stride()
    with pytest.raises(Exception, match="required rank 4 tensor to use channels_last format"):
        gs.ones(3, 4, 5).clone(memory_format=gs.channels_last)
    with pytest.raises(TypeError, match="clone\\(\\): expected memory_format"):
        gs.ones(3).clone(memory_format="channels_last")


def test_errors_as_torch():
    with pytest.raises(Exception, match="required rank 4 tensor to use channels_last format"):
        gs.ones(3, 4, 5).contiguous(memory_format=gs.channels_last)
    with pytest.raises(Exception, match="required rank 5 tensor to use channels_last_3d format"):
        gs.ones(3, 4, 5).to(memory_format=gs.channels_last_3d)
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported by the "
                                           "contiguous operator"):
        gs.ones(1, 2, 3, 4).contiguous(memory_format=gs.preserve_format)
    with pytest.raises(TypeError, match="memory_format"):
        gs.ones(1, 2, 3, 4).contiguous(memory_format="channels_last")
    assert not gs.ones(3, 4, 5).is_contiguous(memory_format=gs.channels_last)
    assert not torch.ones(3, 4, 5).is_contiguous(memory_format=torch.channels_last)
    assert "channels_last" in repr(gs.channels_last)
