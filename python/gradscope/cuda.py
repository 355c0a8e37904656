"""gradscope.cuda: gradscope computes on the CPU only. PyTorch programs ask
``torch.cuda.is_available()`` to pick their device; here the answer is no, so they run on the
CPU as they would on a machine without a GPU."""
from gradscope._missing import unsupported as _unsupported


def is_available():
    return False


def device_count():
    return 0


__getattr__ = _unsupported(__name__)
