# gradscope/optim/__init__.pyi: the types of gradscope.optim: Optimizer, the engine's SGD,
# Adam, AdamW, Adadelta, Adamax, NAdam, RAdam, ASGD and Rprop, LBFGS, and RMSprop and Adagrad (stepped with tensor ops). tests/python/test_docs.py checks it against the module.
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from gradscope import Tensor
from gradscope.optim import lbfgs as lbfgs
from gradscope.optim import lr_scheduler as lr_scheduler
from gradscope.optim import more_optimizers as more_optimizers
from gradscope.optim import optimizer as optimizer
from gradscope.optim import tensor_optimizers as tensor_optimizers

_Params = Iterable[Tensor] | Iterable[dict[str, Any]]

class Optimizer:
    defaults: dict[str, Any]
    state: defaultdict[Tensor, dict[str, Any]]
    param_groups: list[dict[str, Any]]
    def __init__(self, params: _Params, defaults: dict[str, Any]) -> None: ...
    def add_param_group(self, param_group: dict[str, Any]) -> None: ...
    def zero_grad(self, set_to_none: bool = False) -> None: ...
    def step(self, closure: Callable[[], Any] | None = None) -> Any: ...
    def state_dict(self) -> dict[str, Any]: ...
    def load_state_dict(self, state_dict: dict[str, Any]) -> None: ...

class SGD(Optimizer):
    def __init__(self, params: _Params, lr: float = ..., momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False) -> None: ...

class Adam(Optimizer):
    def __init__(self, params: _Params, lr: float = 0.001,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-08,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool = False) -> None: ...

class AdamW(Optimizer):
    def __init__(self, params: _Params, lr: float = 0.001,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-08,
                 weight_decay: float = 0.01, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False) -> None: ...

class RMSprop(Optimizer):
    def __init__(self, params: _Params, lr: float = 0.01, alpha: float = 0.99, eps: float = 1e-08,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None: ...
    def step(self, closure: Callable[[], Any] | None = None) -> Any: ...

class Adagrad(Optimizer):
    def __init__(self, params: _Params, lr: float = 0.01, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *,
                 maximize: bool = False) -> None: ...
    def step(self, closure: Callable[[], Any] | None = None) -> Any: ...

class Adadelta(Optimizer):
    def __init__(self, params: _Params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-06,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False) -> None: ...

class Adamax(Optimizer):
    def __init__(self, params: _Params, lr: float = 0.002,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-08,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False) -> None: ...

class NAdam(Optimizer):
    def __init__(self, params: _Params, lr: float = 0.002,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-08,
                 weight_decay: float = 0, momentum_decay: float = 0.004,
                 foreach: bool | None = None) -> None: ...

class RAdam(Optimizer):
    def __init__(self, params: _Params, lr: float = 0.001,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-08,
                 weight_decay: float = 0, foreach: bool | None = None) -> None: ...

class ASGD(Optimizer):
    def __init__(self, params: _Params, lr: float = 0.01, lambd: float = 0.0001,
                 alpha: float = 0.75, t0: float = 1000000.0, weight_decay: float = 0,
                 foreach: bool | None = None, maximize: bool = False) -> None: ...

class Rprop(Optimizer):
    def __init__(self, params: _Params, lr: float = 0.01,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-06, 50), foreach: bool | None = None,
                 maximize: bool = False) -> None: ...

class LBFGS(Optimizer):
    def __init__(self, params: _Params, lr: float = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-07,
                 tolerance_change: float = 1e-09, history_size: int = 100,
                 line_search_fn: str | None = None) -> None: ...
    def step(self, closure: Callable[[], Any]) -> Any: ...  # type: ignore[override]
