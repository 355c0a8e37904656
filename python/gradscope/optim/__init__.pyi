# gradscope/optim/__init__.pyi: the types of gradscope.optim: the engine's optimizers.
# tests/python/test_docs.py checks it against the module.
from collections.abc import Callable, Iterable
from typing import Any

from gradscope import Tensor
from gradscope.optim import lr_scheduler as lr_scheduler

_Params = Iterable[Tensor] | Iterable[dict[str, Any]]

class Optimizer:
    lr: float
    @property
    def param_groups(self) -> list[Any]: ...
    def step(self, closure: Callable[[], Any] | None = None, /) -> None: ...
    def zero_grad(self, set_to_none: bool = False) -> None: ...

def SGD(params: _Params, lr: float = 0.001, momentum: float = 0.0, dampening: float = 0.0,
        weight_decay: float = 0.0, *, nesterov: bool = False) -> Optimizer: ...
def Adam(params: _Params, lr: float = 0.001, betas: tuple[float, float] = (0.9, 0.999),
         eps: float = 1e-08, weight_decay: float = 0.0, *, amsgrad: bool = False) -> Optimizer: ...
def AdamW(params: _Params, lr: float = 0.001, betas: tuple[float, float] = (0.9, 0.999),
          eps: float = 1e-08, weight_decay: float = 0.01, *, amsgrad: bool = False) -> Optimizer: ...
