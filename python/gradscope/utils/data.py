"""gradscope.utils.data: TensorDataset and DataLoader (the C extension's), as
torch.utils.data's."""
from gradscope import _gradscope
from gradscope._missing import reexport as _reexport, unsupported as _unsupported

_reexport(_gradscope.utils.data, globals())

__getattr__ = _unsupported(__name__)
