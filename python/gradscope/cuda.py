"""gradscope.cuda: gradscope computes on the CPU only. PyTorch programs ask
``torch.cuda.is_available()`` to pick their device; here the answer is no, so they run on the
CPU as they would on a machine without a GPU. torch.cuda.amp is gradscope.cuda_amp: autocast
and GradScaler as torch's disable themselves without CUDA."""
from gradscope._missing import unsupported as _unsupported


def is_available():
    return False


def device_count():
    return 0


def __getattr__(name):
    # torch.cuda.amp, imported when first used, as torch imports its submodule
    if name == "amp":
        import gradscope.cuda_amp
        return gradscope.cuda_amp
    return _missing_name(name)


_missing_name = _unsupported(__name__)
