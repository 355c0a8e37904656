"""A random-call fuzz of gradscope's Python API: every public function, Tensor method, layer,
loss, optimizer and data class is called with random arguments (tensors of every dtype and
shape, including 0-d, empty and non-contiguous; numbers at the edges; None, strings, lists,
arrays, objects; random keyword names). Any Python exception is a correct answer; an
interpreter crash (a signal) or a SystemError (a C function that broke the C API's contract)
is a failure.

The calls run in child processes, in batches with their own seeds, so a crash is caught and
reproduced: the parent re-runs the crashed batch with each call printed before it runs and
reports the last one. Usage:

    python3 fuzz_api.py --seconds 20          # a slice (meson test)
    python3 fuzz_api.py --calls 1000000       # a long run; prints calls=, seconds=, crashes=
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile
import time

BATCH = 20000  # calls per child process

# Names that are not for random calls: they start the inspector, write event logs, dispose
# every scope or block on other processes, none of which says anything about argument checks.
SKIP = {"inspect", "trace_close", "trace_open", "distributed", "set_num_threads",
        "leak_report", "DataLoader.__iter__"}


def callables():
    """(name, callable) of the public API, in a fixed order."""
    import gradscope
    import gradscope.linalg as linalg
    import gradscope.nn as nn
    import gradscope.nn.functional as F
    import gradscope.nn.utils.rnn as rnn
    import gradscope.optim as optim
    import gradscope.utils.data as data

    found = []
    for prefix, mod in (("gradscope", gradscope), ("F", F), ("nn", nn), ("optim", optim),
                        ("data", data), ("rnn", rnn), ("linalg", linalg)):
        for name in sorted(dir(mod)):
            obj = getattr(mod, name, None)
            if name.startswith("_") or name in SKIP or not callable(obj):
                continue
            if isinstance(obj, type(gradscope)):
                continue
            found.append((f"{prefix}.{name}", obj))
    for name in sorted(dir(gradscope.Tensor)):
        if name.startswith("__") and name not in ("__getitem__", "__setitem__", "__add__",
                                                  "__matmul__", "__floordiv__", "__mod__",
                                                  "__and__", "__invert__", "__format__",
                                                  "__dlpack__", "__array__", "__len__"):
            continue
        if name in SKIP:
            continue
        found.append((f"Tensor.{name}", getattr(gradscope.Tensor, name)))
    return found


def make_pool(rng):
    """Arguments to draw from: a fresh set per batch (calls may write into tensors)."""
    import numpy as np

    import gradscope as gs
    from gradscope.nn.utils.rnn import pack_sequence
    tensors = [
        gs.tensor(2.5), gs.tensor(3), gs.tensor(True), gs.zeros(0), gs.zeros(2, 0),
        gs.ones(3), gs.randn(2, 3), gs.randn(2, 3, 4), gs.arange(6).reshape(2, 3),
        gs.tensor([True, False, True]), gs.randn(4, 3).t(), gs.randn(3, 5)[:, ::2],
        gs.randn(1, 3).expand(4, 3), gs.tensor([1.0, float("nan"), float("inf")]),
        gs.randn(2, 3, dtype=gs.float64), gs.tensor([0, 2, -1]), gs.randn(2, 1, 4, 4),
        gs.randn(3, requires_grad=True), gs.randn(2, 2, requires_grad=True) * 2,
        gs.tensor([3, -2, 2**31 - 1], dtype=gs.int32), gs.arange(6, dtype=gs.int32).reshape(2, 3),
        gs.tensor([0, 1, 255, 7], dtype=gs.uint8), gs.tensor([-128, -1, 0, 127], dtype=gs.int8),
        gs.tensor([-32768, -1, 2, 32767], dtype=gs.int16),
        gs.arange(6, dtype=gs.uint8).reshape(3, 2).t(), gs.tensor([[1, 0], [0, 1]], dtype=gs.uint8),
    ]
    others = [
        0, 1, -1, 2, 3, -3, 5, 2 ** 62, -(2 ** 63), 0.5, -1.5, 0.0, float("nan"), float("inf"),
        True, False, None, "", "mean", "sum", "cpu", "fro", (), (2, 3), (-1,), [0, 2], [[1, 2]],
        (0, 1, 2), [True, False], slice(None), slice(1, None, 2), Ellipsis, object(),
        np.ones(3, np.float32), np.arange(4), np.float32(2), np.int64(-1), gs.float32, gs.int64,
        gs.bool, gs.int32, np.arange(3, dtype=np.int32), np.int32(-2), gs.uint8, gs.int8, gs.int16,
        np.arange(3, dtype=np.uint8), np.array([-128, 1], np.int8), np.array([1, 0], np.int16),
        np.uint8(255), np.int8(-128), np.int16(-1), -129, b"x", {"a": 1}, lambda *a, **k: None, print,
        pack_sequence([gs.randn(3, 2), gs.randn(1, 2)]),
        pack_sequence([gs.randn(2, 3), gs.randn(4, 3)], enforce_sorted=False),
    ]
    return tensors, others


KEYWORDS = ["dim", "keepdim", "dtype", "reduction", "alpha", "p", "k", "largest", "descending",
            "num_classes", "requires_grad", "out", "min", "max", "weight", "bias", "lr",
            "momentum", "batch_size", "shuffle", "start_dim", "end_dim", "unbiased", "mask",
            "value", "index", "other", "padding", "stride", "kernel_size", "bogus"]


def draw(rng, tensors, others):
    return rng.choice(tensors) if rng.random() < 0.55 else rng.choice(others)


def run_batch(seed, count, verbose):
    """Makes count random calls (the child's work); exits 3 on a SystemError."""
    import gradscope as gs
    rng = random.Random(seed)
    gs.manual_seed(seed % (2 ** 31))
    targets = callables()
    tensors, others = make_pool(rng)
    for i in range(count):
        if i % 500 == 0:
            tensors, others = make_pool(rng)
        name, fn = targets[rng.randrange(len(targets))]
        args = [draw(rng, tensors, others) for _ in range(rng.choice((0, 1, 1, 2, 2, 3, 4)))]
        if name.startswith("Tensor.") and rng.random() < 0.9:
            args.insert(0, rng.choice(tensors))  # mostly as a method of a tensor
        kwargs = {}
        if rng.random() < 0.3:
            kwargs[rng.choice(KEYWORDS)] = draw(rng, tensors, others)
        if verbose:
            print(f"call {i}: {name}{tuple(map(short, args))} {list(kwargs)}", file=sys.stderr,
                  flush=True)
        try:
            result = fn(*args, **kwargs)
            if rng.random() < 0.3 and hasattr(result, "tolist"):
                result.tolist()  # use what came back
            if isinstance(result, gs.Tensor) and rng.random() < 0.2:
                tensors.append(result)
        except SystemError as e:
            print(f"SystemError in call {i} {name}: {e}", file=sys.stderr, flush=True)
            sys.exit(3)
        except BaseException as e:  # noqa: B902 - any Python exception is an answer
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
        if len(tensors) > 60:
            del tensors[19:]


def short(a):
    try:
        r = repr(a) if not hasattr(a, "shape") else f"<{type(a).__name__} {tuple(a.shape)}>"
    except Exception as e:  # a disposed tensor, say
        r = f"<{type(a).__name__}: {type(e).__name__}>"
    return r[:40]


def child(seed, count, verbose, workdir, timeout=600):
    """The batch's exit code (-1 when it hung past timeout) and its stderr."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", str(seed), "--calls",
           str(count)] + (["--verbose"] if verbose else [])
    try:
        r = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=timeout)
        return r.returncode, r.stderr
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        return -1, err + f"\nhung: no answer after {timeout} s"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=0)
    ap.add_argument("--calls", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--child", type=int, default=None)
    ap.add_argument("--verbose", action="store_true")
    opts = ap.parse_args()
    if opts.child is not None:
        # A call asking for terabytes (nn.InstanceNorm1d(2**40), say) must fail as an error,
        # not have the kernel kill the process (or its neighbours) for memory: the children run
        # with their address space capped, so such an allocation fails where it is made.
        import resource
        cap = 8 << 30
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        run_batch(opts.child, opts.calls, opts.verbose)
        return 0
    start = time.monotonic()
    calls = batches = 0
    failures = []
    with tempfile.TemporaryDirectory() as workdir:  # anything a call writes lands here
        seed = opts.seed
        while True:
            if opts.calls and calls >= opts.calls:
                break
            if opts.seconds and time.monotonic() - start >= opts.seconds:
                break
            if not opts.calls and not opts.seconds:
                break
            n = min(BATCH, opts.calls - calls) if opts.calls else 2000
            code, err = child(seed, n, False, workdir)
            if code != 0:  # a signal, a SystemError (3) or a hang (-1)
                _, again = child(seed, n, True, workdir)
                last = [ln for ln in again.splitlines() if ln.startswith("call ")][-1:]
                failures.append(f"seed {seed}: exit {code}; last call {last}; "
                                f"{err.strip().splitlines()[-1:]}")
            calls += n
            batches += 1
            seed += 1
    seconds = time.monotonic() - start
    for f in failures:
        print("FAIL", f)
    print(f"calls={calls}")
    print(f"batches={batches}")
    print(f"seconds={seconds:.1f}")
    print(f"crashes={len(failures)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
