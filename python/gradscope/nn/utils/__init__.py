"""gradscope.nn.utils: helpers over parameters, as torch.nn.utils's."""
from gradscope._missing import unsupported
from gradscope.nn.utils import rnn  # noqa: F401

__getattr__ = unsupported(__name__)
