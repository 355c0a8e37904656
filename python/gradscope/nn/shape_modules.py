"""torch.nn's small shape and resampling modules with torch's print(model) lines: Unflatten
(one dim into a shape), Softmax2d (softmax over the channels of [C, H, W] or [N, C, H, W]) and
the older UpsamplingNearest2d / UpsamplingBilinear2d (Upsample with the mode fixed, bilinear
with align_corners=True as torch's)."""
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


class UpsamplingNearest2d(Upsample):
    """Upsample with mode='nearest' (torch's older name)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Upsample with mode='bilinear' and align_corners=True (torch's older name)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
