"""test_distributed.py: gradscope.distributed on 2 MPI ranks (dist_worker.py under
``mpirun --oversubscribe -np 2``, as root too) against one process: after K steps DDP's
parameters equal a one-process run on the whole batch (float64 within 1e-12, float32 within
1e-5), with and without no_sync; a parameter that got no gradient is named; different shapes
on two ranks are refused, naming both; the collectives, the sampler and the torch names under
as_torch, and a program written for torchrun run under mpirun and as_torch (as torch runs it,
where torch is installed). Also what needs no second rank: errors before init, and the backend
refusal.
Without mpirun the MPI tests skip, saying so (in CI, CI=true, they fail: tests/missing-tool.sh's
rule)."""
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import gradscope as gs
import gradscope.distributed as dist
import gradscope.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import dist_worker  # noqa: E402


def need_mpirun():
    if shutil.which("mpirun") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("mpirun is missing (CI=true): install openmpi-bin (scripts/setup-deps.sh)")
        pytest.skip("no mpirun: the 2-rank tests are not run (install openmpi-bin)")


def mpirun(*args, timeout=120):
    """Runs dist_worker.py with args on 2 ranks; (exit status, both ranks' output)."""
    need_mpirun()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OPENBLAS_NUM_THREADS="1",
               GS_DIST_TIMEOUT="10")
    r = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", sys.executable,
                        os.path.join(HERE, "dist_worker.py"), *map(str, args)],
                       capture_output=True, text=True, timeout=timeout, env=env)
    return r.returncode, r.stdout + r.stderr


@pytest.mark.parametrize("dtype,tolerance,no_sync,bucket_view", [
    ("float64", 1e-12, False, False), ("float32", 1e-5, False, False),
    ("float64", 1e-12, True, False), ("float32", 1e-5, True, True)])
def test_ddp_equals_one_process_on_the_whole_batch(tmp_path, dtype, tolerance, no_sync,
                                                   bucket_view):
    steps = 5
    out = tmp_path / "ddp.npz"
    status, text = mpirun("parity", dtype, steps, out, *(["no_sync"] if no_sync else []),
                          *(["bucket_view"] if bucket_view else []))
    assert status == 0 and "worker ok" in text, text
    ddp = np.load(out)
    ref = dist_worker.reference(dtype, steps)
    assert sorted(ddp.files) == sorted(ref)
    for name, value in ref.items():
        assert ddp[name].dtype == np.dtype(dtype)
        diff = np.abs(ddp[name] - value).max()
        assert diff <= tolerance, f"{name}: DDP differs from one process by {diff}"
    # The steps moved the parameters: equality is not the initial values'.
    start = {n: p.detach().numpy() for n, p in dist_worker.MLP(np.dtype(dtype)).named_parameters()}
    assert any(np.abs(ref[n] - start[n]).max() > 1e-3 for n in ref)


def test_a_parameter_without_gradient_is_named():
    status, text = mpirun("unused")
    assert status == 0, text
    errors = rank_messages(text, "")
    assert sorted(r for r, _ in errors) == ["0", "1"], text
    for _, message in errors:
        assert "'head.weight'" in message and "'head.bias'" in message, message
        assert "find_unused_parameters=True" in message, message
        assert "dist_worker.py:" in message, message  # the forward's line


def test_find_unused_parameters_gives_zeros():
    status, text = mpirun("unused_allowed")
    assert status == 0 and "worker ok" in text, text


def rank_messages(text, what):
    """Each rank's "rank R WHAT error: ..." message (mpirun may join two ranks' lines)."""
    return re.findall(rf"rank (\d) {what}error: (.*?)(?=rank \d [A-Za-z_ ]*error:|worker ok|\n|$)",
                      text)


def test_different_shapes_on_two_ranks_are_refused():
    status, text = mpirun("shapes")
    assert status == 0 and "worker ok" in text, text
    errors = rank_messages(text, "all_reduce ")
    assert sorted(r for r, _ in errors) == ["0", "1"], text
    for _, message in errors:
        assert message.startswith("distributed.all_reduce: ranks passed different tensors"), message
        assert "rank 0 gave [3, 2] f32 but rank 1 gave [4, 2] f32" in message, message
    ddp_errors = rank_messages(text, "DDP ")
    assert sorted(r for r, _ in ddp_errors) == ["0", "1"], text
    assert all("ranks wrap different modules: parameter 0 is 'w1'" in m for _, m in ddp_errors)


def test_collectives_and_sampler():
    status, text = mpirun("collectives")
    assert status == 0 and "worker ok" in text, text


def test_sync_batch_norm_over_two_ranks_is_batch_norm_over_the_batch():
    status, text = mpirun("sync_batch_norm")
    assert status == 0 and "worker ok" in text, text


def test_sync_batch_norm_in_one_process_is_batch_norm():
    """Without a group (or in a group of one) SyncBatchNorm is F.batch_norm, as torch's; its
    print text, state_dict keys and errors are torch's."""
    gen = gs.Generator().manual_seed(1)
    x = gs.randn(6, 3, 4, dtype=gs.float64, generator=gen)
    ref, mine = nn.BatchNorm1d(3, dtype=gs.float64), nn.SyncBatchNorm(3, dtype=gs.float64)
    assert gs.equal(mine(x), ref(x))
    assert gs.equal(mine.running_var, ref.running_var)
    assert repr(mine) == ("SyncBatchNorm(3, eps=1e-05, momentum=0.1, affine=True, "
                          "track_running_stats=True)")
    assert list(mine.state_dict()) == list(ref.state_dict())
    with pytest.raises(ValueError, match="expected at least 2D input \\(got 1D input\\)"):
        mine(gs.zeros(3))
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.Linear(2, 3), ref))
    assert isinstance(converted[1], nn.SyncBatchNorm)
    assert converted[1].weight is ref.weight and converted[1].running_mean is ref.running_mean


def test_torch_names_under_as_torch():
    status, text = mpirun("as_torch")
    assert status == 0 and "worker ok" in text, text


def test_before_init_the_errors_say_what_to_call():
    assert not dist.is_initialized()
    with pytest.raises(RuntimeError, match="init_process_group"):
        dist.get_rank()
    with pytest.raises(RuntimeError, match="init_process_group"):
        dist.all_reduce(gs.ones(2))
    with pytest.raises(RuntimeError, match="init_process_group"):
        dist.DistributedDataParallel(gs.nn.Linear(2, 2))
    ds = gs.utils.data.TensorDataset(gs.arange(5).float())
    with pytest.raises(RuntimeError, match="init_process_group"):
        dist.DistributedSampler(ds)
    # With num_replicas and rank given it needs no group, as torch's.
    s = dist.DistributedSampler(ds, num_replicas=2, rank=1, shuffle=False)
    assert list(s) == [1, 3, 0] and len(s) == 3  # padded with the order's start, as torch's
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        dist.DistributedSampler(ds, num_replicas=2, rank=2)
    with pytest.raises(TypeError, match="TensorDataset"):
        dist.DistributedSampler([1, 2, 3], num_replicas=2, rank=0)
    loader = gs.utils.data.DataLoader(ds, batch_size=2, sampler=s)
    assert [b[0].tolist() for b in loader] == [[1.0, 3.0], [0.0]]
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        gs.utils.data.DataLoader(ds, batch_size=2, sampler=s, shuffle=True)
    other = gs.utils.data.TensorDataset(gs.arange(5).float())
    with pytest.raises(ValueError, match="another dataset"):
        gs.utils.data.DataLoader(other, batch_size=2, sampler=s)


def test_other_backends_are_refused():
    for backend in ("nccl", "ucc"):
        with pytest.raises(ValueError, match=f"backend '{backend}' is not supported.*'gloo'.*mpirun"):
            dist.init_process_group(backend=backend)


TORCHRUN_PROGRAM = """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

class Squares(Dataset):
    def __len__(self):
        return 10
    def __getitem__(self, i):
        return torch.full((3,), float(i)), torch.tensor([float(i * i)])

dist.init_process_group(backend=dist.Backend.GLOO)
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
assert (dist.get_rank(), dist.get_world_size()) == (rank, world) == (int(os.environ["LOCAL_RANK"]), 2)
assert int(os.environ["LOCAL_WORLD_SIZE"]) == 2 and dist.is_gloo_available()
torch.manual_seed(0)
model = DDP(torch.nn.Linear(3, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.001)
sampler = DistributedSampler(Squares(), seed=5)
for epoch in range(2):
    sampler.set_epoch(epoch)
    for x, y in DataLoader(Squares(), batch_size=2, sampler=sampler):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
w = model.module.weight.detach().clone()
seen = [torch.zeros(3) for _ in range(world)]
dist.all_gather(seen, w.flatten())
assert all(torch.equal(s, seen[0]) for s in seen)
print(f"rank {rank} shard {list(sampler)} weight {[round(v, 6) for v in w.flatten().tolist()]}")
dist.destroy_process_group()
"""


def run_both(tmp_path, program, line_pattern):
    """Runs program under `mpirun -np 2 python3 -m gradscope.as_torch` and, where Debian's
    torch is installed, as torch runs it on two gloo processes: (ours, torch's or None), each
    the two ranks' lines matching line_pattern, sorted."""
    need_mpirun()
    script = tmp_path / "train.py"
    script.write_text(program)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OPENBLAS_NUM_THREADS="1", GS_DIST_TIMEOUT="10")
    r = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", sys.executable, "-m",
                        "gradscope.as_torch", str(script)],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    # (mpirun forwards the ranks' output as it comes: a line may lose its newline to the other)
    lines = sorted(re.findall(line_pattern, r.stdout))
    assert len(lines) == 2, r.stdout
    try:
        import torch  # noqa: F401 (the reference, where Debian's torch is installed)
    except ImportError:
        return lines, None
    want = []
    for rank in (0, 1):
        want.append(subprocess.Popen(
            [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT="29517",
                                RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2",
                                LOCAL_WORLD_SIZE="2", OMP_NUM_THREADS="1")))
    outs = [p.communicate(timeout=120) for p in want]
    assert all(p.returncode == 0 for p in want), outs
    return lines, sorted(o.strip() for o, _ in outs)


def test_a_torchrun_program_runs_under_mpirun_and_as_torch(tmp_path):
    """A program written for torchrun (backend gloo, RANK/WORLD_SIZE/LOCAL_RANK from the
    environment, its own Dataset under DistributedSampler) runs unchanged under
    `mpirun -np 2 python3 -m gradscope.as_torch`, as torch runs it on two gloo processes."""
    lines, torch_lines = run_both(tmp_path, TORCHRUN_PROGRAM,
                                  r"rank \d shard \[[\d, ]*\] weight \[[-\d., e]*\]")
    if torch_lines is None:
        return

    def parsed(line):
        shard, weight = re.match(r"rank \d shard (\[.*\]) weight (\[.*\])", line).groups()
        return eval(shard), np.array(eval(weight))

    for got, want in zip(map(parsed, lines), map(parsed, torch_lines)):
        assert got[0] == want[0]  # the same shard of the program's own dataset
        # float32 weights after 10 steps: gloo's average and ours round apart in the last bits
        np.testing.assert_allclose(got[1], want[1], rtol=0, atol=1e-5)
    with pytest.raises(ValueError, match="init_method"):
        dist.init_process_group(init_method="tcp://127.0.0.1:23456")
    assert not dist.is_initialized()
    with pytest.raises(AttributeError, match="ReduceOp.BAND"):
        dist.ReduceOp.BAND


METRICS_PROGRAM = """
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
said = []
correct = torch.tensor(3 + rank)  # an int64 count, as evaluation loops sum them
dist.all_reduce(correct)
big = torch.tensor([2 ** 60 + rank, -rank])  # exact past 2^53: no trip through a double
dist.all_reduce(big)
top = torch.tensor([rank * 7, -rank], dtype=torch.int32)
dist.all_reduce(top, op=dist.ReduceOp.MAX)
said.append(f"count={correct.item()} big={big.tolist()} max={top.tolist()}")
total = torch.tensor([10.0 * (rank + 1), 1.0], dtype=torch.float64)
dist.reduce(total, dst=0)
if rank == 0:
    said.append(f"reduced={total.tolist()}")
pieces = [torch.zeros(2, dtype=torch.int32) for _ in range(world)] if rank == 0 else None
dist.gather(torch.tensor([rank, 40 + rank], dtype=torch.int32), pieces, dst=0)
if rank == 0:
    said.append(f"gathered={[p.tolist() for p in pieces]}")
mine = torch.zeros(3)
dist.scatter(mine, [torch.full((3,), 5.0 + r) for r in range(world)] if rank == 1 else None,
             src=1)
codes = torch.arange(4, dtype=torch.uint8) * (rank + 2)
dist.broadcast(codes, 1)
seen = [torch.zeros(2, dtype=torch.int64) for _ in range(world)]
dist.all_gather(seen, torch.tensor([rank, rank * 100]))
said.append(f"scattered={mine.tolist()} codes={codes.tolist()} seen={[s.tolist() for s in seen]}")
objects = [None] * world
dist.all_gather_object(objects, {"rank": rank, "name": "r" * (rank + 1) * 300})
config = [{"lr": 0.1, "tags": ("a", 1)}, [1, 2]] if rank == 0 else [None, None]
dist.broadcast_object_list(config, src=0)
notes = [None, None] if rank == 1 else None
dist.gather_object(("note", rank), notes, dst=1)
got = [None]
dist.scatter_object_list(got, [{"part": r} for r in range(world)] if rank == 0 else None, src=0)
said.append(f"objects={[(o['rank'], len(o['name'])) for o in objects]} config={config} "
            f"notes={notes} got={got}")
print(f"rank {rank} says " + " | ".join(said))
dist.destroy_process_group()
"""


def test_collectives_of_integers_and_objects_as_torch_gives_them(tmp_path):
    """Integer counts summed over ranks (exactly), reduce/gather/scatter and the object
    collectives in a torch program under mpirun and as_torch: each rank says what torch's
    two gloo processes say, word for word."""
    lines, torch_lines = run_both(tmp_path, METRICS_PROGRAM,
                                   r"rank \d says .*? got=\[\{'part': \d\}\]")
    assert "count=7 big=[2305843009213693953, -1] max=[7, 0]" in lines[0], lines
    assert "reduced=[30.0, 2.0]" in lines[0] and "gathered=[[0, 40], [1, 41]]" in lines[0], lines
    assert "scattered=[6.0, 6.0, 6.0] codes=[0, 3, 6, 9]" in lines[1], lines
    assert "notes=[('note', 0), ('note', 1)] got=[{'part': 1}]" in lines[1], lines
    if torch_lines is not None:
        assert lines == torch_lines



SPAWN_PROGRAM = """
import os
import sys
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def setup(rank, world_size):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29518"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)


def train(rank, world_size, steps):
    setup(rank, world_size)
    torch.manual_seed(0)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(100 + rank)
    for _ in range(steps):
        x, y = torch.randn(6, 4, generator=gen), torch.randn(6, 2, generator=gen)
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    w = model.module[2].weight.detach().flatten()
    print(f"worker {rank} of {world_size} weight {[round(v, 5) for v in w.tolist()]}", flush=True)
    dist.destroy_process_group()


def fail(rank, world_size):
    raise ValueError(f"worker {rank} fails on purpose")


if __name__ == "__main__":
    print("parent starts", flush=True)
    mp.spawn(train, args=(2, 3), nprocs=2, join=True)
    print("parent after spawn", flush=True)
    if sys.argv[1:] == ["fail"]:
        context = mp.spawn(fail, args=(2,), nprocs=2, join=False)
        try:
            while not context.join(timeout=0.5):
                pass
        except mp.ProcessRaisedException as e:
            print(f"parent caught: {'fails on purpose' in str(e)}", flush=True)
"""


def test_a_program_that_spawns_its_ranks_runs_under_as_torch(tmp_path):
    """PyTorch's DDP tutorial shape: mp.spawn(train, nprocs=2) with init_process_group("gloo",
    rank=, world_size=) in each worker, run as `python3 -m gradscope.as_torch prog.py` (no
    mpirun: spawn starts it): the workers' weights are torch's, the parent's code runs once, and
    a worker that raises makes spawn raise in the parent."""
    need_mpirun()
    script = tmp_path / "spawn.py"
    script.write_text(SPAWN_PROGRAM)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", GS_DIST_TIMEOUT="10")
    r = subprocess.run([sys.executable, "-m", "gradscope.as_torch", str(script), "fail"],
                       capture_output=True, text=True, timeout=180, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert out.count("parent starts") == 1 and out.count("parent after spawn") == 1, out
    assert "parent caught: True" in out, out + r.stderr
    lines = sorted(re.findall(r"worker \d of 2 weight \[[-\d., e]*\]", out))
    assert len(lines) == 2, out
    try:
        import torch  # noqa: F401 (the reference, where Debian's torch is installed)
    except ImportError:
        return
    t = subprocess.run([sys.executable, str(script), "fail"], capture_output=True, text=True,
                       timeout=180, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert t.returncode == 0, t.stdout + t.stderr
    assert [l for l in t.stdout.splitlines() if l.startswith("parent")] == \
        [l for l in out.splitlines() if l.startswith("parent")], (t.stdout, out)
    want = sorted(re.findall(r"worker \d of 2 weight \[[-\d., e]*\]", t.stdout))
    for got, ref in zip(lines, want):
        g, w = (np.array(eval(s.split("weight ")[1])) for s in (got, ref))
        assert got.split(" weight")[0] == ref.split(" weight")[0]
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-5)
