"""Group and instance normalisation, PReLU and channel dropout of torch.nn and
torch.nn.functional, written over the engine's reductions and elementwise ops with torch 1.13's
formulas (biased variance inside the normalisation, the unbiased one in running estimates),
defaults and print(model) text."""
from gradscope import _gradscope as _c
from gradscope.autograd import no_grad as _no_grad
from gradscope.nn.parameter import Parameter

Module = _c.nn.Module


def _channel_view(t, input):
    """A per-channel tensor [C] shaped to broadcast over input [N, C, *]."""
    return t.reshape(1, -1, *([1] * (input.dim() - 2)))


def _normalize(x, dims, eps):
    """(x - mean) / sqrt(var + eps) over dims, the biased variance (torch's normalisations)."""
    mean = x.mean(dims, keepdim=True)
    centred = x - mean
    var = (centred * centred).mean(dims, keepdim=True)
    return centred * (var + eps).rsqrt()


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """Normalises input [N, C, *] over each group of C / num_groups channels (and all positions),
    then scales by weight [C] and shifts by bias [C]."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    n, c = input.shape[0], input.shape[1]
    if c % num_groups != 0:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {list(input.shape)} and num_groups="
                           f"{num_groups}")
    return _c.nn.functional._group_norm(input, num_groups, weight, bias, eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-05):
    """Normalises each channel of each sample of input [N, C, *] over its positions. With
    running_mean and running_var and use_input_stats, those move towards the batch's mean of the
    samples' statistics (by momentum); without use_input_stats they normalise instead."""
    if input.dim() < 3:
        raise ValueError(f"instance_norm: expected an input [N, C, *] of 3 or more dims, got "
                         f"{tuple(input.shape)}")
    dims = tuple(range(2, input.dim()))
    if use_input_stats:
        out = _normalize(input, dims, eps)
        if running_mean is not None and running_var is not None:
            with _no_grad():
                x = input.detach()
                count = 1
                for d in dims:
                    count *= x.shape[d]
                mean = x.mean(dims)
                var = ((x - x.mean(dims, keepdim=True)) ** 2).sum(dims) / max(count - 1, 1)
                running_mean.copy_(running_mean * (1 - momentum) + mean.mean(0) * momentum)
                running_var.copy_(running_var * (1 - momentum) + var.mean(0) * momentum)
    else:
        if running_mean is None or running_var is None:
            raise ValueError("Expected running_mean and running_var to be defined when "
                             "use_input_stats is false")
        out = (input - _channel_view(running_mean, input)) * \
            _channel_view(running_var + eps, input).rsqrt()
    if weight is not None:
        out = out * _channel_view(weight, input)
    if bias is not None:
        out = out + _channel_view(bias, input)
    return out


def prelu(input, weight):
    """max(0, x) + weight * min(0, x), weight [1] shared or [C] per channel (dim 1)."""
    if weight.numel() != 1:
        channels = input.shape[1] if input.dim() >= 2 else 1
        if input.dim() == 0 or weight.numel() != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight.numel()} and channel size = "
                               f"{channels}.")
    return _c.prelu(input, weight)


def _feature_dropout(input, p, training, fn):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    if p == 1.0:
        return input * _c.zeros(*shape, dtype=input.dtype)
    keep = (_c.rand(*shape, dtype=input.dtype) >= p).to(input.dtype) / (1.0 - p)
    return input * keep


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of input [N, C, L] with probability p, the rest scaled by
    1 / (1 - p)."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a "
                           f"{input.dim()}D input")
    if input.dim() == 2:
        return _feature_dropout(input.unsqueeze(0), p, training, "dropout1d").squeeze(0)
    return _feature_dropout(input, p, training, "dropout1d")


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of input [N, C, H, W] with probability p, the rest scaled by
    1 / (1 - p) (a 3-D input is taken as [N, C, L], as torch 1.13 does)."""
    if input.dim() not in (3, 4):
        raise RuntimeError(f"dropout2d: Expected 3D or 4D input, but received a "
                           f"{input.dim()}D input")
    return _feature_dropout(input, p, training, "dropout2d")


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of input [N, C, D, H, W] (or [C, D, H, W]) with probability p, the
    rest scaled by 1 / (1 - p)."""
    if input.dim() not in (4, 5):
        import warnings
        warnings.warn(f"dropout3d: Received a {input.dim()}-D input to dropout3d, which is "
                      "deprecated and will result in an error in a future release. To retain "
                      "the behavior and silence this warning, please use dropout instead.")
    if input.dim() != 5:
        return _feature_dropout(input.unsqueeze(0), p, training, "dropout3d").squeeze(0)
    return _feature_dropout(input, p, training, "dropout3d")


class GroupNorm(Module):
    """F.group_norm as a module: weight [C] ones and bias [C] zeros when affine."""

    def __init__(self, num_groups, num_channels, eps=1e-05, affine=True, device=None,
                 dtype=None):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        if affine:
            self.weight = Parameter(_c.ones(num_channels, dtype=dtype or _c.float32))
            self.bias = Parameter(_c.zeros(num_channels, dtype=dtype or _c.float32))
        else:
            self.weight = None
            self.bias = None

    def forward(self, input):
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class _InstanceNorm(Module):
    _dims = 1

    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None):
        super().__init__()
        dtype = dtype or _c.float32
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(_c.ones(num_features, dtype=dtype))
            self.bias = Parameter(_c.zeros(num_features, dtype=dtype))
        else:
            self.weight = None
            self.bias = None
        if track_running_stats:
            self.register_buffer("running_mean", _c.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", _c.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", _c.tensor(0, dtype=_c.int64))
        else:
            self.running_mean = None
            self.running_var = None
            self.num_batches_tracked = None

    def forward(self, input):
        if input.dim() not in (self._dims + 1, self._dims + 2):
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input (got "
                             f"{input.dim()}D input)")
        batched = input.dim() == self._dims + 2
        x = input if batched else input.unsqueeze(0)
        if x.shape[1] != self.num_features and self.affine:
            raise ValueError(f"expected input's size at dim=1 to match num_features "
                             f"({self.num_features}), but got: {x.shape[1]}.")
        use_input_stats = self.training or not self.track_running_stats
        # num_batches_tracked stays 0: torch's instance norms never count batches
        out = instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            use_input_stats, self.momentum, self.eps)
        return out if batched else out.squeeze(0)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    """F.instance_norm over [N, C, L] (or [C, L]) as a module; affine=False and
    track_running_stats=False by default, as torch's."""
    _dims = 1


class InstanceNorm2d(_InstanceNorm):
    """F.instance_norm over [N, C, H, W] (or [C, H, W]) as a module; affine=False and
    track_running_stats=False by default, as torch's."""
    _dims = 2


class InstanceNorm3d(_InstanceNorm):
    """F.instance_norm over [N, C, D, H, W] (or [C, D, H, W]) as a module; affine=False and
    track_running_stats=False by default, as torch's."""
    _dims = 3


class PReLU(Module):
    """F.prelu as a module: weight [num_parameters] filled with init (0.25)."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(_c.full((num_parameters,), float(init),
                                              dtype=dtype or _c.float32))

    def forward(self, input):
        return prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class _DropoutNd(Module):
    _function = None

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return type(self)._function(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """F.dropout1d as a module."""
    _function = staticmethod(dropout1d)


class Dropout2d(_DropoutNd):
    """F.dropout2d as a module."""
    _function = staticmethod(dropout2d)



class Dropout3d(_DropoutNd):
    """F.dropout3d as a module."""
    _function = staticmethod(dropout3d)
