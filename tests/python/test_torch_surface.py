"""The smaller torch names ordinary programs call (issue 31): learning-rate schedulers,
torch.utils.data's datasets and samplers, and top-level functions, each against PyTorch 1.13
where it is installed (skipped otherwise), with float64 gradient checks for the compositions."""
import math

import numpy as np
import pytest

import gradscope as gs
import gradscope.nn as nn
import gradscope.nn.functional as F
import gradscope.utils.data as data
from gradscope.optim import lr_scheduler as G

torch = pytest.importorskip("torch")
T = torch.optim.lr_scheduler
TD = torch.utils.data


def values(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t, dtype=np.float64)


def close(a, b, tol=1e-12):
    return np.allclose(values(a), values(b), rtol=tol, atol=tol, equal_nan=True)


# ---- learning-rate schedulers -------------------------------------------------------------

SCHEDULERS = {
    "ExponentialLR": lambda o, t: t.ExponentialLR(o, 0.9),
    "ConstantLR": lambda o, t: t.ConstantLR(o, 0.5, 4),
    "LinearLR": lambda o, t: t.LinearLR(o, 0.25, 1.0, 7),
    "PolynomialLR": lambda o, t: t.PolynomialLR(o, 20, 2.0),
    "MultiplicativeLR": lambda o, t: t.MultiplicativeLR(o, lambda e: 0.97),
    "WarmRestarts": lambda o, t: t.CosineAnnealingWarmRestarts(o, 5, 2, 0.001),
    "OneCycleLR": lambda o, t: t.OneCycleLR(o, 0.5, total_steps=61),
    "OneCycleLR3": lambda o, t: t.OneCycleLR(o, [0.5], epochs=4, steps_per_epoch=16,
                                             three_phase=True, anneal_strategy="linear"),
    "SequentialLR": lambda o, t: t.SequentialLR(
        o, [t.ConstantLR(o, 0.1, 3), t.ExponentialLR(o, 0.9)], [3]),
    "ChainedScheduler": lambda o, t: t.ChainedScheduler(
        [t.ConstantLR(o, 0.1, 3), t.ExponentialLR(o, 0.9)]),
}


def optimizers(opt, **kw):
    lin, tlin = nn.Linear(2, 1), torch.nn.Linear(2, 1)
    return (getattr(gs.optim, opt)(lin.parameters(), lr=0.2, **kw),
            getattr(torch.optim, opt)(tlin.parameters(), lr=0.2, **kw))


def same_groups(o, to):
    for a, b in zip(o.param_groups, to.param_groups):
        assert a["lr"] == b["lr"]
        for k in ("momentum", "betas", "initial_lr"):
            if k in b:
                assert tuple(np.atleast_1d(a[k])) == tuple(np.atleast_1d(b[k])), k


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", sorted(SCHEDULERS))
@pytest.mark.parametrize("opt", ["SGD", "Adam"])
def test_schedulers_match_torch_step_for_step(name, opt):
    o, to = optimizers(opt, **({"momentum": 0.9} if opt == "SGD" else {}))
    s, ts = SCHEDULERS[name](o, G), SCHEDULERS[name](to, T)
    for _ in range(60):
        same_groups(o, to)
        o.step(), to.step()
        s.step(), ts.step()
        assert s.get_last_lr() == ts.get_last_lr()
    assert sorted(s.state_dict()) == sorted(ts.state_dict())


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", ["ExponentialLR", "WarmRestarts", "OneCycleLR", "SequentialLR"])
def test_scheduler_state_dict_resumes(name):
    o, _ = optimizers("SGD", momentum=0.9)
    s = SCHEDULERS[name](o, G)
    for _ in range(20):
        s.step()
    saved = s.state_dict()
    rest = []
    for _ in range(20):
        s.step()
        rest.append(s.get_last_lr())
    o2, _ = optimizers("SGD", momentum=0.9)
    s2 = SCHEDULERS[name](o2, G)
    s2.load_state_dict(saved)
    for group in o2.param_groups:  # the optimizer's own state_dict carries the rate
        group["lr"] = saved["_last_lr"][0] if "_last_lr" in saved else group["lr"]
    again = []
    for _ in range(20):
        s2.step()
        again.append(s2.get_last_lr())
    assert again == rest


def test_reduce_lr_on_plateau_matches_torch():
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.97, 0.8, 0.81, 0.82, 0.83, 0.84, 0.85] * 5
    for kw in (dict(patience=2, cooldown=1, factor=0.5, min_lr=0.01),
               dict(mode="max", threshold_mode="abs", patience=1)):
        o, to = optimizers("SGD")
        s, ts = G.ReduceLROnPlateau(o, **kw), T.ReduceLROnPlateau(to, **kw)
        for m in metrics:
            s.step(gs.tensor(m)), ts.step(torch.tensor(m))
            same_groups(o, to)
            assert (s.num_bad_epochs, s.cooldown_counter, s.best) == \
                (ts.num_bad_epochs, ts.cooldown_counter, ts.best)
        assert sorted(s.state_dict()) == sorted(ts.state_dict())
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        G.ReduceLROnPlateau(o, factor=1.0)


@pytest.mark.parametrize("opt,kw", [("SGD", dict(momentum=0.9)), ("SGD", dict(momentum=0.9, nesterov=True)),
                                    ("Adam", {}), ("AdamW", {})])
def test_one_cycle_momentum_reaches_the_engine(opt, kw):
    """OneCycleLR writes group["momentum"] / group["betas"] each step; the engine optimizer
    steps with it, so the weights follow torch's (not the construction-time momentum)."""
    torch.manual_seed(0)
    tlin = torch.nn.Linear(3, 2).double()
    lin = nn.Linear(3, 2).double()
    with gs.no_grad():
        lin.weight.copy_(gs.tensor(tlin.weight.detach().numpy()))
        lin.bias.copy_(gs.tensor(tlin.bias.detach().numpy()))
    o = getattr(gs.optim, opt)(lin.parameters(), lr=0.1, **kw)
    to = getattr(torch.optim, opt)(tlin.parameters(), lr=0.1, **kw)
    s, ts = G.OneCycleLR(o, 0.3, total_steps=20), T.OneCycleLR(to, 0.3, total_steps=20)
    x = np.linspace(-1, 1, 24).reshape(8, 3)
    for _ in range(20):
        o.zero_grad(), to.zero_grad()
        (lin(gs.tensor(x)) ** 2).sum().backward()
        (tlin(torch.tensor(x)) ** 2).sum().backward()
        o.step(), to.step(), s.step(), ts.step()
    assert close(lin.weight, tlin.weight, 1e-7)
    # a fixed momentum would leave them apart: the check can fail
    o2 = getattr(gs.optim, opt)(nn.Linear(3, 2).parameters(), lr=0.1, **kw)
    assert o2.param_groups[0].get("momentum", o2.param_groups[0].get("betas", (0,))[0]) != \
        to.param_groups[0].get("momentum", to.param_groups[0].get("betas", (0,))[0])


def test_engine_momentum_is_validated():
    o = gs.optim.SGD(nn.Linear(2, 1).parameters(), lr=0.1, momentum=0.9, nesterov=True)
    o.param_groups[0]["momentum"] = 0.0
    with pytest.raises(ValueError, match="nesterov"):
        o.step()
    a = gs.optim.Adam(nn.Linear(2, 1).parameters())
    a.param_groups[0]["betas"] = (1.5, 0.999)
    with pytest.raises(ValueError, match="beta parameter at index 0"):
        a.step()


# ---- torch.utils.data ------------------------------------------------------------------------

def test_random_split_lengths_fractions_and_generator():
    a, b = data.random_split(list(range(10)), [7, 3])
    assert (len(a), len(b)) == (7, 3) and sorted(list(a) + list(b)) == list(range(10))
    assert [len(p) for p in data.random_split(range(10), [0.5, 0.3, 0.2])] == \
        [len(p) for p in TD.random_split(range(10), [0.5, 0.3, 0.2])]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        data.random_split(range(5), [2, 2])
    one = [p.indices for p in data.random_split(range(20), [10, 10],
                                                generator=gs.Generator().manual_seed(42))]
    two = [p.indices for p in data.random_split(range(20), [10, 10],
                                                generator=gs.Generator().manual_seed(42))]
    other = [p.indices for p in data.random_split(range(20), [10, 10],
                                                  generator=gs.Generator().manual_seed(43))]
    assert one == two and one != other
    # drawing from a Generator leaves the default generator where it was
    gs.manual_seed(7)
    expected = gs.rand(3)
    gs.manual_seed(7)
    data.random_split(range(20), [10, 10], generator=gs.Generator().manual_seed(1))
    assert gs.equal(gs.rand(3), expected)


def test_datasets_and_samplers_as_torch():
    ds, tds = (m.TensorDataset(mod.arange(6.).reshape(3, 2), mod.tensor([0, 1, 2]))
               for m, mod in ((data, gs), (TD, torch)))
    c, tc = data.ConcatDataset([ds, ds]), TD.ConcatDataset([tds, tds])
    assert len(c) == len(tc) and c.cumulative_sizes == tc.cumulative_sizes
    assert [c[i][1].item() for i in range(-6, 6)] == [tc[i][1].item() for i in range(-6, 6)]
    assert isinstance(ds, data.Dataset) and not isinstance(ds, data.Subset)
    assert list(data.Subset(list("abcdef"), [4, 1])) == list(TD.Subset(list("abcdef"), [4, 1]))
    for n, bs, drop in ((7, 3, False), (7, 3, True), (6, 2, False)):
        assert list(data.BatchSampler(data.SequentialSampler(range(n)), bs, drop)) == \
            list(TD.BatchSampler(TD.SequentialSampler(range(n)), bs, drop))
        assert len(data.BatchSampler(range(n), bs, drop)) == len(TD.BatchSampler(range(n), bs, drop))
    drawn = list(data.WeightedRandomSampler([0.0, 1.0, 0.0, 2.0], 200))
    assert len(drawn) == 200 and set(drawn) == {1, 3} and isinstance(drawn[0], int)
    assert 90 < drawn.count(3) < 175  # weight 2 of 3
    assert sorted(data.SubsetRandomSampler([3, 5, 7])) == [3, 5, 7]
    assert sorted(data.RandomSampler(range(5))) == list(range(5))
    r = list(data.RandomSampler(range(5), replacement=True, num_samples=12))
    assert len(r) == 12 and all(0 <= i < 5 for i in r)
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        data.WeightedRandomSampler([1.0], 0)


class Squares:
    def __len__(self):
        return 5

    def __getitem__(self, i):
        return {"x": [float(i)], "y": i * i, "f": i / 2, "name": str(i), "pair": (i, -i)}


def describe(batch):
    if hasattr(batch, "shape"):
        return (str(batch.dtype).split(".")[-1], tuple(batch.shape), batch.tolist())
    if isinstance(batch, dict):
        return {k: describe(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return (type(batch).__name__, [describe(b) for b in batch])
    return batch


def test_dataloader_in_process_collates_as_torch():
    for kw in (dict(batch_size=2), dict(batch_size=2, drop_last=True), dict(batch_size=None),
               dict(batch_sampler=[[4, 0], [2]])):
        mine = [describe(b) for b in data.DataLoader(Squares(), **kw)]
        theirs = [describe(b) for b in TD.DataLoader(Squares(), **kw)]
        assert mine == theirs, kw
        assert len(data.DataLoader(Squares(), **kw)) == len(TD.DataLoader(Squares(), **kw))


def test_dataloader_workers_and_worker_info():
    ds = data.TensorDataset(gs.arange(20.).reshape(10, 2), gs.arange(10))
    plain = [b[1].tolist() for b in data.DataLoader(ds, batch_size=3)]
    for kw in (dict(num_workers=2), dict(num_workers=2, persistent_workers=True,
                                         prefetch_factor=3, timeout=30)):
        loader = data.DataLoader(ds, batch_size=3, pin_memory=True, **kw)
        for _ in range(2):
            assert [b[1].tolist() for b in loader] == plain
    assert data.get_worker_info() is None
    seen = []

    def init(worker_id):
        info = data.get_worker_info()
        seen.append((worker_id, info.id, info.num_workers))

    loader = data.DataLoader(Squares(), batch_size=2, num_workers=3, worker_init_fn=init)
    assert len(list(loader)) == 3 and seen == [(0, 0, 1)]
    assert data.get_worker_info() is None


@pytest.mark.parametrize("kw,message", [
    (dict(num_workers=-1), "num_workers option should be non-negative"),
    (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
    (dict(prefetch_factor=4), "prefetch_factor option could only be specified"),
    (dict(shuffle=True, sampler=[0]), "sampler option is mutually exclusive with shuffle"),
    (dict(batch_sampler=[[0]], batch_size=2), "batch_sampler option is mutually exclusive"),
])
def test_dataloader_refuses_as_torch(kw, message):
    ds = data.TensorDataset(gs.ones(4, 1))
    with pytest.raises(ValueError, match=message):
        data.DataLoader(ds, **kw)
    with pytest.raises(ValueError, match=message):
        TD.DataLoader(TD.TensorDataset(torch.ones(4, 1)), **kw)


# ---- functions -------------------------------------------------------------------------------

A = np.linspace(-2, 2, 24).reshape(2, 3, 4) ** 3 / 5


def both(fn):
    return fn(gs, gs.tensor(A)), fn(torch, torch.tensor(A))


@pytest.mark.parametrize("fn", [
    lambda m, x: m.cdist(x[0], x[1]), lambda m, x: m.cdist(x[0], x[1], p=1),
    lambda m, x: m.cdist(x[0], x[1], p=0), lambda m, x: m.cdist(x[0], x[1], p=3),
    lambda m, x: m.cdist(x[0], x[1], p=float("inf")), lambda m, x: m.cdist(x, x + 1),
    lambda m, x: m.std_mean(x)[0], lambda m, x: m.std_mean(x, dim=1)[1],
    lambda m, x: m.var_mean(x, dim=(0, 2), keepdim=True)[0],
    lambda m, x: m.var_mean(x, 1, unbiased=False)[0],
    lambda m, x: m.rot90(x, 1, [1, 2]), lambda m, x: m.rot90(x, -1, [2, 0]),
    lambda m, x: m.rot90(x, 2), lambda m, x: m.rot90(x, 7, [1, 2]),
    lambda m, x: m.diag_embed(x[0]), lambda m, x: m.diag_embed(x[0], offset=1),
    lambda m, x: m.diag_embed(x[0], offset=-2, dim1=0, dim2=2),
    lambda m, x: m.histc(x, bins=5), lambda m, x: m.histc(x.float(), bins=4, min=-1, max=1),
    lambda m, x: m.clamp(x, min=m.zeros(4, dtype=m.float64), max=m.full((3, 4), 0.5, dtype=m.float64)),
    lambda m, x: m.clamp(x, max=m.zeros(4, dtype=m.float64)),
    lambda m, x: m.stack(m.where(x > 0.5)),
    lambda m, x: m.nn.functional.normalize(x, dim=1),
    lambda m, x: m.nn.functional.normalize(x, p=1, dim=-1),
    lambda m, x: m.nn.functional.triplet_margin_loss(x[0], x[1], x[0].flip(0)),
    lambda m, x: m.nn.functional.triplet_margin_loss(x[0], x[1], x[0].flip(0), p=1, swap=True,
                                                     reduction="none"),
    lambda m, x: m.nn.functional.margin_ranking_loss(
        x[0, 0], x[1, 0], m.tensor([1., -1., 1., -1.], dtype=m.float64), margin=0.2),
    lambda m, x: m.nn.functional.cosine_embedding_loss(
        x[0], x[1], m.tensor([1., -1., 1.], dtype=m.float64), margin=0.1, reduction="none"),
    lambda m, x: m.nn.functional.hinge_embedding_loss(
        x[0], m.tensor([[1., -1., 1., -1.]] * 3, dtype=m.float64), reduction="sum"),
    lambda m, x: m.nn.utils.parameters_to_vector([x[0], x[1, 1:]]),
])
def test_functions_match_torch(fn):
    mine, theirs = both(fn)
    assert tuple(mine.shape) == tuple(theirs.shape)
    assert close(mine, theirs)


@pytest.mark.parametrize("fn", [
    lambda m, x: m.cdist(x[0], x[1]).sum(), lambda m, x: m.cdist(x[0], x[1], p=3).sum(),
    lambda m, x: m.std_mean(x, dim=1)[0].sum(), lambda m, x: m.rot90(x, 1, [1, 2])[0, 0].sum(),
    lambda m, x: (m.diag_embed(x[0], offset=1) ** 2).sum(),
    lambda m, x: m.nn.functional.normalize(x, dim=1)[:, 0].sum(),
    lambda m, x: m.nn.functional.triplet_margin_loss(x[0], x[1], x[0].flip(0)),
    lambda m, x: m.nn.functional.cosine_embedding_loss(
        x[0], x[1], m.tensor([1., -1., 1.], dtype=m.float64), margin=0.1),
])
def test_gradients_match_torch_and_finite_differences(fn):
    x = gs.tensor(A, requires_grad=True)
    tx = torch.tensor(A, requires_grad=True)
    fn(gs, x).backward()
    fn(torch, tx).backward()
    assert close(x.grad, tx.grad, 1e-10)
    # central differences in float64 at a few elements
    flat = A.reshape(-1)
    for i in (0, 5, 13, 22):
        h = 1e-6
        plus, minus = flat.copy(), flat.copy()
        plus[i] += h
        minus[i] -= h
        numeric = (fn(gs, gs.tensor(plus.reshape(A.shape))).item() -
                   fn(gs, gs.tensor(minus.reshape(A.shape))).item()) / (2 * h)
        assert abs(numeric - x.grad.reshape(-1)[i].item()) < 1e-6


def test_cross_entropy_and_nll_ignore_index_match_torch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 4))
    cases = [(-100, [0, 3, -100, 1, 2, -100]), (1, [0, 1, 1, 3, 2, 1]), (-100, [-100] * 6)]
    for reduction in ("mean", "sum", "none"):
        for smoothing in (0.0, 0.2):
            for ignore, target in cases:
                got = []
                for m, f in ((gs, F), (torch, torch.nn.functional)):
                    xt = m.tensor(x, requires_grad=True)
                    loss = f.cross_entropy(xt, m.tensor(target), ignore_index=ignore,
                                           reduction=reduction, label_smoothing=smoothing)
                    loss.sum().backward()
                    got.append((loss, xt.grad))
                    if smoothing == 0.0:
                        xt = m.tensor(x, requires_grad=True)
                        loss = f.nll_loss(xt, m.tensor(target), ignore_index=ignore,
                                          reduction=reduction)
                        loss.sum().backward()
                        got.append((loss, xt.grad))
                half = len(got) // 2
                for (a, ga), (b, gb) in zip(got[:half], got[half:]):
                    assert close(a, b) and close(ga, gb), (reduction, smoothing, ignore)
    loss = nn.CrossEntropyLoss(ignore_index=2, label_smoothing=0.1)(
        gs.tensor(x), gs.tensor([2, 2, 0, 1, 3, 2]))
    tloss = torch.nn.CrossEntropyLoss(ignore_index=2, label_smoothing=0.1)(
        torch.tensor(x), torch.tensor([2, 2, 0, 1, 3, 2]))
    assert close(loss, tloss)
    with pytest.raises(IndexError, match="target 7 is out of range"):
        F.cross_entropy(gs.tensor(x), gs.tensor([0, 1, 7, 1, 2, 0]))


def test_index_assignment_with_one_index_tensor_writes_the_tensor():
    for make in (lambda m: m.zeros(3, 3), lambda m: m.zeros(4, 3).t()[:3], lambda m: m.zeros(3, 3, 4)):
        for code in ("p[m.tensor([0, 2]), ...] = 1.0", "p[:, m.tensor([0, 2])] = 2.0",
                     "p[1, m.tensor([0, 2])] = 5.0", "p[p[:, 0, ...].sum(-1) >= 0 if p.dim() == 3 "
                     "else p[:, 0] >= 0, 1] = 3.0", "p[[0, 1], 1:] = 7.0", "p[..., [0]] = 9.0",
                     "p[[1, 0], :2] = 1 + m.arange(2.).reshape(2, 1)"):
            out = []
            for m in (gs, torch):
                p = make(m)
                exec(code, {"m": m, "p": p})
                out.append(p.tolist())
            assert out[0] == out[1], code
    a = gs.ones(2, 3, requires_grad=True)
    b = a * 1
    b[:, gs.tensor([0])] = 0.0
    b.sum().backward()
    assert a.grad.tolist() == [[0.0, 1.0, 1.0], [0.0, 1.0, 1.0]]
    # two index tensors pair up, as torch's (issue 31; test_advanced_indexing.py has the rest)
    for code in ("p[[0, 1], [1, 2]] = 1.0", "p[m.tensor([0, 2]), m.tensor([True, False, True])] = 4.0"):
        out = []
        for m in (gs, torch):
            p = m.zeros(3, 3)
            exec(code, {"m": m, "p": p})
            out.append(p.tolist() + [p[[0, 1], [1, 2]].tolist()])
        assert out[0] == out[1], code


def test_autograd_functional_matches_torch():
    from torch.autograd import functional as TF
    AF = gs.autograd.functional
    inp = ([1., 2.], [3., -1.])

    def f(m):
        return lambda a, b: (a * b).sum() ** 2

    pairs = [
        (lambda m, af: af.jacobian(lambda t: t ** 2 * 3, m.tensor(inp[0], dtype=m.float64))),
        (lambda m, af: af.jacobian(lambda a, b: (a * b, a.exp()),
                                   tuple(m.tensor(v, dtype=m.float64) for v in inp))[1][0]),
        (lambda m, af: af.hessian(f(m), tuple(m.tensor(v, dtype=m.float64) for v in inp))[0][1]),
        (lambda m, af: af.hessian(lambda t: (t ** 3).sum(), m.tensor(inp[0], dtype=m.float64))),
        (lambda m, af: af.vjp(lambda t: t ** 2, m.tensor(inp[0], dtype=m.float64),
                              m.ones(2, dtype=m.float64))[1]),
        (lambda m, af: af.jvp(lambda t: t ** 2, m.tensor(inp[0], dtype=m.float64),
                              m.tensor([1., 0.], dtype=m.float64))[1]),
        (lambda m, af: af.hvp(lambda t: (t ** 3).sum(), m.tensor(inp[0], dtype=m.float64),
                              m.tensor([1., 1.], dtype=m.float64))[1]),
        (lambda m, af: af.vhp(lambda t: (t ** 3).sum(), m.tensor(inp[0], dtype=m.float64),
                              m.tensor([1., 2.], dtype=m.float64))[1]),
    ]
    for make in pairs:
        assert close(make(gs, AF), make(torch, TF))


def test_small_torch_names():
    assert gs.finfo(gs.float32).eps == torch.finfo(torch.float32).eps
    assert gs.finfo(gs.float64).max == torch.finfo(torch.float64).max
    assert gs.finfo().tiny == torch.finfo().tiny
    for d in ("int64", "int32", "int16", "int8", "uint8"):
        mine, theirs = gs.iinfo(getattr(gs, d)), torch.iinfo(getattr(torch, d))
        assert (mine.min, mine.max, mine.bits) == (theirs.min, theirs.max, theirs.bits)
    with pytest.raises(TypeError):
        gs.finfo(gs.int64)
    for name in ("FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "BoolTensor"):
        a, b = getattr(gs, name)([1, 0]), getattr(torch, name)([1, 0])
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1] and a.tolist() == b.tolist()
    assert tuple(gs.FloatTensor(2, 3).shape) == (2, 3)
    e = nn.Embedding.from_pretrained(gs.tensor(A[0]))
    assert not e.weight.requires_grad and str(e.weight.dtype).endswith("float64")
    assert close(e(gs.tensor([2, 0])), torch.nn.Embedding.from_pretrained(torch.tensor(A[0]))(
        torch.tensor([2, 0])))
    assert nn.Embedding.from_pretrained(gs.tensor(A[0]), freeze=False).weight.requires_grad
    bag = nn.EmbeddingBag.from_pretrained(gs.tensor(A[0]), mode="sum")
    tbag = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(A[0]), mode="sum")
    assert close(bag(gs.tensor([[0, 2]])), tbag(torch.tensor([[0, 2]])))
    m = nn.Linear(3, 2).double()
    nn.utils.vector_to_parameters(gs.arange(8.).double(), m.parameters())
    assert m.bias.tolist() == [6.0, 7.0]
    state = gs.get_rng_state()
    first = gs.rand(4)
    gs.set_rng_state(state)
    assert gs.equal(first, gs.rand(4)) and str(state.dtype).endswith("uint8")
    assert gs.manual_seed(3).initial_seed() == 3 == gs.initial_seed()
    gs.set_num_threads(1)
    assert gs.get_num_threads() == 1
    gs.backends.cudnn.benchmark = True
    assert gs.backends.mps.is_available() is False and gs.backends.cudnn.enabled
    with gs.autograd.detect_anomaly():
        assert gs.autograd.is_anomaly_enabled()
    assert not gs.autograd.is_anomaly_enabled()
    made = gs.ones(2, 3, requires_grad=True) * 2  # autograd recorded its shape
    with pytest.raises(RuntimeError, match=r"x = x.unsqueeze\(dim\)"):
        made.t_()
    assert made.shape == (2, 3)
    hard = F.gumbel_softmax(gs.zeros(4, 5), tau=0.5, hard=True)
    assert hard.sum(-1).tolist() == [1.0] * 4 and set(hard.reshape(-1).tolist()) == {0.0, 1.0}
    soft = F.gumbel_softmax(gs.zeros(4, 5))
    assert np.allclose(soft.sum(-1).numpy(), 1) and not math.isclose(soft.max().item(), 1.0)


@pytest.mark.parametrize("options", [
    dict(precision=2), dict(precision=6, sci_mode=True), dict(sci_mode=False),
    dict(threshold=5, edgeitems=1), dict(linewidth=60), dict(profile="short"),
    dict(profile="full"), dict(precision=1, sci_mode=True),
])
def test_set_printoptions_as_torch(options):
    # float32 rows short enough not to wrap: the repr's line wrapping and the spacing of a
    # summarised row's "..." differ from torch's in places whatever the options (not this
    # change's), so those are left out
    values = [np.array([1.0, 2.0, 3.0]), np.array([1e-5, 2.5, 3e4]), np.array([12345.678, 0.5]),
              np.array([0.123456789, -2.5]), np.arange(12.0) / 7]
    try:
        gs.set_printoptions(**options)
        torch.set_printoptions(**options)
        for v in values:
            for dtype in ("float32",):
                mine = repr(gs.tensor(v.astype(dtype)))
                theirs = repr(torch.tensor(v.astype(dtype)))
                assert mine.replace("gradscope.", "torch.") == theirs, (options, v)
    finally:
        gs.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")
