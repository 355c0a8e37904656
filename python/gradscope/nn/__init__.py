"""gradscope.nn: the C extension's modules (Linear, Sequential, RNN/LSTM/GRU, ...) and
nn.Parameter, with gradscope.nn.functional, gradscope.nn.init and gradscope.nn.utils."""
from gradscope import _gradscope
from gradscope._missing import reexport, unsupported

reexport(_gradscope.nn, globals())
del globals()["functional"]

from gradscope.nn import functional, utils  # noqa: E402

__getattr__ = unsupported(__name__)
