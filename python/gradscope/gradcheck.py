"""gradscope.gradcheck: torch.autograd.gradcheck and gradgradcheck. The analytical Jacobian
comes from the engine's backward (autograd.grad with one-hot output gradients, one row at a
time); the numerical one from central differences on copies of the inputs (an input is never
written, so its version counter and any graph through it stay as they were). A mismatch raises
GradcheckError (a RuntimeError) with torch's message, or returns False with
raise_exception=False. Forward-mode AD and batched gradients are not in gradscope: asking for
their checks is refused rather than skipped."""
import warnings

from gradscope import _gradscope as _c
from gradscope._missing import not_supported


def _grad(*args, **kwargs):
    from gradscope.autograd import grad  # autograd.py imports this module at its end
    return grad(*args, **kwargs)


class GradcheckError(RuntimeError):
    """The analytical and numerical gradients disagree (or a check could not run)."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _differentiable(outputs):
    return [o for o in outputs if isinstance(o, _c.Tensor) and o.is_floating_point()]


def _numerical(func, inputs, wrt, eps):
    """d outputs / d inputs[wrt] by central differences: one list per output of
    (numel(out) x numel(in)) rows, as nested lists of floats."""
    base = inputs[wrt].detach()
    n = base.numel()
    columns = []
    for k in range(n):
        cols = []
        for sign in (1, -1):
            moved = base.clone()
            flat = moved.view(-1) if moved.is_contiguous() else None
            if flat is None:
                moved = moved.contiguous()
                flat = moved.view(-1)
            flat[k] = float(flat[k]) + sign * eps
            args = list(inputs)
            args[wrt] = moved.requires_grad_()  # as the input (gradgradcheck differentiates)
            # with grad mode as the caller has it: gradgradcheck's function takes gradients
            outs = _differentiable(_as_tuple(func(*args)))
            cols.append([o.detach().double().reshape(-1) for o in outs])
        columns.append([(plus - minus) / (2 * eps) for plus, minus in zip(cols[0], cols[1])])
    # columns[k][i] is d output_i / d input_k: a (numel(out),) tensor
    return [_c.stack([columns[k][i] for k in range(n)], 1) if n else None
            for i in range(len(columns[0]) if columns else 0)]


def _analytical(outputs, inputs, wrt_list):
    """For each output, for each input in wrt_list: (numel(out) x numel(in)) from backward."""
    result = []
    for out in outputs:
        rows = {j: [] for j in wrt_list}
        flat_n = out.numel()
        for r in range(flat_n):
            onehot = _c.zeros(flat_n, dtype=out.dtype)
            onehot[r] = 1.0
            if out.requires_grad:
                grads = _grad(out, [inputs[j] for j in wrt_list],
                                         grad_outputs=onehot.reshape(tuple(out.shape)),
                                         retain_graph=True, allow_unused=True)
            else:
                grads = [None] * len(wrt_list)
            for j, g in zip(wrt_list, grads):
                rows[j].append(_c.zeros(inputs[j].numel(), dtype=_c.float64) if g is None
                               else g.detach().double().reshape(-1))
        result.append({j: (_c.stack(rows[j], 0) if rows[j] else None) for j in wrt_list})
    return result


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              check_sparse_nnz=False, nondet_tol=0.0, check_undefined_grad=True,
              check_grad_dtypes=False, check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False):
    """Checks the gradients backward computes for func at inputs against central differences
    (step eps), element by element with torch.allclose's rule |a - n| <= atol + rtol |n|.
    Inputs that require grad should be float64, as torch warns."""
    for name, asked in (("check_forward_ad", check_forward_ad),
                        ("check_batched_grad", check_batched_grad),
                        ("check_batched_forward_grad", check_batched_forward_grad),
                        ("check_sparse_nnz", check_sparse_nnz)):
        if asked:
            raise not_supported(f"torch.autograd.gradcheck({name}=True)")
    inputs = _as_tuple(inputs)
    wrt = [i for i, t in enumerate(inputs) if isinstance(t, _c.Tensor) and t.requires_grad]
    if not wrt:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of the them have requires_grad=True.")
    for i in wrt:
        if inputs[i].dtype != _c.float64:
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating "
                          "point. This check will likely fail if all the inputs are not of "
                          "double precision floating point. ")

    def fail(message):
        if raise_exception:
            raise GradcheckError(message)
        return False

    outputs = _differentiable(_as_tuple(func(*inputs)))
    if not check_backward_ad:
        return True
    analytical = _analytical(outputs, inputs, wrt)
    for j in wrt:
        numerical = _numerical(func, inputs, j, eps)
        for i, out in enumerate(outputs):
            a, n = analytical[i][j], numerical[i]
            if a is None or n is None:
                continue
            if tuple(a.shape) != tuple(n.shape):
                return fail(f"Jacobian mismatch for output {i} with respect to input {j}: "
                            f"analytical shape {tuple(a.shape)}, numerical {tuple(n.shape)}")
            if not bool(((a - n).abs() <= atol + rtol * n.abs()).all()):
                return fail(f"Jacobian mismatch for output {i} with respect to input {j},\n"
                            f"numerical:{n}\nanalytical:{a}\n")
    if check_undefined_grad:
        # backward with zero output gradients must give zeros (torch passes undefined ones;
        # gradscope's engine has no undefined gradient, so zeros are what reach a formula)
        for out in outputs:
            if not out.requires_grad:
                continue
            grads = _grad(out, [inputs[j] for j in wrt], grad_outputs=_c.zeros_like(out),
                                     retain_graph=True, allow_unused=True)
            for j, g in zip(wrt, grads):
                if g is not None and bool((g != 0).any()):
                    return fail(f"Expected backward function to handle undefined output grads. "
                                f"Please look at \"Notes about undefined output gradients\" in "
                                f"\"tools/autograd/derivatives.yaml\" (input {j} got a nonzero "
                                f"gradient from zero output gradients)")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False):
    """Checks second derivatives: gradcheck of the function that maps (inputs, grad_outputs)
    to the gradients backward gives with create_graph=True. Without grad_outputs, random ones
    (float64, requiring grad) are drawn from gradscope's generator."""
    if check_fwd_over_rev:
        raise not_supported("torch.autograd.gradgradcheck(check_fwd_over_rev=True)")
    inputs = _as_tuple(inputs)
    wrt = [i for i, t in enumerate(inputs) if isinstance(t, _c.Tensor) and t.requires_grad]
    if grad_outputs is None:
        with _c.no_grad():
            outs = _differentiable(_as_tuple(func(*inputs)))
        grad_outputs = tuple(_c.randn(*o.shape, dtype=o.dtype).requires_grad_() for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def first_derivatives(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = [o for o in _differentiable(_as_tuple(func(*ins))) if o.requires_grad]
        grads = _grad(outs, [ins[j] for j in wrt], grad_outputs=list(gos)[:len(outs)],
                                 create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    if not check_rev_over_rev:
        return True
    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad)
