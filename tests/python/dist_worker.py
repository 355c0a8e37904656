"""dist_worker.py: what test_distributed.py runs on each of 2 MPI ranks (mpirun -np 2), and the
model and data both sides build (the one-process reference imports them).

Modes (argv[1]):
  parity DTYPE STEPS OUT [no_sync]  DDP over MLP on rank r's half of the global batch for STEPS
                           SGD steps (with no_sync: each step accumulates a first half-batch
                           under ddp.no_sync() and a second one synchronised); rank 0 saves
                           the parameters to OUT (.npz)
  unused                   a parameter that takes no part in the loss: prints the error
  unused_allowed           the same with find_unused_parameters=True: must train
  shapes                   all_reduce with a different shape per rank, then DDP over modules
                           of different shapes: prints both errors
  collectives              broadcast, all_gather, reduce_scatter, AVG, sampler with drop_last
  as_torch                 the torch names under gradscope.as_torch's import hook
  sync_batch_norm          nn.SyncBatchNorm on each rank's half batch against BatchNorm1d on
                           the whole batch (float64): outputs, input and weight gradients,
                           running estimates, and a model converted and trained under DDP
Every mode prints "worker ok" on rank 0 when everything it checks held.
"""
import os
import re
import sys

import numpy as np

import gradscope as gs
import gradscope.distributed as dist
import gradscope.nn as nn

IN, HIDDEN, OUT, GLOBAL_BATCH, LR, MOMENTUM = 6, 8, 3, 16, 0.1, 0.9


class MLP(nn.Module):
    """A small MLP written as a PyTorch user writes one (a Python forward), with parameters
    from a fixed NumPy generator so every process builds the same ones in DTYPE."""

    def __init__(self, dtype, extra_unused=False, hidden=HIDDEN):
        super().__init__()
        g = np.random.default_rng(0)
        self.w1 = nn.Parameter(gs.tensor(g.standard_normal((IN, hidden)).astype(dtype) * 0.4))
        self.b1 = nn.Parameter(gs.tensor(g.standard_normal(hidden).astype(dtype) * 0.1))
        self.w2 = nn.Parameter(gs.tensor(g.standard_normal((hidden, OUT)).astype(dtype) * 0.4))
        self.b2 = nn.Parameter(gs.tensor(g.standard_normal(OUT).astype(dtype) * 0.1))
        if extra_unused:
            self.head = nn.Linear(hidden, 2)  # never called by forward

    def forward(self, x):
        return (x @ self.w1 + self.b1).relu() @ self.w2 + self.b2


def batch(dtype, step):
    """Step's global batch: inputs [GLOBAL_BATCH, IN] and targets [GLOBAL_BATCH, OUT]."""
    g = np.random.default_rng(100 + step)
    return (g.standard_normal((GLOBAL_BATCH, IN)).astype(dtype),
            g.standard_normal((GLOBAL_BATCH, OUT)).astype(dtype))


def loss_of(model, x, y):
    return ((model(gs.tensor(x)) - gs.tensor(y)) ** 2).mean()


def parameters_of(module):
    return {name: p.detach().numpy().copy() for name, p in module.named_parameters()}


def parity(dtype_name, steps, out, no_sync=False, bucket_view=False):
    dtype = np.dtype(dtype_name)
    rank, world = dist.get_rank(), dist.get_world_size()
    model = MLP(dtype)
    ddp = dist.DistributedDataParallel(model, check_every=2, gradient_as_bucket_view=bucket_view)
    opt = gs.optim.SGD(ddp.parameters(), lr=LR, momentum=MOMENTUM)
    per_rank = GLOBAL_BATCH // world
    for step in range(steps):
        x, y = batch(dtype, step)
        mine = slice(rank * per_rank, (rank + 1) * per_rank)
        if no_sync:
            half = per_rank // 2
            xs, ys = x[mine], y[mine]
            with ddp.no_sync():
                (loss_of(ddp, xs[:half], ys[:half]) / 2).backward()
            (loss_of(ddp, xs[half:], ys[half:]) / 2).backward()
        else:
            loss_of(ddp, x[mine], y[mine]).backward()
        if bucket_view:  # each .grad a view of its bucket, the parameters one after another
            grads = [p.grad for p in model.parameters()]
            assert all(g._base is not None for g in grads), [g._base for g in grads]
            for later, earlier in zip(grads[1:], grads):
                assert later.data_ptr() + later.numel() * later.element_size() == \
                    earlier.data_ptr(), "gradients are not consecutive in their bucket"
        opt.step()
        opt.zero_grad()
    stats = ddp.ddp_stats()
    # mpirun on one machine: the buckets go through shared memory unless asked otherwise
    want = "mpi" if os.environ.get("GS_DDP_TRANSPORT") == "mpi" else "shared-memory"
    assert stats["transport"] == want, (stats, want)
    assert stats["steps"] == steps, stats
    if rank == 0:
        np.savez(out, **parameters_of(model))
        print("worker ok")


def reference(dtype_name, steps):
    """The same steps in one process on the whole global batch: what DDP must equal."""
    dtype = np.dtype(dtype_name)
    model = MLP(dtype)
    opt = gs.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    for step in range(steps):
        x, y = batch(dtype, step)
        loss_of(model, x, y).backward()
        opt.step()
        opt.zero_grad()
    return parameters_of(model)


def unused(allowed):
    model = MLP(np.float32, extra_unused=True)
    ddp = dist.DistributedDataParallel(model, find_unused_parameters=allowed)
    x, y = batch(np.float32, 0)
    try:
        loss_of(ddp, x, y).backward()
    except RuntimeError as e:
        print(f"rank {dist.get_rank()} error: {e}", flush=True)
        return
    assert allowed, "a backward with an unused parameter was accepted"
    # Unused on every rank: its gradient stays None, as PyTorch's; the others are averaged.
    assert model.head.weight.grad is None and model.w1.grad is not None
    if dist.get_rank() == 0:
        print("worker ok")


def shapes():
    rank = dist.get_rank()
    t = gs.ones(3 + rank, 2)
    try:
        dist.all_reduce(t)
        print("all_reduce accepted different shapes", flush=True)
        return
    except (RuntimeError, ValueError) as e:
        print(f"rank {rank} all_reduce error: {e}", flush=True)
    try:
        dist.DistributedDataParallel(MLP(np.float32, hidden=HIDDEN + rank))
        print("DDP accepted different modules", flush=True)
        return
    except (RuntimeError, ValueError) as e:
        print(f"rank {rank} DDP error: {e}", flush=True)
    dist.barrier()  # the group still works after both refusals
    if rank == 0:
        print("worker ok")


def collectives():
    rank, world = dist.get_rank(), dist.get_world_size()
    t = gs.tensor([float(rank + 1)] * 4, dtype=gs.float64)
    dist.broadcast(t, src=1)
    assert t.tolist() == [2.0] * 4, t.tolist()
    t = gs.tensor([float(rank + 1)] * 4)
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    assert t.tolist() == [1.5] * 4, t.tolist()
    for op, want in ((dist.ReduceOp.MAX, [2.0, -1.0]), (dist.ReduceOp.MIN, [1.0, -2.0]),
                     (dist.ReduceOp.PRODUCT, [2.0, 2.0])):
        t = gs.tensor([rank + 1.0, -(rank + 1.0)], dtype=gs.float64)
        dist.all_reduce(t, op=op)
        assert t.tolist() == want, (op, t.tolist())
    gathered = [gs.zeros(2, 2) for _ in range(world)]
    dist.all_gather(gathered, gs.full((2, 2), float(rank)))
    assert [g.tolist() for g in gathered] == [[[float(r)] * 2] * 2 for r in range(world)]
    out = gs.zeros(2)
    dist.reduce_scatter(out, [gs.full((2,), float(r + 10 * rank)) for r in range(world)])
    assert out.tolist() == [float(rank * world + 10 * sum(range(world)))] * 2, out.tolist()
    ds = gs.utils.data.TensorDataset(gs.arange(7).float())
    cut = dist.DistributedSampler(ds, shuffle=False, drop_last=True)
    padded = dist.DistributedSampler(ds, shuffle=False)
    assert list(cut) == list(range(rank, 6, world)) and len(padded) == 4, (list(cut), len(padded))
    counts = gs.tensor([rank + 1, 2 ** 60])
    dist.all_reduce(counts)
    assert counts.tolist() == [3, 2 ** 61], counts.tolist()
    # bools as torch's NCCL backend reduces them (its gloo refuses them): sum an or, min an and
    flags, every = gs.tensor([rank == 1, True, False]), gs.tensor([rank == 1, True, False])
    dist.all_reduce(flags)
    dist.all_reduce(every, op=dist.ReduceOp.MIN)
    assert flags.tolist() == [True, True, False] and every.tolist() == [False, True, False]
    try:
        dist.all_reduce(gs.ones(2, dtype=gs.int64), op=dist.ReduceOp.AVG)
        raise AssertionError("all_reduce averaged int64 tensors")
    except TypeError as e:
        assert "f32 or f64 tensor for GS_DIST_AVG" in str(e), e
    # every rank misplaces or misshapes its list, so each refuses before the collective
    for call, match in ((lambda: dist.gather(gs.ones(2), [gs.ones(2)], dst=0),
                         "gather_list must hold world_size=2 tensors" if rank == 0 else
                         "gather_list must not be given on ranks other than the destination"),
                        (lambda: dist.scatter(gs.ones(2), [gs.ones(3)] * 2, src=1),
                         "scatter_list\\[0\\] is \\(3,\\)" if rank == 1 else
                         "scatter_list must not be given"),
                        (lambda: dist.reduce(gs.ones(2), dst=2), "dst must be a rank in 0..1")):
        try:
            call()
            raise AssertionError(f"accepted: {match}")
        except ValueError as e:
            assert re.search(match, str(e)), (match, str(e))
    if rank == 0:
        print("worker ok")


def as_torch():
    from gradscope import as_torch as hook
    hook.install()
    import torch
    import torch.distributed as tdist
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data.distributed import DistributedSampler
    assert tdist.is_initialized() and tdist.get_world_size() == 2
    assert DDP is dist.DistributedDataParallel and DistributedSampler is gs.utils.data.DistributedSampler
    model = DDP(torch.nn.Linear(3, 2))
    model(torch.ones(4, 3)).sum().backward()
    t = torch.ones(2)
    tdist.all_reduce(t, op=tdist.ReduceOp.SUM)
    assert t.tolist() == [2.0, 2.0]
    if tdist.get_rank() == 0:
        print("worker ok")


def sync_batch_norm():
    rank, world = dist.get_rank(), dist.get_world_size()
    gen = gs.Generator().manual_seed(3)
    x = gs.randn(8, 3, 5, dtype=gs.float64, generator=gen) * 2 + 1
    c = gs.randn(8, 3, 5, dtype=gs.float64, generator=gen)
    rows = slice(rank * 8 // world, (rank + 1) * 8 // world)
    ref = nn.BatchNorm1d(3, dtype=gs.float64)
    mine = nn.SyncBatchNorm(3, dtype=gs.float64)
    with gs.no_grad():
        for bn in (ref, mine):
            bn.weight.copy_(gs.tensor([0.5, 2.0, -1.0], dtype=gs.float64))
            bn.bias.copy_(gs.tensor([0.1, 0.2, 0.3], dtype=gs.float64))
    xr = x.clone().requires_grad_()
    yr = ref(xr)
    (yr * c).sum().backward()
    xm = x[rows].clone().requires_grad_()
    ym = mine(xm)
    assert ym.grad_fn.name() == "SyncBatchNormBackward", ym.grad_fn.name()
    (ym * c[rows]).sum().backward()

    def close(a, b, what):
        diff = (a - b).abs().max().item()
        assert diff <= 1e-12, f"{what} differs by {diff}"

    close(ym.detach(), yr.detach()[rows], "the output")
    close(xm.grad, xr.grad[rows], "the input's gradient")
    for name in ("weight", "bias"):
        g = getattr(mine, name).grad.clone()
        dist.all_reduce(g)  # each rank's sum over its rows: together, the whole batch's
        close(g, getattr(ref, name).grad, f"{name}'s gradient summed over ranks")
    close(mine.running_mean, ref.running_mean, "running_mean")
    close(mine.running_var, ref.running_var, "running_var")
    assert mine.num_batches_tracked.item() == 1
    mine.eval()
    ref.eval()
    close(mine(x[rows]), ref(x[rows]), "the output in eval mode")
    # a model converted and trained under DDP keeps the ranks' parameters equal
    model = nn.SyncBatchNorm.convert_sync_batchnorm(
        nn.Sequential(nn.Linear(5, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2)).double())
    assert isinstance(model[1], nn.SyncBatchNorm)
    ddp = dist.DistributedDataParallel(model)
    opt = gs.optim.SGD(ddp.parameters(), lr=0.1)
    for step in range(3):
        opt.zero_grad()
        xs = gs.randn(4, 5, dtype=gs.float64, generator=gen) + rank
        ddp(xs).square().mean().backward()
        opt.step()
    flat = gs.cat([p.detach().reshape(-1) for p in model.parameters()])
    first = flat.clone()
    dist.broadcast(first, 0)
    assert gs.equal(flat, first), "the ranks' parameters drifted apart"
    if rank == 0:
        print("worker ok")


def main():
    dist.init_process_group(backend="mpi")
    mode = sys.argv[1]
    if mode == "parity":
        parity(sys.argv[2], int(sys.argv[3]), sys.argv[4], no_sync="no_sync" in sys.argv[5:],
               bucket_view="bucket_view" in sys.argv[5:])
    elif mode in ("unused", "unused_allowed"):
        unused(mode == "unused_allowed")
    elif mode == "shapes":
        shapes()
    elif mode == "collectives":
        collectives()
    elif mode == "as_torch":
        as_torch()
    elif mode == "sync_batch_norm":
        sync_batch_norm()
    else:
        sys.exit(f"dist_worker.py: unknown mode {mode!r}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
