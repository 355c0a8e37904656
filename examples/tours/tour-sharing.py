#!/usr/bin/env python3
"""tour-sharing: tour 8, tensors shared between Python, NumPy and PyTorch. gradscope.from_numpy
wraps an array's bytes (a write on either side shows on the other), t.numpy() and memoryview(t)
hand the same bytes back and pin the storage, torch.from_dlpack(t) and gradscope.from_dlpack(w)
share one data pointer in each direction. No step copies a byte; the log says whose memory each
storage wraps. Run under GS_TRACE=run.gstrace and open the log with
`gradscope-inspector --tour sharing` (which runs it with the module on PYTHONPATH)."""
import sys

import numpy as np
import torch

import gradscope as gs

failures = 0


def check(cond, what):
    """A tour is a test: a story that stops being true makes the program exit non-zero."""
    global failures
    if not cond:
        print(f"tour-sharing: check failed: {what}", file=sys.stderr)
        failures += 1


def section(mark):
    """A mark in the log (what the tour's steps search from) and the same heading here."""
    gs.trace_mark(mark)
    print(f"\n== {mark} ==")


def main():
    section("from numpy")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = gs.trace_name(gs.from_numpy(a), "x")  # the array's bytes, not a copy
    check(x.data_ptr() == a.ctypes.data, "x starts at the array's first byte")
    a[0, 0] = 100.0                           # NumPy writes: x sees it
    x += 1                                    # gradscope writes: the array sees it
    check(a[0, 0] == 101.0 and a[1, 2] == 6.0, "the array sees both writes")

    section("back to numpy")
    view = memoryview(x)                      # the buffer protocol: the same bytes
    check(view[1, 2] == 6.0, "memoryview(x) reads x's bytes")
    view.release()                            # (a memoryview holds x itself until released)
    back = x.numpy()                          # the same bytes again, and a pin on the storage
    check(np.shares_memory(back, a), "x.numpy() is the array's memory")
    del x                                     # the tensor goes; back pins its storage
    back[0, 1] = 7.0
    check(a[0, 1] == 7.0, "the storage outlives x")

    section("let go")
    del back                                  # the last pin: now the storage goes

    section("to torch")
    y = gs.trace_name(gs.tensor([1.0, 2.0, 3.0, 4.0]), "y")  # the engine's own memory
    ty = torch.from_dlpack(y)                 # PyTorch over y's bytes
    check(ty.data_ptr() == y.data_ptr(), "torch.from_dlpack(y) has y's data pointer")
    ty.mul_(10)                               # PyTorch writes: y sees it
    y += 1                                    # gradscope writes: PyTorch sees it
    check(ty.tolist() == [11.0, 21.0, 31.0, 41.0], "ty sees both writes")

    section("from torch")
    w = torch.linspace(0, 1, 5)
    z = gs.trace_name(gs.from_dlpack(w), "z")  # PyTorch's bytes, lent through DLPack
    check(z.data_ptr() == w.data_ptr(), "gradscope.from_dlpack(w) has w's data pointer")
    w[0] = -5.0                               # PyTorch writes: z sees it
    total = gs.trace_name(z.sum(), "total")   # the engine reads PyTorch's bytes in place
    check(total.item() == -5.0 + 0.25 + 0.5 + 0.75 + 1.0, "z's sum has PyTorch's write")
    del z                                     # z's storage goes: PyTorch gets w back
    w.add_(1)
    check(w[0].item() == -4.0, "w outlives z")

    del total, y, ty
    check(gs.live_tensor_count() == 0, "no tensor is left alive")
    print(f"checks_failed={failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
