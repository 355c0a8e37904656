"""gradscope.amp: automatic mixed precision as PyTorch 1.13 offers it on a machine without a GPU
(torch.autocast, torch.amp; torch.cuda.amp is cuda_amp.py).

Gradscope computes on the CPU only, so the CUDA forms behave as torch's do when CUDA is not
available: `autocast(device_type="cuda")` and `GradScaler()` warn once with torch's words and
disable themselves, after which they change nothing (scale() returns its argument, step() calls
optimizer.step()). Programs written for a GPU with `enabled=use_amp` switches run unchanged.

The CPU form, `autocast(device_type="cpu")` enabled, computes matrix products in bfloat16 in
torch; gradscope has no bfloat16, so it is refused as not supported rather than silently
computing in float32 (results would differ from torch's)."""
import functools
import warnings

from gradscope._missing import not_supported as _not_supported, unsupported as _unsupported

def is_autocast_enabled():
    """Whether CUDA autocast is on: never, here (there is no CUDA device)."""
    return False


def is_autocast_cpu_enabled():
    """Whether CPU autocast is on: never (an enabled CPU autocast is refused)."""
    return False


class autocast:
    """torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None): a context
    manager and decorator. device_type "cuda" warns and disables itself (no CUDA device);
    "cpu" with enabled=True is not supported (torch would compute in bfloat16); anything else
    is torch's RuntimeError."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if device_type not in ("cuda", "cpu"):
            raise RuntimeError("User specified autocast device_type must be 'cuda' or 'cpu'")
        self.device = device_type
        self.fast_dtype = dtype  # gradscope has neither float16 nor bfloat16
        self._cache_enabled = True if cache_enabled is None else cache_enabled
        if enabled and device_type == "cuda":
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. "
                          "Disabling")
            enabled = False
        if enabled and device_type == "cpu":
            raise _not_supported("torch.autocast(device_type='cpu', enabled=True) "
                                "(bfloat16 compute)")
        self._enabled = enabled

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def run_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return run_autocast


__getattr__ = _unsupported(__name__)
