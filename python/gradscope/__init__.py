"""Gradscope: an autograd/tensor engine that records its own insides, from Python.

The package is the C extension gradscope._gradscope (tensors, ops, modules, optimizers, data,
scopes, tracing: python/*.c) plus pure-Python modules for what is natural in Python
(containers of modules, learning-rate schedulers, gradient clipping, the torch import hook
of ``python3 -m gradscope.as_torch``). ``import gradscope``, ``gradscope.nn``,
``gradscope.nn.functional``, ``gradscope.optim`` and ``gradscope.utils.data`` name the same
objects the extension makes.
"""
from gradscope import _gradscope
from gradscope._missing import NotSupportedError, reexport as _reexport, unsupported as _unsupported

_reexport(_gradscope, globals())
# The C submodules are re-exported by the package's own modules, which add to them.
for _name in ("nn", "optim", "utils"):
    del globals()[_name]
del _name

from gradscope import autograd, cuda, linalg, nn, optim, utils  # noqa: E402
from gradscope.autograd import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: E402
from gradscope.compare import (all, allclose, any, equal, isclose, isfinite,  # noqa: E402
                               isinf, isnan)
from gradscope.serialization import load, save  # noqa: E402
from gradscope import copying as _copying  # noqa: E402,F401  (copy/deepcopy/pickle support)
from gradscope.device import device  # noqa: E402
from gradscope.memory_format import (channels_last, channels_last_3d,  # noqa: E402
                                     contiguous_format, memory_format, preserve_format)
from gradscope.tensor_extras import bernoulli, multinomial, normal, polygamma  # noqa: E402
from gradscope.tensor_extras import (addcdiv_function as addcdiv,  # noqa: E402
                                     addcmul_function as addcmul,
                                     movedim_function as movedim,
                                     nan_to_num_function as nan_to_num,
                                     swapaxes_function as swapaxes,
                                     swapdims_function as swapdims)
moveaxis = movedim
from gradscope.creation import (as_tensor, empty_like, full_like, get_default_dtype, set_default_dtype,  # noqa: E402
                                logspace, ones_like, rand_like, randint_like, randn_like,
                                randperm, zeros_like)
from gradscope.linalg import (det, matrix_power, _torch_slogdet as slogdet, _inverse as inverse,  # noqa: E402
                              _logdet as logdet, _torch_svd as svd,
                              _cholesky_solve as cholesky_solve, _chain_matmul as chain_matmul,
                              matrix_exp)
from gradscope.sampled_gradient import gradient  # noqa: E402
from gradscope.rearrange import (argwhere, broadcast_tensors, count_nonzero, diag,  # noqa: E402
                                 diagonal, diff, einsum, flip, hstack, kron, meshgrid, nonzero,
                                 repeat_interleave, roll, tensordot, tile, tril, triu, unbind,
                                 vstack)

from gradscope.surface import (BoolTensor, DoubleTensor, FloatTensor, Generator,  # noqa: E402
                               IntTensor, LongTensor, backends, cdist, clamp, clip,
                               default_generator, diag_embed, finfo, get_num_interop_threads,
                               get_num_threads, get_rng_state, histc, iinfo, initial_seed,
                               manual_seed, rot90, seed, set_num_interop_threads,
                               set_num_threads, set_printoptions, set_rng_state, std_mean,
                               var_mean)
import sys as _sys  # noqa: E402
_sys.modules["gradscope.backends"] = backends
for _name in ("cudnn", "mps", "cuda", "mkldnn", "openmp"):
    _sys.modules["gradscope.backends." + _name] = getattr(backends, _name)
del _name


def _tensor_format(self, spec):
    """format() as torch's: a 0-d tensor formats its number (f"{t:.2f}", and "{}" gives
    "0.5" as str(t.item()) does); any other tensor only with an empty spec, as its str."""
    if self.dim() == 0:
        return format(self.item(), spec)
    return object.__format__(self, spec)


_gradscope._extend_type(Tensor, "__format__", _tensor_format)  # noqa: F821

from gradscope import distributions  # noqa: E402  (torch.distributions; uses the names above)
from gradscope.statistics import (bincount, block_diag, histogram, nanquantile,  # noqa: E402
                                  quantile)
from gradscope.pointwise import (addbmm, addmv, addr, aminmax, baddbmm, bitwise_left_shift,  # noqa: E402
                                 bitwise_right_shift, copysign, frexp, gcd,
                                 corrcoef, cov, cumulative_trapezoid, divide, fmax, fmin, heaviside,
                                 hypot, isin, lcm, ldexp, logaddexp, logaddexp2, logit, multiply,
                                 nanmean, nansum, nextafter,
                                 renorm, sgn, signbit, sinc, subtract, trapezoid, trapz, xlogy)
from gradscope import special  # noqa: E402
from gradscope import amp  # noqa: E402  (torch.amp, torch.autocast)
from gradscope import jit  # noqa: E402  (torch.jit's eager-mode names)
from gradscope.amp import autocast, is_autocast_cpu_enabled, is_autocast_enabled  # noqa: E402
from gradscope.splitting import dsplit, hsplit, tensor_split, vsplit  # noqa: E402
from gradscope.splitting import _split_function as split  # noqa: E402
from gradscope.dtype_rules import can_cast, is_floating_point, promote_types, result_type  # noqa: E402
from gradscope.tensor_writes import (_index_copy_function as index_copy,  # noqa: E402
                                     _masked_scatter_function as masked_scatter,
                                     diagonal_scatter, select_scatter, slice_scatter)
from gradscope.random_draws import drawing_from as _drawing_from  # noqa: E402
rand, randn, randint = _drawing_from(rand), _drawing_from(randn), _drawing_from(randint)  # noqa: F821
randperm, normal = _drawing_from(randperm), _drawing_from(normal)
bernoulli, multinomial = _drawing_from(bernoulli), _drawing_from(multinomial)
from gradscope.numpy_style import *  # noqa: E402,F401,F403  (its __all__)
from gradscope.searching import (bucketize, cartesian_prod, combinations, kthvalue,  # noqa: E402
                                 mode, searchsorted, tril_indices, triu_indices)

from gradscope import method_aliases as _method_aliases  # noqa: E402
_method_aliases._install()


__getattr__ = _unsupported(__name__)
