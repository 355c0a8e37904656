"""gradscope.optim: SGD, Adam and AdamW (the C extension's), their param_groups
(optimizer.py) and the learning-rate schedulers (lr_scheduler.py), as torch.optim's."""
from gradscope import _gradscope
from gradscope._missing import reexport, unsupported

reexport(_gradscope.optim, globals())

from gradscope.optim import lr_scheduler, optimizer  # noqa: E402,F401


__getattr__ = unsupported(__name__)
