"""gradscope.utils: gradscope.utils.data, as torch.utils's."""
from gradscope._missing import unsupported as _unsupported
from gradscope.utils import data  # noqa: F401

__getattr__ = _unsupported(__name__)
