"""gradscope.utils.checkpoint: torch.utils.checkpoint, activation checkpointing (torch 1.13).

checkpoint(function, *args) runs function with grad mode off, so none of its intermediate
results are kept for backward; only its inputs are (and the random generator's state). When
backward reaches its output, the Function's backward runs function again on the saved inputs,
now with grad mode on and the same random numbers (dropout drops the same elements), and runs
a backward through that recomputation: a backward inside the backward, which the engine nests
(the event log shows the inner pass's begin and end inside the outer one's). The gradients are
those of the plain model; parameters used inside function get theirs from the inner pass.

As in torch 1.13 with use_reentrant=True: at least one input must require grad for the segment
to have gradients at all (otherwise a warning, and its parameters get none), and it works with
backward() but not with autograd.grad() or backward(inputs=...), which it refuses.

use_reentrant=False is torch 1.13's other implementation, on saved-tensor hooks
(gradscope.autograd_graph): the segment runs once with grad mode as it is, recording its graph,
but every tensor its nodes save is replaced by a placeholder. The first time backward unpacks
one, the segment runs again (grad mode on, the forward's random state) under hooks that collect
what its nodes save, in the same order, and each placeholder gets its tensor. No backward runs
inside the backward, so autograd.grad and backward(inputs=...) work, inputs need not require
grad, and keyword arguments go to the function.
"""
import warnings as _warnings

from gradscope import _gradscope as _c
from gradscope.autograd import _is_checkpoint_valid
from gradscope.autograd import backward as _backward
from gradscope.autograd import enable_grad as _enable_grad
from gradscope.autograd import no_grad as _no_grad
from gradscope.function import Function as _Function

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointFunction",
           "check_backward_validity", "detach_variable"]


def _gs():
    import gradscope  # imported while the package loads
    return gradscope


def detach_variable(inputs):
    """A tuple with each tensor of inputs detached, requiring grad if it did (others kept as
    they are): the leaves the recomputation's gradients collect in."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: ",
                           type(inputs).__name__)
    out = []
    for inp in inputs:
        if not isinstance(inp, _c.Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs):
    """Warns, as torch, when no tensor among inputs requires grad: the checkpointed segment
    then has no gradients (not even its parameters')."""
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, _c.Tensor)):
        _warnings.warn("None of the inputs have requires_grad=True. Gradients will be None")


class CheckpointFunction(_Function):
    """The Function checkpoint applies: forward runs the segment under no_grad and saves its
    inputs and the generator's state; backward recomputes it with grad mode on and runs a
    backward through it."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        """Runs run_function(*args) keeping only its inputs (and the random state) for
        backward."""
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = _gs().get_rng_state()
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, _c.Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with _no_grad():
            outputs = run_function(*args)
        return outputs

    @staticmethod
    def backward(ctx, *args):
        """Recomputes the segment with grad mode on (from the forward's random state) and
        returns the gradients a backward through it gives its inputs."""
        if not _is_checkpoint_valid():
            raise RuntimeError(
                "Checkpointing is not compatible with .grad() or when an `inputs` parameter"
                " is passed to .backward(). Please use .backward() and do not pass its `inputs`"
                " argument.")
        inputs = list(ctx.inputs)
        for i, idx in enumerate(ctx.tensor_indices):
            inputs[idx] = ctx.saved_tensors[i]
        gs = _gs()
        outer_state = gs.get_rng_state() if ctx.preserve_rng_state else None
        try:  # torch.random.fork_rng: the program's own draws are left as they were
            if ctx.preserve_rng_state:
                gs.set_rng_state(ctx.fwd_cpu_state)
            detached_inputs = detach_variable(tuple(inputs))
            # The saved tensors a gradscope Function's backward gets are aliases that do not
            # require grad (torch gives the originals): which inputs did is in the ctx.
            for idx in ctx.tensor_indices:
                if ctx.needs_input_grad[idx + 2]:
                    detached_inputs[idx].requires_grad_(True)
            with _enable_grad():
                outputs = ctx.run_function(*detached_inputs)
        finally:
            if outer_state is not None:
                gs.set_rng_state(outer_state)
        if isinstance(outputs, _c.Tensor):
            outputs = (outputs,)
        # the recomputed outputs that lead back to an input, with the gradients they got
        pairs = [(out, grad) for out, grad in zip(outputs, args)
                 if isinstance(out, _c.Tensor) and out.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        _backward([out for out, _ in pairs], [grad for _, grad in pairs])
        grads = tuple(inp.grad if isinstance(inp, _c.Tensor) else None
                      for inp in detached_inputs)
        return (None, None) + grads


def _checkpoint_without_reentrant(function, preserve_rng_state=True, *args, **kwargs):
    """checkpoint(use_reentrant=False): torch 1.13's _checkpoint_without_reentrant."""
    import weakref

    from gradscope.autograd_graph import saved_tensors_hooks
    gs = _gs()
    fwd_cpu_state = gs.get_rng_state() if preserve_rng_state else None

    class Holder:
        """What the node keeps for a saved tensor: a key into storage, freed with the node."""

    # Each placeholder is held only by the node that saved it, so the recomputed tensor in
    # storage goes as soon as that node's saved tensors are freed.
    storage = weakref.WeakKeyDictionary()
    weak_holder_list = []

    def pack(x):
        res = Holder()
        weak_holder_list.append(weakref.ref(res))
        return res

    def unpack(x):
        unpack_counter = 0
        if len(storage) == 0:
            def inner_pack(inner):
                nonlocal unpack_counter
                unpack_counter += 1
                # A placeholder already freed (its node is gone) needs no tensor.
                if weak_holder_list[unpack_counter - 1]() is None:
                    return
                # detached: the recomputation's own graph is not kept
                storage[weak_holder_list[unpack_counter - 1]()] = inner.detach()
                return

            def inner_unpack(packed):
                raise RuntimeError("You are calling backwards on a tensor that is never exposed. "
                                   "Please open an issue.")

            outer_state = gs.get_rng_state() if preserve_rng_state else None
            try:  # torch.random.fork_rng: the program's own draws are left as they were
                if preserve_rng_state:
                    gs.set_rng_state(fwd_cpu_state)
                with _enable_grad(), saved_tensors_hooks(inner_pack, inner_unpack):
                    function(*args, **kwargs)
            finally:
                if outer_state is not None:
                    gs.set_rng_state(outer_state)

        if x not in storage:
            raise RuntimeError(
                "Attempt to retrieve a tensor saved by autograd multiple times without checkpoint"
                " recomputation being triggered in between, this is not currently supported. "
                "Please open an issue with details on your use case so that we can prioritize "
                "adding this.")
        return storage[x]

    with saved_tensors_hooks(pack, unpack):
        output = function(*args, **kwargs)
    return output


def checkpoint(function, *args, use_reentrant=True, **kwargs):
    """torch.utils.checkpoint.checkpoint: function(*args) computed without keeping its
    intermediate results, recomputed during backward (with the forward's random state when
    preserve_rng_state, the default). use_reentrant=True (torch 1.13's default) recomputes in a
    Function's backward; use_reentrant=False through saved-tensor hooks, which also takes
    keyword arguments for function and works with autograd.grad."""
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, *args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=True, **kwargs):
    """torch.utils.checkpoint.checkpoint_sequential: functions (an nn.Sequential or a list of
    modules or functions) run in order over input, split into segments parts; every part but
    the last is checkpointed. use_reentrant is passed to checkpoint, as newer torch does."""
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    if isinstance(functions, _gs().nn.Sequential):
        functions = list(functions.children())
    size = len(functions) // segments
    checkpointed = size * (segments - 1)  # every part but the last
    for begin in range(0, checkpointed, size):
        input = checkpoint(_in_order(functions[begin:begin + size]), input,
                           preserve_rng_state=preserve, use_reentrant=use_reentrant)
    return _in_order(functions[checkpointed:])(input)


def _in_order(functions):
    """One segment: its functions applied one after the other."""
    def forward(x):
        for f in functions:
            x = f(x)
        return x
    return forward
