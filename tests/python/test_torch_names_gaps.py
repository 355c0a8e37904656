"""grad_fn names that once differed from torch 1.13's, now the engine records what was called:
transpose and mT (TransposeBackward0) against t() (TBackward0), torch.svd's V, F.linear and
nn.Linear by the input's dims and bias (AddmmBackward0, the 3-D view, the add over a matmul),
the matmul forms, and group_norm as one NativeGroupNormBackward0 with torch's values and
float64 gradients (and second derivatives), weight or bias alone; and ParameterDict's missing keys, raised as
torch raises them. meson registers this file only when torch imports."""
import numpy as np
import pytest

import gradscope as gs
import gradscope.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def cases(t, F):
    x = t.ones(3, 4, dtype=t.float64, requires_grad=True)
    x3 = t.ones(2, 3, 4, dtype=t.float64, requires_grad=True)
    v = t.ones(4, dtype=t.float64, requires_grad=True)
    w = t.ones(5, 4, dtype=t.float64, requires_grad=True)
    b = t.ones(5, dtype=t.float64, requires_grad=True)
    g = t.ones(2, 4, 3, dtype=t.float64, requires_grad=True)
    return {
        "transpose": lambda: x.transpose(0, 1), "transpose_neg": lambda: x.transpose(-1, -2),
        "swapaxes": lambda: x.swapaxes(0, 1), "mT": lambda: x.mT, "t": lambda: x.t(),
        "t_of_vector": lambda: v.t(), "T": lambda: x.T, "permute": lambda: x.permute(1, 0),
        "transpose_3d": lambda: x3.transpose(0, 2),
        "svd_V": lambda: t.svd(x).V, "svd_U": lambda: t.svd(x).U,
        "linear": lambda: F.linear(x, w, b), "linear_no_bias": lambda: F.linear(x, w),
        "linear_1d": lambda: F.linear(v, w, b), "linear_3d": lambda: F.linear(x3, w, b),
        "linear_3d_no_bias": lambda: F.linear(x3, w),
        "linear_4d": lambda: F.linear(x3.unsqueeze(0), w, b),
        "linear_3d_strided": lambda: F.linear(x3.transpose(0, 1), w, b),
        "mm_1d_2d": lambda: v @ w.t(), "mm_2d_1d": lambda: w @ v, "dot": lambda: v @ v,
        "mm": lambda: x @ w.t(), "bmm": lambda: x3 @ t.ones(2, 4, 5, dtype=t.float64),
        "batch_2d": lambda: x3 @ w.t(), "batch_1d": lambda: x3 @ v,
        "group_norm": lambda: F.group_norm(g, 2),
        "group_norm_affine": lambda: F.group_norm(g, 2, t.ones(4, dtype=t.float64), b[:4]),
    }


@pytest.mark.parametrize("case", sorted(cases(torch, TF)))
def test_grad_fn_name_is_torchs(case):
    mine = cases(gs, F)[case]().grad_fn.name()
    theirs = cases(torch, TF)[case]().grad_fn.name()
    assert mine == theirs


def test_linear_module_of_a_3d_input_is_torchs_view_of_an_addmm():
    m = gs.nn.Linear(4, 2)
    y = m(gs.ones(2, 3, 4))
    assert y.grad_fn.name() == "ViewBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "AddmmBackward0"
    assert m(gs.ones(3, 4)).grad_fn.name() == "AddmmBackward0"


def test_transpose_and_t_gradients_still_route_back():
    x = gs.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    w = gs.tensor(np.arange(12.0).reshape(4, 3))
    ((x.t() * w).sum() + (x.transpose(0, 1) * w * 2).sum()).backward()
    assert x.grad.tolist() == (np.arange(12.0).reshape(4, 3).T * 3).tolist()


@pytest.mark.parametrize("shape,groups", [((2, 4, 3), 2), ((3, 6, 2, 2), 3), ((2, 3), 1),
                                          ((2, 4, 5), 4)])
@pytest.mark.parametrize("affine", [False, True])
def test_group_norm_values_and_float64_gradients_match_torch(shape, groups, affine):
    rng = np.random.default_rng(3)
    xs = rng.normal(size=shape)
    c = shape[1]
    ws, bs = rng.normal(size=c), rng.normal(size=c)
    x = gs.tensor(xs, requires_grad=True)
    tx = torch.tensor(xs, requires_grad=True)
    w = gs.tensor(ws, requires_grad=True) if affine else None
    tw = torch.tensor(ws, requires_grad=True) if affine else None
    b = gs.tensor(bs, requires_grad=True) if affine else None
    tb = torch.tensor(bs, requires_grad=True) if affine else None
    y = F.group_norm(x, groups, w, b, eps=1e-5)
    ty = TF.group_norm(tx, groups, tw, tb, eps=1e-5)
    np.testing.assert_allclose(y.tolist(), ty.tolist(), rtol=1e-12, atol=1e-12)
    seed = rng.normal(size=shape)
    (gx,) = gs.autograd.grad((y * gs.tensor(seed)).sum(), x, create_graph=True)
    (tgx,) = torch.autograd.grad((ty * torch.tensor(seed)).sum(), tx, create_graph=True)
    np.testing.assert_allclose(gx.tolist(), tgx.tolist(), rtol=1e-10, atol=1e-12)
    (gx * gx).sum().backward()
    (tgx * tgx).sum().backward()
    np.testing.assert_allclose(x.grad.tolist(), tx.grad.tolist(), rtol=1e-9, atol=1e-11)
    if affine:
        np.testing.assert_allclose(w.grad.tolist(), tw.grad.tolist(), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("shape", [(2, 6, 3, 4), (2, 6), (1, 6, 1), (3, 6, 0)])
def test_group_norm_with_weight_or_bias_alone_as_torch(shape):
    """weight without bias, bias without weight, and an empty spatial dim: torch's values and
    gradients. torch 1.13's backward with bias but no weight fails ("tensor does not have a
    device"), so gradscope's is checked by finite differences there instead; and for an empty
    input torch's weight gradient is NaN, gradscope's the empty sum's 0."""
    rng = np.random.default_rng(11)
    xs, ws, bs = rng.normal(size=shape), rng.normal(size=6), rng.normal(size=6)
    for use_w, use_b in ((True, False), (False, True)):
        x, tx = gs.tensor(xs, requires_grad=True), torch.tensor(xs, requires_grad=True)
        w = gs.tensor(ws, requires_grad=True) if use_w else None
        tw = torch.tensor(ws, requires_grad=True) if use_w else None
        b = gs.tensor(bs, requires_grad=True) if use_b else None
        tb = torch.tensor(bs, requires_grad=True) if use_b else None
        y, ty = F.group_norm(x, 3, w, b), TF.group_norm(tx, 3, tw, tb)
        assert y.grad_fn.name() == ty.grad_fn.name() == "NativeGroupNormBackward0"
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12,
                                   atol=1e-12)
        if use_w:
            (y * y).sum().backward()
            (ty * ty).sum().backward()
            np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-11)
            if xs.size:
                np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-9,
                                           atol=1e-11)
            else:  # an empty sum: 0 here; torch's formula multiplies it by NaN statistics
                assert w.grad.tolist() == [0.0] * 6 and tw.grad.isnan().all()
        elif xs.size:
            assert gs.autograd.gradcheck(lambda a, c: F.group_norm(a, 3, None, c),
                                         (x, b), eps=1e-6, atol=1e-6)


def test_group_norm_module_float32_and_errors_as_torch():
    m, tm = gs.nn.GroupNorm(2, 4), torch.nn.GroupNorm(2, 4)
    xs = np.random.default_rng(5).normal(size=(3, 4, 5)).astype(np.float32)
    y, ty = m(gs.tensor(xs)), tm(torch.tensor(xs))
    assert y.grad_fn.name() == ty.grad_fn.name() == "NativeGroupNormBackward0"
    np.testing.assert_allclose(y.tolist(), ty.tolist(), rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(gs.ones(2, 5, 3), 2)


def test_parameter_dict_missing_keys_raise_as_torch():
    for t in (gs, torch):
        d = t.nn.ParameterDict({"a": t.nn.Parameter(t.ones(1))})
        with pytest.raises(AttributeError, match="'ParameterDict' object has no attribute 'zz'"):
            d.pop("zz")
        with pytest.raises(AttributeError, match="'ParameterDict' object has no attribute 'zz'"):
            d["zz"]
        with pytest.raises(KeyError):
            del d["zz"]
        assert d.get("zz", 3) == 3
        assert d.pop("a").shape == (1,) and len(d) == 0
