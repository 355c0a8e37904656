"""gradscope.distributed: data-parallel training over Open MPI, as torch.distributed.

Start the program with ``mpirun -np N python3 train.py``; ``init_process_group()`` joins the
job (the ranks come from mpirun, so there is nothing to rendezvous: no MASTER_ADDR, no
store), and the collectives, DistributedDataParallel and DistributedSampler work as
PyTorch's. Run without mpirun, a program is a group of one.

The C half is gradscope._gradscope._distributed (python/distributed.c) over the engine's
engine/distributed (doc/distributed.md): collectives in place on contiguous tensors of any
dtype (integer counts are summed exactly; bools reduce as or/and), each first checking that every rank passed the same shape (an error naming both
otherwise), and every wait bounded by a timeout (60 s unless init_process_group(timeout=)
or GS_DIST_TIMEOUT says otherwise) past which the rank that did not arrive is named and the
job stopped.
"""
import atexit
import contextlib
import datetime
import pickle
import sys

import numpy as _np

from gradscope import _gradscope
from gradscope._missing import not_supported as _not_supported, unsupported as _unsupported
from gradscope.nn import Module as _Module

_c = _gradscope._distributed

DistributedSampler = _c.DistributedSampler

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group().")
_state = {"destroyed": False, "exit_hooked": False, "uncaught": False}


class _ReduceOpType(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise _not_supported(f"{__name__}.ReduceOp.{name} (only SUM, AVG, MAX, MIN and PRODUCT)")


class ReduceOp(metaclass=_ReduceOpType):
    """The reductions gradscope's collectives do, elementwise over ranks: SUM, AVG (the sum over
    the world size), MAX, MIN and PRODUCT."""

    SUM = _c.SUM
    AVG = _c.AVG
    MAX = _c.MAX
    MIN = _c.MIN
    PRODUCT = _c.PRODUCT


class Backend:
    """The backends' names. gradscope runs every collective over Open MPI (MPI); "gloo",
    PyTorch's CPU backend, is accepted by init_process_group and runs over it too."""

    MPI = "mpi"
    GLOO = "gloo"


class _Work:
    """What async_op=True returns: gradscope's collectives have finished when they return."""

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True


def is_available():
    """Whether distributed training is built in (always: Open MPI)."""
    return True


def is_mpi_available():
    """Whether the MPI backend is there (always)."""
    return True


def is_gloo_available():
    """Whether init_process_group("gloo") works (always: it runs over Open MPI, with the same
    collectives and values on CPU tensors)."""
    return True


def is_nccl_available():
    """Whether NCCL is there (never: gradscope is CPU only)."""
    return False


def is_initialized():
    """Whether init_process_group has run (and destroy_process_group not yet)."""
    return _c.is_initialized()


def _require_group(group, fn):
    if group is not None:
        raise ValueError(f"{fn}(): only the default group (group=None) is supported, got {group!r}")
    if not _c.is_initialized():
        raise RuntimeError(_NOT_INITIALIZED)


def _seconds(timeout):
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
        return float(timeout)
    raise TypeError(f"init_process_group(): timeout must be a datetime.timedelta or seconds, "
                    f"got {type(timeout).__name__}")


def _excepthook(kind, value, traceback):
    # An uncaught exception leaves the job without MPI_Finalize (which waits for every rank):
    # the process exits non-zero and mpirun stops the other ranks at once.
    _state["uncaught"] = True
    _state["previous_excepthook"](kind, value, traceback)


def _at_exit():
    if _c.is_initialized() and not _state["uncaught"]:
        _c.finalize()


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None):
    """Joins the MPI job mpirun started (a group of one without mpirun), as PyTorch's call.

    backend: None, "mpi" or "gloo" (PyTorch's CPU backend, which programs started by torchrun
    ask for: the collectives run over Open MPI all the same). init_method: None or
    "env://" (mpirun tells every process its rank). world_size and rank, when given, must be
    mpirun's. timeout (timedelta or seconds): how long a collective waits for the others.
    """
    if _c.is_initialized():
        raise RuntimeError("trying to initialize the default process group twice!")
    if backend is not None and str(backend).lower() not in ("mpi", "gloo"):
        raise ValueError(f"init_process_group(): backend {backend!r} is not supported: gradscope "
                         "runs over Open MPI on CPUs, so pass backend='mpi' or 'gloo' (or leave "
                         "it out) and start the program with mpirun -np N")
    if init_method not in (None, "env://"):
        raise ValueError(f"init_process_group(): init_method {init_method!r} is not supported: "
                         "mpirun starts the processes and tells each its rank; leave it out")
    if store is not None:
        raise ValueError("init_process_group(): store is not supported: mpirun tells every "
                         "process its rank; leave it out")
    if _state["destroyed"]:
        raise RuntimeError("init_process_group(): the process group was destroyed in this "
                           "process, and Open MPI cannot start again in the same process "
                           "(MPI_Init runs once per process)")
    seconds = None if timeout is None else _seconds(timeout)
    _c.init()
    if seconds is not None:
        _c.set_timeout(seconds)
    if not _state["exit_hooked"]:
        _state["exit_hooked"] = True
        _state["previous_excepthook"] = sys.excepthook
        sys.excepthook = _excepthook
        atexit.register(_at_exit)
    for name, given, actual in (("world_size", world_size, _c.world_size()),
                                ("rank", rank, _c.rank())):
        if given not in (-1, None) and given != actual:
            raise ValueError(f"init_process_group(): {name}={given} was passed but mpirun made "
                             f"it {actual}: leave it out, mpirun decides")


def destroy_process_group(group=None):
    """Leaves the MPI job (MPI_Finalize); every rank calls it. It cannot be joined again."""
    _require_group(group, "destroy_process_group")
    _c.finalize()
    _state["destroyed"] = True


def get_rank(group=None):
    """This process's rank in the job, 0 to world size - 1."""
    _require_group(group, "get_rank")
    return _c.rank()


def get_world_size(group=None):
    """How many ranks the job has."""
    _require_group(group, "get_world_size")
    return _c.world_size()


def get_backend(group=None):
    """The backend's name: "mpi"."""
    _require_group(group, "get_backend")
    return Backend.MPI


def _op(op, fn):
    if op not in (ReduceOp.SUM, ReduceOp.AVG, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT):
        raise ValueError(f"{fn}(): op must be ReduceOp.SUM, AVG, MAX, MIN or PRODUCT, got {op!r}")
    return op


def _done(async_op):
    return _Work() if async_op else None


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """tensor becomes the reduction by op (sum, average, max, min, product) of every rank's
    tensor, in place."""
    _require_group(group, "all_reduce")
    _c.all_reduce(tensor, _op(op, "all_reduce"))
    return _done(async_op)


def broadcast(tensor, src, group=None, async_op=False):
    """tensor becomes rank src's tensor on every rank, in place."""
    _require_group(group, "broadcast")
    _c.broadcast(tensor, src)
    return _done(async_op)


def barrier(group=None, async_op=False, device_ids=None):
    """Returns when every rank has called it."""
    _require_group(group, "barrier")
    _c.barrier()
    return _done(async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """output_tensor ([world_size * n, ...]) receives every rank's input_tensor, rank 0's first."""
    _require_group(group, "all_gather_into_tensor")
    _c.all_gather_into_tensor(output_tensor, input_tensor)
    return _done(async_op)


def _same_as(tensors, tensor, what, fn):
    """tensors must be world_size tensors shaped and typed as tensor (torch's rule too)."""
    world = _c.world_size()
    if tensors is None or len(tensors) != world:
        got = "None" if tensors is None else f"{len(tensors)}"
        raise ValueError(f"{fn}(): {what} must hold world_size={world} tensors on this rank, "
                         f"got {got}")
    for i, t in enumerate(tensors):
        if tuple(t.shape) != tuple(tensor.shape) or t.dtype != tensor.dtype:
            raise ValueError(f"{fn}(): {what}[{i}] is {tuple(t.shape)} {t.dtype} but tensor "
                             f"is {tuple(tensor.shape)} {tensor.dtype}")


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[r] receives rank r's tensor (every rank passes the same shape)."""
    _require_group(group, "all_gather")
    _gather_into(tensor_list, tensor, "tensor_list", "all_gather")
    return _done(async_op)


def _gather_into(tensors, tensor, what, fn):
    _same_as(tensors, tensor, what, fn)
    n = tensor.numel()
    gathered = _gradscope.empty(_c.world_size() * n, dtype=tensor.dtype)
    _c.all_gather_into_tensor(gathered, tensor.contiguous().reshape(-1))
    with _gradscope.no_grad():
        for r, t in enumerate(tensors):
            t.copy_(gathered[r * n:(r + 1) * n].reshape(tuple(tensor.shape)))


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """input (world_size times output's elements) is reduced over ranks; rank r keeps part r."""
    _require_group(group, "reduce_scatter_tensor")
    _c.reduce_scatter_tensor(output, input, _op(op, "reduce_scatter_tensor"))
    return _done(async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """output receives the reduction over ranks of every rank's input_list[rank]."""
    _require_group(group, "reduce_scatter")
    world = _c.world_size()
    if len(input_list) != world:
        raise ValueError(f"reduce_scatter(): input_list must hold world_size={world} tensors, "
                         f"got {len(input_list)}")
    flat = _gradscope.cat([t.contiguous().reshape(-1) for t in input_list])
    _c.reduce_scatter_tensor(output, flat, _op(op, "reduce_scatter"))
    return _done(async_op)


def _rank_arg(value, name, fn):
    world = _c.world_size()
    if not 0 <= value < world:
        raise ValueError(f"{fn}(): {name} must be a rank in 0..{world - 1}, got {value}")
    return value


def _not_here(value, what, role, fn):
    if value:
        raise ValueError(f"{fn}(): {what} must not be given on ranks other than the {role} "
                         f"rank (it is read or written only there)")


def reduce(tensor, dst, op=ReduceOp.SUM, group=None, async_op=False):
    """Rank dst's tensor becomes the reduction by op of every rank's tensor; the other ranks'
    tensors are left as they were (PyTorch leaves them unspecified)."""
    _require_group(group, "reduce")
    _rank_arg(dst, "dst", "reduce")
    target = tensor if _c.rank() == dst else tensor.detach().clone()
    _c.all_reduce(target, _op(op, "reduce"))
    return _done(async_op)


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False):
    """Rank dst's gather_list[r] receives rank r's tensor; the other ranks pass no list."""
    _require_group(group, "gather")
    _rank_arg(dst, "dst", "gather")
    if _c.rank() != dst:
        _not_here(gather_list, "gather_list", "destination", "gather")
        gather_list = [_gradscope.empty(tuple(tensor.shape), dtype=tensor.dtype)
                       for _ in range(_c.world_size())]
    _gather_into(gather_list, tensor.detach(), "gather_list", "gather")
    return _done(async_op)


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False):
    """tensor receives rank src's scatter_list[rank]; the other ranks pass no list."""
    _require_group(group, "scatter")
    _rank_arg(src, "src", "scatter")
    rank, n = _c.rank(), tensor.numel()
    if rank == src:
        _same_as(scatter_list, tensor, "scatter_list", "scatter")
        flat = _gradscope.cat([t.detach().contiguous().reshape(-1) for t in scatter_list])
    else:
        _not_here(scatter_list, "scatter_list", "source", "scatter")
        flat = _gradscope.empty(_c.world_size() * n, dtype=tensor.dtype)
    _c.broadcast(flat, src)
    with _gradscope.no_grad():
        tensor.copy_(flat[rank * n:(rank + 1) * n].reshape(tuple(tensor.shape)))
    return _done(async_op)


def _to_bytes(obj):
    data = pickle.dumps(obj)
    return _gradscope.from_numpy(_np.frombuffer(data, dtype=_np.uint8).copy()), len(data)


def _from_bytes(t, size):
    return pickle.loads(t[:size].numpy().tobytes())


def _gather_pickled(obj):
    """Every rank's obj, pickled, sent in one allgather padded to the longest."""
    world = _c.world_size()
    data, size = _to_bytes(obj)
    sizes = _gradscope.zeros(world, dtype=_gradscope.int64)
    _c.all_gather_into_tensor(sizes, _gradscope.tensor([size], dtype=_gradscope.int64))
    longest = int(sizes.max())
    padded = _gradscope.zeros(longest, dtype=_gradscope.uint8)
    padded[:size] = data
    everything = _gradscope.empty(world * longest, dtype=_gradscope.uint8)
    _c.all_gather_into_tensor(everything, padded)
    return [_from_bytes(everything[r * longest:(r + 1) * longest], int(sizes[r]))
            for r in range(world)]


def all_gather_object(object_list, obj, group=None):
    """object_list[r] becomes rank r's obj (any picklable object)."""
    _require_group(group, "all_gather_object")
    world = _c.world_size()
    if len(object_list) != world:
        raise ValueError(f"all_gather_object(): object_list must hold world_size={world} "
                         f"items, got {len(object_list)}")
    object_list[:] = _gather_pickled(obj)


def gather_object(obj, object_gather_list=None, dst=0, group=None):
    """Rank dst's object_gather_list[r] becomes rank r's obj; the other ranks pass no list."""
    _require_group(group, "gather_object")
    _rank_arg(dst, "dst", "gather_object")
    world = _c.world_size()
    if _c.rank() == dst:
        if object_gather_list is None or len(object_gather_list) != world:
            raise ValueError(f"gather_object(): object_gather_list must hold world_size={world} "
                             "items on the destination rank")
    else:
        _not_here(object_gather_list, "object_gather_list", "destination", "gather_object")
    everything = _gather_pickled(obj)
    if _c.rank() == dst:
        object_gather_list[:] = everything


def broadcast_object_list(object_list, src=0, group=None, device=None):
    """Every rank's object_list (of the same length) becomes rank src's, item by item."""
    _require_group(group, "broadcast_object_list")
    _rank_arg(src, "src", "broadcast_object_list")
    sent = _pickled_from(src, list(object_list))
    if len(sent) != len(object_list):
        raise ValueError(f"broadcast_object_list(): rank {src} sent {len(sent)} objects but "
                         f"this rank's object_list holds {len(object_list)}")
    object_list[:] = sent


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=0,
                        group=None):
    """scatter_object_output_list[0] becomes rank src's scatter_object_input_list[rank]."""
    _require_group(group, "scatter_object_list")
    _rank_arg(src, "src", "scatter_object_list")
    world, rank = _c.world_size(), _c.rank()
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError("scatter_object_list(): scatter_object_output_list must be a list of "
                         "at least one item (item 0 receives this rank's object)")
    if rank == src:
        if scatter_object_input_list is None or len(scatter_object_input_list) != world:
            raise ValueError(f"scatter_object_list(): scatter_object_input_list must hold "
                             f"world_size={world} items on the source rank")
    else:
        _not_here(scatter_object_input_list, "scatter_object_input_list", "source",
                  "scatter_object_list")
    items = _pickled_from(src, scatter_object_input_list)
    scatter_object_output_list[0] = items[rank]


def _pickled_from(src, obj):
    """Rank src's obj on every rank: its pickled length, then its bytes, broadcast."""
    data, size = _to_bytes(obj) if _c.rank() == src else (None, 0)
    length = _gradscope.tensor([size], dtype=_gradscope.int64)
    _c.broadcast(length, src)
    size = int(length[0])
    if _c.rank() != src:
        data = _gradscope.empty(size, dtype=_gradscope.uint8)
    _c.broadcast(data, src)
    return _from_bytes(data, size)


class DistributedDataParallel(_Module):
    """torch.nn.parallel.DistributedDataParallel over the engine's: module's parameters are
    broadcast from rank 0 here, and each backward after a forward through this wrapper
    averages the gradients across ranks in buckets (bucket_cap_mb MiB) whose allreduces start
    while backward still runs. A parameter no gradient reached is an error naming it and the
    forward's line, unless find_unused_parameters=True (it then contributes zeros).
    no_sync() accumulates gradients locally. gradient_as_bucket_view=True makes each .grad a
    view of its bucket after a synchronised backward (no copy back; later backwards add into
    it there). check_every=N (gradscope's) compares parameter checksums across ranks every N
    forwards and names those that drifted apart.

    Like PyTorch's it is a Module: ddp.module is the wrapped one, and its parameters and
    state_dict() keys start with "module.".
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=25,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, *, check_every=0):
        super().__init__()
        if device_ids not in (None, []) or output_device is not None:
            raise ValueError("DistributedDataParallel(): device_ids and output_device are for "
                             "GPU modules; gradscope runs on the CPU: leave them out")
        if process_group is not None:
            raise ValueError("DistributedDataParallel(): only the default group "
                             "(process_group=None) is supported")
        if static_graph:
            raise ValueError("DistributedDataParallel(): static_graph=True is not supported")
        if not _c.is_initialized():
            raise RuntimeError(_NOT_INITIALIZED)
        if not isinstance(module, _Module):
            raise TypeError("DistributedDataParallel(): expected a gradscope nn.Module, got "
                            f"{type(module).__name__}")
        if not bucket_cap_mb > 0:
            raise ValueError(f"DistributedDataParallel(): bucket_cap_mb must be > 0, got "
                             f"{bucket_cap_mb}")
        # The engine's DDP first: if the ranks refuse it, module has not joined this one's tree.
        reducer = _c._Reducer(module, float(bucket_cap_mb), bool(find_unused_parameters),
                              bool(broadcast_buffers), int(check_every),
                              bool(gradient_as_bucket_view))
        self.module = module
        self.find_unused_parameters = bool(find_unused_parameters)
        self.bucket_cap_mb = bucket_cap_mb
        self.broadcast_buffers = bool(broadcast_buffers)
        self.gradient_as_bucket_view = bool(gradient_as_bucket_view)
        self._reducer = reducer

    def forward(self, *inputs, **kwargs):
        caller = sys._getframe(1)  # the line that called ddp(x): the unused-parameter error names it
        self._reducer.before_forward(caller.f_code.co_filename, caller.f_lineno)
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Backwards inside accumulate gradients without communicating; the first backward
        after it averages the accumulated sum."""
        self._reducer.set_no_sync(True)
        try:
            yield
        finally:
            self._reducer.set_no_sync(False)

    def ddp_stats(self):
        """gradscope's figures of the last synchronised backward: steps, bytes_reduced,
        backward_s, wait_s (waiting for allreduces at its end), n_buckets, and transport:
        "shared-memory" when every rank is on this machine, else "mpi" (MPI_Iallreduce)."""
        return self._reducer.stats()

    def ddp_buckets(self):
        """Per bucket: parameters, bytes, and when it was ready, launched and finished."""
        return self._reducer.buckets()


__getattr__ = _unsupported(__name__)
