"""gradscope.cuda_amp: torch.cuda.amp (autocast, GradScaler, custom_fwd, custom_bwd) as PyTorch
1.13 behaves on a machine without CUDA, which is what gradscope is (amp.py says why)."""
import functools
import warnings

from gradscope import amp as _amp
from gradscope._missing import unsupported as _unsupported


class autocast(_amp.autocast):
    """torch.cuda.amp.autocast(enabled=True, dtype=torch.float16, cache_enabled=True):
    autocast on "cuda", which disables itself here."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """torch.cuda.amp.custom_fwd for a custom Function's forward: records on ctx whether
    autocast was on (never, here) and runs forward as it is."""
    if fwd is None:
        return functools.partial(custom_fwd, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._fwd_used_autocast = _amp.is_autocast_enabled()
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd):
    """torch.cuda.amp.custom_bwd for a custom Function's backward: runs it under the autocast
    state its forward saw (off, here)."""
    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(enabled=getattr(args[0], "_fwd_used_autocast", False)):
            return bwd(*args, **kwargs)
    return decorate_bwd


class GradScaler:
    """torch.cuda.amp.GradScaler(init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True) without CUDA: enabled, it warns as torch does and
    disables itself; disabled, scale() returns its argument unchanged, unscale_() and update()
    do nothing, step(optimizer) is optimizer.step(), get_scale() is 1.0 and state_dict() is
    empty, as torch's on a machine without a GPU."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        if enabled:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.")
        self._enabled = False
        self._init_scale = init_scale
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval

    def is_enabled(self):
        return self._enabled

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer):
        return None

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        return None

    def get_scale(self):
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def state_dict(self):
        return {}

    def load_state_dict(self, state_dict):
        return None


__getattr__ = _unsupported(__name__)
