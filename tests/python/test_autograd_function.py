"""torch.autograd.Function on gradscope, against Debian's torch 1.13: the same Function
classes run once with torch and once with gradscope (the module passed in as `lib`), and the
values, gradients, grad_fn names, call counts and error messages must agree. Covers saved
tensors and their version check, needs_input_grad, non-tensor arguments, broadcast gradients
summed back, several outputs, non-differentiable outputs, mark_dirty, double backward through
a backward written with ops, once_differentiable, retain_graph, and the errors torch gives.
meson registers this file only when torch imports (tests/python/meson.build)."""
import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")

LIBS = [torch, gs]


def leaf(lib, seed, *shape):
    v = np.random.RandomState(seed).uniform(-1.0, 1.0, shape).tolist()
    return lib.tensor(v, dtype=lib.float64, requires_grad=True)


def as_list(t):
    return None if t is None else np.asarray(t.detach().tolist(), dtype=float)


def classes(lib):
    F = lib.autograd.Function

    class ScaledSquare(F):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            ctx.log = [ctx.needs_input_grad]
            return x * x * k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g * ctx.k, None

    class MulAdd(F):  # a * b + c with c broadcast: its gradient is summed back by apply
        @staticmethod
        def forward(ctx, a, b, c):
            ctx.save_for_backward(a, b)
            return a * b + c

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g * a, g  # g has a's shape; c's is summed from it

    class SinCos(F):  # two outputs
        calls = []

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin(), x.cos()

        @staticmethod
        def backward(ctx, gs_, gc):
            (x,) = ctx.saved_tensors
            SinCos.calls.append((as_list(gs_), as_list(gc)))
            return gs_ * x.cos() - gc * x.sin()

    class MaxWithIndex(F):
        @staticmethod
        def forward(ctx, x):
            i = x.argmax()
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(x, i)
            return x.max(), i

        @staticmethod
        def backward(ctx, gv, gi):
            x, i = ctx.saved_tensors
            out = x.new_zeros(x.shape)
            out[i] = gv
            return out

    class DoubleInPlace(F):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Cube(F):  # backward written with ops: differentiable again
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    class CubeOnce(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    class Identity(F):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    return dict(ScaledSquare=ScaledSquare, MulAdd=MulAdd, SinCos=SinCos,
                MaxWithIndex=MaxWithIndex, DoubleInPlace=DoubleInPlace, Cube=Cube,
                CubeOnce=CubeOnce, Identity=Identity)


def run_basics(lib):
    C = classes(lib)
    out = {}
    x = leaf(lib, 1, 3, 4)
    y = C["ScaledSquare"].apply(x, 2.5)
    out["name"] = y.grad_fn.name()
    out["next"] = [f.name() for f, _ in y.grad_fn.next_functions]
    y.sum().backward()
    out["gx"] = as_list(x.grad)
    with lib.no_grad():
        z = C["ScaledSquare"].apply(x, 1.0)
    out["no_grad"] = (z.requires_grad, z.grad_fn is None)

    a, b, c = leaf(lib, 2, 2, 3), leaf(lib, 3, 2, 3), leaf(lib, 4, 3)
    m = C["MulAdd"].apply(a, b, c)
    (m * m).sum().backward()
    out["mul_add"] = [as_list(t.grad) for t in (a, b, c)]

    C["SinCos"].calls.clear()
    s, co = C["SinCos"].apply(x)
    (s * 3).sum().backward()  # only the first output is used: the second's gradient is zeros
    out["sincos_calls"] = len(C["SinCos"].calls)
    out["sincos_unused"] = C["SinCos"].calls[0][1]
    out["sincos_gx"] = as_list(x.grad)
    out["sincos_values"] = (as_list(s), as_list(co))

    v = leaf(lib, 5, 5)
    mx, idx = C["MaxWithIndex"].apply(v)
    out["max"] = (mx.item(), idx.item(), idx.requires_grad, mx.requires_grad)
    (mx * 2).backward()
    out["max_grad"] = as_list(v.grad)

    w = leaf(lib, 6, 4)
    h = w * 3
    d = C["DoubleInPlace"].apply(h)
    out["dirty"] = (d is h, h.grad_fn.name(), as_list(h))
    h.sum().backward()
    out["dirty_grad"] = as_list(w.grad)
    return out


@pytest.fixture(scope="module")
def basics():
    return {lib.__name__: run_basics(lib) for lib in LIBS}


def test_values_gradients_and_names_match_torch(basics):
    t, g = basics["torch"], basics["gradscope"]
    assert g["name"] == t["name"] == "ScaledSquareBackward"
    assert g["next"] == t["next"] == ["torch::autograd::AccumulateGrad"]
    np.testing.assert_allclose(g["gx"], t["gx"], rtol=0, atol=1e-12)
    assert g["no_grad"] == t["no_grad"] == (False, True)
    for mine, theirs in zip(g["mul_add"], t["mul_add"]):
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-12)


def test_several_outputs_call_backward_once_with_every_gradient(basics):
    t, g = basics["torch"], basics["gradscope"]
    assert g["sincos_calls"] == t["sincos_calls"] == 1
    np.testing.assert_array_equal(g["sincos_unused"], t["sincos_unused"])
    np.testing.assert_allclose(g["sincos_gx"], t["sincos_gx"], rtol=0, atol=1e-12)
    for mine, theirs in zip(g["sincos_values"], t["sincos_values"]):
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-15)


def test_non_differentiable_outputs_and_mark_dirty(basics):
    t, g = basics["torch"], basics["gradscope"]
    assert g["max"] == t["max"]
    np.testing.assert_allclose(g["max_grad"], t["max_grad"], rtol=0, atol=0)
    assert g["dirty"][:2] == t["dirty"][:2] == (True, "DoubleInPlaceBackward")
    np.testing.assert_allclose(g["dirty"][2], t["dirty"][2], rtol=0, atol=1e-15)
    np.testing.assert_allclose(g["dirty_grad"], t["dirty_grad"], rtol=0, atol=1e-15)


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_double_backward_through_a_backward_written_with_ops(lib):
    C = classes(lib)
    x = leaf(lib, 7, 6)
    (g,) = lib.autograd.grad(C["Cube"].apply(x).sum(), x, create_graph=True)
    assert g.requires_grad
    (gg,) = lib.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(as_list(gg), 6 * as_list(x), rtol=0, atol=1e-12)
    (g_once,) = lib.autograd.grad(C["CubeOnce"].apply(x).sum(), x, create_graph=True)
    assert not g_once.requires_grad  # as torch: no history through a once_differentiable
    np.testing.assert_allclose(as_list(g_once), as_list(g), rtol=0, atol=1e-12)


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_an_input_returned_as_given_is_a_view_of_it(lib):
    C = classes(lib)
    x = leaf(lib, 8, 3)
    y = C["Identity"].apply(x)
    assert y is not x and y._base is x
    assert y.grad_fn.name() == "IdentityBackward"
    (y * 2).sum().backward()
    np.testing.assert_array_equal(as_list(x.grad), [2.0, 2.0, 2.0])


def errors(lib):
    F = lib.autograd.Function
    C = classes(lib)
    found = {}

    class TooMany(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, g

    class WrongShape(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return lib.ones(4, dtype=lib.float64)

    class GradForNumber(F):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    class Raises(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise KeyError("from the user's backward")

    x = leaf(lib, 9, 3)
    cases = {
        "too_many": lambda: TooMany.apply(x).sum().backward(),
        "wrong_shape": lambda: WrongShape.apply(x).sum().backward(),
        "grad_for_number": lambda: GradForNumber.apply(x, 2.0).sum().backward(),
        "raises": lambda: Raises.apply(x).sum().backward(),
        "save_number": lambda: type("SaveNumber", (F,), {
            "forward": staticmethod(lambda ctx, t: (ctx.save_for_backward(t, 3), t * 1)[1]),
            "backward": staticmethod(lambda ctx, g: g)}).apply(x),
        "dirty_leaf": lambda: C["DoubleInPlace"].apply(leaf(lib, 10, 2)),
        "legacy_call": lambda: C["Cube"]()(x),
    }

    def saved_then_written():
        h = x * 1
        y = C["Cube"].apply(h)
        h.add_(1)
        y.sum().backward()
    cases["saved_written"] = saved_then_written

    def twice():
        s = C["Cube"].apply(x).sum()
        s.backward()
        s.backward()
    cases["twice"] = twice
    for name, fn in cases.items():
        try:
            fn()
            found[name] = None
        except Exception as e:  # noqa: BLE001 - the exception itself is compared
            found[name] = (type(e).__name__, str(e))
    return found


def test_errors_are_torch_s():
    t, g = errors(torch), errors(gs)
    for name in ("too_many", "wrong_shape", "grad_for_number", "save_number"):
        assert g[name] == t[name], name
    assert g["raises"] == t["raises"] == ("KeyError", "\"from the user's backward\"")
    assert g["dirty_leaf"][0] == t["dirty_leaf"][0] == "RuntimeError"
    assert "leaf" in g["dirty_leaf"][1] and "in place" in g["dirty_leaf"][1]
    assert g["legacy_call"] == t["legacy_call"]
    for name in ("saved_written", "twice"):
        assert g[name][0] == t[name][0] == "RuntimeError", name
    assert ("one of the variables needed for gradient computation has been modified by an "
            "inplace operation") in g["saved_written"][1]
    assert "CubeBackward" in g["saved_written"][1]
    assert "retain_graph=True" in g["twice"][1] and "retain_graph=True" in t["twice"][1]


def test_the_function_node_is_in_the_log(tmp_path):
    """The event log names the node by the Function, links it to its input's history and
    lists its saved tensor, which backward frees (what the inspector shows)."""
    import json
    import os
    import subprocess

    class Halve(gs.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x / 2

        @staticmethod
        def backward(ctx, g):
            return g / 2

    path = tmp_path / "fn.gstrace"
    with gs.trace(str(path)):
        x = gs.trace_name(gs.ones(3, requires_grad=True), "x")
        Halve.apply(x).sum().backward()
    out = subprocess.run([os.environ["GS_CLI"], "dump", "--jsonl", str(path)],
                         capture_output=True, text=True, check=True).stdout
    evs = [json.loads(line) for line in out.splitlines() if line.strip()]
    nodes = {e["node"]: e for e in evs if e.get("kind") == "node_create"}
    halve = [e for e in nodes.values() if e.get("name") == "HalveBackward"]
    assert len(halve) == 1, sorted({e.get("name") for e in nodes.values()})
    (h,) = halve
    assert [nodes[i]["name"] for i in h["inputs"]] == ["AccumulateGrad"]
    (named,) = [e for e in evs if e.get("kind") == "tensor_name" and e.get("name") == "x"]
    assert h["saved"] == [named["tensor"]]
    freed = [e for e in evs if e.get("kind") == "node_free_saved" and e.get("node") == h["node"]]
    assert len(freed) == 1
