"""The built-in modules are classes (nn.Linear is a type, a subclass of nn.Module, and can be
subclassed with its own constructor), and the errors of hooks, buffers and early assignment
are PyTorch's."""
import gc

import pytest

import gradscope as gs
import gradscope.nn as nn


def test_builtins_are_module_classes_with_signatures():
    import inspect
    for name in ["Linear", "Conv2d", "ReLU", "Sequential", "LSTM", "GRU", "RNN", "Embedding",
                 "LayerNorm", "Dropout", "BatchNorm1d", "BatchNorm2d", "Tanh", "Sigmoid", "GELU"]:
        cls = getattr(nn, name)
        assert isinstance(cls, type) and issubclass(cls, nn.Module), name
        assert cls.__module__ == "gradscope.nn" and cls.__doc__
        inspect.signature(cls)
    assert str(inspect.signature(nn.Linear)) == \
        "(in_features, out_features, bias=True, device=None, dtype=None)"


def test_subclass_with_its_own_constructor_and_attributes():
    class Head(nn.Linear):
        def __init__(self, n):
            super().__init__(n, 3)
            self.note = "head"

    h = Head(4)
    assert type(h).__name__ == "Head" and isinstance(h, nn.Linear) and h.note == "head"
    assert tuple(h.weight.shape) == (3, 4)
    assert tuple(h(gs.ones(2, 4)).shape) == (2, 3)  # no forward of its own: Linear's
    del h
    gc.collect()


def test_assigning_before_init_is_refused():
    class Early(nn.Linear):
        def __init__(self):
            self.extra = nn.Linear(1, 1)
            super().__init__(1, 1)

    with pytest.raises(AttributeError, match="before .*__init__"):
        Early()


def test_plain_module_without_forward():
    class NoForward(nn.Module):
        pass

    with pytest.raises(NotImplementedError, match="forward"):
        NoForward()(gs.ones(1))


def test_activation_arguments():
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"
    with pytest.raises(TypeError):
        nn.Tanh(3)
    assert repr(nn.GELU(approximate="tanh")) == "GELU(approximate='tanh')"
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        nn.GELU(approximate="erf")


def test_hook_and_buffer_errors():
    lin = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="expected a function"):
        lin.register_forward_hook(3)
    with pytest.raises(KeyError, match="contain"):
        lin.register_buffer("a.b", gs.ones(1))
    with pytest.raises(KeyError, match="already exists"):
        lin.register_buffer("weight", gs.ones(1))
    with pytest.raises(TypeError, match="buffer name should be a string"):
        lin.register_buffer(3, gs.ones(1))
    lin.register_buffer("empty", None)
    assert lin.empty is None and "empty" not in lin.state_dict()


def test_a_hook_that_raises_stops_the_call():
    lin = nn.Linear(2, 2)

    def boom(m, args, out):
        raise RuntimeError("hook says no")

    handle = lin.register_forward_hook(boom)
    with pytest.raises(RuntimeError, match="hook says no"):
        lin(gs.ones(1, 2))
    handle.remove()
    assert tuple(lin(gs.ones(1, 2)).shape) == (1, 2)


def test_moving_to_a_gpu_is_refused():
    with pytest.raises(RuntimeError, match="CPU only"):
        gs.ones(2).to("cuda:0")
    with pytest.raises(RuntimeError, match="CPU only"):
        nn.Linear(2, 2).to(gs.device("cuda"))
    with pytest.raises(RuntimeError, match="CPU only"):
        gs.ones(2).cuda()
    with pytest.raises(TypeError, match="expected a device"):
        gs.ones(2).to(3)
    with pytest.raises(RuntimeError, match="Invalid device string"):
        gs.device("cuda:x")


def test_hooks_inside_a_sequential_run():
    seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    seen = []
    seq[1].register_forward_hook(lambda m, a, o: seen.append(type(m).__name__))
    seq(gs.ones(1, 2))
    assert seen == ["ReLU"]


def test_register_parameter_get_submodule_get_parameter_as_torchs():
    # the messages are torch 1.13's
    m = nn.Module()
    with pytest.raises(TypeError, match=r"cannot assign 'torch.FloatTensor' object to parameter 'w' "
                                        r"\(torch.nn.Parameter or None required\)"):
        m.register_parameter("w", gs.ones(2))
    with pytest.raises(KeyError, match="parameter name can"):
        m.register_parameter("a.b", None)
    m.register_parameter("w", None)
    assert m.w is None and list(m.named_parameters()) == []
    m.register_parameter("v", nn.Parameter(gs.ones(2)))
    assert [n for n, _ in m.named_parameters()] == ["v"]
    seq = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.Linear(3, 1)))
    assert seq.get_submodule("1.0") is seq[1][0] and seq.get_submodule("") is seq
    assert tuple(seq.get_parameter("1.0.weight").shape) == (1, 3)
    with pytest.raises(AttributeError, match="Sequential has no attribute `2`"):
        seq.get_submodule("2")
    with pytest.raises(AttributeError, match="Linear has no attribute `foo`"):
        seq.get_parameter("0.foo")


def test_parameter_and_buffer_walks_take_torchs_prefix_and_recurse():
    model = gs.nn.Sequential(gs.nn.Linear(2, 3), gs.nn.BatchNorm1d(3))
    model.register_buffer("scale", gs.ones(1))
    model.register_parameter("gain", gs.nn.Parameter(gs.ones(1)))
    assert [n for n, _ in model.named_parameters(recurse=False)] == ["gain"]
    assert [n for n, _ in model.named_buffers(recurse=False)] == ["scale"]
    assert [n for n, _ in model.named_parameters(prefix="net")][:2] == ["net.gain",
                                                                        "net.0.weight"]
    assert [n for n, _ in model[1].named_buffers("bn")] == [
        "bn.running_mean", "bn.running_var", "bn.num_batches_tracked"]
    assert len(list(model.parameters(recurse=False))) == 1 and len(list(model.parameters())) == 5
    assert len(list(model[0].buffers(recurse=False))) == 0 and len(list(model.buffers())) == 4
    # iterators, as torch's generators: next(model.parameters()) is a common idiom
    assert next(model.parameters()) is not None and next(model.buffers()) is not None


def test_deepcopy_keeps_each_layers_dtype_and_batch_norm_options():
    import copy
    model = gs.nn.Sequential(gs.nn.Linear(2, 3), gs.nn.BatchNorm1d(3, momentum=0.2)).double()
    model[1].momentum = None
    model[1].eps = 1e-3
    twin = copy.deepcopy(model)
    assert [p.dtype for p in twin.parameters()] == [gs.float64] * 4
    assert twin[1].num_batches_tracked.dtype == gs.int64
    assert (twin[1].momentum, twin[1].eps) == (None, 1e-3)
    x = gs.ones(4, 2, dtype=gs.float64)
    assert twin(x).tolist() == model(x).tolist()


def test_deepcopy_keeps_the_order_parameters_were_registered_in():
    import copy
    lin = gs.nn.Linear(2, 3)
    weight = lin.weight
    del lin.weight
    lin.register_parameter("weight", weight)  # as prune.remove does: now after bias
    twin = copy.deepcopy(lin)
    assert [n for n, _ in twin.named_parameters()] == ["bias", "weight"]
    assert [tuple(p.shape) for p in twin.parameters()] == [(3,), (3, 2)]


def test_dropout_p_changed_after_construction_is_used():
    import copy
    d = gs.nn.Dropout(0.5, inplace=False)
    assert (d.p, d.inplace) == (0.5, False)
    d.p = 0.0  # torch reads p at each call: no element is dropped now
    x = gs.ones(1000)
    assert d(x).tolist() == x.tolist()
    assert repr(d) == "Dropout(p=0.0, inplace=False)"
    d.p = 0.9
    kept = int((d(x) != 0).sum().item())
    assert 20 < kept < 250  # about a tenth survives
    assert copy.deepcopy(d).p == 0.9
    with pytest.raises(ValueError, match="expected p in \\[0, 1\\)"):
        d.p = 1.5
    assert d.p == 0.9
    assert gs.nn.Dropout(0.2, inplace=True).inplace is True


def test_buffers_are_plain_tensors_not_parameters():
    """A buffer (BatchNorm's running estimates, one a module registered) prints and answers
    isinstance as a plain tensor, as torch's; the engine keeps it as a parameter that never
    requires grad, which printed "Parameter containing:" and was an nn.Parameter."""
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("rm", gs.zeros(2))
            self.w = nn.Parameter(gs.zeros(2), requires_grad=False)

    bn, m = nn.BatchNorm1d(2), M()
    for buffer in (bn.running_mean, bn.running_var, bn.num_batches_tracked, m.rm):
        assert not isinstance(buffer, nn.Parameter)
        assert not repr(buffer).startswith("Parameter containing:"), repr(buffer)
    for parameter in (bn.weight, bn.bias, m.w):
        assert isinstance(parameter, nn.Parameter)
        assert repr(parameter).startswith("Parameter containing:\ntensor(")
    assert repr(m.rm) == "tensor([0., 0.])"
    assert [n for n, _ in bn.named_buffers()] == ["running_mean", "running_var",
                                                  "num_batches_tracked"]
    bn.double()
    assert not isinstance(bn.running_mean, nn.Parameter) and bn.running_mean.dtype == gs.float64
