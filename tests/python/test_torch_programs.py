"""The compatibility suite: each PyTorch program in torch_programs/ runs under real torch and
under `python3 -m gradscope.as_torch`, and both must print the same lines, numbers equal to
1e-5 (float32). Skipped (not passed) when torch is not installed."""
import os
import re
import subprocess
import sys

import pytest

import gradscope

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = sorted(f for f in os.listdir(os.path.join(HERE, "torch_programs")) if f.endswith(".py"))
ENV = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(gradscope.__file__)))
NUMBER = re.compile(r"-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")


def run(program, as_torch):
    cmd = [sys.executable] + (["-m", "gradscope.as_torch"] if as_torch else [])
    r = subprocess.run(cmd + [os.path.join(HERE, "torch_programs", program)],
                       capture_output=True, text=True, env=ENV, timeout=300)
    assert r.returncode == 0, f"{'gradscope' if as_torch else 'torch'} failed:\n{r.stderr}"
    return r.stdout.splitlines()


def same(line_torch, line_gs):
    """Same text around the numbers, and each number within 1e-5 (absolute or relative)."""
    if NUMBER.sub("#", line_torch) != NUMBER.sub("#", line_gs):
        return False
    for a, b in zip(NUMBER.findall(line_torch), NUMBER.findall(line_gs)):
        a, b = float(a), float(b)
        if abs(a - b) > 1e-5 * max(1.0, abs(a), abs(b)):
            return False
    return True


@pytest.mark.parametrize("program", PROGRAMS)
def test_program_prints_the_same_under_torch_and_gradscope(program):
    pytest.importorskip("torch")
    expected = run(program, as_torch=False)
    got = run(program, as_torch=True)
    assert expected, "the program printed nothing"
    assert len(expected) == len(got), f"torch printed {expected}\ngradscope printed {got}"
    for a, b in zip(expected, got):
        assert same(a, b), f"torch:     {a}\ngradscope: {b}"
