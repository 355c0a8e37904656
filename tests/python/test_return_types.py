"""The named tuples ops return (torch.return_types) against torch 1.13: each op's own class name,
torch's repr line for line, field names, and plain-tuple behaviour (unpacking, indexing)."""
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")

DATA = [[3.0, 1.0, 2.0], [0.0, 5.0, 5.0]]
SQUARE = [[2.0, 1.0], [1.0, 3.0]]

CASES = [
    ("max", lambda m, a: m.max(a, 1)),
    ("min", lambda m, a: a.min(0)),
    ("sort", lambda m, a: a.sort(dim=1, descending=True)),
    ("topk", lambda m, a: m.topk(a, 2)),
    ("kthvalue", lambda m, a: a.kthvalue(2, 1)),
    ("median", lambda m, a: a.median(1)),
    ("mode", lambda m, a: m.mode(a, 1)),
    ("cummax", lambda m, a: a.cummax(1)),
    ("cummin", lambda m, a: m.cummin(a, 0)),
    ("aminmax", lambda m, a: m.aminmax(a)),
    ("frexp", lambda m, a: m.frexp(a)),
    ("histogram", lambda m, a: m.histogram(a.flatten(), bins=2)),
]


@pytest.mark.parametrize("name,call", CASES, ids=[c[0] for c in CASES])
def test_result_is_torchs(name, call):
    g, t = call(gs, gs.tensor(DATA)), call(torch, torch.tensor(DATA))
    assert type(g).__name__ == type(t).__name__ == name
    # gradscope's dtypes print as gradscope.int32 unless run as torch (gradscope.as_torch)
    assert repr(g).replace("gradscope.", "torch.") == repr(t)
    assert str(g) == repr(g)
    assert isinstance(g, tuple) and len(g) == len(t) == 2
    first, second = g
    assert first.tolist() == t[0].tolist() and second.tolist() == t[1].tolist()
    for field in t._fields if hasattr(t, "_fields") else type(t).__match_args__:
        assert getattr(g, field).tolist() == getattr(t, field).tolist()


LINALG = [
    ("linalg_slogdet", lambda m, a: m.linalg.slogdet(a)),
    ("slogdet", lambda m, a: m.slogdet(a)),
    ("slogdet", lambda m, a: a.slogdet()),
    ("linalg_eigh", lambda m, a: m.linalg.eigh(a)),
    ("linalg_qr", lambda m, a: m.linalg.qr(a)),
    ("linalg_svd", lambda m, a: m.linalg.svd(a)),
    ("svd", lambda m, a: m.svd(a)),
    ("linalg_lstsq", lambda m, a: m.linalg.lstsq(a, a)),
]


@pytest.mark.parametrize("name,call", LINALG, ids=[f"{c[0]}-{i}" for i, c in enumerate(LINALG)])
def test_linalg_result_names_are_torchs(name, call):
    g = call(gs, gs.tensor(SQUARE, dtype=gs.float64))
    t = call(torch, torch.tensor(SQUARE, dtype=torch.float64))
    assert type(g).__name__ == type(t).__name__ == name
    assert repr(g).split("(")[0] == repr(t).split("(")[0] == f"torch.return_types.{name}"
    assert len(g) == len(t)


def test_slogdet_repr_is_torchs():
    g, t = gs.linalg.slogdet(gs.eye(2)), torch.linalg.slogdet(torch.eye(2))
    assert repr(g) == repr(t)


def test_return_types_module_has_the_classes():
    r = gs.tensor(DATA).max(1)
    assert isinstance(r, gs.return_types.max)
    assert not isinstance(r, gs.return_types.min)
