"""gradscope.nn.parallel: DistributedDataParallel (gradscope.distributed's), as
torch.nn.parallel's."""
from gradscope._missing import unsupported as _unsupported
from gradscope.distributed import DistributedDataParallel  # noqa: F401

__getattr__ = _unsupported(__name__)
