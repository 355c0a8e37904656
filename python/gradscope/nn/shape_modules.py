"""torch.nn's small shape and resampling modules with torch's print(model) lines: Unflatten
(one dim into a shape), Softmax2d (softmax over the channels of [C, H, W] or [N, C, H, W]),
ChannelShuffle (with F.channel_shuffle) and the older UpsamplingNearest2d /
UpsamplingBilinear2d (Upsample with the mode fixed, bilinear with align_corners=True as
torch's)."""
from gradscope import _gradscope
from gradscope.nn import functional as F
from gradscope.nn.spatial import Upsample

Module = _gradscope.nn.Module


class Unflatten(Module):
    """Unflattens dim into unflattened_size, as torch.nn.Unflatten."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, str):
            raise TypeError("Unflatten: named dimensions are not supported by gradscope")
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(f"unflattened_size must be a tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, tuple(self.unflattened_size))

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Softmax2d(Module):
    """Softmax over the channels of [C, H, W] or [N, C, H, W] input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise AssertionError("Softmax2d requires a 3D or 4D tensor as input")
        return F.softmax(input, -3)


def channel_shuffle(input, groups):
    """The channels (dim 1) of [N, C, *] input regrouped as ShuffleNet's: viewed as [groups,
    C / groups] and transposed, as torch.nn.functional.channel_shuffle."""
    if input.dim() < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value "
                           f"of groups:{groups}")
    n, c, rest = input.shape[0], input.shape[1], tuple(input.shape[2:])
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    return (input.reshape((n, groups, c // groups) + rest).transpose(1, 2)
            .reshape((n, c) + rest))


class ChannelShuffle(Module):
    """Shuffles the channels of [N, C, *] input in groups (F.channel_shuffle)."""

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"


class UpsamplingNearest2d(Upsample):
    """Upsample with mode='nearest' (torch's older name)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Upsample with mode='bilinear' and align_corners=True (torch's older name)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
