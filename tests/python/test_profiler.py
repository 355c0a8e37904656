"""torch.profiler on gradscope's event log (gradscope.profiler): op counts equal the calls the
program made, self time within total time, record_function ranges nested as the program
nested them, a schedule's active steps only, Chrome trace JSON, tensorboard_trace_handler, the
older torch.autograd.profiler, and the ranges in the event log the inspector reads."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

import gradscope as gs
import gradscope.autograd_profiler as autograd_profiler
import gradscope.nn as nn
import gradscope.nn.functional as F
from gradscope.profiler import (ProfilerAction, ProfilerActivity, profile, record_function,
                                schedule, tensorboard_trace_handler)

STEPS = 3


def mlp_run(steps=STEPS, **kwargs):
    """Profiles `steps` training steps of a two-Linear MLP, each in a "train_step" range with
    the forward pass in a "forward" range inside it."""
    gs.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = gs.optim.SGD(model.parameters(), lr=0.1)
    x, y = gs.randn(16, 4), gs.randn(16, 2)
    with profile(activities=[ProfilerActivity.CPU], **kwargs) as prof:
        for _ in range(steps):
            with record_function("train_step"):
                opt.zero_grad()
                with record_function("forward"):
                    loss = F.mse_loss(model(x), y)
                loss.backward()
                opt.step()
    return prof


def counts(prof):
    return {row.key: row.count for row in prof.key_averages()}


def test_op_counts_equal_the_calls_made():
    c = counts(mlp_run())
    assert c["aten::addmm"] == STEPS * 2  # two Linear layers a step
    assert c["aten::relu"] == STEPS
    assert c["aten::mean"] == STEPS  # mse_loss's mean
    assert c["train_step"] == STEPS and c["forward"] == STEPS
    assert c["Optimizer.step#SGD.step"] == STEPS  # as torch shows an optimizer's calls
    assert c["Optimizer.zero_grad#SGD.zero_grad"] == STEPS
    # backward: each Linear's node once a step, a gradient accumulated into each parameter
    assert c["autograd::engine::evaluate_function: AddmmBackward0"] == STEPS * 2
    assert c["autograd::engine::evaluate_function: ReluBackward0"] == STEPS
    assert c["autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"] == STEPS * 4
    # SGD's update: one add_ into each of the 4 parameters a step (the grads' first
    # accumulation is a clone, later ones add_)
    assert c["aten::add_"] >= STEPS * 4


def test_counts_follow_the_number_of_steps():
    assert counts(mlp_run(steps=5))["aten::addmm"] == 10


def test_self_time_is_within_total_time():
    prof = mlp_run()
    for row in prof.key_averages():
        assert 0 <= row.self_cpu_time_total <= row.cpu_time_total + 1e-9, row
        assert row.cpu_time == pytest.approx(row.cpu_time_total / row.count)
    for e in prof.events():
        assert e.time_range.start <= e.time_range.end
        for child in e.cpu_children:  # a child lies inside its parent's span
            assert e.time_range.start <= child.time_range.start
            assert child.time_range.end <= e.time_range.end + 1e-9
    steps = [e for e in prof.events() if e.name == "train_step"]
    total = sum(e.cpu_time_total for e in steps)
    assert prof.events().self_cpu_time_total >= total - 1e-6


def test_record_function_ranges_nest_as_the_program_nested_them():
    events = mlp_run().events()
    forwards = [e for e in events if e.name == "forward"]
    assert len(forwards) == STEPS
    for f in forwards:
        assert f.cpu_parent is not None and f.cpu_parent.name == "train_step"
        names = [c.name for c in f.cpu_children]
        assert names.count("aten::addmm") == 2 and "aten::relu" in names
    assert all(e.cpu_parent is None for e in events if e.name == "train_step")


def test_memory_and_input_shapes():
    prof = mlp_run(record_shapes=True, profile_memory=True)
    addmm = [e for e in prof.events() if e.name == "aten::addmm"]
    # each output is a new float32 storage: 16x8 for the first layer, 16x2 for the second
    assert sorted({e.self_cpu_memory_usage for e in addmm}) == [16 * 2 * 4, 16 * 8 * 4]
    rows = {str(r.input_shapes): r.count
            for r in prof.key_averages(group_by_input_shape=True) if r.key == "aten::addmm"}
    # the inputs that require grad (bias, the layer's input after the first, weight.t())
    assert rows == {"[[8], [], [4, 8]]": STEPS, "[[2], [16, 8], [8, 2]]": STEPS}
    assert len(counts(prof)) < len(prof.key_averages(group_by_input_shape=True))


def test_table_has_torchs_layout():
    prof = mlp_run(profile_memory=True)
    text = prof.key_averages().table(sort_by="cpu_time_total", row_limit=5)
    lines = text.rstrip("\n").split("\n")
    assert lines[0].startswith("-" * 20) and lines[2] == lines[0] and lines[-2] == lines[0]
    assert lines[1].split() == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%",
                                "CPU", "total", "CPU", "time", "avg", "CPU", "Mem", "Self",
                                "CPU", "Mem", "#", "of", "Calls"]
    assert len(lines) == 3 + 5 + 2 and lines[-1].startswith("Self CPU time total: ")
    totals = [r.cpu_time_total for r in sorted(prof.key_averages(),
                                               key=lambda r: r.cpu_time_total, reverse=True)]
    assert lines[3].split()[0] == "train_step" and totals[0] == max(totals)


def test_chrome_trace_parses_and_each_event_has_ts_and_dur(tmp_path):
    prof = mlp_run()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    assert len(trace) == len(prof.events())
    for item in trace:
        assert item["ph"] == "X" and item["dur"] >= 0 and item["ts"] >= 0
        assert {"name", "pid", "tid"} <= set(item)
    assert sum(item["name"] == "train_step" for item in trace) == STEPS


def test_schedule_is_torchs():
    s = schedule(wait=1, warmup=1, active=2, repeat=1)
    n, w, r, rs = (ProfilerAction.NONE, ProfilerAction.WARMUP, ProfilerAction.RECORD,
                   ProfilerAction.RECORD_AND_SAVE)
    assert [s(i) for i in range(6)] == [n, w, r, rs, n, n]
    s = schedule(wait=1, warmup=1, active=2, skip_first=1)
    assert [s(i) for i in range(10)] == [n, n, w, r, rs, n, w, r, rs, n]
    with pytest.raises(ValueError, match="expected at least one active step"):
        schedule(wait=1, warmup=1, active=0)


def test_schedule_records_the_active_steps_only(tmp_path):
    ready = []
    x = gs.ones(3)
    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                 on_trace_ready=lambda p: ready.append(counts(p))) as prof:
        for _ in range(6):
            x.relu()
            prof.step()
    assert len(ready) == 1
    assert ready[0]["aten::relu"] == 2 and ready[0]["ProfilerStep*"] == 2
    assert prof.step_num == 6


def test_schedule_cycles_hand_each_trace_over(tmp_path):
    x = gs.ones(3)
    handler = tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w")
    with profile(schedule=schedule(wait=0, warmup=0, active=1, repeat=3),
                 on_trace_ready=handler) as prof:
        for _ in range(4):
            x.relu()
            prof.step()
    files = sorted(os.listdir(tmp_path / "tb"))
    assert len(files) >= 1 and all(f.startswith("w.") and f.endswith(".pt.trace.json")
                                   for f in files)
    for f in files:
        names = [e["name"] for e in json.loads((tmp_path / "tb" / f).read_text())]
        assert "aten::relu" in names


def test_start_stop_and_decorator():
    @record_function("helper")
    def helper(t):
        return t.relu()

    prof = profile()
    prof.start()
    helper(gs.ones(2))
    helper(gs.ones(2))
    prof.stop()
    c = counts(prof)
    assert c["helper"] == 2 and c["aten::relu"] == 2
    helper_event = next(e for e in prof.events() if e.name == "helper")
    assert [ch.name for ch in helper_event.cpu_children] == ["aten::relu"]


def test_bad_calls_say_what_was_expected():
    with pytest.raises(TypeError, match="expected a non-empty name"):
        record_function(3)
    with pytest.raises(TypeError, match="expected activities from ProfilerActivity"):
        profile(activities=["cpu"])
    with pytest.raises(RuntimeError, match="no recording has finished yet"):
        profile().key_averages()


def test_ranges_end_innermost_first():
    outer = record_function("outer").__enter__()
    inner = record_function("inner").__enter__()
    with pytest.raises(RuntimeError, match='expected the end of the innermost open range '
                                           '"inner", got the end of "outer"'):
        outer.__exit__(None, None, None)
    inner.__exit__(None, None, None)
    outer.__exit__(None, None, None)  # still open after the refused end: it ends now


def test_with_stack_gives_the_python_line():
    with profile(with_stack=True) as prof:
        gs.ones(3).relu()
    relu = next(e for e in prof.events() if e.name == "aten::relu")
    assert len(relu.stack) == 1 and "test_profiler.py:" in relu.stack[0]
    rows = prof.key_averages(group_by_stack_n=1)
    assert next(r for r in rows if r.key == "aten::relu").stack == relu.stack


def test_autograd_profiler_profile():
    x = gs.ones(4, requires_grad=True)
    with autograd_profiler.profile(record_shapes=True) as prof:
        with autograd_profiler.record_function("block"):
            (x * 2).sum().backward()
    keys = {e.key for e in prof.key_averages()}
    assert {"block", "aten::mul", "aten::sum"} <= keys
    assert "Self CPU time total:" in prof.table()
    assert prof.function_events is prof.events()
    with pytest.raises(AssertionError, match="CUDA"):
        autograd_profiler.profile(use_cuda=True)
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        with autograd_profiler.emit_nvtx():
            pass


def run_script(code, env_extra, tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(code))
    env = dict(os.environ, **env_extra)
    return subprocess.run([sys.executable, "-m", "gradscope.as_torch", str(script)],
                          capture_output=True, text=True, env=env, timeout=120)


def test_profiler_reads_the_log_gs_trace_records(tmp_path):
    """With GS_TRACE on, the profiler reads that file back; the ranges stay in it for the
    inspector and the CLI, which lists them."""
    log = tmp_path / "run.gstrace"
    r = run_script("""
        import torch
        with torch.profiler.profile() as prof:
            with torch.profiler.record_function("outer"):
                torch.ones(3).relu()
        print({e.key: e.count for e in prof.key_averages()}["outer"])
    """, {"GS_TRACE": str(log)}, tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1"]
    cli = os.environ.get("GS_CLI")
    if cli:
        dump = subprocess.run([cli, "dump", "--jsonl", str(log)], capture_output=True, text=True)
        assert dump.returncode == 0, dump.stderr
        kinds = [json.loads(line).get("kind") for line in dump.stdout.splitlines()
                 if '"range_' in line]
        assert kinds == ["range_begin", "range_end"]


def test_flight_recorder_is_refused_with_a_clear_message(tmp_path):
    r = run_script("""
        import torch
        with torch.profiler.profile():
            pass
    """, {"GS_TRACE": str(tmp_path / "ring.gstrace"), "GS_TRACE_RING": "1M"}, tmp_path)
    assert r.returncode != 0
    assert "the event log is already recording" in r.stderr and "GS_TRACE_RING" in r.stderr


def test_as_torch_reaches_the_profiler(tmp_path):
    r = run_script("""
        import torch
        import torch.autograd.profiler
        from torch.profiler import profile, record_function, ProfilerActivity
        print(torch.profiler.profile is profile, torch.autograd.profiler.record_function
              is record_function)
    """, {}, tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "True"]
