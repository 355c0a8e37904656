"""torch.jit's eager-mode names against torch 1.13: what library code calls without compiling
(is_scripting, the markers, annotate, isinstance, Attribute, fork/wait) gives torch's answers,
and compiling (script, trace) is refused by name. meson registers this file only where torch is
installed."""
import subprocess
import sys
import typing
import warnings

import pytest
import torch

import gradscope as gs


def test_nothing_is_scripted_or_traced():
    assert gs.jit.is_scripting() == torch.jit.is_scripting() is False
    assert gs.jit.is_tracing() == torch.jit.is_tracing() is False


@pytest.mark.parametrize("marker", ["ignore", "unused", "export", "script_if_tracing"])
def test_markers_leave_a_function_as_it_is(marker):
    def twice(x):
        return 2 * x
    for lib in (gs, torch):
        marked = getattr(lib.jit, marker)(twice)
        assert marked(gs.ones(2)).tolist() == [2.0, 2.0]


def test_ignore_with_arguments_as_torch():
    for lib in (gs, torch):
        @lib.jit.ignore(drop=False)
        def plus(x):
            return x + 1
        assert plus(1) == 2
    warned = []
    for lib in (gs, torch):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            lib.jit.ignore(drop=True)
        warned.append([(w.category, str(w.message)) for w in seen])
    assert warned[0] == warned[1] and len(warned[0]) == 1


def test_annotate_isinstance_final_attribute_as_torch():
    assert gs.jit.annotate(typing.List[int], []) == torch.jit.annotate(typing.List[int], [])
    List, Dict, Optional, Tuple = typing.List, typing.Dict, typing.Optional, typing.Tuple
    for value, kind in ((3, int), ("a", int), ([1, 2], List[int]), ([1, "a"], List[int]),
                        ([], List[str]), ({"a": 1}, Dict[str, int]), ({"a": 1}, Dict[int, int]),
                        (None, Optional[int]), (2, Optional[int]), ("x", Optional[int]),
                        ((1, "a"), Tuple[int, str]), ((1, 2), Tuple[int, str]),
                        ((1,), Tuple[int, int]), ([[1], [2]], List[List[int]])):
        assert gs.jit.isinstance(value, kind) == torch.jit.isinstance(value, kind), (value, kind)
    for bare in (list, dict, tuple):
        with pytest.raises(RuntimeError) as t_err:
            torch.jit.isinstance([], bare)
        with pytest.raises(RuntimeError) as g_err:
            gs.jit.isinstance([], bare)
        assert str(g_err.value) == str(t_err.value)
    assert gs.jit.Final is torch.jit.Final
    g, t = gs.jit.Attribute(3, int), torch.jit.Attribute(3, int)
    assert (g.value, g.type) == (t.value, t.type) and repr(g) == repr(t)


def test_fork_and_wait_give_the_result_and_the_error():
    for lib in (gs, torch):
        future = lib.jit.fork(lambda a, b=1: a * 10 + b, 4, b=2)
        assert lib.jit.wait(future) == 42 and future.wait() == 42

    def fails():
        raise ValueError("inside the fork")
    with pytest.raises(ValueError, match="inside the fork"):
        gs.jit.wait(gs.jit.fork(fails))


@pytest.mark.parametrize("name", ["script", "trace", "save", "load", "freeze"])
def test_compiling_is_refused_by_name(name):
    with pytest.raises(gs.NotSupportedError, match=f"gradscope.jit.{name} is not supported"):
        getattr(gs.jit, name)


def test_as_torch_runs_library_style_code(tmp_path):
    script = tmp_path / "jit_program.py"
    script.write_text(
        "import torch\n"
        "class Block(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(2, 2)\n"
        "    @torch.jit.ignore\n"
        "    def describe(self):\n"
        "        return 'block'\n"
        "    def forward(self, x):\n"
        "        if not torch.jit.is_scripting():\n"
        "            x = x * 1\n"
        "        return self.fc(x)\n"
        "b = Block()\n"
        "print(b.describe(), tuple(b(torch.ones(1, 2)).shape))\n")
    r = subprocess.run([sys.executable, "-m", "gradscope.as_torch", str(script)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["block", "(1,", "2)"]
