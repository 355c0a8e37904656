"""grad_fn._saved_self, _saved_other, _saved_result, ... on gradscope against Debian's torch
1.13: the same expressions built with torch and with gradscope (the module passed in as `lib`)
give nodes of the same name whose _saved_* attributes hold the same values (tensors compared
by value, numbers and sizes exactly); after a backward without retain_graph a saved tensor is
torch's RuntimeError while the numbers stay readable; a saved tensor packed by saved-tensor
hooks is unpacked when read; an attribute the node does not have is an AttributeError naming
the node as torch does. meson registers this file only when torch imports
(tests/python/meson.build)."""
import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")

LIBS = [torch, gs]


def tensor(lib, seed, *shape, positive=False):
    v = np.random.RandomState(seed).uniform(0.5 if positive else -1.0, 1.5, shape).tolist()
    return lib.tensor(v, dtype=lib.float64, requires_grad=True)


def operands(lib):
    return (tensor(lib, 1, 2, 3), tensor(lib, 2, 2, 3, positive=True), tensor(lib, 3, 3, 4),
            tensor(lib, 4, 4), tensor(lib, 5, 3))


# name: (the expression, the _saved_ attributes torch 1.13 gives its node)
CASES = {
    "mul": (lambda lib, x, y, m, b, v: x * y, ["self", "other"]),
    "mul_scalar": (lambda lib, x, y, m, b, v: x * 3, ["self", "other"]),
    "div": (lambda lib, x, y, m, b, v: x / y, ["self", "other"]),
    "div_scalar": (lambda lib, x, y, m, b, v: x / 2.5, ["self", "other"]),
    "pow_scalar": (lambda lib, x, y, m, b, v: x ** 3, ["self", "exponent"]),
    "pow_float": (lambda lib, x, y, m, b, v: y ** 2.5, ["self", "exponent"]),
    "square": (lambda lib, x, y, m, b, v: x.square(), ["self", "exponent"]),
    "pow_tensor": (lambda lib, x, y, m, b, v: y ** x, ["self", "exponent", "result"]),
    "tanh": (lambda lib, x, y, m, b, v: x.tanh(), ["result"]),
    "sigmoid": (lambda lib, x, y, m, b, v: x.sigmoid(), ["result"]),
    "exp": (lambda lib, x, y, m, b, v: x.exp(), ["result"]),
    "relu": (lambda lib, x, y, m, b, v: x.relu(), ["result"]),
    "sqrt": (lambda lib, x, y, m, b, v: y.sqrt(), ["result"]),
    "log": (lambda lib, x, y, m, b, v: y.log(), ["self"]),
    "sin": (lambda lib, x, y, m, b, v: x.sin(), ["self"]),
    "cos": (lambda lib, x, y, m, b, v: x.cos(), ["self"]),
    "abs": (lambda lib, x, y, m, b, v: x.abs(), ["self"]),
    "clamp": (lambda lib, x, y, m, b, v: x.clamp(-0.5, 0.5), ["self", "min", "max"]),
    "clamp_min": (lambda lib, x, y, m, b, v: x.clamp(min=0.25), ["self", "min", "max"]),
    "softmax": (lambda lib, x, y, m, b, v: x.softmax(1), ["result", "dim"]),
    "log_softmax": (lambda lib, x, y, m, b, v: x.log_softmax(0), ["result", "dim"]),
    "mm": (lambda lib, x, y, m, b, v: x @ m, ["self", "mat2", "self_sym_sizes",
                                               "mat2_sym_sizes"]),
    "mv": (lambda lib, x, y, m, b, v: x @ v, ["self", "vec"]),
    "dot": (lambda lib, x, y, m, b, v: v.dot(v * 2), ["self", "tensor"]),
    "matmul_1d": (lambda lib, x, y, m, b, v: v @ (v * 2), ["self", "tensor"]),
    "addmm": (lambda lib, x, y, m, b, v: lib.addmm(b, x, m),
              ["mat1", "mat2", "alpha", "beta", "mat1_sym_sizes", "mat2_sym_sizes"]),
    "linear": (lambda lib, x, y, m, b, v: lib.nn.functional.linear(x, m.t(), b),
               ["mat1", "mat2", "alpha", "beta"]),
}


def read(lib, name):
    f, attrs = CASES[name]
    out = f(lib, *operands(lib))
    node = out.grad_fn
    got = {}
    for a in attrs:
        value = getattr(node, "_saved_" + a)
        if isinstance(value, lib.Tensor):
            value = ("tensor", np.asarray(value.detach().tolist(), dtype=float).tolist())
        got[a] = value
    return node.name(), got


@pytest.mark.parametrize("name", sorted(CASES))
def test_saved_attributes_as_torch(name):
    want_name, want = read(torch, name)
    got_name, got = read(gs, name)
    assert got_name == want_name
    for attr, value in want.items():
        if isinstance(value, tuple) and value[0] == "tensor":
            assert isinstance(got[attr], tuple), (attr, got[attr])
            np.testing.assert_allclose(got[attr][1], value[1], rtol=1e-12, err_msg=attr)
        else:
            assert got[attr] == value, (attr, got[attr], value)
            assert type(got[attr]) is type(value), (attr, got[attr], value)


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "gradscope"])
def test_freed_by_backward(lib):
    x, y, m, b, v = operands(lib)
    p = x ** 3
    node = (p * y).grad_fn
    (p * y).sum().backward(retain_graph=True)
    assert node._saved_self is not None  # retained: still there
    out = p * y
    out.sum().backward()
    with pytest.raises(RuntimeError, match=r"^Trying to backward through the graph a second "
                       r"time \(or directly access saved tensors after they have already been "
                       r"freed\)\. Saved intermediate values"):
        out.grad_fn._saved_other
    assert p.grad_fn._saved_exponent == 3  # a number outlives the backward
    with pytest.raises(RuntimeError, match="directly access saved tensors"):
        p.grad_fn._saved_self


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "gradscope"])
def test_unknown_saved_attribute(lib):
    x, y, m, b, v = operands(lib)
    node = (x * y).grad_fn
    with pytest.raises(AttributeError, match="'MulBackward0' object has no attribute '_saved_foo'"):
        node._saved_foo
    with pytest.raises(AttributeError):
        x.tanh().grad_fn._saved_self  # tanh saves its result, not its input


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "gradscope"])
def test_read_through_saved_tensor_hooks(lib):
    calls = []

    def pack(t):
        calls.append("pack")
        return t * 10  # what is kept is not what was saved: reading shows the unpacked one

    def unpack(t):
        calls.append("unpack")
        return t / 10

    x, y, m, b, v = operands(lib)
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = x * y
    saved = out.grad_fn._saved_other
    np.testing.assert_allclose(np.asarray(saved.tolist()), np.asarray(y.tolist()), rtol=1e-12)
    assert calls == ["pack", "pack", "unpack"]


def test_each_node_name_is_its_own_class_as_torchs():
    outs = {}
    for m in (gs, torch):
        x = m.ones(2, requires_grad=True)

        class Twice(m.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        y, z, c = x * 2, x * 3, Twice.apply(x)
        outs[m] = (type(y.grad_fn).__name__, type(y.grad_fn) is type(z.grad_fn),
                   type(y.grad_fn) is type(x.exp().grad_fn), type(c.grad_fn).__name__,
                   y.grad_fn.__class__.__name__)
    assert outs[gs] == outs[torch] == ("MulBackward0", True, False, "TwiceBackward",
                                       "MulBackward0")
    y = gs.ones(2, requires_grad=True) * 2
    assert isinstance(y.grad_fn, gs.autograd.Node)
    assert repr(type(y.grad_fn)) == "<class 'MulBackward0'>"


def test_create_graph_gradient_is_the_formulas_own_result():
    """autograd.grad(create_graph=True) hands back the gradient the formulas made, as torch
    does: its grad_fn is the last formula's node, not a copy's (CloneBackward0), and it
    differentiates again to torch's numbers, also for an intermediate tensor captured while
    its formula still runs and an input named twice."""
    got = {}
    for lib in LIBS:
        x = tensor(lib, 6, 3)
        h = x * x * 3
        y = h.sin().sum()
        gh, gx, gx2 = lib.autograd.grad(y, (h, x, x), create_graph=True)
        got[lib] = (type(gx.grad_fn).__name__, gh.detach().numpy(), gx.detach().numpy(),
                    gx2.detach().numpy(), lib.autograd.grad(gx.sum(), x, retain_graph=True)[0].numpy(),
                    lib.autograd.grad(gh.sum(), x)[0].numpy())
        simple, = lib.autograd.grad((x * x * 3).sum(), x, create_graph=True)
        got[lib] += (type(simple.grad_fn).__name__,)
    assert got[gs][0] != "CloneBackward0"
    assert got[gs][-1] == got[torch][-1] == "AddBackward0"
    for a, b in zip(got[gs][1:-1], got[torch][1:-1]):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14)
