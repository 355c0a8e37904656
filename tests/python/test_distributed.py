"""test_distributed.py: gradscope.distributed on 2 MPI ranks (dist_worker.py under
``mpirun --oversubscribe -np 2``, as root too) against one process: after K steps DDP's
parameters equal a one-process run on the whole batch (float64 within 1e-12, float32 within
1e-5), with and without no_sync; a parameter that got no gradient is named; different shapes
on two ranks are refused, naming both; the collectives, the sampler and the torch names under
as_torch. Also what needs no second rank: errors before init, and the backend refusal.
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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import dist_worker  # noqa: E402


def mpirun(*args, timeout=120):
    """Runs dist_worker.py with args on 2 ranks; (exit status, both ranks' output)."""
    if shutil.which("mpirun") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("mpirun is missing (CI=true): install openmpi-bin (scripts/setup-deps.sh)")
        pytest.skip("no mpirun: the 2-rank tests are not run (install openmpi-bin)")
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
    for backend in ("gloo", "nccl"):
        with pytest.raises(ValueError, match=f"backend '{backend}' is not supported.*mpirun"):
            dist.init_process_group(backend=backend)
    with pytest.raises(ValueError, match="init_method"):
        dist.init_process_group(init_method="tcp://127.0.0.1:23456")
    assert not dist.is_initialized()
    with pytest.raises(AttributeError, match="ReduceOp.MAX"):
        dist.ReduceOp.MAX
