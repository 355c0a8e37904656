#!/usr/bin/env python3
"""check-readme.py SRCDIR BUILDDIR CC GRADSCOPE [PYTHON]: the examples in README.md work. Its
```c block is compiled against the source tree's headers and the built library and run with
the event log on; it must exit 0, print "live tensors: 0", and leave a log in which
`gradscope stats` finds the scope "step". Its ```python block runs with the built module on
PYTHONPATH (when PYTHON is given: the module was built) and must exit 0 and leave a log too.
The README also keeps the demo and test commands that users and CI run from a clean clone."""
import os
import re
import subprocess
import sys
import tempfile

src, build, cc, gradscope = sys.argv[1:5]
python = sys.argv[5] if len(sys.argv) > 5 else None
readme = open(os.path.join(src, "README.md"), encoding="utf-8").read()
blocks = re.findall(r"```(\w*)\n(.*?)\n```", readme, re.S)
failures = []


def fail(message):
    failures.append(message)
    print("not ok: " + message)


def stats_has_step(log, cwd):
    run = subprocess.run([gradscope, "stats", log], cwd=cwd, capture_output=True, text=True)
    return run.returncode == 0 and re.search(r"^\s+1\s.*\bstep$", run.stdout, re.M)


for command in ("bash scripts/run-demo.sh ", "bash scripts/run-tests.sh "):
    if not any(lang == "sh" and re.search("^" + re.escape(command), body, re.M)
               for lang, body in blocks):
        fail(f"README.md has no ```sh line starting '{command}'")

c_blocks = [body for lang, body in blocks if lang == "c"]
py_blocks = [body for lang, body in blocks if lang == "python"]
if len(c_blocks) != 1 or len(py_blocks) != 1:
    fail(f"README.md should have one C and one Python example, has {len(c_blocks)} and "
         f"{len(py_blocks)}")

with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    for body in c_blocks[:1]:
        with open(os.path.join(tmp, "prog.c"), "w", encoding="utf-8") as f:
            f.write(body + "\n")
        libdir = os.path.join(build, "engine")
        compile_ = subprocess.run(
            [cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", "prog", "prog.c"]
            + os.environ.get("GS_README_CFLAGS", "").split() + [
             "-I" + os.path.join(src, "include"), "-L" + libdir, "-lgradscope",
             "-Wl,-rpath," + libdir], cwd=tmp, capture_output=True, text=True)
        if compile_.returncode != 0:
            fail("the C example does not compile:\n" + compile_.stderr)
        else:
            run = subprocess.run(["./prog"], cwd=tmp, capture_output=True, text=True,
                                 env=dict(env, GS_TRACE="c.gstrace"))
            print(run.stdout, end="")
            if run.returncode != 0 or "live tensors: 0" not in run.stdout:
                fail(f"the C example failed (status {run.returncode}):\n{run.stderr}")
            elif not stats_has_step("c.gstrace", tmp):
                fail("the C example's log has no scope 'step'")
    for body in py_blocks[:1]:
        if not python:
            print("# the Python module is not built: its example is not run")
            break
        with open(os.path.join(tmp, "example.py"), "w", encoding="utf-8") as f:
            f.write(body + "\n")
        run = subprocess.run([python, "example.py"], cwd=tmp, capture_output=True, text=True,
                             env=dict(env, PYTHONPATH=os.path.join(build, "python")))
        print(run.stdout, end="")
        if run.returncode != 0:
            fail(f"the Python example failed (status {run.returncode}):\n{run.stderr}")
        elif not stats_has_step("run.gstrace", tmp):
            fail("the Python example's log has no scope 'step'")

sys.exit(1 if failures else 0)
