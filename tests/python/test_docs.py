"""The Python API's words and types agree with the module itself.

- Every public function, class and Tensor method has a docstring.
- Every C function's text signature (python/docs.c, what help() and inspect.signature show)
  names keywords its C code really accepts: each is called with all its keyword parameters
  passed by name, and CPython's argument parsing must not refuse one.
- The .pyi stubs (read from the built package, as a type checker would find them) list exactly
  the public names of their module and of each class, with the same parameters and defaults as
  the functions have at run time.
"""
import ast
import inspect
import pathlib
import types

import numpy as np
import pytest

import gradscope as gs
import gradscope.nn as nn
import gradscope.nn.functional as F
import gradscope.optim as optim
import gradscope.utils.data as data

PACKAGE = pathlib.Path(gs.__file__).parent
STUBS = {
    "gradscope": "__init__.pyi",
    "gradscope.nn": "nn/__init__.pyi",
    "gradscope.nn.functional": "nn/functional.pyi",
    "gradscope.optim": "optim/__init__.pyi",
    "gradscope.utils.data": "utils/data.pyi",
    "gradscope.utils.checkpoint": "utils/checkpoint.pyi",
    "gradscope.linalg": "linalg.pyi",
    "gradscope.autograd_graph": "autograd_graph.pyi",
}
DOCUMENTED = list(STUBS) + ["gradscope.autograd", "gradscope.function", "gradscope.distributions", "gradscope.optim.lr_scheduler",
                            "gradscope.nn.utils", "gradscope.nn.utils.rnn",
                            "gradscope.distributed", "gradscope.multiprocessing", "gradscope.compare",
                            "gradscope.nn.init",
                            "gradscope.special", "gradscope.amp", "gradscope.cuda_amp",
                            "gradscope.optim.swa_utils", "gradscope.jit",
                            "gradscope.nn.utils.prune", "gradscope.profiler",
                            "gradscope.autograd_profiler", "gradscope.profiler_util"]


def module(name):
    return __import__(name, fromlist=["_"])


def public(obj):
    """The public names of a module or class, submodules left out."""
    return {n for n in dir(obj) if not n.startswith("_")
            and not isinstance(getattr(obj, n, None), types.ModuleType)}


# ---- docstrings ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", DOCUMENTED)
def test_every_public_name_has_a_docstring(name):
    m = module(name)
    missing = [n for n in sorted(public(m))
               if callable(getattr(m, n)) and not (getattr(m, n).__doc__ or "").strip()]
    assert not missing, f"{name}: no docstring on {missing}"


def test_every_tensor_method_has_a_docstring():
    missing = [n for n in sorted(public(gs.Tensor))
               if not (getattr(gs.Tensor, n).__doc__ or "").strip()]
    assert not missing, f"Tensor: no docstring on {missing}"


# ---- text signatures against the C argument parsing -------------------------------------------

def t23():
    return gs.arange(1.0, 7.0).reshape(2, 3)


def samples():
    """A value for each parameter name (by function where one name needs different values)."""
    t = t23()
    return {
        "input": t, "self": t, "other": t23(), "src": t23(), "exponent": 2.0, "dim": 0,
        "index": gs.zeros(2, 3, dtype=gs.int64), "mask": t > 2, "value": 1.0, "k": 1,
        "chunks": 2, "split_size": 1, "stride": (3, 1), "start": 0, "length": 1, "dim0": 0, "dim1": 1,
        "dtype": gs.float64, "min": 0.0, "data": [1.0, 2.0], "size": (2, 3), "fill_value": 1.5,
        "low": 0, "high": 3, "tensors": [t23(), t23()], "tensor": gs.tensor([0, 2]),
        "condition": t > 2, "obj": t, "seed": 0, "mode": True, "label": "docs", "name": "docs",
        "ndarray": np.ones(2), "ext_tensor": np.ones(2), "n": 2, "steps": 3, "end": 4.0,
        "target": gs.tensor([0, 2]), "weight": gs.ones(4, 3), "normalized_shape": (3,),
        "kernel_size": 2, "running_mean": gs.zeros(3), "running_var": gs.ones(3),
        "params": [gs.ones(2, requires_grad=True)], "dataset": data.TensorDataset(t23()),
        "mat1": t23(), "mat2": gs.ones(3, 2), "vec": gs.ones(3), "vec2": gs.ones(3),
        "max": 5.0, "decimals": 1, "source": t23(), "indices": gs.zeros(2, 3, dtype=gs.int64),
        "reduce": "sum",
        # by function
        ("index_select", "index"): gs.tensor([0]), ("select", "index"): 0,
        **{(op, "indices"): (gs.tensor([0]),) for op in ("index_put", "index_put_")},
        "values": gs.tensor(1.0),
        ("mse_loss", "target"): t23(), ("binary_cross_entropy_with_logits", "target"): t23(),
        ("conv2d", "input"): gs.ones(1, 1, 4, 4), ("conv2d", "weight"): gs.ones(1, 1, 2, 2),
        ("max_pool2d", "input"): gs.ones(1, 1, 4, 4), ("avg_pool2d", "input"): gs.ones(1, 1, 4, 4),
        ("one_hot", "tensor"): gs.tensor([0, 2]), ("trace_name", "tensor"): t,
        ("embedding", "input"): gs.tensor([0, 2]),
        "pad": (1, 1), "upscale_factor": 2, "downscale_factor": 2,
        ("pixel_shuffle", "input"): gs.ones(1, 4, 2, 2), ("pixel_unshuffle", "input"): gs.ones(1, 1, 4, 4),
        ("prelu", "weight"): gs.ones(1),
        **{(op, p): v for op in ("lerp", "lerp_") for p, v in (("end", t23()), ("weight", 0.5))},
        **{(op, p): gs.tensor([6, 3]) for op in ("bitwise_and", "bitwise_or", "bitwise_xor",
                                                 "bitwise_not") for p in ("input", "self", "other")},
    }


VAR_SAMPLES = {"size": (2, 3), "shape": (3, 2), "sizes": (2, 3), "dims": (1, 0),
               "tensors": (gs.ones(2), gs.ones(2))}
# Each spawns something a test must not: the inspector.
NOT_CALLED = {"inspect"}


def c_functions():
    """(label, callable, signature) of every C function and method with a text signature."""
    out = []
    for owner in [gs, F, optim, data]:
        for n in sorted(public(owner)):
            f = getattr(owner, n)
            if getattr(f, "__text_signature__", None):
                out.append((f"{owner.__name__}.{n}", f))
    for n in sorted(public(gs.Tensor)):
        f = getattr(gs.Tensor, n)
        if getattr(f, "__text_signature__", None):
            out.append((f"Tensor.{n}", f))
    return out


@pytest.mark.parametrize("label,fn", c_functions(), ids=lambda x: x if isinstance(x, str) else "")
def test_text_signature_keywords_are_accepted(label, fn):
    name = label.rsplit(".", 1)[1]
    if name in NOT_CALLED:
        pytest.skip(f"{label} starts the inspector")
    sig = inspect.signature(fn)
    s = samples()
    if label.startswith("Tensor."):  # an unbound method: self comes first
        fn = getattr(s.get((name, "self"), s["self"]), name)
        sig = inspect.signature(fn)
    args, kwargs = [], {}
    params = list(sig.parameters.values())
    # what comes before *args can only be given by position
    before_var = next((i for i, p in enumerate(params) if p.kind is p.VAR_POSITIONAL), 0)
    for i, p in enumerate(params):
        if i < before_var:
            args.append(s.get((name, p.name), s.get(p.name)))
            continue
        value = s.get((name, p.name), s.get(p.name, p.default))
        if p.kind is p.POSITIONAL_ONLY:
            if p.default is p.empty:
                assert value is not inspect.Parameter.empty, f"{label}: no sample for {p.name}"
                args.append(value)
        elif p.kind is p.VAR_POSITIONAL:
            args.extend(VAR_SAMPLES[p.name])
        elif p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            # an optional one as its default: the default the signature shows must be accepted
            value = p.default if p.default is not p.empty else value
            assert value is not inspect.Parameter.empty, f"{label}: no sample for {p.name}"
            kwargs[p.name] = value
    try:
        fn(*args, **kwargs)
    except TypeError as e:  # argument parsing refused something: the signature is wrong
        pytest.fail(f"{label}{sig} called as ({len(args)} positional, {sorted(kwargs)}): {e}")
    except Exception:  # the call got past argument parsing: its keywords are the C code's
        pass


# ---- stubs ------------------------------------------------------------------------------------

def stub_tree(mod_name):
    path = PACKAGE / STUBS[mod_name]
    assert path.exists(), f"{path} is not in the built package (meson.build copies it)"
    return ast.parse(path.read_text(), str(path))


def top_level(tree):
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = [node]
        elif isinstance(node, ast.ImportFrom):  # `from m import x as x` re-exports x
            for alias in node.names:
                if alias.asname == alias.name:
                    names.setdefault(alias.name, [])
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    names[t.id] = [node]
    return names


def is_overload(fn):
    return any(isinstance(d, ast.Name) and d.id == "overload" for d in fn.decorator_list)


@pytest.mark.parametrize("mod_name", list(STUBS))
def test_stub_lists_exactly_the_public_names(mod_name):
    m = module(mod_name)
    stubbed = {n for n in top_level(stub_tree(mod_name)) if not n.startswith("_")
               and not isinstance(getattr(m, n, None), types.ModuleType)}
    runtime = public(m)
    assert not runtime - stubbed, f"{mod_name}: not in its stub: {sorted(runtime - stubbed)}"
    assert not stubbed - runtime, f"{mod_name}: in its stub, not in the module: {sorted(stubbed - runtime)}"


def class_members(cls_node, classes, attributes=True):
    """A stub class's public members, its stub bases' included; attributes=False leaves out
    the annotated ones (they may be set on each instance, as Loss.reduction is)."""
    members = set()
    for item in cls_node.body:
        if isinstance(item, ast.FunctionDef) and not item.name.startswith("_"):
            members.add(item.name)
        elif attributes and isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            if not item.target.id.startswith("_"):
                members.add(item.target.id)
    for base in cls_node.bases:
        if isinstance(base, ast.Name) and base.id in classes:
            members |= class_members(classes[base.id], classes, attributes)
    return members


def builtin_base_names(cls):
    """What a class has from tuple or object, which its stub need not repeat."""
    names = set()
    for base in cls.__mro__[1:]:
        if base.__module__ == "builtins":
            names |= set(dir(base))
    return names


@pytest.mark.parametrize("mod_name", list(STUBS))
def test_stub_classes_list_exactly_the_public_members(mod_name):
    m = module(mod_name)
    classes = {n.name: n for n in stub_tree(mod_name).body if isinstance(n, ast.ClassDef)}
    problems = []
    for name, node in classes.items():
        cls = getattr(m, name, None)
        if not isinstance(cls, type):
            continue  # a factory today (nn.Linear): its stub describes the object it makes
        stubbed = class_members(node, classes)
        runtime = public(cls) - builtin_base_names(cls)
        if runtime - stubbed:
            problems.append(f"{name}: not in the stub: {sorted(runtime - stubbed)}")
        methods = class_members(node, classes, attributes=False)
        if methods - set(dir(cls)):
            problems.append(f"{name}: in the stub, not in the class: {sorted(methods - set(dir(cls)))}")
    assert not problems, f"{mod_name}: " + "; ".join(problems)


def stub_params(fn, drop_first):
    a = fn.args
    out = []
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for i, (p, d) in enumerate(zip(positional, defaults)):
        kind = "POSITIONAL_ONLY" if i < len(a.posonlyargs) else "POSITIONAL_OR_KEYWORD"
        out.append((p.arg, kind, d))
    if a.vararg:
        out.append((a.vararg.arg, "VAR_POSITIONAL", None))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((p.arg, "KEYWORD_ONLY", d))
    if a.kwarg:
        out.append((a.kwarg.arg, "VAR_KEYWORD", None))
    return out[1:] if drop_first else out


def same_default(stub_default, runtime_default):
    if stub_default is None:
        return runtime_default is inspect.Parameter.empty
    if runtime_default is inspect.Parameter.empty:
        return False
    try:
        value = ast.literal_eval(stub_default)
    except ValueError:
        return True  # `...` or a name: not compared
    if value is Ellipsis:
        return True
    return value == runtime_default and type(value) is type(runtime_default) or \
        (isinstance(value, (int, float)) and not isinstance(value, bool)
         and isinstance(runtime_default, (int, float)) and value == runtime_default)


def runtime_params(obj, drop_first):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None  # a built-in without a text signature: nothing to compare
    params = list(sig.parameters.values())
    if drop_first and params and params[0].name in ("self", "input"):
        params = params[1:]
    return [(p.name, p.kind.name, p.default) for p in params]


def compare(label, fn_node, obj, drop_first, problems):
    if is_overload(fn_node):
        return
    want = runtime_params(obj, drop_first)
    if want is None:
        return
    got = stub_params(fn_node, drop_first)
    names_got = [(n, k) for n, k, _ in got]
    names_want = [(n, k) for n, k, _ in want]
    if names_got != names_want:
        problems.append(f"{label}: stub {names_got} != runtime {names_want}")
        return
    for (n, _, d), (_, _, rd) in zip(got, want):
        if not same_default(d, rd):
            problems.append(f"{label}: default of {n}: stub {ast.unparse(d) if d else '-'} != "
                            f"runtime {rd!r}")


@pytest.mark.parametrize("mod_name", list(STUBS))
def test_stub_signatures_match_the_functions(mod_name):
    m = module(mod_name)
    problems = []
    for name, nodes in top_level(stub_tree(mod_name)).items():
        obj = getattr(m, name, None)
        for node in nodes:
            if isinstance(node, ast.FunctionDef) and obj is not None:
                compare(f"{mod_name}.{name}", node, obj, False, problems)
            elif isinstance(node, ast.ClassDef) and isinstance(obj, type):
                for item in node.body:
                    if not isinstance(item, ast.FunctionDef):
                        continue
                    if item.name == "__init__":
                        compare(f"{name}()", item, obj, True, problems)
                    elif not item.name.startswith("_") and item.name in vars(obj) and not \
                            isinstance(inspect.getattr_static(obj, item.name), property):
                        # a static method has no self to leave out, in the stub or at runtime
                        static = isinstance(inspect.getattr_static(obj, item.name), staticmethod)
                        compare(f"{name}.{item.name}", item, getattr(obj, item.name),
                                not static, problems)
    assert not problems, "\n".join(problems)


def test_a_stub_that_disagrees_is_caught():
    """The comparison itself can fail: a stub with a renamed keyword is reported."""
    tree = ast.parse("def sum(input, dimension=None, keepdim=False): ...")
    problems = []
    compare("gradscope.sum", tree.body[0], gs.sum, False, problems)
    assert problems and "dimension" in problems[0]
