"""nn.Conv2d's remaining options against torch 1.13: every padding_mode ('zeros', 'reflect',
'replicate', 'circular') with int, pair, 'same' (an even kernel too: the odd zero on the far
side) and 'valid' padding gives torch's outputs and float64 gradients (1e-12), its grad_fn
chain (the pad node under ConvolutionBackward0), print text and attributes; F.pad's circular
mode (an engine op now) as torch's; the factory keywords dtype= and device= on the layers
that take them in torch (Linear, Conv2d, BatchNorm, LayerNorm, Embedding, the RNNs and
cells); the errors. meson registers this file only where torch is installed."""
import copy

import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")

MODES = ["zeros", "reflect", "replicate", "circular"]
ATTRIBUTES = ["in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation",
              "groups", "padding_mode", "transposed", "output_padding",
              "_reversed_padding_repeated_twice"]


def pair_of_layers(*args, **kwargs):
    """The same Conv2d in gradscope and torch, in float64, torch's weights copied from ours."""
    ours = gs.nn.Conv2d(*args, dtype=gs.float64, **kwargs)
    theirs = torch.nn.Conv2d(*args, dtype=torch.float64, **kwargs)
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(ours.weight.detach().numpy()))
        if ours.bias is not None:
            theirs.bias.copy_(torch.from_numpy(ours.bias.detach().numpy()))
    return ours, theirs


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("padding", [0, 1, (2, 1), "same", "valid"])
@pytest.mark.parametrize("kernel, dilation", [(3, 1), ((2, 4), (1, 2)), (4, 1)])
def test_conv2d_padding_modes_match_torch(mode, padding, kernel, dilation):
    ours, theirs = pair_of_layers(2, 3, kernel, padding=padding, dilation=dilation,
                                  padding_mode=mode)
    assert repr(ours) == repr(theirs)
    for name in ATTRIBUTES:
        assert getattr(ours, name) == getattr(theirs, name), name
    x = np.random.default_rng(len(repr(ours))).standard_normal((2, 2, 7, 8))
    results = []
    for layer, lib in ((ours, gs), (theirs, torch)):
        t = lib.tensor(x, requires_grad=True)
        y = layer(t)
        (y * y.cos()).sum().backward()
        pad_node = y.grad_fn.next_functions[0][0]
        results.append((y.detach().numpy(), t.grad.numpy(), layer.weight.grad.numpy(),
                        layer.bias.grad.numpy(), y.grad_fn.name(),
                        pad_node.name() if pad_node is not None else None))
    (y0, gx0, gw0, gb0, *names0), (y1, gx1, gw1, gb1, *names1) = results
    assert y0.shape == y1.shape
    for a, b in ((y0, y1), (gx0, gx1), (gw0, gw1), (gb0, gb1)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    assert names0 == names1


def test_even_same_pads_the_far_side_as_f_conv2d():
    ours = gs.nn.Conv2d(1, 1, (2, 4), padding="same", bias=False, dtype=gs.float64)
    x = gs.tensor(np.arange(30.0).reshape(1, 1, 5, 6))
    by_hand = gs.nn.functional.conv2d(gs.nn.functional.pad(x, (1, 2, 0, 1)), ours.weight)
    np.testing.assert_array_equal(ours(x).detach().numpy(), by_hand.detach().numpy())
    assert ours._reversed_padding_repeated_twice == [1, 2, 0, 1]


def test_a_padded_conv2d_runs_inside_sequential_deepcopy_and_subclasses():
    seq = gs.nn.Sequential(gs.nn.Conv2d(1, 2, 3, padding=1, padding_mode="circular"),
                           gs.nn.ReLU())
    assert seq(gs.ones(1, 1, 4, 4)).shape == (1, 2, 4, 4)
    twin = copy.deepcopy(seq)
    assert twin[0].padding_mode == "circular" and repr(twin) == repr(seq)

    class Same(gs.nn.Conv2d):
        def __init__(self):
            super().__init__(1, 1, 2, padding="same", padding_mode="replicate")

    layer = Same()
    assert layer.padding == "same" and layer(gs.ones(1, 1, 3, 5)).shape == (1, 1, 3, 5)
    assert "padding_mode=replicate" in repr(layer)


@pytest.mark.parametrize("pads", [(1, 2), (3, 0, 1, 1), (1, 1, 2, 0, 0, 1), (0, 0, 0, 0)])
def test_f_pad_circular_matches_torch(pads):
    shape = {2: (2, 3, 4), 4: (2, 2, 3, 4), 6: (1, 2, 2, 3, 4)}[len(pads)]
    x = np.random.default_rng(len(pads)).standard_normal(shape)
    outs = []
    for lib in (gs, torch):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.pad(t, pads, mode="circular")
        (y * y).sum().backward()
        outs.append((y.detach().numpy(), t.grad.numpy(), y.grad_fn.name()))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=0, atol=0)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-12, atol=1e-12)
    assert outs[0][2] == outs[1][2]


LAYERS = [
    ("Linear", (3, 4), "weight"), ("Conv2d", (2, 3, 3), "weight"),
    ("BatchNorm1d", (3,), "running_mean"), ("BatchNorm2d", (3,), "weight"),
    ("BatchNorm3d", (3,), "running_var"), ("LayerNorm", (3,), "weight"),
    ("Embedding", (5, 3), "weight"), ("RNN", (3, 4), "weight_ih_l0"),
    ("LSTM", (3, 4), "weight_hh_l0"), ("GRU", (3, 4), "bias_ih_l0"),
    ("RNNCell", (3, 4), "weight_ih"), ("LSTMCell", (3, 4), "weight_ih"),
    ("GRUCell", (3, 4), "weight_hh"),
]


@pytest.mark.parametrize("name, args, tensor", LAYERS)
def test_factory_keywords_as_torch(name, args, tensor):
    for dtype in ("float64", "float32"):
        ours = getattr(gs.nn, name)(*args, device="cpu", dtype=getattr(gs, dtype))
        theirs = getattr(torch.nn, name)(*args, device="cpu", dtype=getattr(torch, dtype))
        assert str(getattr(ours, tensor).dtype).split(".")[1] == dtype
        assert str(getattr(ours, tensor).dtype).split(".")[1] == \
            str(getattr(theirs, tensor).dtype).split(".")[1]
        assert repr(ours) == repr(theirs)
    assert getattr(gs.nn, name)(*args, device=gs.device("cpu")) is not None
    with pytest.raises(RuntimeError, match=f"{name}\\(\\): gradscope computes on the CPU only, "
                                           "got device='cuda'"):
        getattr(gs.nn, name)(*args, device="cuda")


def test_a_float64_conv2d_trains_in_float64():
    layer = gs.nn.Conv2d(1, 2, 3, padding=1, padding_mode="reflect", dtype=gs.float64)
    y = layer(gs.ones(1, 1, 4, 4, dtype=gs.float64))
    assert y.dtype == gs.float64
    y.sum().backward()
    assert layer.weight.grad.dtype == gs.float64


def test_errors():
    with pytest.raises(ValueError, match="padding_mode must be one of \\['zeros', 'reflect', "
                                         "'replicate', 'circular'\\], but got "
                                         "padding_mode='mirror'"):
        gs.nn.Conv2d(1, 1, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match="padding='same' is not supported for strided"):
        gs.nn.Conv2d(1, 1, 3, stride=2, padding="same", padding_mode="reflect")
    with pytest.raises(ValueError, match="reflection_pad: expected pads >= 0 and below the size "
                                         "of the dim they pad, got \\(3, 3\\)"):
        gs.nn.Conv2d(1, 1, 3, padding=3, padding_mode="reflect")(gs.ones(1, 1, 3, 3))
    with pytest.raises(ValueError, match="circular_pad: expected pads >= 0 of a non-empty dim, "
                                         "at most its size"):
        gs.nn.Conv2d(1, 1, 3, padding=4, padding_mode="circular")(gs.ones(1, 1, 3, 3))
    with pytest.raises(RuntimeError, match="Padding value causes wrapping around more than once"):
        gs.nn.functional.pad(gs.ones(1, 3, 3), (4, 0), mode="circular")
    with pytest.raises(TypeError):
        gs.nn.Conv2d(1, 1, 3, dtype="not a dtype")
