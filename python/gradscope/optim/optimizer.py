"""PyTorch's ``optimizer.param_groups`` on gradscope's optimizers (the C extension's type):
one group holding every parameter, a mapping whose "lr" is the engine's learning rate, read
and written through, so ``group["lr"] = 0.01`` changes the next step as in PyTorch and the
schedulers of lr_scheduler.py work. Other keys (a scheduler's "initial_lr") are kept in the
optimizer's __dict__. The group object is made at each access and holds the optimizer, never
the reverse, so the two make no reference cycle."""
from collections.abc import MutableMapping

from gradscope import _gradscope

Optimizer = _gradscope.optim.Optimizer


class ParamGroup(MutableMapping):
    """The optimizer's single parameter group."""

    def __init__(self, optimizer):
        self._optimizer = optimizer

    def _extra(self):
        return self._optimizer.__dict__.setdefault("_group_extra", {})

    def __getitem__(self, key):
        if key == "lr":
            return self._optimizer.lr
        if key == "params":
            return self._optimizer._params
        return self._extra()[key]

    def __setitem__(self, key, value):
        if key == "lr":
            self._optimizer.lr = value
        elif key == "params":
            raise TypeError("a gradscope optimizer's parameters are fixed when it is made")
        else:
            self._extra()[key] = value

    def __delitem__(self, key):
        if key in ("lr", "params"):
            raise TypeError(f"param_groups[0][{key!r}] cannot be deleted")
        del self._extra()[key]

    def __iter__(self):
        yield "params"
        yield "lr"
        yield from self._extra()

    def __len__(self):
        return 2 + len(self._extra())

    def __repr__(self):
        return repr(dict(self))


def param_groups(self):
    return [ParamGroup(self)]


_gradscope._extend_type(Optimizer, "param_groups", property(param_groups))
