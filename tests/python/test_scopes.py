"""test_scopes.py: ownership from Python: dispose scopes with exact TorchSharp counters,
move_to_outer, dispose_everything_but, objects whose tensors a scope disposed (a clear error
naming the scope), and drop semantics (the program's tensors die with their objects, a
scope's live until the scope ends)."""
import gc

import pytest

import gradscope as gs


def counters():
    s = gs.scope_stats()
    return (s.created_outside_scope, s.disposed_outside_scope, s.created_in_scope,
            s.disposed_in_scope, s.attached_to_scope, s.detached_from_scope, s.live)


def test_a_scope_disposes_what_it_owns_with_exact_counters():
    with gs.dispose_scope("step") as s:
        a = gs.ones(3)
        b = a + 1.0
        assert s.info["alive"] == 2
        assert a.owner_scope_name() == "step"
    assert counters() == (0, 0, 2, 2, 0, 0, 0)
    assert not a.is_alive and not b.is_alive
    with pytest.raises(RuntimeError, match="scope 'step'"):
        b * 2.0


def test_move_to_outer_from_the_outermost_scope_gives_the_tensor_to_the_program():
    with gs.dispose_scope("step"):
        kept = (gs.ones(2) * 3.0).move_to_outer()
    assert kept.is_alive and kept.owner_scope_name() is None
    assert counters() == (0, 0, 2, 1, 0, 1, 1)
    del kept  # the program owns it now: dropping it disposes it
    assert counters() == (0, 1, 2, 1, 0, 1, 0)


def test_move_to_outer_between_nested_scopes():
    with gs.dispose_scope("outer"):
        with gs.dispose_scope("inner"):
            t = gs.zeros(2).move_to_outer()
        assert t.owner_scope_name() == "outer"
    assert not t.is_alive


def test_dispose_everything_but_keeps_the_listed_tensors():
    with gs.dispose_scope("step") as s:
        a, b, c = gs.ones(1), gs.ones(1), gs.ones(1)
        s.dispose_everything_but(b)
        assert not a.is_alive and b.is_alive and not c.is_alive
        assert s.info["alive"] == 1
    assert counters() == (0, 0, 3, 3, 0, 0, 0)


def test_dropping_a_python_object_lets_its_scope_decide():
    with gs.dispose_scope("step") as s:
        t = gs.ones(4)
        del t
        gc.collect()
        assert s.info["alive"] == 1  # still owned by the scope
    assert counters() == (0, 0, 1, 1, 0, 0, 0)


def test_tensors_outside_scopes_die_with_their_objects():
    a = gs.ones(2)
    b = a * 2.0
    del a, b
    assert counters() == (2, 2, 0, 0, 0, 0, 0)


def test_a_borrowed_grad_is_not_disposed_by_its_object():
    x = gs.ones(2, requires_grad=True)
    (x * 2.0).sum().backward()
    g = x.grad
    del g
    assert x.grad.tolist() == [2.0, 2.0]


def test_creating_and_dropping_many_tensors_keeps_the_live_count_flat():
    before = gs.live_tensor_count()
    for _ in range(20000):
        gs.ones(4) + 1.0
    assert gs.live_tensor_count() == before


def test_numbers_with_a_floating_tensor_make_no_temporaries():
    with gs.dispose_scope("step"):
        t = gs.ones(2)
        u = (t * 2 + 1) / 4.0 - 0.5
        v = 3 - u
        assert v.tolist() == [2.75, 2.75]
    assert counters() == (0, 0, 6, 6, 0, 0, 0)


def test_a_parameter_no_module_took_dies_with_its_object():
    before = gs.live_tensor_count()
    t = gs.ones(2)
    p = gs.nn.Parameter(t)
    with pytest.raises(RuntimeError, match="stale"):
        t + 1.0  # its handle moved into the parameter
    assert gs.live_tensor_count() == before + 1
    del p
    assert gs.live_tensor_count() == before
