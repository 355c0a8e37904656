#!/usr/bin/env python3
"""python-side.py: the gradscope Python module against PyTorch from Python, as key=value
lines (run by python-side.sh, which sets PYTHONPATH to the built module).

Measures, each side in a fresh interpreter where it matters:
- one small op from Python: a + b on 16 float32 elements, the best of 7 runs of 200,000 ops
  (per-op microseconds, and the ratio gradscope/torch; the issue's target is <= 0.5);
- `import gradscope` vs `import torch`: wall time and RSS after the import (fresh process each,
  median of 5);
- churn: creating and dropping 10^6 tensors (a + b results): RSS and the live tensor count
  before and after, which must stay flat.
The digits example's time is measured by python-side.sh (examples/python/digits.py against
digits.py here)."""
import os
import statistics
import subprocess
import sys
import time

PY = "/usr/bin/python3"


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def per_op_us(make, n=200_000, runs=7):
    a, b = make()
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(n):
            a + b
        best = min(best, (time.perf_counter() - start) / n)
    return best * 1e6


def import_cost(module):
    code = ("import time, sys; t = time.perf_counter(); import {m}; d = time.perf_counter() - t;"
            "rss = [l for l in open('/proc/self/status') if l.startswith('VmRSS:')][0].split()[1];"
            "print(d, rss)").format(m=module)
    times, rsses = [], []
    for _ in range(5):
        out = subprocess.run([PY, "-c", code], capture_output=True, text=True, check=True,
                             env=os.environ).stdout.split()
        times.append(float(out[0]))
        rsses.append(int(out[1]))
    return statistics.median(times), statistics.median(rsses) / 1024


def churn(gs):
    a, b = gs.ones(16), gs.ones(16)
    for _ in range(10_000):  # warm the allocator's caches first
        a + b
    live0, rss0 = gs.live_tensor_count(), rss_kib()
    for _ in range(1_000_000):
        a + b
    return live0, gs.live_tensor_count(), rss0 / 1024, rss_kib() / 1024


def main():
    import gradscope as gs
    import torch
    torch.set_num_threads(1)
    g_us = per_op_us(lambda: (gs.ones(16), gs.ones(16)))
    t_us = per_op_us(lambda: (torch.ones(16), torch.ones(16)))
    print(f"py_add16_gradscope_us={g_us:.3f}")
    print(f"py_add16_torch_us={t_us:.3f}")
    print(f"py_add16_ratio={g_us / t_us:.3f}")
    live0, live1, rss0, rss1 = churn(gs)
    print(f"churn_1e6_live_before={live0}")
    print(f"churn_1e6_live_after={live1}")
    print(f"churn_1e6_rss_before_mib={rss0:.1f}")
    print(f"churn_1e6_rss_after_mib={rss1:.1f}")
    for name in ("gradscope", "torch"):
        seconds, mib = import_cost(name)
        print(f"import_{name}_seconds={seconds:.3f}")
        print(f"import_{name}_rss_mib={mib:.1f}")


if __name__ == "__main__":
    sys.exit(main())
