"""F.scaled_dot_product_attention (torch 2's; torch 1.13 has none, so it is compared with
torch 1.13 computing torch 2's documented formula) and F.channel_shuffle / nn.ChannelShuffle
against torch 1.13's, in float64: values, gradients (where torch has them), and finite
differences."""
import math

import numpy as np
import pytest

import gradscope as gs
import gradscope.nn as nn
import gradscope.nn.functional as F

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(5)


def both(shape):
    a = RNG.standard_normal(shape)
    return (gs.tensor(a.tolist(), dtype=gs.float64).requires_grad_(),
            torch.tensor(a).requires_grad_())


def np_of(x):
    return np.array(x.tolist()) if isinstance(x, gs.Tensor) else x.detach().numpy()


def torch_sdpa(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """torch 2's reference formula for scaled_dot_product_attention (its documentation's)."""
    L, S = q.shape[-2], k.shape[-2]
    factor = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    bias = torch.zeros(L, S, dtype=q.dtype)
    if is_causal:
        bias = bias.masked_fill(torch.ones(L, S, dtype=torch.bool).tril().logical_not(),
                                float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            bias = bias.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            bias = bias + attn_mask
    return torch.softmax(q @ k.transpose(-2, -1) * factor + bias, dim=-1) @ v


@pytest.mark.parametrize("kind", ["plain", "causal", "bool", "float", "scale"])
def test_scaled_dot_product_attention(kind):
    (q, tq), (k, tk), (v, tv) = both((2, 3, 4, 8)), both((2, 3, 5, 8)), both((2, 3, 5, 6))
    kwargs_g, kwargs_t = {}, {}
    if kind == "causal":
        kwargs_g = kwargs_t = {"is_causal": True}
    elif kind == "bool":
        m = RNG.random((4, 5)) > 0.4
        m[:, 0] = True  # every query sees a key
        kwargs_g = {"attn_mask": gs.tensor(m.tolist())}
        kwargs_t = {"attn_mask": torch.tensor(m)}
    elif kind == "float":
        m = RNG.standard_normal((4, 5))
        kwargs_g = {"attn_mask": gs.tensor(m.tolist(), dtype=gs.float64)}
        kwargs_t = {"attn_mask": torch.tensor(m)}
    elif kind == "scale":
        kwargs_g = kwargs_t = {"scale": 0.3}
    out = F.scaled_dot_product_attention(q, k, v, **kwargs_g)
    ref = torch_sdpa(tq, tk, tv, **kwargs_t)
    np.testing.assert_allclose(np_of(out), np_of(ref), rtol=0, atol=1e-13)
    w = RNG.standard_normal(tuple(ref.shape))
    (out * gs.tensor(w.tolist(), dtype=gs.float64)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    for a, b in ((q, tq), (k, tk), (v, tv)):
        np.testing.assert_allclose(np_of(a.grad), b.grad.numpy(), rtol=0, atol=1e-12)
    small = [t.detach()[:1, :1].requires_grad_() for t in (q, k, v)]
    assert gs.autograd.gradcheck(
        lambda a, b, c: F.scaled_dot_product_attention(a, b, c, **({} if "attn_mask" in kwargs_g
                                                                    else kwargs_g)), small)


def test_scaled_dot_product_attention_refusals():
    q = gs.zeros(2, 4, 8)
    with pytest.raises(RuntimeError, match="share their last dim"):
        F.scaled_dot_product_attention(q, gs.zeros(2, 5, 7), gs.zeros(2, 5, 7))
    with pytest.raises(RuntimeError, match="not both"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=gs.ones(4, 4, dtype=gs.bool),
                                       is_causal=True)


def test_channel_shuffle():
    g, t = both((2, 6, 3, 2))
    out, ref = F.channel_shuffle(g, 3), torch.nn.functional.channel_shuffle(t, 3)
    assert np.array_equal(np_of(out), np_of(ref))
    # (torch 1.13 has no derivative for it: "derivative for channel_shuffle is not
    # implemented"; the gradient is the inverse shuffle, checked by finite differences)
    assert gs.autograd.gradcheck(lambda a: F.channel_shuffle(a, 2), (g.detach().requires_grad_(),))
    module = nn.ChannelShuffle(2)
    assert repr(module) == repr(torch.nn.ChannelShuffle(2)) == "ChannelShuffle(groups=2)"
    assert gs.equal(module(g), F.channel_shuffle(g, 2))
    with pytest.raises(RuntimeError, match="divisible by groups. Got 6 channels and 4 groups"):
        F.channel_shuffle(g, 4)
