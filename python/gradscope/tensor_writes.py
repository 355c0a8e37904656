"""gradscope.tensor_writes: torch's writes of one tensor into another's positions that the
engine has no single op for, as compositions of its differentiable ops (so gradients flow to
both the tensor written into and the source, as torch's): index_copy, masked_scatter and put
(with their in-place forms, which copy_ the result back, bumping the version as any in-place
write), select/slice/diagonal_scatter, and tril_/triu_. Put on the C type and the package
by gradscope/__init__.py."""
from gradscope import _gradscope as _c

Tensor = _c.Tensor


def _index(index, name):
    if not isinstance(index, Tensor) or index.is_floating_point() or index.dtype == _c.bool:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got "
                           f"{getattr(index, 'dtype', type(index).__name__)}")
    return index.long()


def index_copy(self, dim, index, source):
    """A copy of self whose slices index[i] along dim are source's slices i."""
    index = _index(index, "index_copy")
    d = dim % max(self.dim(), 1)
    count = int(index.numel())
    given = int(source.shape[d]) if source.dim() else 1
    if count != given:
        raise IndexError(f"index_copy_(): Number of indices ({count}) should be equal to "
                         f"source.size(dim) ({given})")
    return self.index_fill(d, index, 0).index_add(d, index, source.to(self.dtype))


def index_copy_(self, dim, index, source):
    """index_copy in place."""
    return self.copy_(index_copy(self, dim, index, source))


def masked_scatter(self, mask, source):
    """A copy of self whose positions where mask (broadcast to self) is true take source's
    elements in row-major order."""
    mask = mask.expand_as(self) if tuple(mask.shape) != tuple(self.shape) else mask
    flat_mask = mask.reshape(-1)
    wanted = int(flat_mask.sum()) if flat_mask.numel() else 0
    if wanted > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if wanted == 0:
        return self.clone()
    # position k of a true element takes source's element number (true elements before it)
    order = flat_mask.long().cumsum(0) - 1
    taken = source.reshape(-1)[order.clamp(min=0)].reshape(tuple(self.shape))
    return _c.where(mask, taken.to(self.dtype), self)


def masked_scatter_(self, mask, source):
    """masked_scatter in place."""
    return self.copy_(masked_scatter(self, mask, source))


def put(self, index, source, accumulate=False):
    """A copy of self, seen as 1-D, with source's elements at the flat positions index (added
    there with accumulate, summing repeats)."""
    index = _index(index, "put")
    n = self.numel()
    flat_index = index.reshape(-1)
    if flat_index.numel():
        lo, hi = int(flat_index.min()), int(flat_index.max())
        bad = hi if hi >= n else lo if lo < -n else None
        if bad is not None:
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                             f"elements.")
    if int(flat_index.numel()) != int(source.numel()):
        raise RuntimeError(f"put_(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {source.numel()}, "
                           f"index.numel() = {flat_index.numel()}")
    flat_index = _c.where(flat_index < 0, flat_index + n, flat_index)
    flat = self.reshape(-1)
    values = source.reshape(-1).to(self.dtype)
    if not accumulate:
        flat = flat.index_fill(0, flat_index, 0)
    return flat.index_add(0, flat_index, values).reshape(tuple(self.shape))


def put_(self, index, source, accumulate=False):
    """put in place."""
    return self.copy_(put(self, index, source, accumulate))


def tril_(self, diagonal=0):
    """tril in place."""
    return self.copy_(self.tril(diagonal))


def triu_(self, diagonal=0):
    """triu in place."""
    return self.copy_(self.triu(diagonal))


def _embedded(input, src, view_of):
    """A copy of input whose view view_of(copy) holds src: written through the view (a
    CopySlices node), so gradients reach both, as torch's *_scatter."""
    out = input.clone()
    view = view_of(out)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(view.shape)}")
    view.copy_(src)
    return out


def select_scatter(input, src, dim, index):
    """A copy of input with src in input.select(dim, index)."""
    return _embedded(input, src, lambda t: t.select(dim, index))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of input with src in the slice start:end:step of dim."""
    d = dim % input.dim()
    key = (slice(None),) * d + (slice(start, end, step),)
    return _embedded(input, src, lambda t: t[key])


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of input with src on the diagonal (offset, dim1, dim2)."""
    return _embedded(input, src, lambda t: t.diagonal(offset, dim1, dim2))


def _index_copy_function(input, dim, index, source):
    """torch.index_copy: see Tensor.index_copy."""
    return index_copy(input, dim, index, source)


def _masked_scatter_function(input, mask, source):
    """torch.masked_scatter: see Tensor.masked_scatter."""
    return masked_scatter(input, mask, source)


for _name, _value in [("index_copy", index_copy), ("index_copy_", index_copy_),
                      ("masked_scatter", masked_scatter), ("masked_scatter_", masked_scatter_),
                      ("put", put), ("put_", put_), ("tril_", tril_), ("triu_", triu_),
                      ("select_scatter", select_scatter), ("slice_scatter", slice_scatter),
                      ("diagonal_scatter", diagonal_scatter)]:
    _c._extend_type(Tensor, _name, _value)
del _name, _value
