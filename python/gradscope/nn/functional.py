"""gradscope.nn.functional: the losses, activations and layers as functions (the C
extension's, adaptive pooling from adaptive.py, the layers of spatial.py and volumetric.py,
normalization.py and transformer.py, and those compositions.py writes over its
ops), as torch.nn.functional's."""
from gradscope import _gradscope
from gradscope._missing import reexport as _reexport, unsupported as _unsupported

_reexport(_gradscope.nn.functional, globals())
one_hot = _gradscope.one_hot
from gradscope.nn.adaptive import (adaptive_avg_pool1d, adaptive_avg_pool2d,  # noqa: E402,F401
                                   adaptive_avg_pool3d, adaptive_max_pool1d, adaptive_max_pool2d,
                                   adaptive_max_pool3d)

from gradscope.nn.compositions import (_softmax_dim, binary_cross_entropy,  # noqa: E402,F401
                                       cosine_similarity, glu, huber_loss, kl_div, l1_loss,
                                       pairwise_distance, smooth_l1_loss, softmin, softsign)

from gradscope.nn.spatial import (affine_grid, avg_pool1d, conv1d, conv_transpose1d,  # noqa: E402,F401
                                  fold, grid_sample, interpolate, max_pool1d, pad,
                                  pixel_shuffle, pixel_unshuffle, unfold, upsample)
from gradscope.nn.normalization import (dropout1d, dropout2d, dropout3d,  # noqa: E402,F401
                                        group_norm, instance_norm, prelu)
from gradscope.nn.volumetric import (avg_pool3d, conv3d, conv_transpose3d,  # noqa: E402,F401
                                     max_pool3d)
from gradscope.nn.transformer import (embedding_bag,  # noqa: E402,F401
                                      scaled_dot_product_attention)
from gradscope.nn.shape_modules import channel_shuffle  # noqa: E402,F401
from gradscope.nn.shrink_activations import (alpha_dropout, celu, hardshrink,  # noqa: E402,F401
                                             rrelu, softshrink, tanhshrink, threshold)
from gradscope.nn.window_ops import (bilinear, local_response_norm, lp_pool1d,  # noqa: E402,F401
                                     lp_pool2d, max_unpool1d, max_unpool2d, pdist)
from gradscope.nn.probabilistic_losses import (gaussian_nll_loss,  # noqa: E402,F401
                                               multi_margin_loss, multilabel_soft_margin_loss,
                                               poisson_nll_loss)
from gradscope.nn.ctc import ctc_loss  # noqa: E402,F401
from gradscope.nn.margin_modules import (soft_margin_loss,  # noqa: E402,F401
                                        triplet_margin_with_distance_loss)
from gradscope.nn.more_losses import (cosine_embedding_loss, cross_entropy,  # noqa: E402,F401
                                      gumbel_softmax, hinge_embedding_loss,
                                      margin_ranking_loss, nll_loss, normalize,
                                      triplet_margin_loss)


def relu(input, inplace=False):
    """max(x, 0) elementwise; inplace=True writes it into input (Tensor.relu_, recorded as
    ReluBackward0) and returns input, as torch.nn.functional.relu."""
    return input.relu_() if inplace else _gradscope.relu(input)


def gelu(input, approximate="none"):
    """GELU as torch.nn.functional.gelu: x * Phi(x) (approximate='none'), or the tanh form
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (approximate='tanh'); both record
    GeluBackward0."""
    if approximate == "none":
        return _gradscope.gelu(input)
    if approximate == "tanh":
        return input._gelu_tanh()
    raise RuntimeError("approximate argument must be either none or tanh.")


__getattr__ = _unsupported(__name__)
