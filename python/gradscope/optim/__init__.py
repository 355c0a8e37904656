from gradscope import _gradscope
from gradscope._missing import reexport, unsupported

reexport(_gradscope.optim, globals())


__getattr__ = unsupported(__name__)
