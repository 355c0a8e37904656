"""gradscope.optim: SGD, Adam and AdamW (the C extension's), their param_groups
(optimizer.py) and the learning-rate schedulers (lr_scheduler.py), as torch.optim's."""
from gradscope import _gradscope
from gradscope._missing import reexport as _reexport, unsupported as _unsupported

_reexport(_gradscope.optim, globals())

from gradscope.optim import lr_scheduler, optimizer  # noqa: E402,F401


__getattr__ = _unsupported(__name__)
