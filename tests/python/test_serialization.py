"""gradscope.save / gradscope.load (PyTorch's zip format) on gradscope alone: round trips of
tensors, views, dtypes and containers, what the archive holds, and the files it refuses
(truncated, corrupt, not a zip, torch's legacy format, globals outside the allow-list), plus
Module.state_dict / load_state_dict with PyTorch's messages. test_torch_interchange.py checks
the same files against real PyTorch."""
import io
import pickle
import zipfile
from collections import OrderedDict

import pytest

import gradscope as gs


def saved(obj):
    buf = io.BytesIO()
    gs.save(obj, buf)
    buf.seek(0)
    return buf


def roundtrip(obj):
    return gs.load(saved(obj))


def test_tensor_round_trip_keeps_values_dtype_and_shape():
    for t in [gs.tensor([1.5, -2.0]), gs.tensor([[1.0]], dtype=gs.float64),
              gs.tensor([3, -4]), gs.tensor([True, False]), gs.tensor(2.5), gs.zeros(0, 3)]:
        back = roundtrip(t)
        assert back.dtype == t.dtype and back.shape == t.shape
        assert back.tolist() == t.tolist()


def test_views_of_one_storage_are_saved_once_and_share_memory_after_load():
    base = gs.arange(12.0).view(3, 4)
    buf = saved([base, base.t(), base[1], base[:, 2], base[::2, 1::2]])
    with zipfile.ZipFile(buf) as z:
        assert sorted(z.namelist()) == ["archive/data.pkl", "archive/data/0", "archive/version"]
        assert len(z.read("archive/data/0")) == 12 * 4
        assert z.read("archive/version") == b"3\n"
    buf.seek(0)
    b, t, row, col, step = gs.load(buf)
    assert t.tolist() == base.t().tolist() and t.stride() == (1, 4)
    assert step.tolist() == [[1.0, 3.0], [9.0, 11.0]] and step.stride() == (8, 2)
    b[1, 2] = 100.0
    assert t[2, 1].item() == 100.0 and row[2].item() == 100.0 and col[1].item() == 100.0


def test_data_records_are_64_byte_aligned_as_torch_writes_them():
    buf = saved({"a": gs.ones(3), "b": gs.ones(5, dtype=gs.float64)})
    with zipfile.ZipFile(buf) as z:
        for info in z.infolist():
            raw = buf.getvalue()
            name_len, extra_len = int.from_bytes(raw[info.header_offset + 26:][:2], "little"), \
                int.from_bytes(raw[info.header_offset + 28:][:2], "little")
            assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0, info.filename


def test_containers_numbers_strings_and_state_dicts_round_trip():
    model = gs.nn.Sequential(gs.nn.Linear(3, 2), gs.nn.ReLU(), gs.nn.Linear(2, 1))
    obj = {"sd": model.state_dict(), "n": 3, "x": 2.5, "s": "text", "t": (1, None, True),
           "l": [gs.ones(2), {"deep": gs.zeros(1)}], "shape": gs.ones(2, 3).shape,
           "dtype": gs.float64}
    back = roundtrip(obj)
    assert isinstance(back["sd"], OrderedDict) and list(back["sd"]) == list(obj["sd"])
    for k in obj["sd"]:
        assert back["sd"][k].tolist() == obj["sd"][k].tolist()
    assert (back["n"], back["x"], back["s"], back["t"]) == (3, 2.5, "text", (1, None, True))
    assert back["l"][1]["deep"].tolist() == [0.0]
    assert back["shape"] == (2, 3) and back["dtype"] == gs.float64


def test_state_dict_loads_into_a_new_model(tmp_path):
    a = gs.nn.Sequential(gs.nn.Linear(4, 3), gs.nn.Tanh(), gs.nn.Linear(3, 2))
    b = gs.nn.Sequential(gs.nn.Linear(4, 3), gs.nn.Tanh(), gs.nn.Linear(3, 2))
    path = tmp_path / "model.pt"
    gs.save(a.state_dict(), path)
    with zipfile.ZipFile(path) as z:  # the folder is the file's stem, as torch names it
        assert "model/data.pkl" in z.namelist()
    assert repr(b.load_state_dict(gs.load(path))) == "<All keys matched successfully>"
    x = gs.ones(2, 4)
    assert a(x).tolist() == b(x).tolist()


def test_parameters_and_tensors_that_require_grad_come_back_as_leaves():
    w = gs.tensor([1.0, 2.0], requires_grad=True)
    p = gs.nn.Linear(2, 1).weight
    w2, p2 = roundtrip([w, p])
    assert w2.requires_grad and w2.is_leaf and p2.requires_grad
    (w2 * w2).sum().backward()
    assert w2.grad.tolist() == [2.0, 4.0]


def test_a_whole_module_is_refused_with_what_to_do_instead():
    with pytest.raises(pickle.PicklingError, match="state_dict"):
        gs.save(gs.nn.Linear(2, 2), io.BytesIO())


def test_truncated_files_fail_with_a_clear_error():
    raw = saved({"w": gs.ones(100)}).getvalue()
    for cut in [len(raw) // 2, len(raw) - 30, 10]:
        with pytest.raises(RuntimeError, match="gradscope.load"):
            gs.load(io.BytesIO(raw[:cut]))


def test_a_corrupt_storage_record_fails_naming_it():
    src = saved({"w": gs.ones(4)})
    out = io.BytesIO()
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(out, "w") as zout:
        for name in zin.namelist():
            data = zin.read(name)
            zout.writestr(name, data[:-4] if name.endswith("data/0") else data)
    out.seek(0)
    with pytest.raises(RuntimeError, match=r"archive/data/0 holds 12 bytes.*4 elements"):
        gs.load(out)


def test_flipped_bytes_fail_the_crc_check():
    raw = bytearray(saved({"w": gs.ones(64)}).getvalue())
    with zipfile.ZipFile(io.BytesIO(bytes(raw))) as z:
        info = z.getinfo("archive/data/0")
    raw[info.header_offset + 30 + len(info.filename) + len(info.extra) + 8] ^= 0xFF
    with pytest.raises(RuntimeError, match="corrupt"):
        gs.load(io.BytesIO(bytes(raw)))


def test_not_a_zip_and_legacy_format_are_refused():
    with pytest.raises(RuntimeError, match="not a file torch.save wrote"):
        gs.load(io.BytesIO(b"hello, this is not a checkpoint"))
    with pytest.raises(RuntimeError, match="legacy format"):
        gs.load(io.BytesIO(pickle.dumps({"a": 1}, protocol=2)))
    empty = io.BytesIO()
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("other/thing.txt", "x")
    empty.seek(0)
    with pytest.raises(RuntimeError, match="no <folder>/data.pkl"):
        gs.load(empty)


def zip_with_pickle(payload):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("archive/data.pkl", payload)
        z.writestr("archive/version", "3\n")
    out.seek(0)
    return out


class Evil:
    def __reduce__(self):
        import os
        return (os.system, ("echo should never run",))


def test_globals_outside_the_allow_list_are_refused_by_name():
    with pytest.raises(pickle.UnpicklingError, match=r"needs the global (posix|os)\.system"):
        gs.load(zip_with_pickle(pickle.dumps(Evil(), protocol=2)))
    with pytest.raises(pickle.UnpicklingError, match=r"(__builtin__|builtins)\.set"):
        gs.load(zip_with_pickle(pickle.dumps({1, 2}, protocol=2)))


def test_a_view_reaching_past_its_storage_is_refused():
    # A hand-made pickle: a 2-element storage and a tensor of 3 elements over it.
    import gradscope.serialization as ser
    storage = ser._Storage("0", "FloatStorage", 2, b"\0" * 8)

    class Bad:
        def __reduce__(self):
            return (ser._Global("torch._utils", "_rebuild_tensor_v2"),
                    (storage, 0, (3,), (1,), False, OrderedDict()))

    buf = io.BytesIO()
    ser._Pickler(buf).dump(Bad())
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("archive/data.pkl", buf.getvalue())
        z.writestr("archive/data/0", storage.data)
    out.seek(0)
    with pytest.raises(RuntimeError, match="holds 2 elements.*reaches element 2"):
        gs.load(out)


def test_map_location_cpu_forms_and_refusals():
    buf = saved(gs.ones(2))
    for m in [None, "cpu", {"cuda:0": "cpu"}, lambda storage, loc: storage]:
        buf.seek(0)
        assert gs.load(buf, map_location=m).tolist() == [1.0, 1.0]
    buf.seek(0)
    with pytest.raises(RuntimeError, match="CPU only"):
        gs.load(buf, map_location="cuda:0")


def test_load_state_dict_reports_as_torch():
    m = gs.nn.Linear(3, 2)
    sd = m.state_dict()
    assert isinstance(sd, OrderedDict)
    bad = dict(sd)
    del bad["bias"]
    bad["extra"] = gs.ones(1)
    bad["weight"] = gs.ones(3, 3)
    with pytest.raises(RuntimeError) as e:
        m.load_state_dict(bad)
    assert str(e.value) == (
        "Error(s) in loading state_dict for Linear:\n"
        '\tMissing key(s) in state_dict: "bias". \n'
        '\tUnexpected key(s) in state_dict: "extra". \n'
        "\tsize mismatch for weight: copying a param with shape torch.Size([3, 3]) from "
        "checkpoint, the shape in current model is torch.Size([2, 3]).")
    assert m.state_dict()["weight"].tolist() == sd["weight"].tolist()  # unchanged
    r = m.load_state_dict({"weight": gs.ones(2, 3), "junk": gs.ones(1)}, strict=False)
    assert r.missing_keys == ["bias"] and r.unexpected_keys == ["junk"]
    assert m.weight.tolist() == [[1.0] * 3] * 2
    with pytest.raises(RuntimeError, match='While copying the parameter named "bias"'):
        m.load_state_dict({"weight": gs.ones(2, 3), "bias": [1.0, 2.0]})
    with pytest.raises(TypeError, match="dict-like"):
        m.load_state_dict([1, 2])


def test_state_dict_keep_vars_and_prefix():
    m = gs.nn.Linear(2, 2)
    kept = m.state_dict(keep_vars=True)
    assert kept["weight"].requires_grad and not m.state_dict()["weight"].requires_grad
    assert list(m.state_dict(prefix="fc.")) == ["fc.weight", "fc.bias"]
