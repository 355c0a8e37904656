"""optim.lr_scheduler.CyclicLR against Debian's torch 1.13: the lr and SGD momentum
sequences, exactly (the same float operations), in every mode, with scale_fn of the cycle
or of the iteration, per-group values, uneven up/down steps, state_dict and resuming, and
the errors. meson registers this file only when torch imports."""
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")


def run(L, steps=23, groups=1, **kw):
    """The lrs and momenta of steps steps of CyclicLR over SGD (momentum 0.9)."""
    params = [L.nn.Parameter(L.ones(2)) for _ in range(groups)]
    opt = L.optim.SGD([{"params": [p]} for p in params], lr=0.1, momentum=0.9)
    sched = L.optim.lr_scheduler.CyclicLR(opt, **kw)
    seen = []
    for _ in range(steps):
        for p in params:
            p.grad = L.ones(2)
        opt.step()
        sched.step()
        seen.append((sched.get_last_lr(), [g.get("momentum") for g in opt.param_groups]))
    return seen, [x for p in params for x in p.tolist()], sched


CASES = [
    dict(base_lr=0.01, max_lr=0.1, step_size_up=4),
    dict(base_lr=0.01, max_lr=0.1, step_size_up=3, step_size_down=5, mode="triangular2"),
    dict(base_lr=0.001, max_lr=0.05, step_size_up=4, mode="exp_range", gamma=0.9),
    dict(base_lr=0.01, max_lr=0.1, step_size_up=2, scale_fn=lambda x: 0.5 ** x),
    dict(base_lr=0.01, max_lr=0.1, step_size_up=2, scale_fn=lambda x: 1 / (1 + x),
         scale_mode="iterations"),
    dict(base_lr=0.01, max_lr=0.1, step_size_up=4, cycle_momentum=False),
    dict(base_lr=0.01, max_lr=0.1, step_size_up=4, base_momentum=0.7, max_momentum=0.95),
]


@pytest.mark.parametrize("kw", CASES)
def test_sequences_exactly_as_torch(kw):
    ours, ours_params, _ = run(gs, **kw)
    theirs, their_params, _ = run(torch, **kw)
    assert ours == theirs
    assert ours_params == pytest.approx(their_params, rel=1e-6)


def test_per_group_values_as_torch():
    kw = dict(base_lr=[0.01, 0.02], max_lr=[0.1, 0.3], step_size_up=3,
              base_momentum=[0.8, 0.7], max_momentum=[0.9, 0.95])
    assert run(gs, groups=2, **kw)[0] == run(torch, groups=2, **kw)[0]


def test_state_dict_and_resume_as_torch():
    kw = dict(base_lr=0.01, max_lr=0.1, step_size_up=3, mode="triangular2")
    _, _, ours = run(gs, steps=5, **kw)
    _, _, theirs = run(torch, steps=5, **kw)
    a, b = ours.state_dict(), theirs.state_dict()
    assert sorted(a) == sorted(b)
    plain = [k for k in b if not callable(b[k]) and k != "_scale_fn_ref"]
    assert {k: a[k] for k in plain} == {k: b[k] for k in plain}
    # a fresh scheduler given that state continues where the first one was
    for L, state in ((gs, a), (torch, b)):
        p = L.nn.Parameter(L.ones(1))
        opt = L.optim.SGD([p], lr=0.1, momentum=0.9)
        sched = L.optim.lr_scheduler.CyclicLR(opt, **kw)
        sched.load_state_dict(state)
        opt.step()
        sched.step()
        if L is gs:
            resumed = sched.get_last_lr()
        else:
            assert resumed == sched.get_last_lr()


def test_errors_as_torch():
    for L in (gs, torch):
        p = L.nn.Parameter(L.ones(1))
        with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
            L.optim.lr_scheduler.CyclicLR(L.optim.SGD([p], lr=0.1), 0.01, 0.1, mode="sine")
        with pytest.raises(ValueError, match="optimizer must support momentum"):
            L.optim.lr_scheduler.CyclicLR(L.optim.Adam([p]), 0.01, 0.1)
        with pytest.raises(ValueError, match="expected 1 values for max_lr, got 2"):
            L.optim.lr_scheduler.CyclicLR(L.optim.SGD([p], lr=0.1), 0.01, [0.1, 0.2])
        # Adam without momentum cycling works, as torch's
        L.optim.lr_scheduler.CyclicLR(L.optim.Adam([p]), 0.01, 0.1, cycle_momentum=False)
