"""test_oracle.py: Python programs through the differential oracle. Each program runs on the
gradscope module under oracle_run.py, which asks the engine about every live tensor after
every line that took an event number; `gradscope state --at` that number must say the same of
each (storage, version, copy-on-write, owner scope, requires_grad, geometry, the first
values), and a tensor the program's own lines made names one of the program's lines as where
it was made (the call site the module records for Python code)."""
import json
import os
import subprocess
import sys

import pytest

CLI = os.environ.get("GS_CLI")
pytestmark = pytest.mark.skipif(not CLI, reason="GS_CLI (the gradscope CLI) is not set")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run_under_oracle(tmp_path, program, args=(), max_probes=400):
    log, probes = tmp_path / "run.gstrace", tmp_path / "probes.json"
    env = dict(os.environ, GS_TRACE=str(log), GS_TRACE_VALUES="16",
               GS_ORACLE_MAX_PROBES=str(max_probes))
    subprocess.run([sys.executable, os.path.join(HERE, "oracle_run.py"), str(probes), program,
                    *args], env=env, check=True, stdout=subprocess.DEVNULL, timeout=600)
    with open(probes) as f:
        return log, json.load(f)["probes"]


def state_at(log, counter):
    out = subprocess.run([CLI, "state", str(log), "--at", str(counter), "--json"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def compare(log, probes, program, every=1):
    """Every `every`-th probe (and the last) against the model; returns what disagrees."""
    wrong, compared = [], 0
    name = os.path.basename(program)
    for i, p in enumerate(probes):
        if i % every and i != len(probes) - 1:
            continue
        state = state_at(log, p["counter"])
        model = {t["id"]: t for t in state["tensors"]}
        engine = {row[0]: row for row in p["tensors"]}
        where = f"after line {p['line']} (event {p['counter']})"
        if set(model) != set(engine):
            wrong.append(f"{where}: alive differs: engine only {set(engine) - set(model)}, "
                         f"model only {set(model) - set(engine)}")
        for tid, row in engine.items():
            t = model.get(tid)
            if t is None:
                continue
            compared += 1
            _, storage, version, cow, scope, rg, dtype, shape, strides, offset, values = row
            owner = t["owner"]["id"] if t["owner"]["kind"] == "scope" else 0
            got = (t["storage"], t["version"], t["copy_on_write"], owner, t["requires_grad"],
                   t["dtype"], t["shape"], t["strides"], t["offset"])
            want = (storage, version, bool(cow), scope, bool(rg), dtype, list(shape),
                    list(strides), offset)
            if got != want:
                wrong.append(f"{where}: tensor {tid}: model {got}, engine {want}")
            known = t.get("values", [])
            if known != values[:len(known)]:
                wrong.append(f"{where}: tensor {tid}: values model {known}, engine {values}")
            site = t["made_at"].get("site") or ""
            if t["made_at"]["event"] and f"{name}:" in site:
                line = int(site.rsplit(":", 1)[1].rstrip(")"))
                with open(program) as f:
                    text = f.read().splitlines()[line - 1]
                if not text.strip() or text.lstrip().startswith("#"):
                    wrong.append(f"{where}: tensor {tid} made at {site}, not a line of code")
    return wrong, compared


def test_scenario_agrees_with_the_engine_after_every_line(tmp_path):
    program = os.path.join(HERE, "oracle_scenario.py")
    log, probes = run_under_oracle(tmp_path, program)
    assert len(probes) >= 20
    wrong, compared = compare(log, probes, program)
    assert compared > 100
    assert not wrong, "\n".join(wrong[:20])
    # The tensors the program's lines made name those lines: h is made on line 8.
    state = state_at(log, probes[2]["counter"])
    sites = [t["made_at"]["site"] for t in state["tensors"]]
    assert any(s and "oracle_scenario.py:8)" in s for s in sites), sites


def test_digits_example_agrees_with_the_engine(tmp_path):
    program = os.path.join(ROOT, "examples", "python", "digits.py")
    data = os.path.join(ROOT, "data", "digits.csv.gz")
    log, probes = run_under_oracle(tmp_path, program, [data], max_probes=300)
    assert len(probes) == 300
    wrong, compared = compare(log, probes, program, every=15)
    assert compared > 100
    assert not wrong, "\n".join(wrong[:20])
