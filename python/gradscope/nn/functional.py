"""gradscope.nn.functional: the losses, activations and layers as functions (the C
extension's), as torch.nn.functional's."""
from gradscope import _gradscope
from gradscope._missing import reexport as _reexport, unsupported as _unsupported

_reexport(_gradscope.nn.functional, globals())
one_hot = _gradscope.one_hot

__getattr__ = _unsupported(__name__)
