"""gradscope.utils: gradscope.utils.data and gradscope.utils.checkpoint, as torch.utils's."""
from gradscope._missing import unsupported as _unsupported
from gradscope.utils import checkpoint, data  # noqa: F401

__getattr__ = _unsupported(__name__)
