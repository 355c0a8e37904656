#!/usr/bin/env python3
"""test-state.py GRADSCOPE WORKLOAD: `gradscope state` against the engine's own answers.

The workload (state-workload.c) prints, after its calls, gs_event_counter() and what the
engine says of each tensor; `gradscope state LOG --at N --json` at that number must say the
same of each: storage, version, copy-on-write, first value, requires_grad; the clone's
storage shares bytes with h's until c is written; the open scope is listed with its counts;
made_at is the event that made each tensor. The text form is checked for the same moments."""
import json
import os
import subprocess
import sys
import tempfile

gradscope, workload = sys.argv[1], sys.argv[2]
failures = 0


def check(ok, what):
    global failures
    if not ok:
        failures += 1
        print(f"FAIL: {what}")


with tempfile.TemporaryDirectory() as tmp:
    log = os.path.join(tmp, "run.gstrace")
    env = dict(os.environ, GS_TRACE=log, GS_TRACE_VALUES="8")
    out = subprocess.run([workload], env=env, check=True, capture_output=True, text=True).stdout
    said = dict(line.split("=", 1) for line in out.splitlines())

    def state(at):
        text = subprocess.run([gradscope, "state", log, "--at", str(at), "--json"], check=True,
                              capture_output=True, text=True).stdout
        return json.loads(text)

    for step, names in (("after_clone", ["h", "c"]), ("after_writes", ["x", "h", "c", "d"])):
        at = int(said[step])
        s = state(at)
        check(s["event"] == at, f"{step}: event {s['event']} != {at}")
        tensors = {t["id"]: t for t in s["tensors"]}
        storages = {st["id"]: st for st in s["storages"]}
        for name in names:
            tid, storage, version, cow, first, rg = said[f"{step}.{name}"].split()
            t = tensors.get(int(tid))
            check(t is not None, f"{step}: {name} (#{tid}) is not in the state")
            if t is None:
                continue
            check(t["storage"] == int(storage), f"{step}: {name} storage {t['storage']} != {storage}")
            check(t["version"] == int(version), f"{step}: {name} version {t['version']} != {version}")
            check(t["copy_on_write"] == (cow == "1"), f"{step}: {name} copy_on_write {t['copy_on_write']}")
            check(t["requires_grad"] == (rg == "1"), f"{step}: {name} requires_grad {t['requires_grad']}")
            check(t.get("values", [None])[0] == float(first), f"{step}: {name} values {t.get('values')}")
            check(t["shape"] == [3] and t["strides"] == [1] and t["offset"] == 0 and t["dtype"] == "f64",
                  f"{step}: {name} geometry {t}")
            check(t["made_at"]["event"] is not None and t["made_at"]["event"] <= at,
                  f"{step}: {name} made_at {t['made_at']}")
            check(t["owner"]["kind"] == "scope" and t["owner"]["name"] == "step",
                  f"{step}: {name} owner {t['owner']}")
            shares = storages[t["storage"]]["shares_bytes_with"]
            check((shares is not None) == t["copy_on_write"], f"{step}: {name} storage shares {shares}")
        scopes = s["scopes"]
        check(len(scopes) == 1 and scopes[0]["id"] == int(said["scope"]) and scopes[0]["name"] == "step"
              and scopes[0]["alive"] == len(s["tensors"]), f"{step}: scopes {scopes}")
        check(s["totals"]["tensors"] == len(s["tensors"]), f"{step}: totals {s['totals']}")
    # After the clone, c's storage reads h's bytes; after c += 100 it has its own.
    h_storage = int(said["after_clone.h"].split()[1])
    c_storage = int(said["after_clone.c"].split()[1])
    s = state(said["after_clone"])
    check({st["id"]: st["shares_bytes_with"] for st in s["storages"]}.get(c_storage) == h_storage,
          "after the clone, c's storage shares h's bytes")
    # x's name, and the end of the scope disposes everything.
    s = state(said["after_writes"])
    check(any(t.get("name") == "x" for t in s["tensors"]), "x is named")
    end = state(said["after_end"])
    check(end["tensors"] == [] and end["scopes"] == [] and end["totals"]["bytes"] == 0,
          f"after the scope's end: {end['totals']}")
    # The text form says the same moment in words.
    text = subprocess.run([gradscope, "state", log, "--at", said["after_writes"]], check=True,
                          capture_output=True, text=True, env=dict(os.environ, LANGUAGE="C")).stdout
    check(text.startswith(f"after event #{said['after_writes']}: 4 tensors"), f"text: {text[:80]}")
    check('"x"' in text and "version 1" in text and "held by scope step" in text, f"text: {text}")
    # Errors: a bad number and a missing file, each said in one line.
    bad = subprocess.run([gradscope, "state", log, "--at", "soon"], capture_output=True, text=True)
    check(bad.returncode == 1 and "--at wants an event number" in bad.stderr, f"--at soon: {bad.stderr}")
    missing = subprocess.run([gradscope, "state", os.path.join(tmp, "none.gstrace")],
                             capture_output=True, text=True)
    check(missing.returncode == 1 and missing.stderr.startswith("gradscope: "), f"missing: {missing.stderr}")

print(f"state_checks_failed={failures}")
sys.exit(1 if failures else 0)
