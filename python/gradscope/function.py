"""gradscope.function: torch.autograd.Function, functions with a backward of their own.

A subclass gives two static methods, as in torch::

    class MySquare(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return 2 * x * grad

    y = MySquare.apply(x)        # y.grad_fn.name() == "MySquareBackward"

apply runs forward with grad mode off, then gives its output a node of the engine's own
(gs_function_record) named after the class, so the event log, the inspector and grad_fn walks
show it like any op's node. The tensors given to save_for_backward are the node's saved
tensors: an in-place write to one after the forward is the usual version error at backward,
and a second backward without retain_graph finds them freed. A backward written with ops can
be differentiated again (create_graph); @once_differentiable runs it with grad mode off.

Differences from torch, said plainly: a Function with several differentiable outputs gives
them one node over their concatenation, and each output is a view of it (its grad_fn is a
ViewBackward0, not the Function's node; backward is still called once with every output's
gradient). Those outputs must share a dtype. Tensors kept as ctx attributes rather than
through save_for_backward are not checked for in-place writes, and an output kept that way
keeps its own graph alive (a cycle through the engine that Python's collector cannot see).
"""
import functools

from gradscope import _gradscope as _c
from gradscope.autograd import no_grad

__all__ = ["Function", "FunctionCtx", "once_differentiable"]

_LEGACY = ("Legacy autograd function with non-static forward method is deprecated. Please use "
           "new-style autograd function with static forward method. (Example: "
           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")


def _gs():
    import gradscope  # the package imports this module while it loads
    return gradscope


def _shape_text(shape):
    return "[" + ", ".join(str(int(d)) for d in shape) + "]"


class FunctionCtx:
    """What a Function's forward and backward share (torch's ctx): save_for_backward and
    saved_tensors, needs_input_grad, mark_dirty, mark_non_differentiable and
    set_materialize_grads. Other attributes may be set freely (ctx.scale = 2.0)."""

    def __init__(self):
        self.needs_input_grad = ()
        self._to_save = ()
        self._saved = None
        self._dirty = ()
        self._non_differentiable = ()
        self._materialize_grads = True

    def save_for_backward(self, *tensors):
        """Keeps tensors (or None) for backward, where ctx.saved_tensors gives them back. They
        are the node's saved tensors: written in place before backward, backward refuses."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, _c.Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} "
                                f"is of type {type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        """torch's forward-mode AD counterpart; gradscope has no forward-mode AD, so this only
        checks its arguments as save_for_backward does."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, _c.Tensor):
                raise TypeError(f"save_for_forward expects all arguments to be tensors; but "
                                f"argument {i} is of type {type(t).__name__}")

    @property
    def saved_tensors(self):
        """The tensors given to save_for_backward, in backward (tensors of their own over the
        same memory; None where None was saved)."""
        if self._saved is None:
            raise RuntimeError("saved_tensors is available in the Function's backward, after "
                               "save_for_backward in its forward")
        return self._saved

    saved_variables = saved_tensors

    def mark_dirty(self, *tensors):
        """Says that forward wrote these inputs in place and returns them: the returned tensor
        takes the Function's node as its history, as after an in-place op."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        """Says these outputs take no gradient (indices, masks): they do not require grad, and
        backward gets a zero gradient for them (None with set_materialize_grads(False))."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        """With False, backward gets None rather than zeros for the outputs that take no
        gradient."""
        self._materialize_grads = bool(value)


def once_differentiable(fn):
    """Decorates a Function's backward that is not written with differentiable ops: it runs
    with grad mode off, so a create_graph backward gives gradients without history through it
    (as torch, whose result then does not require grad)."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)

    return wrapper


def _contains(items, t):
    return any(x is t for x in items)


class Function:
    """torch.autograd.Function: subclass it with static forward(ctx, *args) and
    backward(ctx, *grad_outputs), and call MyFunction.apply(*args). See the module's
    docstring for what gradscope does the same and what differently."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        raise RuntimeError(_LEGACY)

    @staticmethod
    def forward(ctx, *args, **kwargs):
        """Computes the outputs from the inputs, with grad mode off; saves what backward needs
        on ctx."""
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Gives one gradient per forward argument (None for those that take none) from the
        gradients of the outputs."""
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """Forward-mode AD, which gradscope does not have."""
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args):
        """Runs forward with grad mode off and, when an input requires grad and grad mode is
        on, records the outputs' node (named ClassNameBackward) whose backward calls
        cls.backward."""
        return _apply(cls, args)


def _apply(cls, args):
    ctx = FunctionCtx()
    ctx.needs_input_grad = tuple(isinstance(a, _c.Tensor) and a.requires_grad for a in args)
    recording = _c.is_grad_enabled() and any(ctx.needs_input_grad)
    with no_grad():
        result = cls.forward(ctx, *args)
    to_save, ctx._to_save = ctx._to_save, ()
    if not recording:
        return result
    single = not isinstance(result, tuple)
    outputs = [result] if single else list(result)
    dirty = ctx._dirty
    for t in dirty:
        if not _contains(args, t):
            raise RuntimeError("mark_dirty: only tensors given to forward can be marked dirty")
    differentiable = []
    with no_grad():
        for k, o in enumerate(outputs):
            if not isinstance(o, _c.Tensor):
                continue
            if _contains(dirty, o):
                differentiable.append(k)
                continue
            if _contains(args, o):  # returned as given: a view of it, as torch's
                outputs[k] = o = o.view_as(o)
            if _contains(ctx._non_differentiable, o) or not o.is_floating_point():
                continue
            differentiable.append(k)
    if dirty and len(differentiable) > 1:
        raise NotImplementedError("gradscope: a Function that marks an input dirty must return "
                                  "it as its only differentiable output")
    inputs = tuple(a for a in args if isinstance(a, _c.Tensor))
    saved = tuple(t for t in to_save if t is not None)
    layout = [(k, tuple(outputs[k].shape), outputs[k].numel()) for k in differentiable]
    name = f"{cls.__name__}Backward"
    trampoline = _Trampoline(cls, ctx, args, to_save, outputs, layout, single)
    if len(differentiable) == 1:
        _c._function_record(outputs[differentiable[0]], inputs, saved, name, trampoline)
    elif differentiable:
        dtypes = {outputs[k].dtype for k in differentiable}
        if len(dtypes) > 1:
            raise NotImplementedError(f"gradscope: {cls.__name__}'s differentiable outputs have "
                                      f"several dtypes ({sorted(map(str, dtypes))}); they must "
                                      f"share one")
        with no_grad():
            packed = _gs().cat([outputs[k].reshape(-1) for k in differentiable])
        _c._function_record(packed, inputs, saved, name, trampoline)
        start = 0
        for k, shape, n in layout:
            outputs[k] = packed.narrow(0, start, n).view(shape)
            start += n
    for o in outputs:
        if isinstance(o, _c.Tensor) and _contains(ctx._non_differentiable, o) and o.requires_grad:
            o.requires_grad_(False)
    return outputs[0] if single else tuple(outputs)


class _Trampoline:
    """The node's backward: the gradients of the outputs as cls.backward takes them, and its
    answer checked and shaped as torch does, one entry per tensor input."""

    def __init__(self, cls, ctx, args, to_save, outputs, layout, single):
        self.cls, self.ctx = cls, ctx
        self.name = f"{cls.__name__}Backward"
        # What backward needs of the arguments and outputs, not the tensors themselves.
        self.args = [(True, a.dtype, tuple(a.shape)) if isinstance(a, _c.Tensor) else (False,)
                     for a in args]
        self.none_saved = [t is None for t in to_save]
        self.outputs = [(o.dtype, tuple(o.shape)) if isinstance(o, _c.Tensor) else None
                        for o in outputs]
        self.layout = layout
        self.single = single

    def _grad_outputs(self, grad):
        grads = [None] * len(self.outputs)
        if len(self.layout) == 1:
            grads[self.layout[0][0]] = grad
        else:
            start = 0
            for k, shape, n in self.layout:
                grads[k] = grad.narrow(0, start, n).view(shape)
                start += n
        taken = {k for k, _, _ in self.layout}
        for k, meta in enumerate(self.outputs):
            if k not in taken and meta is not None and self.ctx._materialize_grads:
                grads[k] = _gs().zeros(meta[1], dtype=meta[0])
        return grads

    def __call__(self, grad, saved, needs):
        ctx = self.ctx
        it = iter(saved)
        ctx._saved = tuple(None if none else next(it) for none in self.none_saved)
        try:
            result = self.cls.backward(ctx, *self._grad_outputs(grad))
        finally:
            ctx._saved = None
        if not isinstance(result, tuple):
            result = (result,)
        n = len(self.args)
        if len(result) != n and not (len(result) > n and all(r is None for r in result[n:])):
            raise RuntimeError(f"function {self.name} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(result)})")
        out = []
        for i, (meta, g) in enumerate(zip(self.args, result)):
            if not meta[0]:
                if g is not None:
                    raise RuntimeError(f"function {self.name} returned a gradient different than "
                                       f"None at position {i + 1}, but the corresponding forward "
                                       f"input was not a Variable")
                continue
            out.append(self._shaped(i, meta, g) if needs[len(out)] else None)
        return tuple(out)

    def _shaped(self, i, meta, g):
        if g is None:
            return None
        if not isinstance(g, _c.Tensor):
            raise TypeError(f"function {self.name} returned a {type(g).__name__} as the gradient "
                            f"at index {i}; expected a Tensor or None")
        _, dtype, shape = meta
        if tuple(g.shape) != shape:
            if not _expandable(shape, tuple(g.shape)):
                raise RuntimeError(f"Function {self.name} returned an invalid gradient at index "
                                   f"{i} - got {_shape_text(g.shape)} but expected shape "
                                   f"compatible with {_shape_text(shape)}")
            g = g.sum_to_size(shape)
        if g.dtype != dtype:
            g = g.to(dtype)
        return g


def _expandable(shape, to):
    """Whether a tensor of shape broadcasts to shape to (torch's is_expandable_to)."""
    if len(shape) > len(to):
        return False
    for a, b in zip(reversed(shape), reversed(to)):
        if a != b and a != 1:
            return False
    return True
