"""gradscope.utils: gradscope.utils.data, as torch.utils's."""
from gradscope._missing import unsupported
from gradscope.utils import data  # noqa: F401

__getattr__ = unsupported(__name__)
