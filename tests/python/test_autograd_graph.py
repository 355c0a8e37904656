"""test_autograd_graph.py: the autograd graph as torch shows it from Python: grad_fn nodes
(names, next_functions, AccumulateGrad.variable, identity, metadata), Tensor._base, gradient
hooks (register_hook, RemovableHandle), torch.autograd.grad and torch.autograd.backward, and
their errors in Python's words. The compatibility programs grad_fn_walk.py, gradient_hooks.py
and autograd_grad.py compare the same surface with real torch."""
import gc
import math

import pytest

import gradscope as gs


def leaf(*values):
    return gs.tensor(list(values), requires_grad=True)


# ---- grad_fn ---------------------------------------------------------------------------------

def test_grad_fn_is_none_for_leaves_and_tensors_made_without_grad():
    x = leaf(1.0, 2.0)
    assert x.grad_fn is None
    assert gs.ones(2).grad_fn is None
    with gs.no_grad():
        assert (x * 2).grad_fn is None
    assert x.detach().grad_fn is None


def test_names_are_torch_1_13s():
    x = gs.ones(2, 3, requires_grad=True)
    v = gs.ones(3, requires_grad=True)
    cases = {
        "AddBackward0": x + x, "MulBackward0": x * 2, "SubBackward0": x - 1,
        "RsubBackward1": 1 - x, "DivBackward0": x / 2, "PowBackward0": x ** 2,
        "MmBackward0": x @ gs.ones(3, 2), "MvBackward0": x @ v, "DotBackward0": v @ v,
        "SumBackward0": x.sum(), "SumBackward1": x.sum(0), "MeanBackward0": x.mean(),
        "MeanBackward1": x.mean(1), "MaxBackward1": x.max(), "ReluBackward0": x.relu(),
        "ViewBackward0": x.view(6), "TBackward0": x.t(), "SelectBackward0": x[0],
        "SliceBackward0": x[:, 1:], "ExpandBackward0": v.expand(2, 3),
        "UnsqueezeBackward0": x.unsqueeze(0), "CatBackward0": gs.cat([x, x]),
        "ToCopyBackward0": x.double(), "AddmmBackward0": gs.nn.Linear(3, 2)(x),
    }
    for name, t in cases.items():
        assert t.grad_fn.name() == name, (name, t.grad_fn.engine_name)
    assert x.sum().grad_fn.engine_name == "SumBackward"


def test_next_functions_lead_to_accumulate_grad_nodes_of_leaves():
    x, w = leaf(1.0, 2.0), leaf(3.0, 4.0)
    y = (x * w + x).sum()
    (add, nr), = y.grad_fn.next_functions
    assert nr == 0 and add.name() == "AddBackward0"
    mul, acc_x = (node for node, _ in add.next_functions)
    assert acc_x.name() == "torch::autograd::AccumulateGrad"
    assert repr(acc_x).startswith("<AccumulateGrad object at ")
    assert acc_x.variable is x  # the leaf's own object, as torch's
    assert acc_x.next_functions == ()
    assert mul.next_functions[0][0] == acc_x  # x feeds both nodes: one node
    assert mul.next_functions[1][0].variable is w
    # a scalar operand needs no gradient: torch shows it as (None, 0)
    assert (x * 2).grad_fn.next_functions[1] == (None, 0)
    # an index input is not differentiable at all: torch leaves it out
    g = x.gather(0, gs.tensor([1, 0]))
    assert len(g.grad_fn.next_functions) == 1
    with pytest.raises(AttributeError, match="'MulBackward0' object has no attribute 'variable'"):
        mul.variable


def test_a_node_is_one_object_compared_and_hashed_by_node():
    x = leaf(1.0)
    y = x * 2
    assert y.grad_fn is y.grad_fn and y.grad_fn == y.grad_fn
    assert hash(y.grad_fn) == hash(y.grad_fn)
    assert y.grad_fn != (x * 2).grad_fn
    assert {y.grad_fn: 1}[y.grad_fn] == 1
    assert isinstance(y.grad_fn, gs.autograd.Node)


def test_metadata_is_kept_with_the_node():
    y = leaf(1.0) * 2
    y.grad_fn.metadata["tag"] = "mine"
    gc.collect()
    assert y.grad_fn.metadata == {"tag": "mine"}


def test_a_node_outlives_its_tensors_and_backward():
    x = leaf(1.0, 2.0)
    node = (x.exp() * 3).grad_fn  # both tensors are gone already
    assert node.name() == "MulBackward0"
    assert node.next_functions[0][0].name() == "ExpBackward0"
    y = x.exp().sum()
    node = y.grad_fn
    y.backward()
    assert node.released and node.next_functions[0][0].name() == "ExpBackward0"
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_variable_of_a_disposed_leaf_is_the_stale_error_in_pythons_words():
    x = leaf(1.0)
    acc = (x * 2).grad_fn.next_functions[0][0]
    del x
    with pytest.raises(RuntimeError, match=r"^AccumulateGrad.variable: tensor #\d+\.\d+ is stale"):
        acc.variable


# ---- _base -----------------------------------------------------------------------------------

def test_base_of_views_is_the_root_base():
    x = leaf(1.0, 2.0, 3.0, 4.0)
    v = x.view(2, 2)
    assert x._base is None
    assert v._base is x and v[1]._base is x and v.t()._base is x
    assert x.detach()._base is None and v.clone()._base is None
    y = x * 2
    assert y.reshape(2, 2)._base is y


def test_base_disposed_under_a_view_is_the_stale_error():
    v = leaf(1.0, 2.0).view(2)  # the base's object went with the statement
    with pytest.raises(RuntimeError, match=r"^Tensor._base: tensor #\d+\.\d+ is stale"):
        v._base


def test_retains_grad_is_for_non_leaves_that_asked():
    x = leaf(1.0)
    y = x * 2
    assert not y.retains_grad
    y.retain_grad()
    x.retain_grad()
    assert y.retains_grad and not x.retains_grad


def test_grad_is_the_same_object_each_time():
    x = leaf(1.0)
    (x * 3).sum().backward()
    assert x.grad is x.grad


# ---- hooks -----------------------------------------------------------------------------------

def test_hooks_see_and_replace_gradients_and_remove():
    x = leaf(1.0, 2.0)
    y = x * 3
    seen = []
    h1 = y.register_hook(lambda g: seen.append(g.tolist()))
    h2 = y.register_hook(lambda g: g * 10)
    h3 = x.register_hook(lambda g: g + 1)
    y.sum().backward(retain_graph=True)
    assert seen == [[1.0, 1.0]]
    assert x.grad.tolist() == [31.0, 31.0]
    for h in (h1, h2, h3):
        h.remove()
        h.remove()
    x.grad = None
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0] and len(seen) == 1


def test_a_gradient_kept_from_a_hook_stays_usable():
    x = leaf(1.0, 2.0)
    kept = []
    x.register_hook(kept.append)
    (x * 5).sum().backward()
    del x
    gc.collect()
    assert kept[0].tolist() == [5.0, 5.0]


def test_hook_errors():
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="^Tensor.register_hook: .*does not require grad"):
        gs.ones(2).register_hook(lambda g: g)
    with pytest.raises(TypeError, match="expected a function"):
        x.register_hook(3)

    def boom(g):
        raise KeyError("from the hook")

    y = x * 2
    y.register_hook(boom)
    with pytest.raises(KeyError, match="from the hook"):
        y.sum().backward(retain_graph=True)
    z = x * 3
    z.register_hook(lambda g: g[:1])
    with pytest.raises(RuntimeError, match="returned a gradient \\[1\\] f32; expected one like"):
        z.sum().backward()
    w = x * 4
    w.register_hook(lambda g: "not a tensor")
    with pytest.raises(TypeError, match="must return a Tensor or None, got str"):
        w.sum().backward()


def test_a_hook_may_start_a_nested_backward():
    """As torch: the hook's backward runs to completion, then the outer pass goes on; both
    accumulate into x. One that walks into the node running it is refused by name."""
    x = leaf(1.0, 2.0)
    other = (x * 5).sum()
    u = x * 6
    u.register_hook(lambda g: other.backward())
    u.sum().backward()
    assert x.grad.tolist() == [11.0, 11.0]
    v = x * 7
    total = v.sum()
    handle = v.register_hook(lambda g: total.backward(retain_graph=True))
    with pytest.raises(RuntimeError, match="is running in an outer backward pass on this thread"):
        total.backward(retain_graph=True)
    handle.remove()  # the hook holds total, whose graph holds the hook: break the cycle


def test_what_a_hook_makes_belongs_to_the_callers_scope():
    x = leaf(1.0, 2.0)
    made = []
    with gs.dispose_scope() as scope:
        y = x * 2
        y.register_hook(lambda g: made.append(g * 1))
        y.sum().backward()
        assert made[0].is_alive
        del y
    assert not made[0].is_alive  # the scope disposed it


# ---- autograd.grad and autograd.backward ------------------------------------------------------

def test_autograd_grad_returns_a_tuple_and_leaves_grad_alone():
    x, w = leaf(1.0, 2.0), leaf(3.0, 4.0)
    h = x * w
    y = (h * h).sum()
    gx, gh = gs.autograd.grad(y, [x, h], retain_graph=True)
    assert gx.tolist() == [18.0, 64.0] and gh.tolist() == [6.0, 16.0]
    assert x.grad is None and w.grad is None
    assert gs.autograd.grad([y], x, retain_graph=True)[0].tolist() == [18.0, 64.0]
    (gs_,) = gs.autograd.grad(h, w, grad_outputs=gs.tensor([1.0, -1.0]), retain_graph=True)
    assert gs_.tolist() == [1.0, -2.0]
    u = leaf(0.0)
    with pytest.raises(RuntimeError, match=r"^autograd.grad: input 1 \(tensor #\d+\.\d+\) was not "
                       r"used in the graph.*pass allow_unused=True"):
        gs.autograd.grad(y, [x, u], retain_graph=True)
    assert gs.autograd.grad(y, [x, u], allow_unused=True, retain_graph=True)[1] is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        gs.autograd.grad(y, [gs.ones(1)], retain_graph=True)
    with pytest.raises(ValueError, match="grad_outputs: expected 1 of them"):
        gs.autograd.grad(y, x, grad_outputs=[None, None])
    with pytest.raises(TypeError, match="expected a Tensor or a sequence"):
        gs.autograd.grad(y, 3)


def test_double_backward_differentiates_a_gradient():
    x = leaf(1.0, 2.0)
    y = (x ** 3).sum()
    g, = gs.autograd.grad(y, x, create_graph=True)
    assert g.tolist() == [3.0, 12.0] and g.grad_fn is not None
    h, = gs.autograd.grad(g.sum(), x)  # retain_graph defaulted to create_graph
    assert h.tolist() == [6.0, 12.0]
    # Tensor.backward(create_graph=True): .grad keeps its history
    y.backward(create_graph=True)
    assert x.grad.grad_fn is not None and x.grad.tolist() == [3.0, 12.0]
    x.grad.sum().backward()  # adds d(sum 3x^2)/dx = 6x into x.grad
    assert x.grad.tolist() == [9.0, 24.0]


def test_double_backward_runs_through_the_activations():
    """silu's gradient, made with create_graph, differentiates to silu'' (the activations'
    formulas record under create_graph; test_double_backward_activations.py checks them all
    against torch)."""
    x = leaf(1.0, -2.0)
    y = gs.nn.functional.silu(x).sum()
    g, = gs.autograd.grad(y, x, create_graph=True)
    assert g.grad_fn is not None
    h, = gs.autograd.grad(g.sum(), x)
    for v, got in zip([1.0, -2.0], h.tolist()):
        s = 1 / (1 + math.exp(-v))
        assert got == pytest.approx(s * (1 - s) * (2 + v * (1 - 2 * s)), rel=1e-6)


def test_autograd_backward_runs_one_pass_from_several_tensors():
    x = leaf(1.0, 2.0)
    y = x * x
    gs.autograd.backward([y.sum(), (y * 3).sum()])  # y's node once, seeds summed
    assert x.grad.tolist() == [8.0, 16.0]
    x.grad = None
    z = x * 2
    gs.autograd.backward(z, grad_tensors=gs.tensor([1.0, 10.0]))
    assert x.grad.tolist() == [2.0, 20.0]


def test_grad_fn_names_match_torch_where_the_ops_match():
    torch = pytest.importorskip("torch")
    import grad_fn_names as names

    same, differ = [], []
    for case in names._ops(gs):
        ours, theirs = names.describe(gs, case), names.describe(torch, case)
        (differ if case in names.DIFFERENT else same).append((case, ours, theirs))
    mismatched = [c for c in same if c[1] != c[2]]
    assert not mismatched, "\n".join(f"{c}: gradscope {o}, torch {t}" for c, o, t in mismatched)
    matched = [c for c in differ if c[1] == c[2]]
    assert not matched, f"these match torch now: drop them from DIFFERENT: {matched}"
    assert len(same) >= 75, len(same)
