#!/usr/bin/env python3
"""oracle_run.py OUT.json PROGRAM [ARGS...]: runs a Python program on the gradscope module
with the differential oracle's probe after every line of it (tests/python/test_oracle.py).

Run with GS_TRACE set (and GS_TRACE_VALUES): after each line of the program's own file that
took an engine event number, gradscope._engine_probe asks the engine about every live tensor.
The probes (each with the counter, the line just run and the engine's answers) are written to
OUT.json when the program ends, for the test to compare with `gradscope state --at`. At most
GS_ORACLE_MAX_PROBES probes (default 400) are taken; the program runs on after that."""
import json
import os
import runpy
import sys

import gradscope as gs

out_path, program = sys.argv[1], os.path.abspath(sys.argv[2])
values = int(os.environ.get("GS_TRACE_VALUES", "0"))
limit = int(os.environ.get("GS_ORACLE_MAX_PROBES", "400"))
probes = []
last = [gs._engine_probe(0)[0]]
lines = {}  # frame -> the line it is on


def probe(line):
    counter, tensors = gs._engine_probe(min(values, 16))
    if counter != last[0]:
        last[0] = counter
        probes.append({"counter": counter, "line": line, "tensors": tensors})


def tracer(frame, event, arg):
    if frame.f_code.co_filename != program:
        return None
    if event in ("line", "return") and len(probes) < limit:
        previous = lines.get(frame)
        if previous is not None:
            probe(previous)
    if event == "line":
        lines[frame] = frame.f_lineno
    elif event == "return":
        lines.pop(frame, None)
    return tracer


sys.argv = sys.argv[2:]
status = 0
sys.settrace(tracer)
try:
    runpy.run_path(program, run_name="__main__")
except SystemExit as e:
    status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
finally:
    sys.settrace(None)
    with open(out_path, "w") as f:
        json.dump({"program": program, "probes": probes}, f)
sys.exit(status)
