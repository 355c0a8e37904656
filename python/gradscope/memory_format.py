"""gradscope.memory_format: torch's memory formats as objects (gradscope.channels_last, ...),
and laying a new tensor out in the one asked for.

A format is a layout of a tensor's elements, as real strides (the engine's gs_contiguous_as):
contiguous_format is row-major; channels_last stores [N, C, H, W] as N, H, W, C (strides
H*W*C, 1, W*C, C, as torch's); channels_last_3d stores [N, C, D, H, W] as N, D, H, W, C;
preserve_format, for the ``*_like`` functions and ``to()``, keeps the source's layout. Each
object carries the engine's number as ``_code``, which the C methods read."""
from gradscope import _gradscope as _c


class memory_format:
    """A layout of a tensor's elements: contiguous_format, channels_last, channels_last_3d or
    preserve_format (torch.memory_format)."""

    __module__ = "gradscope"
    __slots__ = ("_name", "_code")

    def __init__(self, name, code):
        self._name, self._code = name, code

    def __repr__(self):
        return "gradscope." + self._name

    def __reduce__(self):  # pickled by name: one object per format
        return self._name


contiguous_format = memory_format("contiguous_format", 0)
channels_last = memory_format("channels_last", 1)
channels_last_3d = memory_format("channels_last_3d", 2)
preserve_format = memory_format("preserve_format", 3)


def layout_of(t):
    """The format t is laid out in: channels_last (or _3d) when its strides are those and not
    row-major's too, else contiguous_format (torch's suggest_memory_format, for dense
    tensors)."""
    for fmt, rank in ((channels_last, 4), (channels_last_3d, 5)):
        if t.dim() == rank and t.is_contiguous(memory_format=fmt) and not t.is_contiguous():
            return fmt
    return contiguous_format


def laid_out(t, like, fmt):
    """A new row-major tensor t laid out as fmt says (None or preserve_format: as like is), in
    a tensor made with the format's strides, as torch's empty(memory_format=)."""
    if fmt is None or fmt is preserve_format:
        fmt = layout_of(like)
    if fmt is contiguous_format:
        return t
    out = _c.empty(*t.shape, dtype=t.dtype, memory_format=fmt)
    with _c.no_grad():
        out.copy_(t)
    return out
