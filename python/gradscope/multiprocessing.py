"""gradscope.multiprocessing: torch.multiprocessing's spawn, over mpirun.

PyTorch's data-parallel tutorials start their ranks with ``mp.spawn(train, args=(world,),
nprocs=world)``: torch starts worker processes and each calls ``train(i, world)``. gradscope's
ranks are MPI processes, and MPI cannot start inside a process that already runs, so spawn
has mpirun start the workers (``mpirun -np nprocs python3 -m gradscope.multiprocessing``) and
waits for them. As under torch's "spawn" start method, a worker imports the program's file as
``__mp_main__`` (so code under ``if __name__ == "__main__":`` does not run again), then calls
fn(local_rank, *args), fn and args sent pickled as torch sends them (fn must be a module-level
function). A worker runs with gradscope.as_torch's import hook when the program does. A
program already started by ``mpirun -np N`` (N = nprocs) calls fn in each of its processes
and ends each when fn returns.

Every other name (Process, Queue, set_start_method, ...) is the standard library's
multiprocessing, as torch.multiprocessing re-exports it.
"""
import multiprocessing as _std
import os
import pickle
import runpy
import shutil
import subprocess
import sys
import tempfile
import traceback
import types

_LOCAL_RANK, _LOCAL_SIZE = "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"


class ProcessException(Exception):
    """A worker process failed: error_index is its rank, pid its process id (-1: unknown)."""

    def __init__(self, msg, error_index=-1, pid=-1):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid


class ProcessRaisedException(ProcessException):
    """A worker's fn raised: the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A worker process ended with a non-zero status without raising (killed, os._exit)."""

    def __init__(self, msg, error_index=-1, error_pid=-1, exit_code=1, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name


def _error_file(payload, rank):
    return f"{payload}.rank{rank}.error"


class ProcessContext:
    """What spawn(join=False) returns: join() waits for the workers (True once they ended)."""

    def __init__(self, process, nprocs, payload):
        self._process, self.nprocs, self._payload = process, nprocs, payload

    def pids(self):
        """The process ids: mpirun's, which started the workers."""
        return [self._process.pid]

    def join(self, timeout=None):
        """Waits for the workers; raises ProcessExitedException if one failed."""
        try:
            code = self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        raised = []
        for rank in range(self.nprocs):
            path = _error_file(self._payload, rank)
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    pid, text = f.read().split("\n", 1)
                raised.append((rank, int(pid), text))
                os.unlink(path)
        if os.path.exists(self._payload):
            os.unlink(self._payload)
        if raised:
            rank, pid, text = raised[0]
            raise ProcessRaisedException(
                f"\n\n-- Process {rank} terminated with the following error:\n{text}", rank, pid)
        if code != 0:
            raise ProcessExitedException(
                f"process exited with exit code {code}: one of the {self.nprocs} workers "
                "ended without raising (killed, or os._exit); mpirun's status", exit_code=code)
        return True


def _under_as_torch():
    from gradscope.as_torch import TorchFinder
    return any(isinstance(f, TorchFinder) for f in sys.meta_path)


def _worker_command(nprocs, payload):
    """mpirun starting nprocs workers of this program, fn and args in the file payload."""
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        raise RuntimeError("spawn(): gradscope starts its workers with mpirun, which is missing: "
                           "install openmpi-bin (scripts/setup-deps.sh)")
    script = sys.argv[0] if sys.argv else ""
    if not os.path.isfile(script):
        raise RuntimeError(f"spawn(): each worker imports this program's file, but sys.argv[0] "
                           f"is {script!r}, not a file (an interactive session or python -c): "
                           "put the program in a file")
    return [mpirun, "--oversubscribe", "-np", str(nprocs), sys.executable, "-m", __name__,
            payload, "as_torch" if _under_as_torch() else "plain", os.path.abspath(script),
            *sys.argv[1:]]


def _run_fn(fn, args, nprocs):
    """In a process mpirun started: fn(local rank, *args)."""
    local = int(os.environ[_LOCAL_SIZE])
    if nprocs != local:
        raise ValueError(f"spawn(): nprocs={nprocs} but mpirun started {local} processes on "
                         f"this machine: run mpirun -np {nprocs}, or call spawn without mpirun "
                         "(it starts mpirun itself)")
    fn(int(os.environ[_LOCAL_RANK]), *args)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Runs fn(i, *args) in nprocs worker processes, i = 0..nprocs-1 (the rank on this
    machine). join=True waits for them; join=False returns a ProcessContext."""
    if not callable(fn):
        raise TypeError(f"spawn(): fn must be callable, got {type(fn).__name__}")
    if not isinstance(nprocs, int) or nprocs < 1:
        raise ValueError(f"spawn(): nprocs must be an int >= 1, got {nprocs!r}")
    if _LOCAL_RANK in os.environ:  # the program itself runs under mpirun: each process is one
        _run_fn(fn, args, nprocs)
        sys.stdout.flush()
        sys.exit(0)
    from gradscope import _gradscope
    if _gradscope._distributed.is_initialized():
        raise RuntimeError("spawn(): init_process_group() was called before spawn in the "
                           "parent process; call it in fn, in the workers")
    with tempfile.NamedTemporaryFile("wb", prefix="gradscope-spawn-", suffix=".pickle",
                                     delete=False) as f:
        pickle.dump((fn, tuple(args), nprocs), f)
    env = dict(os.environ)
    if os.geteuid() == 0:  # Open MPI refuses root unless told; the parent already runs as root
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        process = subprocess.Popen(_worker_command(nprocs, f.name), env=env)
    except BaseException:
        os.unlink(f.name)
        raise
    context = ProcessContext(process, nprocs, f.name)
    if not join:
        return context
    context.join()
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """torch.multiprocessing.spawn: fn(i, *args) in nprocs processes (see the module's text)."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)


def __getattr__(name):
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(_std, name)


def _worker_main(argv):
    """python3 -m gradscope.multiprocessing PAYLOAD as_torch|plain SCRIPT [ARGS]: one worker."""
    payload, mode, script, *rest = argv
    sys.argv = [script, *rest]
    sys.path[0] = os.path.dirname(script)
    if mode == "as_torch":
        from gradscope import as_torch
        as_torch.install()
        as_torch.set_torchrun_env()
    # The program's file as __mp_main__, standing in for __main__ so fn unpickles by its name.
    main = types.ModuleType("__mp_main__")
    sys.modules["__mp_main__"] = sys.modules["__main__"] = main
    main.__dict__.update(runpy.run_path(script, run_name="__mp_main__"))
    with open(payload, "rb") as f:
        fn, args, nprocs = pickle.load(f)
    try:
        _run_fn(fn, args, nprocs)
    except BaseException:  # told to the parent, which raises it as torch's spawn does
        with open(_error_file(payload, int(os.environ[_LOCAL_RANK])), "w", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n{traceback.format_exc()}")
        raise


if __name__ == "__main__":
    _worker_main(sys.argv[1:])
