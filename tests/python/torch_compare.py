"""torch_compare.py: the one comparison the torch-checked pytest files share: a function of
gradscope and its torch counterpart on the same float64 arrays must give the same values,
and the same gradients for every array (a weighted sum of the output is differentiated, so
each output element's gradient counts)."""
import numpy as np
import torch

import gradscope as gs


def same_values_and_gradients(fn_g, fn_t, *arrays, tol=1e-12, grad=True):
    """fn_g(*gradscope tensors) against fn_t(*torch tensors), values and float64 gradients
    to tol (absolute and relative); NaNs must sit in the same places."""
    gins = [gs.tensor(a, dtype=gs.float64, requires_grad=True) for a in arrays]
    tins = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    g, t = fn_g(*gins), fn_t(*tins)
    gv, tv = g.detach().numpy(), t.detach().numpy()
    assert gv.shape == tv.shape and _name(g.dtype) == _name(t.dtype), (g.dtype, t.dtype)
    np.testing.assert_allclose(gv, tv, rtol=tol, atol=tol, equal_nan=True)
    if not (grad and g.requires_grad):
        return
    w = np.linspace(-1, 2, max(tv.size, 1)).reshape(tv.shape)
    (g * gs.tensor(w)).sum().backward()
    (t * torch.tensor(w)).sum().backward()
    for gi, ti in zip(gins, tins):
        gg = gi.grad.numpy() if gi.grad is not None else np.zeros(tuple(gi.shape))
        tg = ti.grad.numpy() if ti.grad is not None else np.zeros(tuple(ti.shape))
        np.testing.assert_allclose(gg, tg, rtol=tol, atol=tol, equal_nan=True)


def _name(dtype):
    return str(dtype).rpartition(".")[2]
