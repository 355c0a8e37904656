"""The 1-D convolution and pooling, padding, pixel shuffles, upsampling, grid sampling and unfold of
torch.nn.functional, with their modules, written over the engine's 2-D convolution and pooling
and its views and index ops.

A 1-D pooling is the 2-D one on a height-1 view (unsqueeze(-2), then squeeze), as torch 1.13
computes max_pool1d and avg_pool1d (so their grad_fn chains are torch's); conv1d is the
engine's own op (one ConvolutionBackward0, as torch's).
Constant, reflect and replicate padding, pixel_shuffle, nearest resizing and unfold are engine
ops, each one node named as torch's (ConstantPadNdBackward0, ReflectionPad2DBackward0,
PixelShuffleBackward0, UpsampleNearest2DBackward1, Im2ColBackward0, ...), and so are bicubic
resizing, grid_sample and affine_grid (UpsampleBicubic2DBackward1, GridSampler2DBackward0,
AffineGridGeneratorBackward0); the functions here check their arguments in torch's words first.
Circular padding is an engine op too (torch's grad_fn for it is CopySlices); bilinear
resizing gathers rows with index_select along each resized dim, so its gradients are
index_select's (adding where rows were read twice)."""
import math
import warnings

from gradscope import _gradscope as _c
from gradscope.nn import init
from gradscope.nn.layers import _MaxPoolNd
from gradscope.nn.parameter import Parameter

Module = _c.nn.Module
F = _c.nn.functional  # the C extension's conv2d, max_pool2d, avg_pool2d


def _tuple(value, n, what):
    """value as an n-tuple of ints (an int repeated, or a sequence of n)."""
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    if len(value) == 1 and n > 1:
        value = value * n
    if len(value) != n or not all(isinstance(v, int) for v in value):
        raise ValueError(f"{what} must be an int or a tuple of {n} ints, got {value!r}")
    return value


# ---- 1-D convolution and pooling ---------------------------------------------------------------

def _same_padding(kernel, dilation, stride, fn):
    if stride != 1:
        raise ValueError(f"{fn}: padding='same' is not supported for strided convolutions")
    total = dilation * (kernel - 1)
    return total // 2, total - total // 2


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """The 1-D convolution of input [N, C, L] (or [C, L]) with weight [O, C / groups, K]."""
    (stride,) = _tuple(stride, 1, "stride")
    (dilation,) = _tuple(dilation, 1, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            padding = 0
        elif padding == "same":
            left, right = _same_padding(weight.shape[-1], dilation, stride, "conv1d")
            if left != right:
                input = pad(input, (left, right))
                left = 0
            padding = left
        else:
            raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                             "{'valid', 'same'}")
    (padding,) = _tuple(padding, 1, "padding")
    return F._conv1d(input, weight, bias, stride, padding, dilation, groups)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The max over each window of the last dim of input [N, C, L] (or [C, L])."""
    (k,) = _tuple(kernel_size, 1, "kernel_size")
    (s,) = _tuple(stride if stride is not None and stride != () else k, 1, "stride")
    (p,) = _tuple(padding, 1, "padding")
    (d,) = _tuple(dilation, 1, "dilation")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"max_pool1d() Expected 2D or 3D input tensor, but got "
                           f"{tuple(input.shape)}")
    out = F.max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), ceil_mode=ceil_mode,
                       return_indices=return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """The mean over each window of the last dim of input [N, C, L] (or [C, L])."""
    (k,) = _tuple(kernel_size, 1, "kernel_size")
    (s,) = _tuple(stride if stride is not None and stride != () else k, 1, "stride")
    (p,) = _tuple(padding, 1, "padding")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"avg_pool1d: expected 2D or 3D input tensor, but got "
                           f"{tuple(input.shape)}")
    out = F.avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode, count_include_pad)
    return out.squeeze(-2)


def _conv_extra_repr(m):
    s = (f"{m.in_channels}, {m.out_channels}, kernel_size={m.kernel_size}, "
         f"stride={m.stride}")
    if m.padding != (0,) * len(m.kernel_size):
        s += f", padding={m.padding}"
    if m.dilation != (1,) * len(m.dilation):
        s += f", dilation={m.dilation}"
    output_padding = getattr(m, "output_padding", (0,))
    if output_padding != (0,) * len(output_padding):
        s += f", output_padding={output_padding}"
    if m.groups != 1:
        s += f", groups={m.groups}"
    if m.bias is None:
        s += ", bias=False"
    if m.padding_mode != "zeros":
        s += f", padding_mode={m.padding_mode}"
    return s


def _reset_conv(weight, bias):
    """torch's _ConvNd.reset_parameters: kaiming_uniform_(a=sqrt(5)) and U(+-1/sqrt(fan_in))."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        if fan_in != 0:
            bound = 1 / math.sqrt(fan_in)
            init.uniform_(bias, -bound, bound)


def _check_channels(in_channels, out_channels, groups):
    if groups <= 0:
        raise ValueError("groups must be a positive integer")
    if in_channels % groups != 0:
        raise ValueError("in_channels must be divisible by groups")
    if out_channels % groups != 0:
        raise ValueError("out_channels must be divisible by groups")


class Conv1d(Module):
    """F.conv1d as a module: weight [out, in / groups, k] and bias [out], initialised as
    torch's."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        _check_channels(in_channels, out_channels, groups)
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"padding_mode must be one of ['zeros', 'reflect', 'replicate', "
                             f"'circular'], but got padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _tuple(kernel_size, 1, "kernel_size")
        self.stride = _tuple(stride, 1, "stride")
        self.dilation = _tuple(dilation, 1, "dilation")
        self.padding = padding if isinstance(padding, str) else _tuple(padding, 1, "padding")
        self.padding_mode = padding_mode
        dtype = dtype or _c.float32
        self.weight = Parameter(_c.empty(out_channels, in_channels // groups,
                                               self.kernel_size[0], dtype=dtype))
        if bias:
            self.bias = Parameter(_c.empty(out_channels, dtype=dtype))
        else:
            self.bias = None
        _reset_conv(self.weight, self.bias)

    def forward(self, input):
        if self.padding_mode != "zeros":
            if self.padding == "same":
                left, right = _same_padding(self.kernel_size[0], self.dilation[0],
                                            self.stride[0], "Conv1d")
            else:
                left = right = 0 if self.padding == "valid" else self.padding[0]
            return conv1d(pad(input, (left, right), mode=self.padding_mode), self.weight,
                          self.bias, self.stride, 0, self.dilation, self.groups)
        return conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                      self.groups)

    def extra_repr(self):
        return _conv_extra_repr(self)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The 1-D transposed convolution of input [N, C, L] (or [C, L]) with weight
    [C, O / groups, K]: conv_transpose2d on a height-1 view."""
    if weight.dim() != 3:
        raise RuntimeError(f"conv_transpose1d: expected a 3-D weight [in, out / groups, k], got "
                           f"{tuple(weight.shape)}")
    (s,), (p,) = _tuple(stride, 1, "stride"), _tuple(padding, 1, "padding")
    (op,), (d,) = _tuple(output_padding, 1, "output_padding"), _tuple(dilation, 1, "dilation")
    out = F.conv_transpose2d(input.unsqueeze(-2), weight.unsqueeze(2), bias, (1, s), (0, p),
                             (0, op), groups, (1, d))
    return out.squeeze(-2)


class _ConvTransposeNd(Module):
    """A transposed convolution over _n spatial dims as a module: weight [in, out / groups,
    *kernel] and bias [out], initialised as torch's (kaiming_uniform_ with a = sqrt(5) over the
    weight's fan in); _function is F.conv_transpose2d or 3d."""
    _n, _function = 2, None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__()
        _check_channels(in_channels, out_channels, groups)
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        n = self._n
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _tuple(kernel_size, n, "kernel_size")
        self.stride = _tuple(stride, n, "stride")
        self.padding = _tuple(padding, n, "padding")
        self.output_padding = _tuple(output_padding, n, "output_padding")
        self.dilation = _tuple(dilation, n, "dilation")
        self.padding_mode = padding_mode
        dtype = dtype or _c.float32
        self.weight = Parameter(_c.empty(in_channels, out_channels // groups,
                                         *self.kernel_size, dtype=dtype))
        self.bias = Parameter(_c.empty(out_channels, dtype=dtype)) if bias else None
        _reset_conv(self.weight, self.bias)

    def _output_padding(self, input, output_size):
        if output_size is None:
            return self.output_padding
        n = self._n
        output_size = list(output_size)[-n:]
        padding = []
        for d in range(n):
            size = input.shape[input.dim() - n + d]
            least = (size - 1) * self.stride[d] - 2 * self.padding[d] + \
                self.dilation[d] * (self.kernel_size[d] - 1) + 1
            if not least <= output_size[d] < least + self.stride[d]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {least} to {least + self.stride[d] - 1} (for an "
                                 f"input of {tuple(input.shape)[-n:]})")
            padding.append(output_size[d] - least)
        return tuple(padding)

    def forward(self, input, output_size=None):
        return type(self)._function(input, self.weight, self.bias, self.stride, self.padding,
                                    self._output_padding(input, output_size), self.groups,
                                    self.dilation)

    def extra_repr(self):
        return _conv_extra_repr(self)


class ConvTranspose2d(_ConvTransposeNd):
    """F.conv_transpose2d as a module: weight [in, out / groups, kh, kw] and bias [out],
    initialised as torch's (kaiming_uniform_ with a = sqrt(5) over the weight's fan in)."""
    _n, _function = 2, staticmethod(F.conv_transpose2d)


class ConvTranspose1d(_ConvTransposeNd):
    """F.conv_transpose1d as a module: weight [in, out / groups, k] and bias [out],
    initialised as torch's."""
    _n, _function = 1, staticmethod(conv_transpose1d)


class MaxPool1d(_MaxPoolNd):
    """F.max_pool1d as a module."""
    _function = staticmethod(max_pool1d)


class AvgPool1d(Module):
    """F.avg_pool1d as a module."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = _tuple(kernel_size, 1, "kernel_size")
        self.stride = _tuple(stride if stride is not None else kernel_size, 1, "stride")
        self.padding = _tuple(padding, 1, "padding")
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


# ---- padding --------------------------------------------------------------------------------

def _gather(x, dim, rows):
    return x.index_select(dim, _c.tensor(rows, dtype=_c.int64))


def _pad_rows(mode, size, left, right, dim):
    """The source row of each output row along a dim of size padded by left and right."""
    if mode == "reflect":
        if left >= size or right >= size:
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({left}, {right}) at dimension "
                               f"{dim} of input of size {size}")
        return list(range(left, 0, -1)) + list(range(size)) + \
            list(range(size - 2, size - 2 - right, -1))
    if mode == "replicate":
        if size == 0:
            raise RuntimeError("replication_pad: input dimension must be non-empty")
        return [0] * left + list(range(size)) + [size - 1] * right
    # circular
    if left > size or right > size:
        raise RuntimeError("Padding value causes wrapping around more than once.")
    return list(range(size - left, size)) + list(range(size)) + list(range(right))


def pad(input, pad, mode="constant", value=None):
    """Pads input: pad is (left, right) for the last dim, then the dim before it, and so on.
    mode 'constant' fills with value (0 if None) and takes negative sizes as cropping; 'reflect'
    mirrors without repeating the edge, 'replicate' repeats the edge, 'circular' wraps around
    (the last 1 to 3 dims)."""
    pad = tuple(pad)
    if len(pad) % 2 != 0:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{input.dim()}")
    if mode == "constant":
        return _c.constant_pad_nd(input, pad, 0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value:
        raise AssertionError(f'Padding mode "{mode}"" doesn\'t take in value argument')
    dims = len(pad) // 2  # torch 1.13 pads 1 to 3 dims of an input with 1 or 2 more
    if dims > 3 or input.dim() not in (dims + 1, dims + 2):
        raise NotImplementedError("Only 2D, 3D, 4D, 5D padding with non-constant padding are "
                                  "supported for now")
    for i in range(len(pad) // 2):  # torch's checks and words, before the one op
        dim = input.dim() - 1 - i
        _pad_rows(mode, input.shape[dim], pad[2 * i], pad[2 * i + 1], dim)
    if mode == "reflect":
        return F._reflection_pad(input, pad)
    if mode == "replicate":
        return F._replication_pad(input, pad)
    return F._circular_pad(input, pad)


class _ConstantPadNd(Module):
    _n = 1

    def __init__(self, padding, value):
        super().__init__()
        self.padding = _tuple(padding, 2 * self._n, "padding")
        self.value = value

    def forward(self, input):
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """F.pad(mode='constant') of the last dim as a module."""
    _n = 1


class ConstantPad2d(_ConstantPadNd):
    """F.pad(mode='constant') of the last two dims as a module."""
    _n = 2


class ZeroPad2d(ConstantPad2d):
    """F.pad with zeros on the last two dims as a module."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class _PadNd(Module):
    _n, _mode = 1, "reflect"

    def __init__(self, padding):
        super().__init__()
        self.padding = _tuple(padding, 2 * self._n, "padding")

    def forward(self, input):
        return pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """F.pad(mode='reflect') of the last dim as a module."""
    _n, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """F.pad(mode='reflect') of the last two dims as a module."""
    _n, _mode = 2, "reflect"


class ReplicationPad1d(_PadNd):
    """F.pad(mode='replicate') of the last dim as a module."""
    _n, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """F.pad(mode='replicate') of the last two dims as a module."""
    _n, _mode = 2, "replicate"


# ---- pixel shuffles, upsampling, unfold -------------------------------------------------------

def pixel_shuffle(input, upscale_factor):
    """[*, C r^2, H, W] to [*, C, H r, W r]: each r x r block from r^2 channels."""
    r = upscale_factor
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.dim()} dimension(s)")
    c, h, w = input.shape[-3:]
    if c % (r * r) != 0:
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    return _c.pixel_shuffle(input, r)


def pixel_unshuffle(input, downscale_factor):
    """[*, C, H r, W r] to [*, C r^2, H, W]: pixel_shuffle's inverse."""
    r = downscale_factor
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.dim()} dimension(s)")
    c, h, w = input.shape[-3:]
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by "
                           f"downscale_factor, got {h} x {w} and {r}")
    return _c.pixel_unshuffle(input, r)


def _resize_rows(mode, size, out, scale, align_corners):
    """Per output row: (row0, row1, weight of row1) for linear, the source row for nearest."""
    if mode == "nearest":
        s = scale if scale is not None else size / out
        return [min(int(math.floor(i * s)), size - 1) for i in range(out)]
    if align_corners:
        s = (size - 1) / (out - 1) if out > 1 else 0.0
    else:
        s = scale if scale is not None else size / out
    rows = []
    for i in range(out):
        src = i * s if align_corners else max((i + 0.5) * s - 0.5, 0.0)
        r0 = min(int(math.floor(src)), size - 1)
        r1 = r0 + 1 if r0 < size - 1 else r0
        rows.append((r0, r1, src - r0))
    return rows


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resizes the spatial dims (all after the first two) to size, or by scale_factor:
    mode 'nearest' copies the nearest source pixel, 'linear' and 'bilinear' blend the two (each
    way) around it, 'bicubic' the 4 x 4 around it (cubic convolution, A = -0.75), as torch's."""
    spatial = input.dim() - 2
    linear = {"linear": 1, "bilinear": 2, "bicubic": 2}
    if mode not in ("nearest",) + tuple(linear):
        raise NotImplementedError(f"interpolate: mode {mode!r} is not supported by gradscope yet")
    if mode == "bicubic" and input.dim() != 4:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                                  f"{input.dim()}D) for the modes: nearest | linear | bilinear | "
                                  f"bicubic | trilinear | area | nearest-exact (got bicubic)")
    if mode in linear and spatial != linear[mode]:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                  f"{linear[mode] + 2}D input")
    if mode == "nearest" and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if spatial < 1 or spatial > 2:
        raise NotImplementedError(f"interpolate: {input.dim()}-D input is not supported by "
                                  "gradscope yet (3-D or 4-D)")
    if antialias:
        raise NotImplementedError("interpolate(antialias=True) is not supported by gradscope yet")
    in_sizes = tuple(input.shape)[2:]
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = _tuple(size, spatial, "size")
        scales = (None,) * spatial
    else:
        factors = scale_factor if isinstance(scale_factor, (tuple, list)) \
            else (scale_factor,) * spatial
        if len(factors) != spatial:
            raise ValueError(f"scale_factor shape must match input shape. Input is {spatial}D, "
                             f"scale_factor size is {len(factors)}")
        sizes = tuple(int(math.floor(s * f)) for s, f in zip(in_sizes, factors))
        scales = (None,) * spatial if recompute_scale_factor \
            else tuple(1.0 / f for f in factors)
    if mode == "nearest":
        return F._upsample_nearest(input, sizes, scales)
    if mode == "bicubic":
        if min(sizes) <= 0 or min(in_sizes) <= 0:
            raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                               f"(H: {in_sizes[0]}, W: {in_sizes[1]}) output (H: {sizes[0]}, W: "
                               f"{sizes[1]})")
        return F._upsample_bicubic2d(input, sizes, scales, bool(align_corners))
    out = input
    for k in range(spatial):
        dim = 2 + k
        rows = _resize_rows(mode, in_sizes[k], sizes[k], scales[k], bool(align_corners))
        shape = [1] * input.dim()
        shape[dim] = sizes[k]
        w1 = _c.tensor([r[2] for r in rows], dtype=input.dtype).reshape(shape)
        a = _gather(out, dim, [r[0] for r in rows])
        b = _gather(out, dim, [r[1] for r in rows])
        out = a * (1 - w1) + b * w1
    return out


_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False "
                  "since 1.3.0. Please specify align_corners=True if the old behavior is desired. "
                  "See the documentation of grid_sample for details.")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """input [N, C, H, W] read at the points of grid [N, Ho, Wo, 2] (x, y in [-1, 1]: the
    corner pixels' centers with align_corners, their outer edges without): [N, C, Ho, Wo];
    a volume [N, C, D, H, W] at grid [N, Do, Ho, Wo, 3] (x, y, z): [N, C, Do, Ho, Wo].
    mode 'bilinear' (trilinear for a volume), 'nearest' or 'bicubic' (4-D only); padding_mode 'zeros' (outside reads 0), 'border'
    (clipped to the edge) or 'reflection' (mirrored at the edges). Gradients go to input and
    grid, as torch's."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING)
        align_corners = False
    return F._grid_sample(input, grid, ("bilinear", "nearest", "bicubic").index(mode),
                          ("zeros", "border", "reflection").index(padding_mode),
                          bool(align_corners))


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of the affine maps theta [N, 2, 3] for size (N, C, H, W): [N, H, W, 2]
    (or theta [N, 3, 4] for (N, C, D, H, W): [N, D, H, W, 3]), each point theta times its own
    normalized (x, y[, z], 1), for grid_sample; differentiable w.r.t. theta, as torch's."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    given, size = size, [int(s) for s in size]
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{given}. Got {theta.shape}.")
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{given}. Got {theta.shape}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {given}.")
    if align_corners and min(size[2:]) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids "
                      "when align_corners=True. This is not an intended use case of affine_grid. "
                      "See the documentation of affine_grid for details.")
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {given}")
    return F._affine_grid(theta, size, bool(align_corners))


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """interpolate's older name."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding windows of input [N, C, H, W] (or [C, H, W]) as columns: [N, C kh kw, L]."""
    kh, kw = _tuple(kernel_size, 2, "kernel_size")
    if input.dim() not in (3, 4):
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got "
                           f"{input.dim()}D)")
    return F._unfold(input, (kh, kw), _tuple(dilation, 2, "dilation"),
                     _tuple(padding, 2, "padding"), _tuple(stride, 2, "stride"))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """unfold's inverse in shape: columns [N, C kh kw, L] (or [C kh kw, L]) summed back into
    an image [N, C, H, W] at their windows' places (overlaps add up), through a grouped
    conv_transpose2d with the same one-hot kernels unfold uses."""
    h, w = _tuple(output_size, 2, "output_size")
    kh, kw = _tuple(kernel_size, 2, "kernel_size")
    dh, dw = _tuple(dilation, 2, "dilation")
    ph, pw = _tuple(padding, 2, "padding")
    sh, sw = _tuple(stride, 2, "stride")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    batched = input.dim() == 3
    x = input if batched else input.unsqueeze(0)
    n, rows, length = x.shape
    if rows % (kh * kw) != 0:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the "
                           f"product of kernel_size, but got input.size(1)={rows} and "
                           f"kernel_size=({kh}, {kw})")
    blocks_h = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    blocks_w = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if blocks_h < 1 or blocks_w < 1 or blocks_h * blocks_w != length:
        raise RuntimeError(f"Given output_size=({h}, {w}), kernel_size=({kh}, {kw}), "
                           f"dilation=({dh}, {dw}), padding=({ph}, {pw}), stride=({sh}, {sw}), "
                           f"expected size of input's dimension 2 to match the calculated "
                           f"number of sliding blocks {blocks_h} * {blocks_w} = "
                           f"{blocks_h * blocks_w}, but got input.size(2)={length}.")
    c = rows // (kh * kw)
    eye = _c.eye(kh * kw, dtype=input.dtype).reshape(kh * kw, 1, kh, kw)
    weight = eye.repeat(c, 1, 1, 1)
    # output_padding makes up the rows and columns no window reaches (less than the stride)
    extra_h = h + 2 * ph - ((blocks_h - 1) * sh + dh * (kh - 1) + 1)
    extra_w = w + 2 * pw - ((blocks_w - 1) * sw + dw * (kw - 1) + 1)
    out = F.conv_transpose2d(x.reshape(n, rows, blocks_h, blocks_w), weight, None, (sh, sw),
                             (ph, pw), (extra_h, extra_w), c, (dh, dw))
    return out if batched else out.squeeze(0)


class Fold(Module):
    """F.fold as a module."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                    self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class PixelShuffle(Module):
    """F.pixel_shuffle as a module."""

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """F.pixel_unshuffle as a module."""

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class Upsample(Module):
    """F.interpolate as a module."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size = size
        self.scale_factor = float(scale_factor) if isinstance(scale_factor, (int, float)) \
            else tuple(float(f) for f in scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           self.recompute_scale_factor)

    def extra_repr(self):
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return info + f", mode={self.mode}"


class Unfold(Module):
    """F.unfold as a module."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")
