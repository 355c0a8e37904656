"""Adadelta, Adamax, NAdam, RAdam, ASGD and Rprop against torch.optim 1.13: 20 steps of a small
float64 model (two parameter groups, the second with its own hyper-parameters, and a parameter
that has no gradient in some steps) under every option that changes the arithmetic, the
parameters equal to 1e-15 after every step; state_dict() in torch's layout (keys, types,
values) and round trips (gradscope -> gradscope and torch -> gradscope continue as torch does);
the lr schedulers on them; torch's messages for invalid options; print(opt) as torch's."""
import math

import numpy as np
import pytest

import gradscope as gs
from gradscope.optim import lr_scheduler

torch = pytest.importorskip("torch")

STEPS = 20
RNG = np.random.default_rng(7)
W0 = RNG.standard_normal((3, 4))
B0 = RNG.standard_normal(3)
V0 = RNG.standard_normal(2)
X = RNG.standard_normal((20, 6, 4))
Y = RNG.standard_normal((20, 6, 3))

# (name, options): each non-default option that changes the arithmetic, one at a time and a
# few together. Betas near 1 make RAdam's rho_t stay <= 5 for a while, then pass it.
CASES = [
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-4}),
    ("Adadelta", {"weight_decay": 0.1}),
    ("Adadelta", {"maximize": True, "weight_decay": 0.05}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.01, "betas": (0.8, 0.9), "eps": 1e-3}),
    ("Adamax", {"weight_decay": 0.1}),
    ("Adamax", {"maximize": True, "weight_decay": 0.05}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.01, "betas": (0.8, 0.9), "eps": 1e-3}),
    ("NAdam", {"weight_decay": 0.1}),
    ("NAdam", {"momentum_decay": 0.05, "lr": 0.02}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.01, "betas": (0.8, 0.9), "eps": 1e-3}),  # rectified from step 6
    ("RAdam", {"weight_decay": 0.1, "lr": 0.02}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 5}),  # averaging from step 6
    ("ASGD", {"t0": 0, "weight_decay": 0.1}),
    ("ASGD", {"maximize": True, "t0": 3}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)}),
    ("Rprop", {"maximize": True}),
]

# The second group's own hyper-parameters (per-group options).
GROUP2 = {"Adadelta": {"rho": 0.7}, "Adamax": {"lr": 0.004}, "NAdam": {"betas": (0.85, 0.99)},
          "RAdam": {"lr": 0.003}, "ASGD": {"lambd": 0.001}, "Rprop": {"etas": (0.4, 1.3)}}


def ids(case):
    name, opts = case
    return name + "-" + ("-".join(f"{k}={v}" for k, v in opts.items()) or "default")


class Model:
    """y = x @ w.T + b, and v (the second group) that has a gradient only on even steps."""

    def __init__(self, lib):
        self.lib = lib
        mk = (lambda a: lib.tensor(a, dtype=lib.float64, requires_grad=True))
        self.w, self.b, self.v = mk(W0), mk(B0), mk(V0)

    def groups(self, name):
        return [{"params": [self.w, self.b]}, dict({"params": [self.v]}, **GROUP2[name])]

    def loss(self, k, smooth=False):
        """smooth (LBFGS's): bounded below and well conditioned, every parameter in it."""
        lib = self.lib
        x, y = lib.tensor(X[k], dtype=lib.float64), lib.tensor(Y[k], dtype=lib.float64)
        out = x @ self.w.T + self.b
        if smooth:  # one batch for all steps, as LBFGS is used: its history stays valid
            x, y = lib.tensor(X[0], dtype=lib.float64), lib.tensor(Y[0], dtype=lib.float64)
            out = x @ self.w.T + self.b
            return (((out - y) ** 2).mean() + 0.01 * (self.w ** 4).sum()
                    + ((self.v - 0.3) ** 2).sum() * 0.5)
        loss = ((out - y) ** 2).mean() + 0.1 * (self.w ** 3).sum()
        if k % 2 == 0:
            loss = loss + (self.v * self.v).sum() * (1.0 + 0.1 * k)
        return loss

    def train_step(self, opt, k):
        opt.zero_grad(set_to_none=True)
        self.loss(k).backward()
        opt.step()

    def values(self):
        return [t.detach().numpy().copy() for t in (self.w, self.b, self.v)]


def make(lib, name, opts):
    model = Model(lib)
    return model, getattr(lib.optim, name)(model.groups(name), **opts)


def assert_close(got, want, tol, what):
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=what)


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_twenty_steps_match_torch(case):
    name, opts = case
    model, opt = make(gs, name, opts)
    tmodel, topt = make(torch, name, opts)
    for k in range(STEPS):
        model.train_step(opt, k)
        tmodel.train_step(topt, k)
        assert_close(model.values(), tmodel.values(), 1e-15, f"{name} step {k + 1}")
    assert repr(opt) == repr(topt)


def to_numpy(value):
    return value.numpy() if hasattr(value, "numpy") else value


def check_state_dict_like_torch(sd, tsd):
    assert sd["param_groups"] == tsd["param_groups"]
    assert sorted(sd["state"]) == sorted(tsd["state"])
    for i, tstate in tsd["state"].items():
        state = sd["state"][i]
        assert list(state) == list(tstate), f"param {i}"
        for key, tvalue in tstate.items():
            value = state[key]
            if torch.is_tensor(tvalue):
                assert gs.is_tensor(value), key
                assert str(value.dtype).split(".")[-1] == str(tvalue.dtype).split(".")[-1], key
                assert tuple(value.shape) == tuple(tvalue.shape), key
                np.testing.assert_allclose(to_numpy(value), tvalue.numpy(), rtol=1e-15,
                                           atol=1e-15, err_msg=key)
            else:
                assert type(value) is type(tvalue) and value == tvalue, key


def torch_state_to_gs(tsd):
    """torch's state_dict with its tensors as gradscope's (what torch.load of it gives under
    as_torch)."""
    state = {i: {k: gs.tensor(v.numpy()) if torch.is_tensor(v) else v for k, v in s.items()}
             for i, s in tsd["state"].items()}
    return {"state": state, "param_groups": tsd["param_groups"]}


@pytest.mark.parametrize("case", [c for c in CASES if c[1]], ids=ids)
def test_state_dict_is_torchs_and_round_trips(case):
    name, opts = case
    model, opt = make(gs, name, opts)
    tmodel, topt = make(torch, name, opts)
    half = STEPS // 2
    for k in range(half):
        model.train_step(opt, k)
        tmodel.train_step(topt, k)
    check_state_dict_like_torch(opt.state_dict(), topt.state_dict())
    # gradscope -> a fresh gradscope optimizer over copies of the parameters
    copy, copy_opt = make(gs, name, opts)
    with gs.no_grad():
        for mine, theirs in zip((copy.w, copy.b, copy.v), (model.w, model.b, model.v)):
            mine.copy_(theirs)
    copy_opt.load_state_dict(opt.state_dict())
    # torch -> gradscope
    loaded, loaded_opt = make(gs, name, opts)
    with gs.no_grad():
        for mine, theirs in zip((loaded.w, loaded.b, loaded.v), (tmodel.w, tmodel.b, tmodel.v)):
            mine.copy_(gs.tensor(theirs.detach().numpy()))
    loaded_opt.load_state_dict(torch_state_to_gs(topt.state_dict()))
    for k in range(half, STEPS):
        for m, o in ((model, opt), (tmodel, topt), (copy, copy_opt), (loaded, loaded_opt)):
            m.train_step(o, k)
        want = tmodel.values()
        for m, what in ((model, "continued"), (copy, "gradscope round trip"),
                        (loaded, "loaded from torch")):
            assert_close(m.values(), want, 1e-15, f"{name} {what} step {k + 1}")
    check_state_dict_like_torch(copy_opt.state_dict(), topt.state_dict())


@pytest.mark.parametrize("name", sorted(GROUP2))
def test_a_scheduler_changes_the_rate_as_in_torch(name):
    model, opt = make(gs, name, {})
    tmodel, topt = make(torch, name, {})
    sched = lr_scheduler.StepLR(opt, 3, gamma=0.5)
    tsched = torch.optim.lr_scheduler.StepLR(topt, 3, gamma=0.5)
    for k in range(12):
        model.train_step(opt, k)
        tmodel.train_step(topt, k)
        sched.step()
        tsched.step()
        assert sched.get_last_lr() == tsched.get_last_lr()
        assert_close(model.values(), tmodel.values(), 1e-15, f"{name} step {k + 1}")


@pytest.mark.parametrize("name", ["Adamax", "NAdam", "RAdam"])
def test_one_cycle_cycles_beta1_as_in_torch(name):
    model, opt = make(gs, name, {})
    tmodel, topt = make(torch, name, {})
    sched = lr_scheduler.OneCycleLR(opt, max_lr=0.01, total_steps=10)
    tsched = torch.optim.lr_scheduler.OneCycleLR(topt, max_lr=0.01, total_steps=10)
    for k in range(10):
        model.train_step(opt, k)
        tmodel.train_step(topt, k)
        sched.step()
        tsched.step()
        assert opt.param_groups[0]["betas"] == topt.param_groups[0]["betas"]
        assert_close(model.values(), tmodel.values(), 1e-15, f"{name} step {k + 1}")


@pytest.mark.parametrize("name,opts", [
    ("Adadelta", {"lr": -1}), ("Adadelta", {"rho": 1.5}), ("Adadelta", {"eps": -1.0}),
    ("Adadelta", {"weight_decay": -0.5}), ("Adamax", {"betas": (1.0, 0.9)}),
    ("Adamax", {"betas": (0.9, -0.1)}), ("NAdam", {"momentum_decay": -1e-3}),
    ("RAdam", {"eps": -1e-8}), ("ASGD", {"weight_decay": -1}), ("Rprop", {"etas": (1.1, 1.2)}),
    ("Rprop", {"etas": (0.5, 0.9)}), ("Rprop", {"lr": -0.1}),
])
def test_invalid_options_are_torchs_errors(name, opts):
    with pytest.raises(ValueError) as want:
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **opts)
    with pytest.raises(ValueError) as got:
        getattr(gs.optim, name)([gs.zeros(2, requires_grad=True)], **opts)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("name", sorted(GROUP2))
def test_the_engine_refuses_a_changed_hyper_parameter(name):
    model, opt = make(gs, name, {})
    model.train_step(opt, 0)
    key = next(k for k in opt._fixed if k not in ("maximize",))
    value = opt.param_groups[0][key]
    opt.param_groups[0][key] = tuple(v * 0.5 for v in value) if isinstance(value, tuple) \
        else value * 0.5 + 1e-3
    with pytest.raises(ValueError, match="changed from"):
        model.train_step(opt, 1)


def test_the_state_is_the_engines_and_goes_with_the_optimizer():
    w = gs.tensor([1.0, -2.0], dtype=gs.float64, requires_grad=True)
    opt = gs.optim.ASGD([w], t0=0)
    (w * w).sum().backward()
    opt.step()
    entry = opt.state_dict()["state"][0]
    assert list(entry) == ["step", "eta", "mu", "ax"]
    eta = np.float32(0.01 / (1 + 1e-4 * 0.01 * 1) ** 0.75).item()  # after the first step
    assert entry["eta"].dtype == gs.float32 and entry["eta"].item() == eta
    assert entry["mu"].item() == 1.0
    # a copy, not the engine's own tensor
    entry["ax"].zero_()
    assert opt.state_dict()["state"][0]["ax"].tolist() != [0.0, 0.0]
    assert math.isfinite(entry["step"].item())


# ---- LBFGS ------------------------------------------------------------------------------------

# Few iterations per step in most cases, so that the 20 steps carry the history along.
LBFGS_CASES = [
    {},
    {"max_iter": 2},
    {"history_size": 3, "max_iter": 3, "lr": 0.5},
    {"line_search_fn": "strong_wolfe", "max_iter": 3},
    {"line_search_fn": "strong_wolfe", "history_size": 2, "max_iter": 2, "lr": 2.0},
    {"line_search_fn": "strong_wolfe"},
    {"tolerance_grad": 1e-2, "max_iter": 3},
    {"tolerance_change": 1e-3, "max_eval": 4},
]


def lbfgs_run(lib, opts, model=None, opt=None, steps=range(STEPS)):
    model = model or Model(lib)
    opt = opt or lib.optim.LBFGS([model.w, model.b, model.v], **opts)
    history = []
    for k in steps:
        def closure():
            opt.zero_grad()
            loss = model.loss(k, smooth=True)
            loss.backward()
            return loss

        loss = opt.step(closure)
        state = opt.state[model.w]
        history.append((loss.item(), model.values(), state["n_iter"], state["func_evals"]))
    return model, opt, history


def assert_same_iterates(got, want, tol, what):
    for k, ((loss, values, n_iter, evals), (tloss, tvalues, tn_iter, tevals)) in enumerate(
            zip(got, want)):
        assert (n_iter, evals) == (tn_iter, tevals), f"{what} step {k + 1}: iterations, evaluations"
        assert loss == pytest.approx(tloss, rel=tol, abs=tol), f"{what} step {k + 1}"
        assert_close(values, tvalues, tol, f"{what} step {k + 1}")


# LBFGS's scalars are dot products and sums over the flat gradient: torch takes them from BLAS
# (ddot) and its vectorised sum, whose order of additions differs from the engine's, so they
# differ in the last bit or two; 20 steps of up to 20 iterations each carry that forward (each
# step direction depends on all the earlier ones), to a few 1e-14 relative.
LBFGS_TOL = 1e-12


@pytest.mark.parametrize("opts", LBFGS_CASES, ids=lambda o: "-".join(f"{k}={v}" for k, v in
                                                                      o.items()) or "default")
def test_lbfgs_iterates_match_torch(opts):
    _, opt, got = lbfgs_run(gs, opts)
    _, topt, want = lbfgs_run(torch, opts)
    assert_same_iterates(got, want, LBFGS_TOL, "LBFGS")
    assert repr(opt) == repr(topt)
    state, tstate = opt.state_dict()["state"][0], topt.state_dict()["state"][0]
    assert list(state) == list(tstate)
    for key in ("func_evals", "n_iter"):
        assert state[key] == tstate[key]
    assert len(state["old_dirs"]) == len(tstate["old_dirs"])
    assert type(state["H_diag"]).__name__ == type(tstate["H_diag"]).__name__


@pytest.mark.parametrize("opts", [{"max_iter": 2},
                                  {"line_search_fn": "strong_wolfe", "history_size": 4,
                                   "max_iter": 2}],
                         ids=["fixed", "strong_wolfe"])
def test_lbfgs_state_dict_round_trip(opts):
    half = STEPS // 2
    model, opt, _ = lbfgs_run(gs, opts, steps=range(half))
    tmodel, topt, _ = lbfgs_run(torch, opts, steps=range(half))
    copy = Model(gs)
    with gs.no_grad():
        for mine, theirs in zip((copy.w, copy.b, copy.v), (model.w, model.b, model.v)):
            mine.copy_(theirs)
    copy_opt = gs.optim.LBFGS([copy.w, copy.b, copy.v], **opts)
    copy_opt.load_state_dict(opt.state_dict())
    _, _, want = lbfgs_run(torch, opts, tmodel, topt, steps=range(half, STEPS))
    _, _, got = lbfgs_run(gs, opts, copy, copy_opt, steps=range(half, STEPS))
    assert_same_iterates(got, want, LBFGS_TOL, "LBFGS reloaded")


def test_lbfgs_refuses_groups_and_other_line_searches():
    w = gs.zeros(2, dtype=gs.float64, requires_grad=True)
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        gs.optim.LBFGS([{"params": [w]}, {"params": [gs.zeros(1, requires_grad=True)]}])
    opt = gs.optim.LBFGS([w], line_search_fn="backtracking")

    def closure():
        opt.zero_grad()
        loss = ((w - 1) ** 2).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)
