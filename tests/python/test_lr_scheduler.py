"""optimizer.param_groups[0]["lr"] is the rate the engine steps with; the schedulers
give PyTorch 1.13's rates, epoch by epoch, including when stepped with an explicit epoch."""
import pytest

import gradscope as gs
import gradscope.nn as nn
from gradscope.optim import lr_scheduler


def test_param_group_lr_is_the_engines_rate():
    lin = nn.Linear(2, 1)
    opt = gs.optim.SGD(lin.parameters(), lr=0.5)
    group = opt.param_groups[0]
    assert isinstance(group, dict) and group["lr"] == 0.5
    assert len(group["params"]) == 2
    group["lr"] = 0.0  # a zero rate: the step leaves the weights as they were
    before = lin.weight.tolist()
    lin(gs.ones(1, 2)).sum().backward()
    opt.step()
    assert lin.weight.tolist() == before
    group["lr"] = 1.0
    opt.step()
    assert lin.weight.tolist() != before
    group["lr"] = -1.0  # as in PyTorch the group takes any value; the engine refuses it
    with pytest.raises(ValueError, match="Invalid learning rate"):
        opt.step()
    group["lr"] = 1.0
    group["initial_lr"] = 1.0
    assert opt.param_groups[0]["initial_lr"] == 1.0


@pytest.mark.parametrize("make", [
    lambda o, t: t.StepLR(o, 2, gamma=0.5),
    lambda o, t: t.MultiStepLR(o, [1, 3, 3], gamma=0.1),
    lambda o, t: t.CosineAnnealingLR(o, T_max=3, eta_min=0.001),
    lambda o, t: t.LambdaLR(o, lambda e: 0.9 ** e),
])
def test_schedulers_match_torch(make):
    torch = pytest.importorskip("torch")
    lin, tlin = nn.Linear(2, 1), torch.nn.Linear(2, 1)
    opt, topt = gs.optim.SGD(lin.parameters(), lr=0.2), torch.optim.SGD(tlin.parameters(), lr=0.2)
    s, ts = make(opt, lr_scheduler), make(topt, torch.optim.lr_scheduler)
    for _ in range(9):
        assert opt.param_groups[0]["lr"] == topt.param_groups[0]["lr"]
        topt.step()
        s.step(), ts.step()
        assert s.get_last_lr() == ts.get_last_lr()
    with pytest.warns(UserWarning):  # both warn about the epoch argument, as torch does
        ts.step(4)
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step"):
        s.step(4)
    assert s.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-12)
