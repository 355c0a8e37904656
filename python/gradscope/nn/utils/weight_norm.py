"""torch.nn.utils.weight_norm / remove_weight_norm, as torch 1.13's: the parameter name of a
module is replaced by name_g (its norm over every dim but dim) and name_v (its direction),
and a forward pre-hook recomputes name = v * (g / ||v||) before each forward. A built-in
module's forward reads that computed tensor where it read the parameter (the engine's
gs_module_set_computed)."""
import gradscope
from gradscope.nn.parameter import Parameter


def norm_except_dim(v, pow=2, dim=0):
    """The pow-norm of v over every dim but dim, shaped to broadcast against v (dim -1: over
    all of v, a 0-dim tensor), as torch's."""
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        shape = (v.shape[0],) + (1,) * (v.dim() - 1)
        return v.contiguous().reshape(v.shape[0], -1).norm(pow, 1).reshape(shape)
    if dim == v.dim() - 1:
        shape = (1,) * (v.dim() - 1) + (v.shape[-1],)
        return v.contiguous().reshape(-1, v.shape[-1]).norm(pow, 0).reshape(shape)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


class WeightNorm:
    """The forward pre-hook weight_norm registers: it sets module.name from name_g and name_v."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        """v * (g / ||v||), the norm over every dim but self.dim (torch's _weight_norm)."""
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return v * (g / norm_except_dim(v, 2, self.dim))

    @staticmethod
    def apply(module, name, dim):
        for hook in _pre_hooks(module).values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError("Cannot register two weight_norm hooks on the same "
                                   "parameter {}".format(name))
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        delattr(module, name)  # the module's parameter goes; weight is ours again
        with gradscope.no_grad():
            g = norm_except_dim(weight, 2, fn.dim)
        setattr(module, name + "_g", Parameter(g))
        setattr(module, name + "_v", Parameter(weight.detach()))  # over weight's memory
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        delattr(module, self.name + "_g")
        delattr(module, self.name + "_v")
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def _pre_hooks(module):
    return module.__dict__.get("_forward_pre_hooks") or {}


def weight_norm(module, name="weight", dim=0):
    """Reparametrises module.name as name_g * name_v / ||name_v|| (the norm over every dim
    but dim; dim=None: over the whole tensor), recomputed before each forward; returns the
    module, as torch.nn.utils.weight_norm."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Undoes weight_norm: module.name is a parameter again, with the current value."""
    hooks = _pre_hooks(module)
    for k, hook in list(hooks.items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del hooks[k]
            return module
    raise ValueError("weight_norm of '{}' not found in {}".format(name, module))
