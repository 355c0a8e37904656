"""torch.save files between gradscope and real PyTorch (Debian's 1.13), both ways: what torch
saved, gradscope loads (dtypes, views of one storage, non-contiguous tensors, Parameters,
state dicts, containers), and what gradscope saved, torch loads, also with
weights_only=True; a model's state dict carries its outputs across. meson registers this file
only when torch imports (tests/python/meson.build: a missing torch is a visible skip, a
failure under CI=true)."""
import io
import pickle

import pytest

import gradscope as gs

torch = pytest.importorskip("torch")


def flat(values):
    """Nested lists of numbers as one flat list (pytest.approx compares flat ones)."""
    return [v for item in values for v in flat(item)] if isinstance(values, list) else [values]


def via_bytes(save, load, obj, **kw):
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    return load(buf, **kw)


def torch_to_gs(obj):
    return via_bytes(torch.save, gs.load, obj)


def gs_to_torch(obj, weights_only=False):
    return via_bytes(gs.save, torch.load, obj, weights_only=weights_only)


def test_gradscope_loads_every_dtype_torch_saves():
    cases = {
        "f32": (torch.tensor([1.5, -2.25, 3e-8]), gs.float32),
        "f64": (torch.tensor([[0.1, 1e300]], dtype=torch.float64), gs.float64),
        "i64": (torch.tensor([2**40, -3]), gs.int64),
        "i32": (torch.tensor([7, -2**31], dtype=torch.int32), gs.int32),
        "i16": (torch.tensor([-5, 32767], dtype=torch.int16), gs.int16),
        "i8": (torch.tensor([-128, 7], dtype=torch.int8), gs.int8),
        "u8": (torch.tensor([255, 0], dtype=torch.uint8), gs.uint8),
        "bool": (torch.tensor([True, False, True]), gs.bool),
        "half": (torch.tensor([0.5, -1.25], dtype=torch.float16), gs.float32),
        "bf16": (torch.tensor([0.5, -3.0], dtype=torch.bfloat16), gs.float32),
    }
    back = torch_to_gs({k: t for k, (t, _) in cases.items()})
    for k, (t, dtype) in cases.items():
        assert back[k].dtype == dtype, k
        assert back[k].tolist() == t.tolist(), k


def test_gradscope_loads_torch_views_and_non_contiguous_tensors():
    base = torch.arange(24, dtype=torch.float32).view(2, 3, 4)
    views = [base, base.permute(2, 0, 1), base[1], base[:, 1:, ::2], base[..., 3],
             base.view(6, 4)[2:5].t(), base[0, 0, :1].expand(3, 5)]
    back = torch_to_gs(views)
    for t, b in zip(views, back):
        assert b.shape == t.shape and b.stride() == t.stride() and b.tolist() == t.tolist()
    back[0][1, 2, 3] = -1.0  # one storage in the file, shared memory after loading
    assert back[2][2, 3].item() == -1.0 and back[4][1, 2].item() == -1.0


def test_torch_loads_gradscope_views_as_one_storage():
    base = gs.arange(12.0).view(3, 4)
    back = gs_to_torch({"base": base, "t": base.t(), "row": base[2], "col": base[:, 1],
                        "step": base[::2, ::3]})
    expect = torch.arange(12, dtype=torch.float32).view(3, 4)
    for name, t in [("base", expect), ("t", expect.t()), ("row", expect[2]),
                    ("col", expect[:, 1]), ("step", expect[::2, ::3])]:
        got = back[name]
        assert got.tolist() == t.tolist() and got.stride() == t.stride()
        assert got.storage_offset() == t.storage_offset(), name
        assert got.storage().data_ptr() == back["base"].storage().data_ptr(), name


def test_torch_loads_gradscope_dtypes_with_weights_only():
    obj = {"f32": gs.tensor([1.5, -2.0]), "f64": gs.tensor([[1e-300]], dtype=gs.float64),
           "i64": gs.tensor([2**50, -1]), "bool": gs.tensor([False, True]),
           "i32": gs.tensor([-2**31, 7], dtype=gs.int32),
           "i16": gs.tensor([-2**15, 7], dtype=gs.int16), "i8": gs.tensor([-128, 7], dtype=gs.int8),
           "u8": gs.tensor([255, 7], dtype=gs.uint8),
           "scalar": gs.tensor(3.0), "empty": gs.zeros(0, 2), "shape": gs.ones(2, 3).shape,
           "list": [gs.ones(1), 4, "s", (True, None)]}
    back = gs_to_torch(obj, weights_only=True)
    dtypes = {"f32": torch.float32, "f64": torch.float64, "i64": torch.int64, "bool": torch.bool,
              "i32": torch.int32, "i16": torch.int16, "i8": torch.int8, "u8": torch.uint8}
    for k, dtype in dtypes.items():
        assert back[k].dtype == dtype and back[k].tolist() == obj[k].tolist()
    assert back["scalar"].shape == () and back["scalar"].item() == 3.0
    assert back["empty"].shape == (0, 2)
    assert back["shape"] == torch.Size([2, 3]) and isinstance(back["shape"], torch.Size)
    assert back["list"][0].tolist() == [1.0] and back["list"][1:] == [4, "s", (True, None)]


def test_parameters_cross_as_parameters():
    lin = gs.nn.Linear(2, 3)
    p = gs_to_torch(lin.weight)
    assert isinstance(p, torch.nn.Parameter) and p.requires_grad
    assert p.tolist() == lin.weight.tolist()
    tp = torch.nn.Parameter(torch.ones(2, 2))
    back = torch_to_gs({"p": tp, "t": torch.ones(2, requires_grad=True)})
    assert back["p"].requires_grad and back["t"].requires_grad and back["t"].is_leaf


def test_state_dicts_carry_a_models_outputs_both_ways(tmp_path):
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    gm = gs.nn.Sequential(gs.nn.Linear(5, 4), gs.nn.Tanh(), gs.nn.Linear(4, 2))
    path = tmp_path / "net.pt"
    torch.save(tm.state_dict(), path)
    assert repr(gm.load_state_dict(gs.load(path))) == "<All keys matched successfully>"
    x = [[0.1 * i - 0.2 * j for i in range(5)] for j in range(3)]
    want = tm(torch.tensor(x)).tolist()
    got = gm(gs.tensor(x)).tolist()
    assert flat(got) == pytest.approx(flat(want), abs=1e-6)

    gm2 = gs.nn.LSTM(3, 4, num_layers=2)
    tm2 = torch.nn.LSTM(3, 4, num_layers=2)
    gs.save(gm2.state_dict(), path)
    tm2.load_state_dict(torch.load(path, weights_only=True))
    seq = [[[0.3 * t - 0.1 * b + 0.05 * f for f in range(3)] for b in range(2)] for t in range(4)]
    out_gs, _ = gm2(gs.tensor(seq))
    out_torch, _ = tm2(torch.tensor(seq))
    assert flat(out_gs.tolist()) == pytest.approx(flat(out_torch.tolist()), abs=1e-6)


def test_torch_state_dict_with_metadata_and_buffers_loads():
    bn = torch.nn.BatchNorm1d(3)
    bn(torch.arange(12, dtype=torch.float32).view(4, 3))
    sd = torch_to_gs(bn.state_dict())
    assert list(sd) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert sd["num_batches_tracked"].tolist() == 1
    assert sd["running_mean"].tolist() == pytest.approx(bn.running_mean.tolist())


def test_what_gradscope_does_not_load_from_torch_is_named(tmp_path):
    whole, legacy = tmp_path / "whole.pt", tmp_path / "legacy.pt"
    torch.save(torch.nn.Linear(2, 2), whole)
    torch.save(torch.ones(2), legacy, _use_new_zipfile_serialization=False)
    with pytest.raises(pickle.UnpicklingError,
                       match=r"torch\.nn\.modules\.linear\.Linear.*save model\.state_dict\(\)"):
        gs.load(whole)
    with pytest.raises(RuntimeError, match="legacy format"):
        gs.load(legacy)
