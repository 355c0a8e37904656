"""gradscope.optim.swa_utils: stochastic weight averaging as torch.optim.swa_utils in PyTorch 1.13
(AveragedModel, SWALR, update_bn), step for step: the same running-average formula, the same
annealing of the learning rate, the same batch-norm re-estimation (a cumulative average over one
pass of the data, through the layers' momentum=None)."""
import copy
import itertools
import math
import warnings

from gradscope import _gradscope as _c
from gradscope._missing import unsupported as _unsupported
from gradscope.nn import Module, layer_attributes as _layer_attributes
from gradscope.optim.lr_scheduler import _LRScheduler


def _equal_average(averaged, current, num_averaged):
    """The default average: the mean of every model seen so far."""
    return averaged + (current - averaged) / (num_averaged + 1)


class AveragedModel(Module):
    """AveragedModel(model, device=None, avg_fn=None, use_buffers=False): a deep copy of model
    whose parameters (and buffers, with use_buffers) are the running average of the models
    given to update_parameters: the first call copies, later ones apply avg_fn(averaged,
    current, n_averaged) (default: the equal-weight mean). Calling it runs the copy."""

    def __init__(self, model, device=None, avg_fn=None, use_buffers=False):
        super().__init__()
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _c.tensor(0, dtype=_c.int64))
        self.avg_fn = _equal_average if avg_fn is None else avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Folds model's current parameters (and buffers) into the average."""
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        first = int(self.n_averaged.item()) == 0
        for averaged, current in zip(mine, theirs):
            current = current.detach()
            with _c.no_grad():
                if first:
                    averaged.copy_(current)
                else:
                    averaged.copy_(self.avg_fn(averaged.detach(), current, self.n_averaged))
        with _c.no_grad():
            self.n_averaged.add_(1)


def update_bn(loader, model, device=None):
    """Re-estimates the running mean and variance of model's BatchNorm layers with one pass
    over loader (batches are tensors, or lists/tuples whose first item is the input): the
    estimates restart at 0 and 1 and become the cumulative average of the batches' statistics,
    then each layer's momentum and model's training mode are as they were."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _layer_attributes.BATCH_NORMS) and module.track_running_stats:
            with _c.no_grad():
                module.running_mean.zero_()
                module.running_var.fill_(1.0)
                module.num_batches_tracked.zero_()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with _c.no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(_LRScheduler):
    """SWALR(optimizer, swa_lr, anneal_epochs=10, anneal_strategy='cos', last_epoch=-1):
    moves each group's learning rate from where it is to swa_lr (one value, or one per group)
    over anneal_epochs steps, by cosine or linear annealing, then holds it there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        groups = optimizer.param_groups
        if isinstance(swa_lr, (list, tuple)):
            if len(swa_lr) != len(groups):
                raise ValueError("swa_lr must have the same length as optimizer.param_groups: "
                                 f"swa_lr has {len(swa_lr)}, optimizer.param_groups has "
                                 f"{len(groups)}")
            swa_lrs = list(swa_lr)
        else:
            swa_lrs = [swa_lr] * len(groups)
        for lr, group in zip(swa_lrs, groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must by one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        # the rate the annealing started from, recovered from where it is now
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        groups = self.optimizer.param_groups
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        starts = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, starts)]


__getattr__ = _unsupported(__name__)
