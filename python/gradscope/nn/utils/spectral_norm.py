"""torch.nn.utils.spectral_norm / remove_spectral_norm, as torch 1.13's: the parameter name
becomes name_orig, with buffers name_u and name_v (the power iteration's vectors), and a
forward pre-hook sets name = name_orig / sigma before each forward, sigma the largest
singular value estimated by n_power_iterations steps (in training mode only; the buffers
are updated in place, as torch's)."""
import gradscope
from gradscope.nn.parameter import Parameter
from gradscope.nn.utils.weight_norm import _pre_hooks


def _normalize(x, eps):
    return x / x.norm().clamp(min=eps)


class SpectralNorm:
    """The forward pre-hook spectral_norm registers."""

    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             "n_power_iterations={}".format(n_power_iterations))
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        """weight as a matrix of dim's size rows."""
        weight_mat = weight
        if self.dim != 0:
            weight_mat = weight_mat.permute(self.dim,
                                            *[d for d in range(weight_mat.dim()) if d != self.dim])
        height = weight_mat.shape[0]
        return weight_mat.reshape(height, -1)

    def compute_weight(self, module, do_power_iteration):
        """name_orig / sigma, sigma = u . (W v); with do_power_iteration, u and v (the buffers,
        in place) first take n_power_iterations steps."""
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with gradscope.no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(_normalize(gradscope.mv(weight_mat.t(), u), self.eps))
                    u.copy_(_normalize(gradscope.mv(weight_mat, v), self.eps))
                u = u.clone()
                v = v.clone()
        sigma = gradscope.dot(u, gradscope.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module):
        with gradscope.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name,
                self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in _pre_hooks(module).values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError("Cannot register two spectral_norm hooks on the same "
                                   "parameter {}".format(name))
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = getattr(module, name)
        with gradscope.no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = _normalize(gradscope.randn(h, dtype=weight.dtype), fn.eps)
            v = _normalize(gradscope.randn(w, dtype=weight.dtype), fn.eps)
        delattr(module, fn.name)  # the parameter leaves the module, to come back as name_orig
        setattr(module, fn.name + "_orig", weight)
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divides module.name by its spectral norm (largest singular value, estimated by power
    iteration) before each forward; dim None: 1 for the ConvTranspose layers, else 0. Returns
    the module, as torch.nn.utils.spectral_norm."""
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Undoes spectral_norm: module.name is a parameter again, with the current value."""
    hooks = _pre_hooks(module)
    for k, hook in list(hooks.items()):
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del hooks[k]
            return module
    raise ValueError("spectral_norm of '{}' not found in {}".format(name, module))
