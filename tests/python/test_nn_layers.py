"""The layers of nn/spatial.py, nn/normalization.py and nn/transformer.py and the engine's
conv_transpose2d, against torch 1.13 computed here on the same float64 inputs: values and
every input's gradient, print(model) text, parameter names, shapes and init ranges, state_dicts
carried from torch, and the errors for bad arguments. Skipped without torch."""
import math

import numpy as np
import pytest

import gradscope as gs
import gradscope.nn as nn
import gradscope.nn.functional as F

torch = pytest.importorskip("torch")
tnn = torch.nn
tF = torch.nn.functional


def pair(*shape, seed=0):
    a = np.random.default_rng(seed + len(shape)).standard_normal(shape)
    return torch.tensor(a, requires_grad=True), gs.tensor(a, requires_grad=True)


def check(torch_fn, gs_fn, *shapes, tol=1e-10):
    """Same values, and the same gradient reaching every input for a random upstream one."""
    ins = [pair(*s, seed=i) for i, s in enumerate(shapes)]
    t = torch_fn(*[a for a, _ in ins])
    g = gs_fn(*[b for _, b in ins])
    assert tuple(g.shape) == tuple(t.shape)
    np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), atol=tol, rtol=tol)
    up = np.random.default_rng(7).standard_normal(tuple(t.shape))
    t.backward(torch.tensor(up))
    g.backward(gs.tensor(up))
    for a, b in ins:
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), atol=tol, rtol=tol)


# ---- the functions against torch ----------------------------------------------------------------

# (cases loop inside a test: each test's leak check collects torch's heap, a second apiece)
def test_conv1d_is_torchs():
    for kw in ({}, {"stride": 2, "padding": 1, "dilation": 2}, {"padding": "same"},
               {"padding": "valid", "groups": 2}):
        w_in = 2 if kw.get("groups") else 4
        check(lambda x, w, b: tF.conv1d(x, w, b, **kw), lambda x, w, b: F.conv1d(x, w, b, **kw),
              (2, 4, 11), (6, w_in, 4), (6,))


def test_conv1d_takes_an_unbatched_input():
    check(lambda x, w: tF.conv1d(x, w), lambda x, w: F.conv1d(x, w), (3, 9), (2, 3, 3))


def test_conv_transpose2d_is_torchs():
    for kw in ({}, {"stride": 2, "padding": 1, "output_padding": 1},
               {"stride": (1, 2), "padding": (0, 1), "groups": 2, "dilation": (2, 1)},
               {"stride": 3, "output_padding": (2, 0)}):
        check(lambda x, w, b: tF.conv_transpose2d(x, w, b, **kw),
              lambda x, w, b: F.conv_transpose2d(x, w, b, **kw), (2, 4, 5, 6), (4, 3, 3, 2),
              (6 if kw.get("groups") else 3,))


def test_conv_transpose2d_names_torchs_node_and_takes_unbatched_input():
    x = gs.ones(2, 3, 3, requires_grad=True)
    y = F.conv_transpose2d(x, gs.ones(2, 1, 2, 2))
    assert y.grad_fn.name() == "ConvolutionBackward0"
    assert tuple(y.shape) == (1, 4, 4)
    check(lambda x, w: tF.conv_transpose1d(x, w, stride=2, padding=1),
          lambda x, w: F.conv_transpose1d(x, w, stride=2, padding=1), (2, 3, 7), (3, 2, 3))


def test_conv_transpose2d_errors_say_what_was_expected():
    with pytest.raises(ValueError, match="output padding must be smaller"):
        F.conv_transpose2d(gs.ones(1, 2, 3, 3), gs.ones(2, 1, 3, 3), output_padding=1)
    with pytest.raises(RuntimeError, match="expected input.*2 channels"):
        F.conv_transpose2d(gs.ones(1, 3, 3, 3), gs.ones(2, 1, 3, 3))
    with pytest.raises(RuntimeError, match="bias of shape \\[4\\]"):
        F.conv_transpose2d(gs.ones(1, 2, 3, 3), gs.ones(2, 2, 3, 3), gs.ones(2), groups=2)


def test_pool1d_is_torchs_with_torchs_nodes():
    for kw in ({"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1},
               {"kernel_size": 3, "stride": 2, "ceil_mode": True}):
        check(lambda x: tF.max_pool1d(x, **kw), lambda x: F.max_pool1d(x, **kw), (2, 3, 11))
        check(lambda x: tF.avg_pool1d(x, **kw), lambda x: F.avg_pool1d(x, **kw), (2, 3, 11))
    x = gs.ones(2, 3, 8, requires_grad=True)
    assert F.max_pool1d(x, 2).grad_fn.name() == "SqueezeBackward1"
    assert F.max_pool1d(x, 2).grad_fn.next_functions[0][0].name() == \
        "MaxPool2DWithIndicesBackward0"


def test_normalisations_and_prelu_are_torchs():
    check(lambda x, w, b: tF.group_norm(x, 2, w, b, 1e-3),
          lambda x, w, b: F.group_norm(x, 2, w, b, 1e-3), (3, 4, 5), (4,), (4,))
    check(lambda x, w, b: tF.instance_norm(x, weight=w, bias=b),
          lambda x, w, b: F.instance_norm(x, weight=w, bias=b), (2, 3, 4, 5), (3,), (3,))
    check(lambda x, w: tF.prelu(x, w), lambda x, w: F.prelu(x, w), (2, 3, 4), (3,))
    check(lambda x, w: tF.prelu(x, w), lambda x, w: F.prelu(x, w), (2, 3, 4), (1,))


def test_instance_norm_running_statistics_are_torchs():
    t, g = tnn.InstanceNorm1d(3, track_running_stats=True), nn.InstanceNorm1d(3, track_running_stats=True)
    x = np.random.default_rng(3).standard_normal((4, 3, 6)).astype(np.float32)
    for _ in range(2):
        t(torch.tensor(x)), g(gs.tensor(x))
    np.testing.assert_allclose(g.running_mean.numpy(), t.running_mean.numpy(), atol=1e-6)
    np.testing.assert_allclose(g.running_var.numpy(), t.running_var.numpy(), atol=1e-6)
    assert g.num_batches_tracked.item() == t.num_batches_tracked.item()
    t.eval(), g.eval()
    np.testing.assert_allclose(g(gs.tensor(x)).numpy(), t(torch.tensor(x)).detach().numpy(),
                               atol=1e-5)


def test_pad_is_torchs():
    for mode, pad in (("constant", (1, 2, 0, 3, 1, 1)), ("constant", (-1, 2)),
                      ("reflect", (1, 2, 2, 0)), ("replicate", (2, 1, 0, 3)),
                      ("circular", (1, 2, 2, 1))):
        value = {"value": 2.5} if mode == "constant" else {}
        check(lambda x: tF.pad(x, pad, mode=mode, **value),
              lambda x: F.pad(x, pad, mode=mode, **value), (2, 3, 4, 5))


def test_pad_errors_are_torchs():
    with pytest.raises(RuntimeError, match="Padding size should be less than"):
        F.pad(gs.ones(1, 2, 3), (3, 0), mode="reflect")
    with pytest.raises(NotImplementedError, match="non-constant padding"):
        F.pad(gs.ones(1, 2, 3, 4), (1, 1), mode="reflect")
    with pytest.raises(RuntimeError, match="divisible by 2"):
        F.pad(gs.ones(2, 3), (1,))


def test_shuffles_resizing_and_unfold_are_torchs():
    check(lambda x: tF.pixel_shuffle(x, 2), lambda x: F.pixel_shuffle(x, 2), (2, 8, 3, 4))
    check(lambda x: tF.pixel_unshuffle(x, 2), lambda x: F.pixel_unshuffle(x, 2), (2, 2, 4, 6))
    for kw in ({"scale_factor": 2}, {"size": (5, 7)}, {"scale_factor": 1.5, "mode": "bilinear"},
               {"size": (2, 9), "mode": "bilinear", "align_corners": True}):
        check(lambda x: tF.interpolate(x, **kw), lambda x: F.interpolate(x, **kw), (2, 2, 3, 4))
    check(lambda x: tF.interpolate(x, scale_factor=2.5, mode="linear"),
          lambda x: F.interpolate(x, scale_factor=2.5, mode="linear"), (2, 2, 5))
    check(lambda x: tF.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=2),
          lambda x: F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=2), (2, 3, 6, 7))


def test_channel_dropout_zeroes_whole_channels():
    gs.manual_seed(0)
    out = F.dropout2d(gs.ones(8, 16, 3, 3), 0.5)
    per_channel = out.numpy().reshape(8, 16, 9)
    assert set(np.unique(per_channel)) <= {0.0, 2.0}
    assert (per_channel.min(-1) == per_channel.max(-1)).all()  # a channel is kept or dropped
    assert 0 < (per_channel[..., 0] == 0).sum() < 8 * 16
    assert np.array_equal(F.dropout2d(gs.ones(2, 3, 2, 2), 0.5, training=False).numpy(),
                          np.ones((2, 3, 2, 2)))


def test_embedding_bag_is_torchs():
    w = np.random.default_rng(1).standard_normal((10, 3))
    words, offsets = [1, 2, 0, 4, 5, 9, 3], [0, 3, 3, 5]
    for mode in ("sum", "mean", "max"):
        tw, gw = torch.tensor(w, requires_grad=True), gs.tensor(w, requires_grad=True)
        t = tF.embedding_bag(torch.tensor(words), tw, torch.tensor(offsets), mode=mode,
                             padding_idx=0 if mode != "max" else None)
        g = F.embedding_bag(gs.tensor(words), gw, gs.tensor(offsets), mode=mode,
                            padding_idx=0 if mode != "max" else None)
        np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), atol=1e-12)
        t.sum().backward(), g.sum().backward()
        np.testing.assert_allclose(gw.grad.numpy(), tw.grad.numpy(), atol=1e-12)
    psw = np.linspace(0.5, 2, 7)
    t = tF.embedding_bag(torch.tensor(words), torch.tensor(w), torch.tensor(offsets), mode="sum",
                         per_sample_weights=torch.tensor(psw))
    g = F.embedding_bag(gs.tensor(words), gs.tensor(w), gs.tensor(offsets), mode="sum",
                        per_sample_weights=gs.tensor(psw))
    np.testing.assert_allclose(g.numpy(), t.numpy(), atol=1e-12)


# ---- modules: text, parameters, init ------------------------------------------------------------

MODULES = [
    "Conv1d(3, 4, 3)", "Conv1d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2, bias=False)",
    "Conv1d(3, 4, 3, padding='same', padding_mode='reflect')",
    "ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1)",
    "ConvTranspose2d(4, 4, (2, 3), groups=2, bias=False, dilation=2)",
    "MaxPool1d(3, 1, 1)", "AvgPool1d(3, 2, 1)", "GroupNorm(2, 4)",
    "GroupNorm(2, 4, affine=False, eps=1e-3)", "InstanceNorm2d(4)",
    "InstanceNorm1d(3, affine=True, track_running_stats=True)", "PReLU()", "PReLU(3, 0.1)",
    "Dropout2d()", "Dropout1d(0.2)", "ZeroPad2d(2)", "ConstantPad1d(2, 3.5)",
    "ConstantPad2d((1, 2, 3, 4), 0.)", "ReflectionPad2d(1)", "ReplicationPad1d((1, 2))",
    "PixelShuffle(2)", "PixelUnshuffle(3)", "Upsample(scale_factor=2)",
    "Upsample(size=(3, 4), mode='bilinear')", "Unfold((2, 3), padding=1, stride=2)",
    "EmbeddingBag(10, 3)", "EmbeddingBag(10, 3, mode='sum', padding_idx=0)",
    "MultiheadAttention(8, 2)", "MultiheadAttention(8, 2, kdim=4, vdim=6, batch_first=True)",
    "TransformerEncoderLayer(8, 2, 16)", "Dropout(0.1)", "LayerNorm(8, eps=1e-3)",
    "TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2, norm=nn.LayerNorm(8))",
]


def test_modules_print_and_name_their_state_as_torchs():
    # one test for all (each test's leak check collects torch's heap, a second apiece)
    for text in MODULES:
        t = eval("tnn." + text, {"tnn": tnn, "nn": tnn})
        g = eval("nn." + text, {"nn": nn})
        assert repr(g) == repr(t), text
        assert [(n, tuple(p.shape)) for n, p in g.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in t.named_parameters()], text
        assert [(n, tuple(p.shape)) for n, p in g.state_dict().items()] == \
            [(n, tuple(p.shape)) for n, p in t.state_dict().items()], text
        del g


def test_init_ranges_are_torchs():
    gs.manual_seed(0)
    conv = nn.Conv1d(4, 8, 5)
    bound = 1 / math.sqrt(4 * 5)  # kaiming_uniform_(a=sqrt(5)) and the bias's U(+-1/sqrt(fan_in))
    for p in (conv.weight, conv.bias):
        v = p.detach().numpy()
        assert np.abs(v).max() <= bound and np.abs(v).max() > 0.5 * bound
    convt = nn.ConvTranspose2d(3, 6, 2, groups=3)  # fan in: weight.size(1) * k * k = 2 * 4
    assert np.abs(convt.weight.detach().numpy()).max() <= 1 / math.sqrt(8)
    mha = nn.MultiheadAttention(8, 2)
    xavier = math.sqrt(6 / (8 + 24))
    assert np.abs(mha.in_proj_weight.detach().numpy()).max() <= xavier
    assert not mha.in_proj_bias.detach().numpy().any() and not mha.out_proj.bias.detach().numpy().any()
    assert (nn.PReLU(3).weight.detach().numpy() == 0.25).all()
    assert (nn.GroupNorm(2, 4).weight.detach().numpy() == 1).all()
    bag = nn.EmbeddingBag(5, 3, padding_idx=2)
    assert not bag.weight.detach().numpy()[2].any()


def load_from_torch(g, t):
    g.load_state_dict({k: gs.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})


@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention_with_torchs_weights_is_torchs(batch_first):
    torch.manual_seed(0)
    t = tnn.MultiheadAttention(8, 2, batch_first=batch_first)
    g = nn.MultiheadAttention(8, 2, batch_first=batch_first)
    load_from_torch(g, t)
    shape = (2, 5, 8) if batch_first else (5, 2, 8)
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    causal = np.triu(np.ones((5, 5), dtype=bool), 1)
    padding = np.array([[False] * 5, [False] * 3 + [True] * 2])
    for kw in ({}, {"attn_mask": causal, "key_padding_mask": padding},
               {"attn_mask": np.linspace(-1, 1, 25).reshape(5, 5).astype(np.float32),
                "average_attn_weights": False}):
        tk = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        gk = {k: gs.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        to, tw = t(*[torch.tensor(x)] * 3, **tk)
        go, gw = g(*[gs.tensor(x)] * 3, **gk)
        np.testing.assert_allclose(go.detach().numpy(), to.detach().numpy(), atol=1e-5)
        np.testing.assert_allclose(gw.detach().numpy(), tw.detach().numpy(), atol=1e-6)
    assert g(*[gs.tensor(x)] * 3, need_weights=False)[1] is None


def test_transformer_encoder_with_torchs_weights_is_torchs():
    torch.manual_seed(0)
    layer_args = dict(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)
    t = tnn.TransformerEncoder(tnn.TransformerEncoderLayer(**layer_args), 2)
    g = nn.TransformerEncoder(nn.TransformerEncoderLayer(**layer_args), 2)
    load_from_torch(g, t)
    x = np.random.default_rng(4).standard_normal((2, 5, 8)).astype(np.float32)
    pad = np.array([[False] * 5, [False] * 4 + [True]])
    tx, gx = torch.tensor(x, requires_grad=True), gs.tensor(x, requires_grad=True)
    to = t(tx, src_key_padding_mask=torch.tensor(pad))
    go = g(gx, src_key_padding_mask=gs.tensor(pad))
    np.testing.assert_allclose(go.detach().numpy(), to.detach().numpy(), atol=1e-5)
    (to ** 2).sum().backward()
    (go ** 2).sum().backward()
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), atol=1e-4)


def test_bad_constructor_arguments_are_refused_as_torch_refuses_them():
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv1d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="divisible by num_groups"):
        nn.GroupNorm(3, 4)
    with pytest.raises(AssertionError, match="divisible by num_heads"):
        nn.MultiheadAttention(8, 3)
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(gs.ones(2, 4, 3), 3)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout2d(1.5)


def test_conv1d_padding_modes_are_torchs():
    x = np.cos(np.arange(2 * 2 * 7, dtype=np.float32)).reshape(2, 2, 7)
    for mode in ("reflect", "replicate", "circular"):
        for padding, k in (("same", 4), (2, 3), ("valid", 3)):
            t = tnn.Conv1d(2, 3, k, padding=padding, padding_mode=mode)
            g = nn.Conv1d(2, 3, k, padding=padding, padding_mode=mode)
            load_from_torch(g, t)
            np.testing.assert_allclose(g(gs.tensor(x)).detach().numpy(),
                                       t(torch.tensor(x)).detach().numpy(), atol=1e-5)
            del g
