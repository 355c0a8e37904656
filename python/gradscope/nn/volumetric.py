"""The volumetric (3-D) convolution and pooling of torch.nn.functional and torch.nn: conv3d,
conv_transpose3d, max_pool3d, avg_pool3d and their modules Conv3d, ConvTranspose3d, MaxPool3d
and AvgPool3d, over inputs [N, C, D, H, W] (or [C, D, H, W]).

Each is one engine op (engine/ops/conv.c, conv-transpose.c, pool.c: the 2-D loops with a
depth), so each makes one node named as torch's: ConvolutionBackward0,
MaxPool3DWithIndicesBackward0, AvgPool3DBackward0. The functions here read torch's forms of
the arguments (an int or a triple, 'same' and 'valid' padding) and check them in torch's words
first; padding='same' that cannot be split evenly pads the input's far side first (a
ConstantPadNdBackward0 before the convolution), as torch does."""
from gradscope import _gradscope as _c
from gradscope.nn.layers import _AvgPoolNd, _MaxPoolNd
from gradscope.nn.parameter import Parameter
from gradscope.nn.spatial import (_ConvTransposeNd, _check_channels, _conv_extra_repr,
                                  _reset_conv, _tuple, pad)

Module = _c.nn.Module
F = _c.nn.functional  # the C extension's _conv3d, _conv_transpose3d, _pool3d

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _same_padding(kernel, dilation, stride, fn):
    """padding='same': per dim, the zeros on the near side and the extra on the far side."""
    if any(s != 1 for s in stride):
        raise ValueError(f"{fn}: padding='same' is not supported for strided convolutions")
    near = tuple(d * (k - 1) // 2 for k, d in zip(kernel, dilation))
    extra = tuple(d * (k - 1) - 2 * n for k, d, n in zip(kernel, dilation, near))
    return near, extra


def _far_side_pad(extra):
    """F.pad's list (last dim first) adding extra[i] after spatial dim i."""
    out = []
    for e in reversed(extra):
        out += [0, e]
    return out


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """The 3-D convolution of input [N, C, D, H, W] (or [C, D, H, W]) with weight
    [O, C / groups, kd, kh, kw], bias [O]."""
    stride = _tuple(stride, 3, "stride")
    dilation = _tuple(dilation, 3, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0, 0)
        elif padding == "same":
            padding, extra = _same_padding(tuple(weight.shape)[-3:], dilation, stride, "conv3d")
            if any(extra):
                input = pad(input, _far_side_pad(extra))
        else:
            raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                             "{'valid', 'same'}")
    padding = _tuple(padding, 3, "padding")
    return F._conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The 3-D transposed convolution of input [N, C, D, H, W] (or [C, D, H, W]) with weight
    [C, O / groups, kd, kh, kw]: conv3d's input gradient."""
    return F._conv_transpose3d(input, weight, bias, _tuple(stride, 3, "stride"),
                               _tuple(padding, 3, "padding"),
                               _tuple(output_padding, 3, "output_padding"),
                               _tuple(dilation, 3, "dilation"), groups)


def _pool_args(kernel_size, stride, padding, dilation):
    kernel = _tuple(kernel_size, 3, "kernel_size")
    stride = kernel if stride is None or stride == () or stride == [] \
        else _tuple(stride, 3, "stride")
    return kernel, stride, _tuple(padding, 3, "padding"), _tuple(dilation, 3, "dilation")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The max over each window of the last three dims of input [N, C, D, H, W] (or
    [C, D, H, W]); with return_indices, also each max's flat index into its D x H x W
    volume."""
    k, s, p, d = _pool_args(kernel_size, stride, padding, dilation)
    return F._pool3d(input, True, k, s, p, d, bool(ceil_mode), True, bool(return_indices))


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """The mean over each window of the last three dims of input [N, C, D, H, W] (or
    [C, D, H, W])."""
    if divisor_override is not None:
        raise ValueError("avg_pool3d(): divisor_override is not supported by gradscope yet")
    k, s, p, _ = _pool_args(kernel_size, stride, padding, 1)
    return F._pool3d(input, False, k, s, p, (1, 1, 1), bool(ceil_mode), bool(count_include_pad),
                     False)


class Conv3d(Module):
    """F.conv3d as a module: weight [out, in / groups, kd, kh, kw] and bias [out], initialised as
    torch's (kaiming_uniform_ with a = sqrt(5) over the weight's fan in); padding_mode 'zeros',
    'reflect', 'replicate' or 'circular'."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        _check_channels(in_channels, out_channels, groups)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {list(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _tuple(kernel_size, 3, "kernel_size")
        self.stride = _tuple(stride, 3, "stride")
        self.dilation = _tuple(dilation, 3, "dilation")
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "['valid', 'same']")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = _tuple(padding, 3, "padding")
        self.padding_mode = padding_mode
        dtype = dtype or _c.float32
        self.weight = Parameter(_c.empty(out_channels, in_channels // groups, *self.kernel_size,
                                         dtype=dtype))
        self.bias = Parameter(_c.empty(out_channels, dtype=dtype)) if bias else None
        _reset_conv(self.weight, self.bias)

    def forward(self, input):
        if self.padding_mode == "zeros":
            return conv3d(input, self.weight, self.bias, self.stride, self.padding,
                          self.dilation, self.groups)
        if self.padding == "same":
            near, extra = _same_padding(self.kernel_size, self.dilation, self.stride, "Conv3d")
        elif self.padding == "valid":
            near, extra = (0, 0, 0), (0, 0, 0)
        else:
            near, extra = self.padding, (0, 0, 0)
        sides = []
        for n, e in zip(reversed(near), reversed(extra)):
            sides += [n, n + e]
        return conv3d(pad(input, sides, mode=self.padding_mode), self.weight, self.bias,
                      self.stride, 0, self.dilation, self.groups)

    def extra_repr(self):
        return _conv_extra_repr(self)


class ConvTranspose3d(_ConvTransposeNd):
    """F.conv_transpose3d as a module: weight [in, out / groups, kd, kh, kw] and bias [out],
    initialised as torch's."""
    _n, _function = 3, staticmethod(conv_transpose3d)


class MaxPool3d(_MaxPoolNd):
    """F.max_pool3d as a module."""
    _function = staticmethod(max_pool3d)


class AvgPool3d(_AvgPoolNd):
    """F.avg_pool3d as a module."""
    _function = staticmethod(avg_pool3d)
