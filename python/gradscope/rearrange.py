"""Rearranging tensors the ways torch scripts do, written with the engine's views and ops so
gradients flow as torch's: view_as/reshape_as/type_as, unbind, unflatten, mT, flip, roll,
tril/triu, diag/diagonal, hstack/vstack, tile, repeat_interleave, broadcast_tensors, meshgrid,
nonzero/argwhere, count_nonzero, diff, kron, tensordot and einsum, and Tensor.where."""
import warnings

from gradscope import _gradscope as _c

_Tensor = _c.Tensor


def _dim(dim, ndim):
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(ndim, 1)}, {max(ndim, 1) - 1}], but got {dim})")
    return dim % max(ndim, 1)


# ---- as another tensor ---------------------------------------------------------------------

def _view_as(self, other):
    """t.view_as(other): t.view(other.shape)."""
    return self.view(tuple(other.shape))


def _reshape_as(self, other):
    """t.reshape_as(other): t.reshape(other.shape)."""
    return self.reshape(tuple(other.shape))


def _type_as(self, other):
    """t.type_as(other): t in other's dtype."""
    return self.to(other.dtype)


def _is_floating_point(self):
    """t.is_floating_point(): whether t's dtype is floating."""
    return self.dtype.is_floating_point


def _nelement(self):
    """t.nelement(): t.numel()."""
    return self.numel()


def _mT(self):
    """t.mT: the last two dims swapped (a batch of matrices transposed)."""
    return self.transpose(-2, -1)


def _where(self, condition, other):
    """t.where(condition, other): torch.where(condition, t, other)."""
    return _c.where(condition, self, other)


# ---- cutting and joining ---------------------------------------------------------------------

def unbind(input, dim=0):
    """torch.unbind: the slices along dim, as a tuple of views."""
    dim = _dim(dim, input.dim())
    return tuple(input.select(dim, i) for i in range(input.shape[dim]))


def _unflatten(self, dim, sizes):
    """t.unflatten(dim, sizes): dim split into sizes (one may be -1)."""
    dim = _dim(dim, self.dim())
    shape = tuple(self.shape)
    return self.reshape(shape[:dim] + tuple(sizes) + shape[dim + 1:])


def _atleast(t, n):
    """t with ones put in front until it has n dims (torch.atleast_1d/2d)."""
    while t.dim() < n:
        t = t.unsqueeze(0)
    return t


def hstack(tensors):
    """torch.hstack: joined along dim 1 (dim 0 for 1-D tensors)."""
    ts = [_atleast(t, 1) for t in tensors]
    return _c.cat(ts, 0 if ts[0].dim() == 1 else 1)


def vstack(tensors):
    """torch.vstack: joined along dim 0, 1-D tensors as rows."""
    return _c.cat([_atleast(t, 2) for t in tensors], 0)


def tile(input, dims):
    """torch.tile: input repeated dims times (dims padded with ones in front, as torch)."""
    dims = tuple(dims)
    if len(dims) < input.dim():
        dims = (1,) * (input.dim() - len(dims)) + dims
    return input.repeat(*dims)


def repeat_interleave(input, repeats, dim=None):
    """torch.repeat_interleave: each element (along dim, or of the flattened input) repeated
    repeats times; repeats a number or a 1-D tensor of counts."""
    if dim is None:
        input, dim = input.flatten(), 0
    dim = _dim(dim, input.dim())
    n = input.shape[dim]
    if isinstance(repeats, _Tensor) and repeats.dim() == 0:
        repeats = repeats.item()
    if not isinstance(repeats, _Tensor):
        if repeats < 0:
            raise RuntimeError("repeat_interleave: repeats can not be negative")
        # each element as a new dim of size repeats, folded back in: a view, then one copy
        shape = list(input.shape)
        spread = input.unsqueeze(dim + 1).expand(*shape[:dim + 1], int(repeats), *shape[dim + 1:])
        return spread.reshape(*shape[:dim], n * int(repeats), *shape[dim + 1:])
    counts = repeats.tolist()
    if len(counts) != n:
        raise RuntimeError(f"repeat_interleave: repeats must have the same size as input along "
                           f"dim, but got repeats.size(0) = {len(counts)} and "
                           f"input.size({dim}) = {n}")
    if any(c < 0 for c in counts):
        raise RuntimeError("repeat_interleave: repeats can not be negative")
    if sum(counts) > 1 << 31:  # the index is built here, element by element
        raise RuntimeError(f"repeat_interleave: {sum(counts)} repeats in all are more than "
                           f"gradscope builds an index for (2**31)")
    index = _c.tensor([i for i, c in enumerate(counts) for _ in range(int(c))], dtype=_c.int64)
    return input.index_select(dim, index)


def broadcast_tensors(*tensors):
    """torch.broadcast_tensors: each tensor expanded to their common broadcast shape; one
    that has that shape already is returned itself, as torch does."""
    shape = []
    for t in tensors:
        s = list(t.shape)
        for i in range(1, len(s) + 1):
            if i > len(shape):
                shape.insert(0, s[-i])
            elif shape[-i] == 1:
                shape[-i] = s[-i]
            elif s[-i] not in (1, shape[-i]):
                raise RuntimeError(f"The size of tensor a ({shape[-i]}) must match the size of "
                                   f"tensor b ({s[-i]}) at non-singleton dimension {len(shape) - i}")
    return tuple(t if list(t.shape) == shape else t.expand(*shape) for t in tensors)


def meshgrid(*tensors, indexing=None):
    """torch.meshgrid: coordinate grids from 1-D tensors; indexing 'ij' (torch 1.13's default,
    with its warning when not given) or 'xy'."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    swap = indexing == "xy" and len(tensors) >= 2
    ts = list(tensors)
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = [t.numel() for t in ts]
    grids = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        grids.append(t.reshape(*view).expand(*shape))
    if swap:  # the first two inputs' grids were made in each other's place
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


# ---- reordering ----------------------------------------------------------------------------

def flip(input, dims):
    """torch.flip: the order reversed along each of dims (a copy, as torch's)."""
    out = input
    for d in (dims if isinstance(dims, (list, tuple)) else (dims,)):
        d = _dim(d, input.dim())
        n = input.shape[d]
        out = out.index_select(d, _c.arange(n - 1, -1, -1, dtype=_c.int64))
    return out


def roll(input, shifts, dims=None):
    """torch.roll: elements shifted along dims, those past the end coming back at the start;
    without dims, of the flattened tensor (then reshaped)."""
    if dims is None:
        if not isinstance(shifts, int):
            shifts = shifts[0]
        return roll(input.flatten(), shifts, 0).view(tuple(input.shape))
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                           f"{len(dims)}")
    out = input
    for s, d in zip(shifts, dims):
        d = _dim(d, input.dim())
        n = input.shape[d]
        if n == 0:
            continue
        s %= n
        if s:
            out = _c.cat([out.narrow(d, n - s, s), out.narrow(d, 0, n - s)], d)
    return out


def _band(input, diagonal, lower):
    if input.dim() < 2:  # torch's words: it looks up dim -2
        _dim(-2, input.dim())
    rows, cols = input.shape[-2], input.shape[-1]
    r = _c.arange(rows, dtype=_c.int64).reshape(rows, 1)
    c = _c.arange(cols, dtype=_c.int64).reshape(1, cols)
    keep = (c - r <= diagonal) if lower else (c - r >= diagonal)
    return _c.where(keep, input, _c.zeros_like(input))


def tril(input, diagonal=0):
    """torch.tril: the lower triangle (on and below diagonal) of the last two dims, zeros
    elsewhere."""
    return _band(input, diagonal, True)


def triu(input, diagonal=0):
    """torch.triu: the upper triangle (on and above diagonal) of the last two dims, zeros
    elsewhere."""
    return _band(input, diagonal, False)


def diagonal(input, offset=0, dim1=0, dim2=1):
    """torch.diagonal: the diagonal of dims dim1 and dim2 as a view (last dim of the result)."""
    nd = input.dim()
    d1, d2 = _dim(dim1, nd), _dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    shape, stride = list(input.shape), list(input.stride())
    start = input.storage_offset()
    if offset >= 0:
        length = max(0, min(shape[d1], shape[d2] - offset))
        start += offset * stride[d2] if length else 0
    else:
        length = max(0, min(shape[d1] + offset, shape[d2]))
        start += -offset * stride[d1] if length else 0
    rest = [i for i in range(nd) if i not in (d1, d2)]
    return input.as_strided([shape[i] for i in rest] + [length],
                            [stride[i] for i in rest] + [stride[d1] + stride[d2]], start)


_diagonal_view = diagonal  # diag's parameter is named diagonal, as torch's


def diag(input, diagonal=0):
    """torch.diag: of a 1-D tensor, the square matrix with it on the diagonal-th diagonal; of
    a 2-D tensor, that diagonal (a copy, as torch's)."""
    if input.dim() == 2:
        return _diagonal_view(input, diagonal).clone()
    if input.dim() != 1:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.dim()}D")
    n = input.shape[0] + abs(diagonal)
    r = _c.arange(n, dtype=_c.int64).reshape(n, 1)
    c = _c.arange(n, dtype=_c.int64).reshape(1, n)
    on = (c - r) == diagonal
    # row i of the result holds input[i] (diagonal >= 0) or input[i + diagonal]: spread the
    # vector along the rows, padded, then keep the band
    pad = _c.zeros(abs(diagonal), dtype=input.dtype)
    column = _c.cat([input, pad] if diagonal >= 0 else [pad, input]).reshape(n, 1)
    return _c.where(on, column.expand(n, n), _c.zeros(n, n, dtype=input.dtype))


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """torch.diff: differences of neighbours along dim, n times; prepend/append joined first."""
    dim = _dim(dim, input.dim())
    parts = [p for p in (prepend, input, append) if p is not None]
    out = _c.cat(parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        m = out.shape[dim]
        if out.dtype == _c.bool:
            out = out.narrow(dim, 1, m - 1) != out.narrow(dim, 0, m - 1)
        else:
            out = out.narrow(dim, 1, m - 1) - out.narrow(dim, 0, m - 1)
    return out


# ---- where the values are ------------------------------------------------------------------

def nonzero(input, *, as_tuple=False):
    """torch.nonzero: the indices of nonzero elements, one row each (int64 [n, ndim]); with
    as_tuple, one 1-D tensor of indices per dim."""
    # a 0-d input is seen as one element: as_tuple gives its index, the rows have no columns
    mask = (input != 0).reshape(-1) if input.dim() == 0 else input != 0
    coords = []
    for d, size in enumerate(mask.shape):
        view = [1] * mask.dim()
        view[d] = size
        grid = _c.arange(size, dtype=_c.int64).reshape(*view).expand(*mask.shape)
        coords.append(grid.masked_select(mask))
    if as_tuple:
        return tuple(coords)
    if input.dim() == 0:
        return _c.zeros(coords[0].numel(), 0, dtype=_c.int64)
    return _c.stack(coords, 1)


def argwhere(input):
    """torch.argwhere: torch.nonzero(input)."""
    return nonzero(input)


def count_nonzero(input, dim=None):
    """torch.count_nonzero: how many elements are nonzero (along dim, if given), int64."""
    hits = (input != 0).long()
    return hits.sum() if dim is None else hits.sum(dim)


# ---- products --------------------------------------------------------------------------------

def kron(input, other):
    """torch.kron: the Kronecker product (dims aligned from the right)."""
    nd = max(input.dim(), other.dim())
    a = input.reshape(*([1] * (nd - input.dim()) + list(input.shape)))
    b = other.reshape(*([1] * (nd - other.dim()) + list(other.shape)))
    a_shape = [s for d in a.shape for s in (d, 1)]
    b_shape = [s for d in b.shape for s in (1, d)]
    out = a.reshape(*a_shape) * b.reshape(*b_shape)
    return out.reshape(*[x * y for x, y in zip(a.shape, b.shape)])


def tensordot(a, b, dims=2):
    """torch.tensordot: a's last dims (or those listed) contracted with b's first (or those
    listed), as one matrix product."""
    if isinstance(dims, int):
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
        da = [_dim(d, a.dim()) for d in da]
        db = [_dim(d, b.dim()) for d in db]
    keep_a = [d for d in range(a.dim()) if d not in da]
    keep_b = [d for d in range(b.dim()) if d not in db]
    k = 1
    for d in da:
        k *= a.shape[d]
    pa = a.permute(*(keep_a + da)).reshape(-1, k)
    pb = b.permute(*(db + keep_b)).reshape(k, -1)
    return (pa @ pb).reshape(*[a.shape[d] for d in keep_a], *[b.shape[d] for d in keep_b])


def _parse_einsum(equation, n):
    eq = equation.replace(" ", "")
    if "..." in eq:
        raise NotImplementedError("einsum: '...' (ellipsis) is not supported by gradscope yet")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != n:
        raise RuntimeError(f"einsum(): {len(terms)} subscripts given for {n} operands")
    if not arrow:  # implicit output: the letters used once, in alphabetical order
        counts = {}
        for ch in "".join(terms):
            counts[ch] = counts.get(ch, 0) + 1
        out = "".join(sorted(ch for ch, c in counts.items() if c == 1))
    for ch in "".join(terms) + out:
        if not ch.isalpha():
            raise RuntimeError(f"einsum(): invalid subscript given at index "
                               f"{equation.index(ch)} in the equation string, subscripts must "
                               f"be in [a-zA-Z]")
    return terms, out


def _take_diagonals(t, letters):
    """A term with a repeated letter ('ii') becomes its diagonal over that letter."""
    while len(set(letters)) != len(letters):
        ch = next(c for c in letters if letters.count(c) > 1)
        i = letters.index(ch)
        j = letters.index(ch, i + 1)
        t = diagonal(t, 0, i, j)
        letters = letters[:i] + letters[i + 1:j] + letters[j + 1:] + ch
    return t, letters


def einsum(equation, *operands):
    """torch.einsum: sums of products over the subscripts of equation ('ij,jk->ik'), computed
    pairwise left to right as matrix products (bmm) over permuted, reshaped operands, so the
    gradient flows through views and products. Repeated subscripts in one term take its
    diagonal; '...' is not supported yet."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    terms, out = _parse_einsum(equation, len(operands))
    ops = []
    for t, letters in zip(operands, terms):
        if t.dim() != len(letters):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(letters)}) does not match the number of dimensions "
                               f"({t.dim()}) for operand {len(ops)} and no ellipsis was given")
        ops.append(_take_diagonals(t, letters))
    sizes = {}
    for t, letters in ops:
        for ch, s in zip(letters, t.shape):
            if sizes.setdefault(ch, s) != s and 1 not in (s, sizes[ch]):
                raise RuntimeError(f"einsum(): operands do not broadcast with remapped shapes "
                                   f"(original->remapped): subscript {ch} has sizes "
                                   f"{sizes[ch]} and {s}")
            sizes[ch] = max(sizes[ch], s)

    def needed_after(k):
        return set(out).union(*[set(letters) for _, letters in ops[k + 1:]])

    def sum_unneeded(t, letters, keep):
        drop = [i for i, ch in enumerate(letters) if ch not in keep]
        if drop:
            t = t.sum(drop)
            letters = "".join(ch for ch in letters if ch in keep)
        return t, letters

    t, letters = ops[0]
    for k in range(1, len(ops)):
        u, uletters = ops[k]
        later = needed_after(k)
        t, letters = sum_unneeded(t, letters, later | set(uletters))
        u, uletters = sum_unneeded(u, uletters, later | set(letters))
        batch = [ch for ch in letters if ch in uletters and ch in later]
        contract = [ch for ch in letters if ch in uletters and ch not in later]
        left = [ch for ch in letters if ch not in uletters]
        right = [ch for ch in uletters if ch not in letters]

        def arrange(x, xl, order):
            x = x.permute(*[xl.index(ch) for ch in order]) if order else x
            return x.expand(*[sizes[ch] for ch in order]) if order else x

        nb = [sizes[ch] for ch in batch]
        nl, nc, nr = (_prod(sizes[ch] for ch in g) for g in (left, contract, right))
        a = arrange(t, letters, batch + left + contract).reshape(_prod(nb), nl, nc)
        b = arrange(u, uletters, batch + contract + right).reshape(_prod(nb), nc, nr)
        t = a.bmm(b).reshape(*nb, *[sizes[ch] for ch in left], *[sizes[ch] for ch in right])
        letters = "".join(batch + left + right)
    t, letters = sum_unneeded(t, letters, set(out))
    if letters != out:
        t = t.permute(*[letters.index(ch) for ch in out]) if out else t
    return t


def _prod(values):
    p = 1
    for v in values:
        p *= v
    return p


for _name in ("view_as", "reshape_as", "type_as", "is_floating_point", "nelement", "where",
              "unflatten"):
    _c._extend_type(_Tensor, _name, globals()["_" + _name])
for _name in ("unbind", "flip", "roll", "tril", "triu", "diagonal", "diag", "diff", "nonzero",
              "argwhere", "count_nonzero", "kron", "tile", "repeat_interleave"):
    _c._extend_type(_Tensor, _name, globals()[_name])
_c._extend_type(_Tensor, "mT", property(_mT))
