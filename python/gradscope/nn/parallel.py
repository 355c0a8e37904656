"""gradscope.nn.parallel: DistributedDataParallel (gradscope.distributed's), as
torch.nn.parallel's."""
from gradscope._missing import unsupported
from gradscope.distributed import DistributedDataParallel  # noqa: F401

__getattr__ = unsupported(__name__)
