"""gradscope.optim: Optimizer, SGD, Adam and AdamW as torch.optim's classes (optimizer.py: the
engine steps SGD, Adam and AdamW), Adadelta, Adamax, NAdam, RAdam, ASGD and Rprop (the engine
steps them too: more_optimizers.py), RMSprop and Adagrad (tensor ops: tensor_optimizers.py), LBFGS
(lbfgs.py) and the learning-rate schedulers (lr_scheduler.py)."""
from gradscope._missing import unsupported as _unsupported
from gradscope.optim import lr_scheduler, optimizer, swa_utils  # noqa: F401
from gradscope.optim.optimizer import SGD, Adam, AdamW, Optimizer  # noqa: F401
from gradscope.optim.lbfgs import LBFGS  # noqa: F401
from gradscope.optim.more_optimizers import (  # noqa: F401
    ASGD, Adadelta, Adamax, NAdam, RAdam, Rprop)
from gradscope.optim.tensor_optimizers import Adagrad, RMSprop  # noqa: F401

__getattr__ = _unsupported(__name__)
