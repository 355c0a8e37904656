# gradscope/utils/data.pyi: the types of gradscope.utils.data: TensorDataset (the engine's),
# the datasets, samplers and DataLoader of data.py. tests/python/test_docs.py checks it against
# the module.
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from gradscope import Generator, Tensor

class Dataset:
    def __getitem__(self, index: Any) -> Any: ...
    def __add__(self, other: Dataset) -> ConcatDataset: ...

class IterableDataset(Dataset):
    def __iter__(self) -> Iterator[Any]: ...

class TensorDataset:
    def __init__(self, *tensors: Tensor) -> None: ...
    @property
    def tensors(self) -> tuple[Tensor, ...]: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> tuple[Tensor, ...]: ...

class Subset(Dataset):
    dataset: Any
    indices: Sequence[int]
    def __init__(self, dataset: Any, indices: Sequence[int]) -> None: ...
    def __len__(self) -> int: ...

class ChainDataset(IterableDataset):
    datasets: Any
    def __init__(self, datasets: Any) -> None: ...
    def __iter__(self) -> Iterator[Any]: ...
    def __len__(self) -> int: ...

class DistributedSampler(Sampler):
    dataset: Any
    num_replicas: int
    rank: int
    epoch: int
    drop_last: bool
    shuffle: bool
    seed: int
    num_samples: int
    total_size: int
    def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None, shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None: ...
    def __iter__(self) -> Iterator[int]: ...
    def __len__(self) -> int: ...
    def set_epoch(self, epoch: int) -> None: ...

class ConcatDataset(Dataset):
    datasets: list[Any]
    cumulative_sizes: list[int]
    def __init__(self, datasets: Iterable[Any]) -> None: ...
    @staticmethod
    def cumsum(sequence: Iterable[Any]) -> list[int]: ...
    def __len__(self) -> int: ...

def random_split(dataset: Any, lengths: Sequence[int | float],
                 generator: Generator | None = None) -> list[Subset]: ...

class Sampler:
    def __init__(self, data_source: Any = None) -> None: ...
    def __iter__(self) -> Iterator[Any]: ...

class SequentialSampler(Sampler):
    data_source: Any
    def __init__(self, data_source: Any) -> None: ...
    def __len__(self) -> int: ...

class RandomSampler(Sampler):
    data_source: Any
    replacement: bool
    generator: Generator | None
    def __init__(self, data_source: Any, replacement: bool = False,
                 num_samples: int | None = None, generator: Generator | None = None) -> None: ...
    @property
    def num_samples(self) -> int: ...
    def __len__(self) -> int: ...

class SubsetRandomSampler(Sampler):
    indices: Sequence[int]
    generator: Generator | None
    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None: ...
    def __len__(self) -> int: ...

class WeightedRandomSampler(Sampler):
    weights: Tensor
    num_samples: int
    replacement: bool
    generator: Generator | None
    def __init__(self, weights: Sequence[float] | Tensor, num_samples: int,
                 replacement: bool = True, generator: Generator | None = None) -> None: ...
    def __len__(self) -> int: ...

class BatchSampler(Sampler):
    sampler: Any
    batch_size: int
    drop_last: bool
    def __init__(self, sampler: Any, batch_size: int, drop_last: bool) -> None: ...
    def __len__(self) -> int: ...

class WorkerInfo:
    id: int
    num_workers: int
    seed: int
    dataset: Any
    def __init__(self, **kwargs: Any) -> None: ...

def get_worker_info() -> WorkerInfo | None: ...
def default_convert(data: Any) -> Any: ...
def default_collate(batch: Sequence[Any]) -> Any: ...

class DataLoader:
    dataset: Any
    batch_size: int | None
    num_workers: int
    prefetch_factor: int
    pin_memory: bool
    pin_memory_device: str
    timeout: float
    worker_init_fn: Callable[[int], None] | None
    multiprocessing_context: Any
    persistent_workers: bool
    generator: Generator | None
    drop_last: bool
    sampler: Any
    batch_sampler: Any
    collate_fn: Callable[[Any], Any]
    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable[[Any], Any] | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context: Any = None, generator: Generator | None = None, *,
                 prefetch_factor: int = 2, persistent_workers: bool = False,
                 pin_memory_device: str = "", seed: int | None = None, prefetch: int = 0) -> None: ...
    def __iter__(self) -> Iterator[Any]: ...
    def __len__(self) -> int: ...
