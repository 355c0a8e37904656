"""gradscope.nn: the C extension's modules (Linear, Sequential, RNN/LSTM/GRU, ...) and
nn.Parameter, the containers and pooling layers of layers.py, the activations of
activation.py, the losses of losses.py, the 1-D, padding and resizing layers of spatial.py, the 3-D ones of volumetric.py,
the normalisations of normalization.py, attention and transformers of transformer.py, the Module methods of module.py, with
gradscope.nn.functional, gradscope.nn.init and gradscope.nn.utils."""
from gradscope import _gradscope
from gradscope._missing import reexport as _reexport, unsupported as _unsupported

_reexport(_gradscope.nn, globals())
del globals()["functional"]

from gradscope.nn import functional, init, module, state_dict, utils  # noqa: E402
from gradscope.nn.parameter import Parameter, ParameterDict, ParameterList  # noqa: E402,F401
from gradscope.nn.adaptive import (AdaptiveAvgPool1d, AdaptiveAvgPool2d,  # noqa: E402,F401
                                   AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
                                   AdaptiveMaxPool3d)
from gradscope.nn.layers import (AvgPool2d, BCEWithLogitsLoss, CrossEntropyLoss,  # noqa: E402,F401
                                 Flatten, Identity, MaxPool2d, MSELoss, NLLLoss,
                                 ModuleDict, ModuleList)
from gradscope.nn.activation import (ELU, GLU, Hardsigmoid, Hardswish,  # noqa: E402,F401
                                     Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, Mish, ReLU6,
                                     SELU, SiLU, Softmax, Softmin, Softplus, Softsign)
from gradscope.nn.losses import (BCELoss, CosineSimilarity, HuberLoss,  # noqa: E402,F401
                                 KLDivLoss, L1Loss, PairwiseDistance, SmoothL1Loss)
from gradscope.nn.spatial import (AvgPool1d, ConstantPad1d, ConstantPad2d, Conv1d, ConvTranspose1d, ConvTranspose2d,  # noqa: E402,F401
                                  Fold, MaxPool1d, PixelShuffle, PixelUnshuffle, ReflectionPad1d,
                                  ReflectionPad2d, ReplicationPad1d, ReplicationPad2d, Unfold,
                                  Upsample, ZeroPad2d)
from gradscope.nn.normalization import (Dropout1d, Dropout2d, Dropout3d,  # noqa: E402,F401
                                        GroupNorm, InstanceNorm1d, InstanceNorm2d,
                                        InstanceNorm3d, PReLU)
from gradscope.nn.volumetric import (AvgPool3d, Conv3d, ConvTranspose3d,  # noqa: E402,F401
                                     MaxPool3d)
from gradscope.nn.shrink_activations import (CELU, AlphaDropout, Hardshrink,  # noqa: E402,F401
                                             RReLU, Softshrink, Tanhshrink, Threshold)
from gradscope.nn.window_ops import (Bilinear, LocalResponseNorm, LPPool1d,  # noqa: E402,F401
                                     LPPool2d, MaxUnpool1d, MaxUnpool2d)
from gradscope.nn.ctc import CTCLoss  # noqa: E402,F401
from gradscope.nn.probabilistic_losses import (GaussianNLLLoss,  # noqa: E402,F401
                                               MultiLabelSoftMarginLoss, MultiMarginLoss,
                                               PoissonNLLLoss)
from gradscope.nn.margin_modules import (CosineEmbeddingLoss,  # noqa: E402,F401
                                        HingeEmbeddingLoss, MarginRankingLoss, SoftMarginLoss,
                                        TripletMarginLoss, TripletMarginWithDistanceLoss)
from gradscope.nn.shape_modules import (ChannelShuffle, Softmax2d, Unflatten,  # noqa: E402,F401
                                        UpsamplingBilinear2d, UpsamplingNearest2d)
from gradscope.nn import layer_attributes as _layer_attributes  # noqa: E402
from gradscope.nn.transformer import (EmbeddingBag, MultiheadAttention,  # noqa: E402,F401
                                      Transformer, TransformerDecoder,
                                      TransformerDecoderLayer, TransformerEncoder,
                                      TransformerEncoderLayer)


_layer_attributes.add_batch_norm_attributes(BatchNorm1d, BatchNorm2d, BatchNorm3d)  # noqa: F821
from gradscope.nn.sync_batch_norm import SyncBatchNorm  # noqa: E402,F401
_layer_attributes.add_dropout_attributes(Dropout)  # noqa: F821  (both re-exported above)
_layer_attributes.add_layer_norm_attributes(LayerNorm)  # noqa: F821
_layer_attributes.add_embedding_attributes(Embedding)  # noqa: F821

def _embedding_from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                               norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """An Embedding whose weight is a copy of embeddings (2-D), frozen unless freeze=False,
    with torch's options, as torch's nn.Embedding.from_pretrained."""
    if embeddings.dim() != 2:
        raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
    rows, cols = embeddings.shape
    return cls(rows, cols, padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
               scale_grad_by_freq=scale_grad_by_freq, sparse=sparse, _weight=embeddings,
               _freeze=freeze)


def _embedding_bag_from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0,
                                   scale_grad_by_freq=False, mode="mean", sparse=False,
                                   include_last_offset=False, padding_idx=None):
    """An EmbeddingBag over a copy of embeddings (2-D), frozen unless freeze=False, as
    torch's nn.EmbeddingBag.from_pretrained."""
    if embeddings.dim() != 2:
        raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
    rows, cols = embeddings.shape
    bag = cls(rows, cols, max_norm=max_norm, norm_type=norm_type,
              scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
              _weight=embeddings.detach().clone(), include_last_offset=include_last_offset,
              padding_idx=padding_idx)
    bag.weight.requires_grad_(not freeze)
    return bag


Embedding.from_pretrained = (  # noqa: F821
    classmethod(_embedding_from_pretrained))
EmbeddingBag.from_pretrained = classmethod(_embedding_bag_from_pretrained)

__getattr__ = _unsupported(__name__)
