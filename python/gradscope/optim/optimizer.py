"""torch.optim's classes on gradscope: Optimizer, the base a program subclasses for its own
optimizer (param_groups as a list of dicts, state, add_param_group, zero_grad, state_dict), and
SGD, Adam and AdamW, real subclasses of it whose step() is the engine's.

Each parameter group of an engine optimizer gets one engine optimizer (the C extension's
_gradscope.optim.SGD, ...), made with the group's hyper-parameters. A group is a plain dict,
as in PyTorch: a scheduler or the program writes group["lr"], and step() hands the new rate
to the engine before it steps. The engine keeps the state (momentum buffers, Adam's moments)
and records it in the event log, so it is not in `state`. Changing another hyper-parameter of
a group after its first step would need that state moved to a new engine optimizer: step()
refuses it with a message instead of silently keeping the old value.
"""
import functools
from collections import defaultdict

from gradscope import _gradscope
from gradscope import profiler as _profiler
from gradscope.autograd import enable_grad as _enable_grad

_engine = _gradscope.optim


class _Required:
    """The default of a hyper-parameter a group must give (PyTorch's `required`)."""

    def __repr__(self):
        return "<required parameter>"


required = _Required()


def _profiled(fn, what):
    """fn (an optimizer's step or zero_grad) as a range while torch.profiler records, as torch
    shows it ("Optimizer.step#SGD.step"); when nothing records, no range, so a program that is
    not profiled writes the same events. A subclass's step calling its base's is one range."""
    if getattr(fn, "_gradscope_profiled", False):
        return fn
    inside = "_gradscope_in_" + what

    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        if not _profiler._is_recording() or self.__dict__.get(inside):
            return fn(self, *args, **kwargs)
        self.__dict__[inside] = True
        try:
            with _profiler.record_function(f"Optimizer.{what}#{type(self).__name__}.{what}"):
                return fn(self, *args, **kwargs)
        finally:
            self.__dict__[inside] = False

    wrapper._gradscope_profiled = True
    return wrapper


class Optimizer:
    """The base of every optimizer, as torch.optim.Optimizer: subclasses pass their params
    and defaults and implement step()."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for what in ("step", "zero_grad"):
            if what in cls.__dict__:
                setattr(cls, what, _profiled(cls.__dict__[what], what))

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        if _gradscope.is_tensor(params):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + type(params).__name__)
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group):
        """Adds a group of parameters, with its own hyper-parameters (the defaults fill the
        ones it does not give)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if _gradscope.is_tensor(params):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        group = dict(param_group, params=list(params))
        for p in group["params"]:
            if not _gradscope.is_tensor(p):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + type(p).__name__)
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            group.setdefault(name, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=False):
        """Clears every parameter's .grad: sets it to None, or fills it with zeros (PyTorch
        1.13's default)."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.zero_()

    def step(self, closure=None):
        """Updates the parameters from their gradients (a subclass says how)."""
        raise NotImplementedError(f"{type(self).__name__}.step() is not implemented")

    def state_dict(self):
        """{'state': per-parameter state by index, 'param_groups': hyper-parameters with the
        parameters as indices}, as PyTorch's."""
        params = [p for g in self.param_groups for p in g["params"]]
        index = {id(p): i for i, p in enumerate(params)}
        groups = [dict({k: v for k, v in g.items() if k != "params"},
                       params=[index[id(p)] for p in g["params"]]) for g in self.param_groups]
        state = {index[id(p)]: self.state[p] for p in params if p in self.state}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Puts back what state_dict() returned: each group's hyper-parameters and state."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for mine, theirs in zip(self.param_groups, groups):
            if len(mine["params"]) != len(theirs["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        params = [p for g in self.param_groups for p in g["params"]]
        self.state = defaultdict(dict)
        for i, value in state_dict["state"].items():
            self.state[params[int(i)]] = value
        for mine, theirs in zip(self.param_groups, groups):
            mine.update({k: v for k, v in theirs.items() if k != "params"})

    def __getstate__(self):
        raise TypeError(f"{type(self).__name__} cannot be pickled; save its state_dict()")

    def __repr__(self):
        """torch's text: each group after an empty line, its hyper-parameters sorted."""
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"


Optimizer.step = _profiled(Optimizer.step, "step")
Optimizer.zero_grad = _profiled(Optimizer.zero_grad, "zero_grad")


class _EngineOptimizer(Optimizer):
    """An optimizer the engine steps: one engine optimizer per parameter group."""

    _make = None  # the C extension's constructor
    _fixed = ()   # the hyper-parameters the engine takes at construction

    def __init__(self, params, defaults):
        self._stepped = False
        self._engines = []
        self._made_with = []  # each engine's hyper-parameters when it was made
        super().__init__(params, defaults)

    def add_param_group(self, param_group):
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        args = self._engine_args(group)
        self._engines.append(type(self)._make(group["params"], **args))
        self._made_with.append(args)

    @staticmethod
    def _momentum(group):
        """The hyper-parameter the engine can change between steps besides lr: SGD's
        momentum, Adam's beta1 (betas[0]); None for an optimizer without one (Adadelta)."""
        if "momentum" in group:
            return group["momentum"]
        return tuple(group["betas"])[0] if "betas" in group else None

    @staticmethod
    def _with_momentum(group, momentum):
        if "momentum" in group:
            return {"momentum": momentum}
        return {"betas": (momentum, *tuple(group["betas"])[1:])}

    def _engine_args(self, group):
        return {name: group[name] for name in ("lr",) + self._fixed}

    def step(self, closure=None):
        """One step of every group with the engine's kernels; closure (if given) re-evaluates
        the loss first, with gradients on, and its value is returned."""
        loss = None
        if closure is not None:
            with _enable_grad():
                loss = closure()
        for i, (group, engine) in enumerate(zip(self.param_groups, self._engines)):
            made = self._made_with[i]
            momentum = self._momentum(group)
            if momentum is not None and momentum != self._momentum(made):  # OneCycleLR cycles it
                engine.momentum = momentum
                made.update(self._with_momentum(made, momentum))
            changed = [k for k in self._fixed if _plain(group[k]) != _plain(made[k])]
            if changed:
                raise ValueError(f"{type(self).__name__}: param_groups[{i}][{changed[0]!r}] "
                                 f"changed from {made[changed[0]]!r} to {group[changed[0]]!r}; "
                                 "gradscope takes only 'lr' and momentum changes after "
                                 "construction")
            if engine.lr != group["lr"]:
                engine.lr = group["lr"]
            engine.step()
        self._stepped = True
        return loss

    def zero_grad(self, set_to_none=False):
        if not set_to_none:
            super().zero_grad()
        else:  # the engine's own pass (its zero_grad drops the gradients)
            for engine in self._engines:
                engine.zero_grad()

    _state_names = ()  # the engine's state of a parameter, by torch's names
    _scalars = ()      # its scalar state (ASGD's eta and mu), float32 0-d tensors in torch

    def _steps_taken(self, engine, j):
        return engine._state_step(j) if self._state_names[0] == "exp_avg" else None

    def state_dict(self):
        """PyTorch's state_dict: each parameter's state copied out of the engine (SGD's
        momentum_buffer; Adam's step, exp_avg, exp_avg_sq), by parameter index."""
        result = Optimizer.state_dict(self)
        index = 0
        for group, engine in zip(self.param_groups, self._engines):
            for j in range(len(group["params"])):
                entry = self._engine_state(engine, j, group)
                if entry is not None:
                    result["state"][index] = entry
                index += 1
        return result

    def _engine_state(self, engine, j, group):
        names = self._state_names + (("max_exp_avg_sq",) if group.get("amsgrad") else ())
        tensors = {name: engine._state(j, name) for name in names}
        steps = self._steps_taken(engine, j)
        if steps is None:  # SGD: a momentum_buffer entry (None without momentum) once stepped
            return tensors if self._stepped else None
        if steps == 0:
            return None
        return {"step": _gradscope.tensor(float(steps)), **tensors}

    def load_state_dict(self, state_dict):
        """Puts back what state_dict() returned (or PyTorch's for the same parameters): the
        groups' hyper-parameters and each parameter's state, copied into the engine."""
        Optimizer.load_state_dict(self, state_dict)
        states = {int(k): v for k, v in state_dict["state"].items()}
        self.state.clear()  # the engine holds it
        index = 0
        for group, engine in zip(self.param_groups, self._engines):
            for j in range(len(group["params"])):
                for name, value in states.get(index, {}).items():
                    if name == "step":
                        engine._load_state_step(j, int(float(value)))
                    elif name in self._scalars:
                        engine._load_state_scalar(j, name, float(value))
                    elif value is not None:
                        engine._load_state(j, name, value)
                index += 1
        self._stepped = self._stepped or bool(states)

class SGD(_EngineOptimizer):
    """Stochastic gradient descent with momentum, step for step as torch.optim.SGD."""

    _make = _engine.SGD
    _fixed = ("momentum", "dampening", "weight_decay", "nesterov")
    _state_names = ("momentum_buffer",)

    def __init__(self, params, lr=required, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False):
        _refuse(self, maximize=maximize, differentiable=differentiable)
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable))


class Adam(_EngineOptimizer):
    """Adam, step for step as torch.optim.Adam (weight decay added to the gradient)."""

    _make = _engine.Adam
    _fixed = ("betas", "eps", "weight_decay", "amsgrad")
    _state_names = ("exp_avg", "exp_avg_sq")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=False):
        _refuse(self, maximize=maximize, capturable=capturable, differentiable=differentiable,
                fused=fused)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable,
                                      fused=fused))


class AdamW(_EngineOptimizer):
    """Adam with decoupled weight decay, step for step as torch.optim.AdamW."""

    _make = _engine.AdamW
    _fixed = Adam._fixed
    _state_names = Adam._state_names

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False):
        _refuse(self, maximize=maximize, capturable=capturable)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, foreach=foreach, maximize=maximize,
                                      capturable=capturable))


def _plain(value):
    """betas as a tuple whether the program wrote a list or a tuple."""
    return tuple(value) if isinstance(value, list) else value


def _refuse(optimizer, **flags):
    """The options PyTorch has that the engine's kernels do not: an error, not ignored."""
    given = [name for name, value in flags.items() if value]
    if given:
        raise ValueError(f"{type(optimizer).__name__}(): {given[0]}=True is not supported by "
                         "gradscope yet")
