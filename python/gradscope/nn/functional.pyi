# gradscope/nn/functional.pyi: the types of gradscope.nn.functional: the losses and layers as
# functions, and every Tensor op as a function (F.relu(x) is x.relu()).
# tests/python/test_docs.py checks it against the module.
from collections.abc import Sequence

from gradscope import Tensor, dtype
from gradscope import (  # the Tensor ops: F.relu(x) is gradscope.relu(x)
    abs as abs,
    acos as acos,
    add as add,
    addmm as addmm,
    amax as amax,
    amin as amin,
    argmax as argmax,
    argmin as argmin,
    argsort as argsort,
    as_strided as as_strided,
    asin as asin,
    atan as atan,
    atan2 as atan2,
    bitwise_and as bitwise_and,
    bitwise_not as bitwise_not,
    bitwise_or as bitwise_or,
    bitwise_xor as bitwise_xor,
    bmm as bmm,
    ceil as ceil,
    chunk as chunk,
    clamp as clamp,
    clamp_max as clamp_max,
    clamp_min as clamp_min,
    clip as clip,
    clone as clone,
    cos as cos,
    cosh as cosh,
    cumsum as cumsum,
    cross as cross,
    cummax as cummax,
    cummin as cummin,
    cumprod as cumprod,
    index_add as index_add,
    index_fill as index_fill,
    index_put as index_put,
    logcumsumexp as logcumsumexp,
    median as median,
    prod as prod,
    scatter as scatter,
    scatter_add as scatter_add,
    take as take,
    take_along_dim as take_along_dim,
    unique as unique,
    unique_consecutive as unique_consecutive,
    detach as detach,
    div as div,
    dot as dot,
    eq as eq,
    erf as erf,
    acosh as acosh,
    asinh as asinh,
    atanh as atanh,
    digamma as digamma,
    erfc as erfc,
    erfinv as erfinv,
    exp2 as exp2,
    lgamma as lgamma,
    exp as exp,
    expm1 as expm1,
    flatten as flatten,
    floor as floor,
    floor_divide as floor_divide,
    fmod as fmod,
    frac as frac,
    gather as gather,
    ge as ge,
    gelu as gelu,
    gt as gt,
    index_select as index_select,
    le as le,
    lerp as lerp,
    log as log,
    log10 as log10,
    log1p as log1p,
    log2 as log2,
    log_softmax as log_softmax,
    logical_and as logical_and,
    logical_not as logical_not,
    logical_or as logical_or,
    logical_xor as logical_xor,
    logsumexp as logsumexp,
    lt as lt,
    masked_fill as masked_fill,
    masked_select as masked_select,
    matmul as matmul,
    max as max,
    maximum as maximum,
    mean as mean,
    min as min,
    minimum as minimum,
    mm as mm,
    mul as mul,
    mv as mv,
    narrow as narrow,
    ne as ne,
    neg as neg,
    norm as norm,
    numel as numel,
    one_hot as one_hot,
    outer as outer,
    permute as permute,
    pow as pow,
    reciprocal as reciprocal,
    remainder as remainder,
    reshape as reshape,
    round as round,
    rsqrt as rsqrt,
    select as select,
    sigmoid as sigmoid,
    sign as sign,
    sin as sin,
    sinh as sinh,
    softmax as softmax,
    sort as sort,
    split as split,
    sqrt as sqrt,
    square as square,
    squeeze as squeeze,
    std as std,
    sub as sub,
    sum as sum,
    t as t,
    tan as tan,
    tanh as tanh,
    topk as topk,
    transpose as transpose,
    true_divide as true_divide,
    trunc as trunc,
    unsqueeze as unsqueeze,
    var as var,
)

_Shape = Sequence[int]
_Size2 = int | tuple[int, int]

def adaptive_avg_pool1d(input: Tensor, output_size: int | None) -> Tensor: ...
def adaptive_avg_pool2d(input: Tensor, output_size: int | None | tuple[int | None, int | None]) -> Tensor: ...
def adaptive_max_pool1d(input: Tensor, output_size: int | None, return_indices: bool = False) -> Tensor: ...
def adaptive_max_pool2d(input: Tensor, output_size: int | None | tuple[int | None, int | None], return_indices: bool = False) -> Tensor: ...
def avg_pool2d(input: Tensor, kernel_size: _Size2, stride: _Size2 | None = None, padding: _Size2 = 0, ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor: ...
def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False, momentum: float = 0.1, eps: float = 1e-05) -> Tensor: ...
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, reduction: str = 'mean') -> Tensor: ...
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: _Size2 = 1, padding: _Size2 = 0, dilation: _Size2 = 1, groups: int = 1) -> Tensor: ...
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: _Size2 = 1, padding: _Size2 = 0, output_padding: _Size2 = 0, groups: int = 1, dilation: _Size2 = 1) -> Tensor: ...
def cross_entropy(input: Tensor, target: Tensor, weight: None = None, size_average: bool | None = None,
                  ignore_index: int = -100, reduce: bool | None = None, reduction: str = 'mean',
                  label_smoothing: float = 0.0) -> Tensor: ...
def dropout(input: Tensor, p: float = 0.5, training: bool = True) -> Tensor: ...
def embedding(input: Tensor, weight: Tensor, /) -> Tensor: ...
def layer_norm(input: Tensor, normalized_shape: _Shape, weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-05) -> Tensor: ...
def relu(input: Tensor, inplace: bool = False) -> Tensor: ...
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor: ...
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor: ...
def max_pool2d(input: Tensor, kernel_size: _Size2, stride: _Size2 | None = None, padding: _Size2 = 0, dilation: _Size2 = 1, ceil_mode: bool = False, return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]: ...
def mse_loss(input: Tensor, target: Tensor, reduction: str = 'mean') -> Tensor: ...
def nll_loss(input: Tensor, target: Tensor, weight: None = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None,
             reduction: str = 'mean') -> Tensor: ...
def silu(input: Tensor, inplace: bool = False) -> Tensor: ...
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor: ...
def selu(input: Tensor, inplace: bool = False) -> Tensor: ...
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor: ...
def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor: ...
def relu6(input: Tensor, inplace: bool = False) -> Tensor: ...
def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor: ...
def hardswish(input: Tensor, inplace: bool = False) -> Tensor: ...
def logsigmoid(input: Tensor, /) -> Tensor: ...
def mish(input: Tensor, inplace: bool = False) -> Tensor: ...
def softsign(input: Tensor) -> Tensor: ...
def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: dtype | None = None) -> Tensor: ...
def glu(input: Tensor, dim: int = -1) -> Tensor: ...
def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None, reduction: str = 'mean') -> Tensor: ...
def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None, reduction: str = 'mean', beta: float = 1.0) -> Tensor: ...
def huber_loss(input: Tensor, target: Tensor, reduction: str = 'mean', delta: float = 1.0) -> Tensor: ...
def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None, reduce: bool | None = None, reduction: str = 'mean') -> Tensor: ...
def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None, reduction: str = 'mean', log_target: bool = False) -> Tensor: ...
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-08) -> Tensor: ...
def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-06, keepdim: bool = False) -> Tensor: ...
# spatial.py
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | tuple[int] = 1, padding: int | tuple[int] | str = 0, dilation: int | tuple[int] = 1, groups: int = 1) -> Tensor: ...
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | tuple[int] = 1, padding: int | tuple[int] = 0, output_padding: int | tuple[int] = 0, groups: int = 1, dilation: int | tuple[int] = 1) -> Tensor: ...
def max_pool1d(input: Tensor, kernel_size: int | tuple[int], stride: int | tuple[int] | None = None, padding: int | tuple[int] = 0, dilation: int | tuple[int] = 1, ceil_mode: bool = False, return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]: ...
def avg_pool1d(input: Tensor, kernel_size: int | tuple[int], stride: int | tuple[int] | None = None, padding: int | tuple[int] = 0, ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor: ...
def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Tensor: ...
def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor: ...
def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor: ...
def interpolate(input: Tensor, size: int | Sequence[int] | None = None, scale_factor: float | Sequence[float] | None = None, mode: str = "nearest", align_corners: bool | None = None, recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor: ...
def upsample(input: Tensor, size: int | Sequence[int] | None = None, scale_factor: float | Sequence[float] | None = None, mode: str = "nearest", align_corners: bool | None = None) -> Tensor: ...
def unfold(input: Tensor, kernel_size: _Size2, dilation: _Size2 = 1, padding: _Size2 = 0, stride: _Size2 = 1) -> Tensor: ...
def fold(input: Tensor, output_size: _Size2, kernel_size: _Size2, dilation: _Size2 = 1, padding: _Size2 = 0, stride: _Size2 = 1) -> Tensor: ...
# normalization.py
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-05) -> Tensor: ...
def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None, weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-05) -> Tensor: ...
def prelu(input: Tensor, weight: Tensor) -> Tensor: ...
def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor: ...
def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor: ...
# transformer.py
def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None, norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False, per_sample_weights: Tensor | None = None, include_last_offset: bool = False, padding_idx: int | None = None) -> Tensor: ...
# more_losses.py
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-06, swap: bool = False,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor: ...
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor: ...
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor: ...
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor: ...
def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor: ...
def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: None = None) -> Tensor: ...
