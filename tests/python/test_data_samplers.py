"""torch.utils.data's DistributedSampler over any dataset and ChainDataset (gradscope/utils/
data.py) against Debian's torch 1.13: each rank's indices for every shuffle / drop_last
setting and epoch, padding when ranks outnumber samples, torch's rank error, the engine's
sampler over a TensorDataset, a DataLoader reading the sampler, and iterable datasets chained
by +. meson registers this file only when torch imports (tests/python/meson.build)."""
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")


class Range:
    """An iterable dataset of range(a, b), made for either library."""

    @staticmethod
    def make(m, a, b):
        class R(m.utils.data.IterableDataset):
            def __iter__(self):
                return iter(range(a, b))

            def __len__(self):
                return b - a
        return R()


@pytest.mark.parametrize("n", (1, 2, 10, 11))
@pytest.mark.parametrize("replicas", (1, 3, 5))
@pytest.mark.parametrize("shuffle", (True, False))
@pytest.mark.parametrize("drop_last", (True, False))
def test_distributed_sampler_as_torch(n, replicas, shuffle, drop_last):
    data = [f"s{i}" for i in range(n)]
    got = []
    for m in (torch, gs):
        rows = []
        for rank in range(replicas):
            for epoch in (0, 3):
                s = m.utils.data.DistributedSampler(data, num_replicas=replicas, rank=rank,
                                                    shuffle=shuffle, seed=7,
                                                    drop_last=drop_last)
                s.set_epoch(epoch)
                rows.append((list(s), len(s)))
        got.append(rows)
    assert got[0] == got[1]


def test_distributed_sampler_edges_as_torch():
    got = []
    for m in (torch, gs):
        with pytest.raises(ValueError) as e:
            m.utils.data.DistributedSampler([1, 2], num_replicas=2, rank=2)
        tensors = m.utils.data.TensorDataset(m.arange(6.0))
        engine = m.utils.data.DistributedSampler(tensors, num_replicas=2, rank=1, shuffle=False)
        data = [f"s{i}" for i in range(7)]
        loader = m.utils.data.DataLoader(
            data, batch_size=2,
            sampler=m.utils.data.DistributedSampler(data, num_replicas=2, rank=1, seed=1))
        got.append((str(e.value), list(engine), list(loader)))
        del tensors, engine
    assert got[0] == got[1]


def test_chained_iterable_datasets_as_torch():
    got = []
    for m in (torch, gs):
        chained = Range.make(m, 0, 3) + Range.make(m, 10, 12)
        plain = m.utils.data.ChainDataset([Range.make(m, 1, 2), Range.make(m, 5, 7)])
        got.append((type(chained).__name__, list(chained), len(chained), list(plain)))
    assert got[0] == got[1]


def test_distributed_sampler_from_its_module_under_as_torch(tmp_path):
    """`from torch.utils.data.distributed import DistributedSampler` over a map-style dataset of
    the program's own (it was the engine's sampler, which takes TensorDatasets only)."""
    import subprocess
    import sys
    script = tmp_path / "prog.py"
    script.write_text("""
import torch
from torch.utils.data import Dataset
from torch.utils.data.distributed import DistributedSampler
class D(Dataset):
    def __len__(self): return 10
    def __getitem__(self, i): return i
s = DistributedSampler(D(), num_replicas=3, rank=1, shuffle=True, seed=3)
s.set_epoch(2)
t = DistributedSampler(torch.utils.data.TensorDataset(torch.arange(5.0)), num_replicas=2, rank=0,
                       shuffle=False)
print(list(s), len(s), list(t), DistributedSampler is torch.utils.data.DistributedSampler)
""")
    outputs = []
    for args in ([], ["-m", "gradscope.as_torch"]):
        r = subprocess.run([sys.executable, *args, str(script)], capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0, r.stderr
        outputs.append(r.stdout)
    assert outputs[0] == outputs[1]
