"""python3 -m gradscope.as_torch SCRIPT [ARGS]: runs a PyTorch program on gradscope, unchanged.

An import hook (a meta path finder at the front of sys.meta_path) answers ``import torch`` and
the torch modules ordinary programs use with gradscope's: ``torch`` is gradscope,
``torch.nn`` is gradscope.nn, and so on (TORCH_MODULES). Each is a thin module object whose
attributes are looked up on the gradscope module at each access, so nothing is copied and
``torch.Tensor is gradscope.Tensor``. A name gradscope does not have yet fails where the program
uses it, with an error naming it (``torch.nn.Conv3d is not supported by gradscope yet``), and
so does a torch module outside the table. Then the script runs as __main__ with sys.argv and
sys.path[0] set as ``python3 SCRIPT ARGS`` sets them, so the inspector, GS_TRACE, scopes and
leak reports work on programs people already have.

Under ``mpirun -np N``, the program finds the environment torchrun gives it: RANK, WORLD_SIZE,
LOCAL_RANK and LOCAL_WORLD_SIZE are set from Open MPI's (where not set already), so
``mpirun -np 2 python3 -m gradscope.as_torch train.py`` runs what ``torchrun --nproc_per_node 2
train.py`` runs. A program that starts its ranks itself with ``torch.multiprocessing.spawn``
runs without mpirun: spawn starts it again under mpirun (gradscope.multiprocessing).

install() puts the hook in place from Python (for a test, or a program that wants it).
"""
import importlib
import importlib.abc
import importlib.util
import os
import runpy
import sys
import types

from gradscope._missing import not_supported

# The torch module a program imports -> the gradscope module that answers for it.
TORCH_MODULES = {
    "torch": "gradscope",
    "torch.nn": "gradscope.nn",
    "torch.nn.functional": "gradscope.nn.functional",
    "torch.nn.init": "gradscope.nn.init",
    "torch.nn.utils": "gradscope.nn.utils",
    "torch.nn.utils.rnn": "gradscope.nn.utils.rnn",
    "torch.nn.utils.prune": "gradscope.nn.utils.prune",
    "torch.optim": "gradscope.optim",
    "torch.optim.lr_scheduler": "gradscope.optim.lr_scheduler",
    "torch.optim.swa_utils": "gradscope.optim.swa_utils",
    "torch.utils": "gradscope.utils",
    "torch.utils.data": "gradscope.utils.data",
    "torch.utils.checkpoint": "gradscope.utils.checkpoint",
    "torch.autograd": "gradscope.autograd",
    "torch.return_types": "gradscope.return_types",
    "torch.autograd.function": "gradscope.function",
    # torch.distributions and the modules its classes live in, all answered by one module
    "torch.distributions": "gradscope.distributions",
    "torch.distributions.kl": "gradscope.distributions",
    "torch.distributions.normal": "gradscope.distributions",
    "torch.distributions.uniform": "gradscope.distributions",
    "torch.distributions.bernoulli": "gradscope.distributions",
    "torch.distributions.categorical": "gradscope.distributions",
    "torch.distributions.one_hot_categorical": "gradscope.distributions",
    "torch.distributions.exponential": "gradscope.distributions",
    "torch.distributions.laplace": "gradscope.distributions",
    "torch.distributions.independent": "gradscope.distributions",
    "torch.distributions.distribution": "gradscope.distributions",
    "torch.distributions.gamma": "gradscope.distributions",
    "torch.distributions.chi2": "gradscope.distributions",
    "torch.distributions.beta": "gradscope.distributions",
    "torch.distributions.dirichlet": "gradscope.distributions",
    "torch.distributions.poisson": "gradscope.distributions",
    "torch.cuda": "gradscope.cuda",
    "torch.cuda.amp": "gradscope.cuda_amp",
    "torch.amp": "gradscope.amp",
    "torch.jit": "gradscope.jit",
    "torch.linalg": "gradscope.linalg",
    "torch.special": "gradscope.special",
    "torch.distributed": "gradscope.distributed",
    "torch.multiprocessing": "gradscope.multiprocessing",
    "torch.nn.parallel": "gradscope.nn.parallel",
    # torch.utils.data.distributed.DistributedSampler is torch.utils.data's: over any dataset
    "torch.utils.data.distributed": "gradscope.utils.data",
    "torch.backends": "gradscope.backends",
    "torch.backends.cudnn": "gradscope.backends.cudnn",
    "torch.backends.mps": "gradscope.backends.mps",
    "torch.backends.cuda": "gradscope.backends.cuda",
    "torch.autograd.functional": "gradscope.autograd_functional",
    "torch.autograd.profiler": "gradscope.autograd_profiler",
    "torch.profiler": "gradscope.profiler",
    "torch.autograd.graph": "gradscope.autograd_graph",
}


class TorchModule(types.ModuleType):
    """torch.X seen through gradscope: attribute lookups go to the gradscope module."""

    def __init__(self, torch_name, target):
        super().__init__(torch_name, getattr(target, "__doc__", None))
        self.__dict__["_gradscope_module"] = target

    def __getattr__(self, name):
        qualified = f"{self.__name__}.{name}"
        if qualified in TORCH_MODULES:
            return importlib.import_module(qualified)
        try:
            return getattr(self.__dict__["_gradscope_module"], name)
        except AttributeError:
            if name.startswith("__") and name.endswith("__"):
                raise
            raise not_supported(qualified) from None

    def __dir__(self):
        return sorted(set(dir(self.__dict__["_gradscope_module"])) | set(self.__dict__))

    def __repr__(self):
        return f"<module {self.__name__!r} (gradscope's {self._gradscope_module.__name__})>"


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        return TorchModule(spec.name, importlib.import_module(TORCH_MODULES[spec.name]))

    def exec_module(self, module):
        pass


class TorchFinder(importlib.abc.MetaPathFinder):
    """Finds torch and torch.* in TORCH_MODULES; refuses other torch.* modules by name."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        if fullname not in TORCH_MODULES or importlib.util.find_spec(TORCH_MODULES[fullname]) is None:
            raise ModuleNotFoundError(f"{fullname} is not supported by gradscope yet",
                                      name=fullname)
        # A package (submodule_search_locations set) so `import torch.nn` reaches the finder.
        return importlib.util.spec_from_loader(fullname, _Loader(), is_package=True)


def install():
    """Puts the hook first in sys.meta_path (once); torch modules imported before stay.
    Dtypes then print as torch's do (``torch.int32``, ``dtype=torch.float64``)."""
    if not any(isinstance(f, TorchFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, TorchFinder())
    importlib.import_module("gradscope._gradscope")._name_dtypes_as_torch(True)


# torchrun's variable -> Open MPI's, which mpirun sets in every process it starts.
TORCHRUN_ENV = {
    "RANK": "OMPI_COMM_WORLD_RANK",
    "WORLD_SIZE": "OMPI_COMM_WORLD_SIZE",
    "LOCAL_RANK": "OMPI_COMM_WORLD_LOCAL_RANK",
    "LOCAL_WORLD_SIZE": "OMPI_COMM_WORLD_LOCAL_SIZE",
}


def set_torchrun_env(environ=os.environ):
    """Under mpirun, the variables torchrun would set, from Open MPI's (kept where set)."""
    for name, ompi in TORCHRUN_ENV.items():
        if name not in environ and ompi in environ:
            environ[name] = environ[ompi]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python3 -m gradscope.as_torch SCRIPT [ARGS...]\n"
              "Runs a PyTorch program with torch, torch.nn, torch.optim, torch.utils.data, ...\n"
              "answered by gradscope.", file=sys.stderr if not argv else sys.stdout)
        return 0 if argv else 2
    script = argv[0]
    if not os.path.exists(script):
        print(f"gradscope.as_torch: {script}: no such file", file=sys.stderr)
        return 2
    install()
    set_torchrun_env()
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
