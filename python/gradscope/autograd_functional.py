"""gradscope.autograd.functional: jacobian, hessian, vjp, jvp, hvp and vhp as
torch.autograd.functional's, built on gradscope.autograd.grad (create_graph=True where a
second derivative is taken; the reverse-mode strategy only, one backward per output element)."""
from gradscope import _gradscope as _c
from gradscope import autograd as _autograd


def _as_tuple(x):
    return (x, False) if isinstance(x, tuple) else ((x,), True)


def _prepare(inputs, create_graph):
    """Leaves of our own (torch's _grad_preprocess): detached copies that require grad, or
    views of them that keep the caller's graph with create_graph."""
    out = []
    for x in inputs:
        if not _c.is_tensor(x):
            raise TypeError(f"The inputs given to the function must be Tensors, got "
                            f"{type(x).__name__}")
        if create_graph and x.requires_grad:
            out.append(x.view_as(x))
        else:
            out.append(x.detach().requires_grad_(True))
    return tuple(out)


def _grads(outputs, inputs, grad_outputs, create_graph):
    got = _autograd.grad(outputs, inputs, grad_outputs, retain_graph=True,
                         create_graph=create_graph, allow_unused=True)
    return tuple(_c.zeros_like(x) if g is None else g for g, x in zip(got, inputs))


def _finish(t, create_graph):
    return t if create_graph else t.detach()


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of func at inputs: for output o and input x, a tensor of shape
    o.shape + x.shape, nested as torch's (a tuple per output and/or per input when func
    returns, or inputs is, a tuple)."""
    if strategy != "reverse-mode" or vectorize:
        raise NotImplementedError("jacobian(): gradscope computes the reverse-mode Jacobian "
                                  "without vectorize")
    inputs, single_in = _as_tuple(inputs)
    inputs = _prepare(inputs, create_graph)
    with _autograd.enable_grad():
        outputs = func(*inputs)
        outputs, single_out = _as_tuple(outputs)
        result = []
        for out in outputs:
            flat = out.reshape(-1)
            rows = [[] for _ in inputs]
            for j in range(flat.numel()):
                if out.requires_grad:
                    g = _grads(flat[j], inputs, None, create_graph)
                else:
                    g = tuple(_c.zeros_like(x) for x in inputs)
                for k, gk in enumerate(g):
                    rows[k].append(gk)
            per_input = []
            for k, x in enumerate(inputs):
                if rows[k]:
                    jac = _c.stack(rows[k]).reshape(tuple(out.shape) + tuple(x.shape))
                else:
                    jac = _c.zeros(tuple(out.shape) + tuple(x.shape), dtype=x.dtype)
                per_input.append(_finish(jac, create_graph))
            result.append(tuple(per_input))
    if single_out and single_in:
        return result[0][0]
    if single_out:
        return result[0]
    if single_in:
        return tuple(r[0] for r in result)
    return tuple(result)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar func at inputs (the Jacobian of its gradient)."""
    inputs_t, single_in = _as_tuple(inputs)

    def grad_func(*inp):
        out = func(*inp)
        if out.numel() != 1:
            raise RuntimeError("The function given to hessian should return a single element "
                               "Tensor")
        return _grads(out.reshape(()), inp, None, True)

    res = jacobian(grad_func, inputs_t, create_graph=create_graph)
    if single_in:
        return res[0][0]
    return res


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the outputs and the vector-Jacobian product."""
    inputs, single_in = _as_tuple(inputs)
    inputs = _prepare(inputs, create_graph)
    with _autograd.enable_grad():
        outputs = func(*inputs)
        outputs_t, single_out = _as_tuple(outputs)
        if v is None:
            if any(o.numel() != 1 for o in outputs_t):
                raise RuntimeError("The vector v can only be None if the user-provided function "
                                   "returns a single Tensor with a single element.")
            v_t = tuple(_c.ones_like(o) for o in outputs_t)
        else:
            v_t, _ = _as_tuple(v)
        g = _grads(outputs_t, inputs, v_t, create_graph)
    outs = tuple(_finish(o, create_graph) for o in outputs_t)
    g = tuple(_finish(x, create_graph) for x in g)
    return (outs[0] if single_out else outs), (g[0] if single_in else g)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the outputs and the Jacobian-vector product (by the double-vjp
    trick: two reverse passes)."""
    inputs, single_in = _as_tuple(inputs)
    inputs = _prepare(inputs, create_graph)
    if v is None:
        if any(x.numel() != 1 for x in inputs):
            raise RuntimeError("The vector v can only be None if the input to the user-provided "
                               "function is a single Tensor with a single element.")
        v_t = tuple(_c.ones_like(x) for x in inputs)
    else:
        v_t, _ = _as_tuple(v)
    with _autograd.enable_grad():
        outputs = func(*inputs)
        outputs_t, single_out = _as_tuple(outputs)
        u = tuple(_c.zeros_like(o).requires_grad_(True) for o in outputs_t)
        g = _grads(outputs_t, inputs, u, True)
        res = _grads(g, u, v_t, create_graph)
    outs = tuple(_finish(o, create_graph) for o in outputs_t)
    res = tuple(_finish(x, create_graph) for x in res)
    return (outs[0] if single_out else outs), (res[0] if single_out else res)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar func."""
    return _second(func, inputs, v, create_graph)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar func (H is symmetric, so hvp's numbers)."""
    return _second(func, inputs, v, create_graph)


def _second(func, inputs, v, create_graph):
    inputs, single_in = _as_tuple(inputs)
    inputs = _prepare(inputs, create_graph)
    if v is None:
        if any(x.numel() != 1 for x in inputs):
            raise RuntimeError("The vector v can only be None if the input to the user-provided "
                               "function is a single Tensor with a single element.")
        v_t = tuple(_c.ones_like(x) for x in inputs)
    else:
        v_t, _ = _as_tuple(v)
    with _autograd.enable_grad():
        out = func(*inputs)
        if not _c.is_tensor(out) or out.numel() != 1:
            raise RuntimeError("The function given to hvp should return a single element "
                               "Tensor")
        g = _grads(out.reshape(()), inputs, None, True)
        res = _grads(g, inputs, v_t, create_graph)
    res = tuple(_finish(x, create_graph) for x in res)
    return _finish(out, create_graph), (res[0] if single_in else res)
