"""gradscope.nn: the C extension's modules (Linear, Sequential, RNN/LSTM/GRU, ...) and
nn.Parameter, the containers and pooling layers of layers.py, the activations of
activation.py, the losses of losses.py, the 1-D, padding and resizing layers of spatial.py,
the normalisations of normalization.py, attention and transformers of transformer.py, the Module methods of module.py, with
gradscope.nn.functional, gradscope.nn.init and gradscope.nn.utils."""
from gradscope import _gradscope
from gradscope._missing import reexport as _reexport, unsupported as _unsupported

_reexport(_gradscope.nn, globals())
del globals()["functional"]

from gradscope.nn import functional, init, module, state_dict, utils  # noqa: E402
from gradscope.nn.parameter import Parameter, ParameterDict, ParameterList  # noqa: E402,F401
from gradscope.nn.adaptive import (AdaptiveAvgPool1d, AdaptiveAvgPool2d,  # noqa: E402,F401
                                   AdaptiveMaxPool1d, AdaptiveMaxPool2d)
from gradscope.nn.layers import (AvgPool2d, BCEWithLogitsLoss, CrossEntropyLoss,  # noqa: E402,F401
                                 Flatten, Identity, MaxPool2d, MSELoss, NLLLoss,
                                 ModuleDict, ModuleList)
from gradscope.nn.activation import (ELU, GLU, Hardsigmoid, Hardswish,  # noqa: E402,F401
                                     Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, Mish, ReLU6,
                                     SELU, SiLU, Softmax, Softmin, Softplus, Softsign)
from gradscope.nn.losses import (BCELoss, CosineSimilarity, HuberLoss,  # noqa: E402,F401
                                 KLDivLoss, L1Loss, PairwiseDistance, SmoothL1Loss)
from gradscope.nn.spatial import (AvgPool1d, ConstantPad1d, ConstantPad2d, Conv1d, ConvTranspose2d,  # noqa: E402,F401
                                  Fold, MaxPool1d, PixelShuffle, PixelUnshuffle, ReflectionPad1d,
                                  ReflectionPad2d, ReplicationPad1d, ReplicationPad2d, Unfold,
                                  Upsample, ZeroPad2d)
from gradscope.nn.normalization import (Dropout1d, Dropout2d, GroupNorm,  # noqa: E402,F401
                                        InstanceNorm1d, InstanceNorm2d, PReLU)
from gradscope.nn.transformer import (EmbeddingBag, MultiheadAttention,  # noqa: E402,F401
                                      Transformer, TransformerDecoder,
                                      TransformerDecoderLayer, TransformerEncoder,
                                      TransformerEncoderLayer)

__getattr__ = _unsupported(__name__)
