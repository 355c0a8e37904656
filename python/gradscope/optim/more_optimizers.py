"""Adadelta, Adamax, NAdam, RAdam, ASGD and Rprop as torch.optim's (1.13) classes, stepped by the
engine (engine/optim/more-optimizers.c): one engine optimizer per parameter group, as SGD and
Adam in optimizer.py. Their state lives in the engine (and its event log); state_dict() copies
it out in torch's layout, with torch's types: Adadelta's and Rprop's step an int, the others' a
float32 0-d tensor, as are ASGD's eta and mu and NAdam's mu_product."""
from gradscope import _gradscope
from gradscope.optim.optimizer import _engine, _EngineOptimizer


def _check(what, ok, value):
    """torch's check of a hyper-parameter, in its words ("Invalid rho value: 2")."""
    if not ok:
        raise ValueError(f"Invalid {what}: {value}")


def _check_common(lr, eps=0.0, weight_decay=0.0, betas=None):
    _check("learning rate", 0.0 <= lr, lr)
    _check("epsilon value", 0.0 <= eps, eps)
    if betas is not None:
        _check("beta parameter at index 0", 0.0 <= betas[0] < 1.0, betas[0])
        _check("beta parameter at index 1", 0.0 <= betas[1] < 1.0, betas[1])
    _check("weight_decay value", 0.0 <= weight_decay, weight_decay)


class _MoreEngineOptimizer(_EngineOptimizer):
    """The state_dict entries of these kinds: step, the scalars, then the tensors."""

    _int_step = False  # torch counts Adadelta's and Rprop's steps in a Python int

    def _steps_taken(self, engine, j):
        return engine._state_step(j)

    def _engine_state(self, engine, j, group):
        steps = engine._state_step(j)
        if steps == 0:
            return None
        entry = {"step": steps if self._int_step else _gradscope.tensor(float(steps))}
        for name in self._scalars:
            entry[name] = _gradscope.tensor(engine._state_scalar(j, name))
        for name in self._state_names:
            entry[name] = engine._state(j, name)
        return entry


class Adadelta(_MoreEngineOptimizer):
    """Adadelta: steps scaled by running averages of squared gradients and of squared updates,
    as torch.optim.Adadelta."""

    _make = _engine.Adadelta
    _fixed = ("rho", "eps", "weight_decay", "maximize")
    _state_names = ("square_avg", "acc_delta")
    _int_step = True

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 maximize=False):
        _check("learning rate", 0.0 <= lr, lr)
        _check("rho value", 0.0 <= rho <= 1.0, rho)
        _check_common(lr, eps, weight_decay)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, foreach=foreach))


class Adamax(_MoreEngineOptimizer):
    """Adamax: Adam with the infinity norm in place of the second moment, as
    torch.optim.Adamax."""

    _make = _engine.Adamax
    _fixed = ("betas", "eps", "weight_decay", "maximize")
    _state_names = ("exp_avg", "exp_inf")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False):
        _check_common(lr, eps, weight_decay, betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize))


class NAdam(_MoreEngineOptimizer):
    """NAdam: Adam with Nesterov momentum and a momentum schedule (momentum_decay), as
    torch.optim.NAdam."""

    _make = _engine.NAdam
    _fixed = ("betas", "eps", "weight_decay", "momentum_decay")
    _state_names = ("exp_avg", "exp_avg_sq")
    _scalars = ("mu_product",)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, foreach=None):
        _check_common(lr, eps, weight_decay, betas)
        _check("momentum_decay value", 0.0 <= momentum_decay, momentum_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, foreach=foreach))


class RAdam(_MoreEngineOptimizer):
    """RAdam: Adam whose adaptive step is rectified by the variance of its estimate (SGD with
    momentum while that is intractable), as torch.optim.RAdam."""

    _make = _engine.RAdam
    _fixed = ("betas", "eps", "weight_decay")
    _state_names = ("exp_avg", "exp_avg_sq")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None):
        _check_common(lr, eps, weight_decay, betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach))


class ASGD(_MoreEngineOptimizer):
    """Averaged SGD: SGD with a decaying rate, and `ax`, the average of the parameters from
    step t0 on, as torch.optim.ASGD."""

    _make = _engine.ASGD
    _fixed = ("lambd", "alpha", "t0", "weight_decay", "maximize")
    _state_names = ("ax",)
    _scalars = ("eta", "mu")

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False):
        _check_common(lr, 0.0, weight_decay)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize))


class Rprop(_MoreEngineOptimizer):
    """Rprop: each element's own step size, grown while its gradient keeps its sign and shrunk
    when it flips, as torch.optim.Rprop."""

    _make = _engine.Rprop
    _fixed = ("etas", "step_sizes", "maximize")
    _state_names = ("prev", "step_size")
    _int_step = True

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), foreach=None,
                 maximize=False):
        _check("learning rate", 0.0 <= lr, lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                                      maximize=maximize))
