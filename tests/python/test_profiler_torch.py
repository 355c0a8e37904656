"""gradscope.profiler against torch 1.13's profiler on the same program: the keys both name
alike (record_function ranges, the ops gradscope has as torch does, the backward nodes torch
names) appear in both with the same counts. Only with torch installed."""
import os
import subprocess
import sys

import pytest

import gradscope

HERE = os.path.dirname(os.path.abspath(__file__))
ENV = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(gradscope.__file__)))

PROGRAM = """
import torch, torch.nn as nn
from torch.profiler import profile, record_function, ProfilerActivity
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 4), torch.randn(16, 2)
with profile(activities=[ProfilerActivity.CPU]) as prof:
    for i in range(3):
        with record_function("train_step"):
            opt.zero_grad()
            with record_function("forward"):
                loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
for row in prof.key_averages():
    print(f"{row.key}|{row.count}")
"""

# Named alike by both, and counted alike: an op gradscope's engine has as torch's aten has it,
# the ranges, and the backward nodes whose runs the log names.
AGREED = ["train_step", "forward", "Optimizer.step#SGD.step",
          "Optimizer.zero_grad#SGD.zero_grad", "aten::addmm", "aten::relu", "aten::mean",
          "aten::add_",
          "aten::mm",
          "autograd::engine::evaluate_function: AddmmBackward0",
          "autograd::engine::evaluate_function: ReluBackward0",
          "autograd::engine::evaluate_function: MseLossBackward0",
          "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"]


def key_counts(tmp_path, as_torch):
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    cmd = [sys.executable] + (["-m", "gradscope.as_torch"] if as_torch else []) + [str(script)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=300)
    assert r.returncode == 0, r.stderr
    return {k: int(n) for k, n in (line.rsplit("|", 1) for line in r.stdout.splitlines())}


def test_keys_and_counts_agree_with_torch(tmp_path):
    pytest.importorskip("torch")
    torch_counts = key_counts(tmp_path, as_torch=False)
    gs_counts = key_counts(tmp_path, as_torch=True)
    for key in AGREED:
        assert key in torch_counts, f"torch 1.13 has no {key!r} here: {sorted(torch_counts)}"
        assert gs_counts.get(key) == torch_counts[key], (
            f"{key}: torch counts {torch_counts[key]}, gradscope {gs_counts.get(key)}")
    # every key gradscope shows for a backward node is one torch shows too
    nodes = {k for k in gs_counts if k.startswith("autograd::engine::evaluate_function: ")}
    assert nodes <= set(torch_counts), nodes - set(torch_counts)
