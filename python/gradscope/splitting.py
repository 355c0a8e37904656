"""gradscope.splitting: torch's ways of cutting a tensor into views: split with a list of
sizes (the engine's split takes one size), tensor_split by a count or at indices, and
hsplit/vsplit/dsplit. Every piece is a narrow() view, so writes and gradients reach the tensor
it was cut from. Put on the C type and the package by gradscope/__init__.py."""
from gradscope import _gradscope as _c

Tensor = _c.Tensor
_c_split = Tensor.split


def _dim(dim, ndim):
    if not -ndim <= dim < max(ndim, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {dim})")
    return dim % ndim


def split(self, split_size, dim=0):
    """Views of split_size rows each along dim (the last may be shorter), or with a list, views
    of exactly those sizes (which must add up to the dim's size)."""
    if isinstance(split_size, int):
        return _c_split(self, split_size, dim)
    sizes = [int(s) for s in split_size]
    d = _dim(dim, self.dim())
    n = int(self.shape[d])
    if sum(sizes) != n or any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                           f"tensor's size at dimension {dim}), but got split_sizes={sizes}")
    pieces, start = [], 0
    for s in sizes:
        pieces.append(self.narrow(d, start, s))
        start += s
    return tuple(pieces)


def _split_function(tensor, split_size_or_sections, dim=0):
    """torch.split: see Tensor.split."""
    return split(tensor, split_size_or_sections, dim)


_MAX_SECTIONS = 1 << 24


def tensor_split(input, indices_or_sections, dim=0):
    """Views along dim: n pieces of near-equal size (the first n % size one longer), or cut
    before each of the given indices (clamped to the dim's size, as Python slices)."""
    d = _dim(dim, input.dim())
    n = int(input.shape[d])
    if isinstance(indices_or_sections, Tensor):
        if indices_or_sections.dim() > 1 or indices_or_sections.is_floating_point():
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-"
                               "dimensional or one-dimensional tensor, but got a tensor with "
                               f"{indices_or_sections.dim()} dims")
        indices_or_sections = (int(indices_or_sections) if indices_or_sections.dim() == 0
                               else indices_or_sections.tolist())
    if isinstance(indices_or_sections, int):
        sections = indices_or_sections
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        if sections > _MAX_SECTIONS:  # each is a tensor: more would only exhaust memory
            raise RuntimeError(f"tensor_split: expected at most {_MAX_SECTIONS} sections (one "
                               f"tensor each), got {sections}")
        size, extra = divmod(n, sections)
        bounds, start = [], 0
        for i in range(sections):
            start += size + (1 if i < extra else 0)
            bounds.append(start)
        cuts = bounds[:-1]
    else:
        cuts = [int(i) for i in indices_or_sections]
    pieces, start = [], 0
    for cut in cuts + [n]:
        cut = min(max(cut if cut >= 0 else cut + n, 0), n)
        stop = max(cut, start)
        pieces.append(input.narrow(d, start, stop - start))
        start = stop
    return tuple(pieces)


def _directional(input, indices_or_sections, dim, name, min_dims):
    if input.dim() < min_dims:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, "
                           f"but got a tensor with {input.dim()} dimensions!")
    if isinstance(indices_or_sections, int) and int(input.shape[dim]) % indices_or_sections:
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size "
                           f"of the dimension {int(input.shape[dim])} is not divisible by the "
                           f"split_size {indices_or_sections}!")
    return tensor_split(input, indices_or_sections, dim)


def hsplit(input, indices_or_sections):
    """tensor_split along dim 1 (dim 0 for a 1-D tensor); a count must divide the size."""
    return _directional(input, indices_or_sections, 0 if input.dim() == 1 else 1, "hsplit", 1)


def vsplit(input, indices_or_sections):
    """tensor_split along dim 0 of a tensor of 2 or more dims; a count must divide the size."""
    return _directional(input, indices_or_sections, 0, "vsplit", 2)


def dsplit(input, indices_or_sections):
    """tensor_split along dim 2 of a tensor of 3 or more dims; a count must divide the size."""
    return _directional(input, indices_or_sections, 2, "dsplit", 3)


for _name, _value in [("split", split), ("tensor_split", tensor_split), ("hsplit", hsplit),
                      ("vsplit", vsplit), ("dsplit", dsplit)]:
    _c._extend_type(Tensor, _name, _value)
del _name, _value
