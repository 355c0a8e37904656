# gradscope/autograd_graph.pyi: the types of gradscope.autograd_graph (torch.autograd.graph).
# tests/python/test_docs.py checks it against the module.
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

from gradscope import Tensor

class saved_tensors_hooks:
    pack_hook: Callable[[Tensor], Any]
    unpack_hook: Callable[[Any], Tensor]
    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Tensor]) -> None: ...
    def __enter__(self) -> saved_tensors_hooks: ...
    def __exit__(self, *exc: Any) -> bool: ...

class save_on_cpu(saved_tensors_hooks):
    def __init__(self, pin_memory: bool = False) -> None: ...

def disable_saved_tensors_hooks(error_message: str) -> AbstractContextManager[None]: ...
