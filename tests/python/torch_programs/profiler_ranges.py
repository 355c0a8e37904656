"""torch.profiler on a small training loop: what it prints does not depend on timings (counts
of ranges and ops, the table's columns and footer, self time within total, a schedule's
actions and active steps, the Chrome trace's events)."""
import json
import os
import tempfile

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, record_function, schedule

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
with torch.no_grad():  # the same numbers under torch and gradscope, whose generators differ
    for p in model.parameters():
        p.copy_(torch.linspace(-0.5, 0.7, p.numel()).reshape(p.shape))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.linspace(-1.0, 1.0, 64).reshape(16, 4)
y = torch.linspace(0.5, -0.5, 32).reshape(16, 2)


def train_step():
    with record_function("train_step"):
        opt.zero_grad()
        with record_function("forward"):
            loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    return loss.item()


with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
             profile_memory=True) as prof:
    for step in range(3):
        print(f"step {step} loss {train_step():.6f}")

rows = {r.key: r for r in prof.key_averages()}
for key in ["train_step", "forward", "aten::addmm", "aten::relu", "aten::mean"]:
    print(key, rows[key].count)
print("self <= total:", all(r.self_cpu_time_total <= r.cpu_time_total + 1e-6
                            for r in prof.key_averages()))
forward = [e for e in prof.events() if e.name == "forward"]
print("forward inside train_step:", all(e.cpu_parent.name == "train_step" for e in forward))

table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=4).splitlines()
print("header:", " | ".join(h for h in table[1].split("  ") if h.strip()))
print("rows:", len(table) - 5, "footer:", table[-1].split(":")[0])

s = schedule(wait=1, warmup=1, active=2, repeat=1)
print("schedule:", [s(i).name for i in range(6)])
traces = []
with profile(schedule=s, on_trace_ready=lambda p: traces.append(p.key_averages())) as p:
    for step in range(6):
        model(x).relu()
        p.step()
print("traces:", len(traces), "relu in active steps:",
      {r.key: r.count for r in traces[0]}["aten::relu"])

with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "trace.json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        events = [e for e in json.load(f) if e.get("ph") == "X"]
print("chrome: train_step events", sum(e["name"] == "train_step" for e in events),
      "all have ts and dur:", all("ts" in e and "dur" in e for e in events))
