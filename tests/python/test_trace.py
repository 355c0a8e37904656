"""test_trace.py: the event log from Python: `with gradscope.trace(path):`, GS_TRACE set in
the environment as for a C program, marks and tensor names (trace_mark, trace_name), and
gradscope.inspect() streaming to a listener on a Unix socket. Each log is read back with the `gradscope` CLI (GS_CLI, set by meson) as JSON Lines."""
import json
import os
import subprocess
import sys

import pytest

import gradscope as gs

CLI = os.environ.get("GS_CLI")
pytestmark = pytest.mark.skipif(not CLI, reason="GS_CLI (the gradscope CLI) is not set")


def events(path):
    out = subprocess.run([CLI, "dump", "--jsonl", str(path)], capture_output=True, text=True,
                         check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def kinds(evs):
    return [e.get("kind") for e in evs]


def test_trace_block_records_the_tensors_made_inside(tmp_path):
    path = tmp_path / "run.gstrace"
    with gs.trace(str(path)):
        with gs.dispose_scope("step"):
            a = gs.ones(3)
            b = (a * 2.0).sum()
        gs.trace_mark("done")
    evs = events(path)
    k = kinds(evs)
    assert k.count("tensor_create") >= 3
    assert "scope_begin" in k and "scope_end" in k and "mark" in k
    assert not a.is_alive and not b.is_alive


def test_gs_trace_in_the_environment_records_a_python_program(tmp_path):
    path = tmp_path / "env.gstrace"
    code = "import gradscope as gs\na = gs.ones(2)\nb = a + 1.0\n"
    env = dict(os.environ, GS_TRACE=str(path))
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    assert kinds(events(path)).count("tensor_create") >= 2


LISTENER = r"""
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(1)
conn, _ = s.accept()
with open(sys.argv[2], "wb") as f:
    while True:
        piece = conn.recv(65536)
        if not piece:
            break
        f.write(piece)
"""


def test_inspect_streams_events_to_the_listening_socket(tmp_path):
    sock = tmp_path / "inspector.sock"
    received = tmp_path / "received.gstrace"
    child = gs.inspect(command=[sys.executable, "-c", LISTENER, str(sock), str(received)],
                       socket=str(sock), wait=30.0)
    x = gs.ones(4)
    y = x + 1.0
    gs.trace_close()
    assert child.wait(timeout=30) == 0
    assert kinds(events(received)).count("tensor_create") >= 2
    del x, y


def test_inspect_reports_an_inspector_that_exits_at_once(tmp_path):
    with pytest.raises(RuntimeError, match="exited"):
        gs.inspect(command=[sys.executable, "-c", "pass"], socket=str(tmp_path / "none.sock"))


def make_two_tensors():
    first = gs.ones(2)  # the site of this line is checked below
    second = first * 3.0
    return first, second


def test_python_call_sites_name_the_python_file_line_and_function(tmp_path):
    import inspect
    path = tmp_path / "sites.gstrace"
    line = inspect.getsourcelines(make_two_tensors)[1] + 1
    with gs.trace(str(path)):
        a, b = make_two_tensors()
    evs = events(path)
    texts = {e["id"]: e.get("text") for e in evs if e.get("kind") == "site"}
    want = f"make_two_tensors ({__file__}:{line})"
    assert want in texts.values(), texts
    site_id = [k for k, v in texts.items() if v == want][0]
    creates = [e for e in evs if e.get("kind") == "tensor_create"]
    assert any(str(e.get("site")) in (str(site_id), want) for e in creates), creates[:3]
    assert f"make_two_tensors ({__file__}:{line + 1})" in texts.values()


def test_dropping_a_model_records_no_error(tmp_path):
    path = tmp_path / "model.gstrace"
    with gs.trace(str(path)):
        model = gs.nn.Sequential(gs.nn.Linear(2, 3), gs.nn.ReLU(), gs.nn.Linear(3, 1))
        model(gs.ones(4, 2))
        del model
    k = kinds(events(path))
    assert "module_create" in k and "error" not in k


def test_trace_name_names_the_tensor_in_the_log_and_returns_it(tmp_path):
    path = tmp_path / "named.gstrace"
    with gs.trace(str(path)):
        a = gs.ones(3)
        assert gs.trace_name(a, "weights") is a
        gs.trace_mark("named")
    evs = events(path)
    names = [e for e in evs if e.get("kind") == "tensor_name"]
    assert [n.get("name") for n in names] == ["weights"]
    created = next(e for e in evs if e.get("kind") == "tensor_create")
    assert names[0].get("tensor") == created.get("tensor")


def test_trace_name_of_a_disposed_tensor_raises():
    a = gs.ones(2)
    a.dispose()
    with pytest.raises(RuntimeError):
        gs.trace_name(a, "gone")
    with pytest.raises(TypeError):
        gs.trace_name("not a tensor", "x")


def test_leaks_at_exit_are_reported_at_their_python_line(tmp_path):
    """Tensors a program still holds when the interpreter exits (globals) were never disposed:
    the engine's leak report (GS_LEAK_REPORT) and the log's end list them, as for a C program,
    and both name the same place, the Python line that made them (not the interpreter's
    address)."""
    script = tmp_path / "leak3.py"
    script.write_text("import gradscope as gs\n"
                      "kept = gs.ones(4)\n"
                      "x = gs.ones(3, requires_grad=True)\n"
                      "y = (x * 2.0).sum()\n"
                      "y.backward()\n"
                      "del y\n")
    log = tmp_path / "leak3.gstrace"
    env = dict(os.environ, GS_TRACE=str(log), GS_LEAK_REPORT="1")
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                         check=True)
    report = [line for line in run.stderr.splitlines() if line.startswith("leak: ")]
    assert report, run.stderr
    kept_site = f"at <module> ({script}:2), held by the program"
    x_site = f"at <module> ({script}:3), held by the program"
    assert any("ones [4] f32" in line and kept_site in line for line in report), report
    assert any("ones [3] f32" in line and x_site in line for line in report), report
    assert "leak: 2 tensor(s) alive and owned by the caller" in run.stderr, report
    assert " at 0x" not in run.stderr
    stats = subprocess.run([CLI, "stats", str(log)], capture_output=True, text=True,
                           check=True).stdout
    assert f"1 × ones [4] f32 (16 bytes) {kept_site}" in stats, stats
    assert f"1 × ones [3] f32 (12 bytes) {x_site}" in stats, stats


def test_an_int32_tensor_is_logged_as_i32_with_its_bytes(tmp_path):
    path = tmp_path / "i32.gstrace"
    with gs.trace(str(path)):
        a = gs.tensor([1, 2, 3], dtype=gs.int32)
        gs.trace_mark("made")
    created = next(e for e in events(path) if e.get("kind") == "tensor_create")
    assert created.get("dtype") == "i32" and created.get("shape") == [3]
    state = subprocess.run([CLI, "state", str(path)], capture_output=True, text=True,
                           check=True).stdout
    assert "12 bytes" in state and "[3] i32" in state
    del a


@pytest.mark.parametrize("dtype,name,size", [("uint8", "u8", 1), ("int8", "i8", 1),
                                             ("int16", "i16", 2)])
def test_small_int_tensors_are_logged_by_their_names_with_their_bytes(tmp_path, dtype, name,
                                                                       size):
    path = tmp_path / (name + ".gstrace")
    with gs.trace(str(path)):
        a = gs.tensor([1, 2, 3], dtype=getattr(gs, dtype))
        gs.trace_mark("made")
    created = next(e for e in events(path) if e.get("kind") == "tensor_create")
    assert created.get("dtype") == name and created.get("shape") == [3]
    state = subprocess.run([CLI, "state", str(path)], capture_output=True, text=True,
                           check=True).stdout
    assert "%d bytes" % (3 * size) in state and "[3] %s" % name in state
    del a
