"""python3 -m gradscope.as_torch: the import hook that answers torch with gradscope, the
script run as __main__ with Python's argv, and unsupported names that say so by name."""
import os
import subprocess
import sys
import textwrap

import pytest

import gradscope

# The children find the same package this test imported, whatever the working directory.
ENV = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(gradscope.__file__)))


def run_as_torch(tmp_path, source, *args):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(source))
    return subprocess.run([sys.executable, "-m", "gradscope.as_torch", str(script), *args],
                          capture_output=True, text=True, cwd=tmp_path, env=ENV, timeout=120)


def test_torch_modules_are_gradscope_modules(tmp_path):
    r = run_as_torch(tmp_path, """
        import torch, torch.nn as nn, torch.nn.functional as F, torch.optim as optim
        import torch.utils.data, torch.autograd, torch.nn.utils, torch.nn.utils.rnn
        import gradscope, gradscope.nn, gradscope.nn.functional
        from torch.utils.data import DataLoader, TensorDataset
        assert torch.Tensor is gradscope.Tensor
        assert nn.Module is gradscope.nn.Module
        assert F.relu is gradscope.nn.functional.relu
        assert optim.SGD is gradscope.optim.SGD
        assert DataLoader is gradscope.utils.data.DataLoader
        assert torch.nn is nn and torch.nn.functional is F
        print(torch.ones(2).tolist())
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "[1.0, 1.0]\n"


def test_script_runs_as_main_with_python_argv(tmp_path):
    (tmp_path / "helper.py").write_text("VALUE = 7\n")
    r = run_as_torch(tmp_path, """
        import sys, os, helper
        print(__name__, sys.argv[1:], os.path.basename(sys.argv[0]), helper.VALUE)
    """, "--epochs", "3")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "__main__ ['--epochs', '3'] prog.py 7\n"


def test_exit_status_is_the_scripts(tmp_path):
    r = run_as_torch(tmp_path, "import sys\nsys.exit(3)\n")
    assert r.returncode == 3


@pytest.mark.parametrize("expr,name", [
    ("torch.nn.LazyConv3d(1, 1)", "torch.nn.LazyConv3d"),
    ("torch.fancy_op(1)", "torch.fancy_op"),
    ("torch.optim.SparseAdam", "torch.optim.SparseAdam"),
    ("torch.nn.functional.fractional_max_pool3d", "torch.nn.functional.fractional_max_pool3d"),
])
def test_missing_name_says_it_is_not_supported(tmp_path, expr, name):
    r = run_as_torch(tmp_path, f"import torch, torch.nn, torch.optim, torch.nn.functional\n{expr}\n")
    assert r.returncode == 1
    assert f"NotSupportedError: {name} is not supported by gradscope yet" in r.stderr


def test_missing_name_is_still_an_attribute_error(tmp_path):
    r = run_as_torch(tmp_path, """
        import torch
        assert not hasattr(torch, "fancy_op")
        assert getattr(torch.nn, "LazyConv3d", None) is None
        print("ok")
    """)
    assert r.returncode == 0, r.stderr


def test_missing_torch_module_names_itself(tmp_path):
    r = run_as_torch(tmp_path, "import torch.fft\n")
    assert "ModuleNotFoundError: torch.fft is not supported by gradscope yet" in r.stderr
    # Modules that merely start with "torch" are not torch's.
    r = run_as_torch(tmp_path, "import torchvision_not_here\n")
    assert "No module named 'torchvision_not_here'" in r.stderr


def test_usage_without_script():
    r = subprocess.run([sys.executable, "-m", "gradscope.as_torch"], capture_output=True,
                       text=True, env=ENV, timeout=60)
    assert r.returncode == 2 and "usage:" in r.stderr


def test_plain_gradscope_names_missing_names_too():
    import gradscope.nn
    with pytest.raises(AttributeError, match="gradscope.nn.LazyConv3d is not supported by gradscope yet"):
        gradscope.nn.LazyConv3d


def test_every_compat_program_is_a_meson_test():
    """tests/python/meson.build lists the compatibility programs one by one (one meson test
    each): a program in torch_programs/ missing from that list would never run."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "meson.build"), encoding="utf-8") as f:
        build = f.read()
    programs = sorted(f[:-3] for f in os.listdir(os.path.join(here, "torch_programs"))
                      if f.endswith(".py"))
    missing = [p for p in programs if f"'{p}'" not in build]
    assert programs and not missing, f"not in tests/python/meson.build's program list: {missing}"
