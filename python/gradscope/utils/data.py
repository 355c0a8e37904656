"""gradscope.utils.data: torch.utils.data's datasets, samplers and DataLoader.

TensorDataset is the engine's (the C extension's). DataLoader over a TensorDataset with the
default sampling and collation is the engine's loader (python/data.c): batches stacked in C,
prefetched on a thread, and with num_workers > 0 collated in forked worker processes
(persistent_workers and timeout as torch's; get_worker_info() answers in them). Anything else
(another dataset, a sampler or batch_sampler object, collate_fn, worker_init_fn, generator)
runs in this process, in Python, as torch's single-process loading: num_workers is accepted
and the samples are read here; worker_init_fn(0) is called at the start of each epoch and
get_worker_info() says worker 0 of 1 while the dataset is read, so a dataset that splits its
work by worker reads all of it.

Random orders (random_split, RandomSampler, SubsetRandomSampler, shuffle=True in the
in-process loader) are torch's for the same seed: the generator is torch's and they draw as
torch's do (RandomSampler seeds a fresh generator from one int64 draw, after the loader's base
seed). The engine's loader draws each epoch's order the same way unless given seed= (then
torch.randperm from a generator seeded with seed + epoch) or persistent_workers.
"""
import bisect
import collections.abc
import itertools
import math
import warnings

import gradscope as _gs
from gradscope import _gradscope
from gradscope._missing import reexport as _reexport, unsupported as _unsupported

_reexport(_gradscope.utils.data, globals())
_c = _gradscope
_EngineDataLoader = _gradscope.utils.data.DataLoader
TensorDataset = _gradscope.utils.data.TensorDataset


class _DatasetMeta(type):
    def __instancecheck__(cls, obj):  # the engine's TensorDataset is a Dataset too
        return type.__instancecheck__(cls, obj) or (cls is Dataset and
                                                    isinstance(obj, TensorDataset))


class Dataset(metaclass=_DatasetMeta):
    """A map-style dataset: __getitem__(index) and __len__; `a + b` concatenates."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset read by iterating it (__iter__), not by index."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """Iterable datasets one after another (what adding two of them gives, as torch's)."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of dataset at indices, in that order."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    """The datasets one after another."""

    @staticmethod
    def cumsum(sequence):
        r, s = [], 0
        for e in sequence:
            s += len(e)
            r.append(s)
        return r

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


def _randperm(n, generator):
    return _generator_draw(generator, lambda: _gs.randperm(n)).tolist()


def _generator_draw(generator, draw):
    """draw() from generator (a gradscope.Generator) or, with None, the default generator."""
    if generator is None:
        return draw()
    use = getattr(generator, "_drawing", None)
    if use is None:
        raise TypeError(f"generator must be a gradscope Generator, got {type(generator).__name__}")
    with use():
        return draw()


def random_split(dataset, lengths, generator=None):
    """Splits dataset into non-overlapping Subsets of the given lengths (or fractions summing
    to 1, as torch 1.13), from a random permutation: torch's for the same seed."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths = [int(math.floor(len(dataset) * frac)) for frac in lengths]
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. "
                              f"This might result in an empty dataset.")
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = _randperm(sum(lengths), generator)
    offsets = itertools.accumulate(lengths)
    return [Subset(dataset, indices[offset - length:offset])
            for offset, length in zip(offsets, lengths)]


class Sampler:
    """The base of samplers: __iter__ yields dataset indices (or batches of them)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class DistributedSampler(Sampler):
    """Each of num_replicas ranks gets every num_replicas-th index of one order (shuffled by
    torch's randperm seeded with seed + epoch, the same on every rank), padded by repeating
    the first indices (or trimmed with drop_last) so every rank has as many, as torch's.
    Over a TensorDataset it is the engine's sampler (gradscope.distributed.DistributedSampler,
    which the engine DataLoader reads); over any other dataset this class."""

    def __new__(cls, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                drop_last=False):
        if isinstance(dataset, TensorDataset):
            from gradscope import distributed
            return distributed.DistributedSampler(dataset, num_replicas=num_replicas, rank=rank,
                                                  shuffle=shuffle, seed=seed,
                                                  drop_last=drop_last)
        return super().__new__(cls)

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            from gradscope import distributed
            if not distributed.is_initialized():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = distributed.get_world_size() if num_replicas is None else num_replicas
            rank = distributed.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        if drop_last and len(dataset) % num_replicas != 0:
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        if self.shuffle:
            g = _gs.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = _gs.randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """The epoch whose order the next iteration gives (seed + epoch)."""
        self.epoch = epoch


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation of the indices (or num_samples draws with replacement)."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            "replacement={}".format(self.replacement))
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer "
                             "value, but got num_samples={}".format(self.num_samples))

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = self.generator
        if generator is None:  # torch's: a fresh generator seeded by one int64 draw
            generator = _gs.Generator()
            generator.manual_seed(int(_c._random_int64(1).item()))
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from _generator_draw(generator, lambda: _c.randint(0, n, (32,))).tolist()
            rest = self.num_samples % 32
            yield from _generator_draw(generator, lambda: _c.randint(0, n, (rest,))).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from _randperm(n, generator)
        yield from _randperm(n, generator)[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _randperm(len(self.indices), self.generator):
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """num_samples indices drawn with probabilities proportional to weights (multinomial)."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or \
                num_samples <= 0:
            raise ValueError("num_samples should be a positive integer "
                             "value, but got num_samples={}".format(num_samples))
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             "replacement={}".format(replacement))
        weights = _gs.as_tensor(weights, dtype=_c.float64)
        if weights.dim() != 1:
            raise ValueError("weights should be a 1d sequence but given "
                             "weights have shape {}".format(tuple(weights.shape)))
        self.weights = weights
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        rand = _generator_draw(self.generator, lambda: _gs.multinomial(
            self.weights, self.num_samples, self.replacement))
        yield from iter(rand.tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of batch_size indices from sampler (the last one shorter unless drop_last)."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, "
                             "but got batch_size={}".format(batch_size))
        if not isinstance(drop_last, bool):
            raise ValueError("drop_last should be a boolean value, but got "
                             "drop_last={}".format(drop_last))
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


class WorkerInfo:
    """What get_worker_info() returns in a worker: id, num_workers, seed, dataset."""

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)

    def __repr__(self):
        return "WorkerInfo(id={}, num_workers={}, seed={}, dataset={!r})".format(
            self.id, self.num_workers, self.seed, self.dataset)


_in_process_worker = None  # the WorkerInfo while the in-process loader reads its dataset


def get_worker_info():
    """In a DataLoader worker: a WorkerInfo (id, num_workers, seed, dataset); None in the main
    process. The in-process loader (see the module's docstring) reports worker 0 of 1 while
    it reads the dataset or runs worker_init_fn."""
    if _in_process_worker is not None:
        return _in_process_worker
    info = _gradscope.utils.data._worker_info()
    if info is None:
        return None
    return WorkerInfo(id=info[0], num_workers=info[1], seed=info[2], dataset=None)


def default_convert(data):
    """torch's default_convert: NumPy arrays to tensors, inside lists, tuples and dicts."""
    if type(data).__module__ == "numpy" and hasattr(data, "dtype") and \
            data.dtype.kind not in "SaUO":
        return _gs.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """torch's default_collate: tensors stacked along a new first dimension, NumPy arrays
    likewise, Python floats to a float64 tensor, ints to int64, strings kept as a list, and
    dicts, namedtuples, tuples and lists collated field by field (a tuple gives a list)."""
    elem = batch[0]
    if _c.is_tensor(elem):
        return _c.stack(list(batch), 0)
    if type(elem).__module__ == "numpy" and type(elem).__name__ not in ("str_", "string_"):
        if type(elem).__name__ in ("ndarray", "memmap"):
            if elem.dtype.kind in "SaUO":
                raise TypeError("default_collate: batch must contain tensors, numpy arrays, "
                                f"numbers, dicts or lists; found {elem.dtype}")
            return default_collate([_gs.as_tensor(b) for b in batch])
        if elem.shape == ():
            return _gs.as_tensor(batch)
    if isinstance(elem, bool):
        return _c.tensor(batch)
    if isinstance(elem, float):
        return _c.tensor(batch, dtype=_c.float64)
    if isinstance(elem, int):
        return _c.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        return [default_collate(samples) for samples in transposed]
    raise TypeError("default_collate: batch must contain tensors, numpy arrays, numbers, dicts "
                    f"or lists; found {type(elem)}")


class DataLoader:
    """torch.utils.data.DataLoader: batches of a dataset (see the module's docstring for which
    loads go to the engine and which run here). seed and prefetch are gradscope's: the engine
    loader's shuffle seed (None: each epoch's order drawn from the default generator, torch's
    order) and batches collated ahead on a thread."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=2, persistent_workers=False, pin_memory_device="", seed=None,
                 prefetch=0):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor != 2:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing.")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory  # no pinned memory on the CPU: accepted, nothing to do
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers
        self.generator = generator
        self.drop_last = drop_last
        self._engine = None
        # Without a seed of its own, a shuffled engine loader takes each epoch's order from the
        # default generator as torch's loader does (persistent workers recompute orders from
        # the loader's seed, so they keep seed + epoch).
        self._torch_order = bool(shuffle) and seed is None and not persistent_workers
        # and like torch's, each of its iterators draws a base seed first, shuffled or not
        self._torch_draws = seed is None and not persistent_workers
        seed = 0 if seed is None else seed
        distributed = sampler is not None and \
            type(sampler).__module__.startswith("gradscope") and \
            type(sampler).__name__ == "DistributedSampler"
        if isinstance(dataset, TensorDataset) and batch_sampler is None and \
                collate_fn is None and worker_init_fn is None and generator is None and \
                (sampler is None or distributed) and batch_size is not None:
            self._engine = _EngineDataLoader(
                dataset, batch_size, bool(shuffle), drop_last=drop_last, seed=seed,
                prefetch=prefetch_factor if num_workers > 0 else prefetch, sampler=sampler,
                num_workers=num_workers, persistent_workers=persistent_workers,
                timeout=float(timeout))
            self.batch_size = batch_size
            self.sampler = sampler
            self.batch_sampler = None
            self.collate_fn = default_collate
            return
        if isinstance(dataset, IterableDataset):
            if shuffle not in (False, None):
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 "option, but got shuffle={}".format(shuffle))
            if sampler is not None or batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 "or batch_sampler option")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not isinstance(dataset, IterableDataset):
            sampler = RandomSampler(dataset, generator=generator) if shuffle \
                else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and sampler is not None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if batch_size is not None or batch_sampler is not None \
                else default_convert
        self.collate_fn = collate_fn

    def __iter__(self):
        if self._engine is not None:
            if self._torch_draws:
                _c._random_int64(1)  # torch's base seed, drawn first by every iterator
            if self._torch_order and self.sampler is None:
                self._engine._shuffle_next_epoch_from(int(_c._random_int64(1).item()))
            return iter(self._engine)
        return self._in_process()

    def _in_process(self):
        global _in_process_worker
        # torch draws the base seed for every iterator, workers or not, before the sampler
        base_seed = _generator_draw(self.generator, lambda: int(_c._random_int64(1).item()))
        info = WorkerInfo(id=0, num_workers=1, seed=base_seed,
                          dataset=self.dataset) if self.num_workers > 0 else None
        if info is not None and self.worker_init_fn is not None:
            _in_process_worker = info
            try:
                self.worker_init_fn(0)
            finally:
                _in_process_worker = None

        def fetch(read):
            global _in_process_worker
            _in_process_worker = info
            try:
                return read()
            finally:
                _in_process_worker = None

        if isinstance(self.dataset, IterableDataset):
            it = fetch(lambda: iter(self.dataset))
            while True:
                if self.batch_size is None:
                    try:
                        sample = fetch(lambda: next(it))
                    except StopIteration:
                        return
                    yield self.collate_fn(sample)
                    continue
                batch = fetch(lambda: list(itertools.islice(it, self.batch_size)))
                if not batch or (self.drop_last and len(batch) < self.batch_size):
                    return
                yield self.collate_fn(batch)
        elif self.batch_sampler is not None:
            for indices in self.batch_sampler:
                yield self.collate_fn(fetch(lambda: [self.dataset[i] for i in indices]))
        else:
            for index in self.sampler:
                yield self.collate_fn(fetch(lambda: self.dataset[index]))

    def __len__(self):
        if self._engine is not None:
            return len(self._engine)
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
            return n
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)


__getattr__ = _unsupported(__name__)
