"""gradscope.searching: torch's searching and selecting names that real scripts use, written
with NumPy over a tensor's values (the answers are indices) and gradscope's ops where a value
is differentiable: searchsorted and bucketize, mode and kthvalue, and the index-producing
combinatorics cartesian_prod, combinations, tril_indices and triu_indices. Each follows torch
1.13's CPU kernels, ties and NaNs included (tests/python/test_searching.py compares them). Put
on the C type and the package by gradscope/__init__.py."""
import itertools

import numpy as np

from gradscope import _gradscope as _c, return_types

Tensor = _c.Tensor


def _gs():
    import gradscope  # the package imports this module while it loads
    return gradscope


def _values(t):
    """A tensor's values as a NumPy array that owns its memory (never a view of the tensor)."""
    return np.array(t.detach().numpy(), copy=True)


def _binary_search(bounds, values, right):
    """torch's search, vectorised over the last axis: bounds (rows, n), values (rows, m).
    Left: the first i with bounds[i] >= v; right: the first with bounds[i] > v. As torch's
    kernel, a NaN in bounds never satisfies the test and a NaN value goes past the end."""
    rows, n = bounds.shape
    lo = np.zeros(values.shape, dtype=np.int64)
    hi = np.full(values.shape, n, dtype=np.int64)
    row = np.arange(rows)[:, None]
    with np.errstate(invalid="ignore"):
        while True:
            active = lo < hi
            if not active.any():
                return lo
            mid = (lo + hi) // 2
            probe = bounds[row, np.minimum(mid, n - 1)]
            past = ~(probe > values) if right else ~(probe >= values)
            lo = np.where(active & past, mid + 1, lo)
            hi = np.where(active & ~past, mid, hi)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """torch.searchsorted: for each value of input, the index where it would go in
    sorted_sequence's innermost dim to keep it sorted (side='left' or right=False: before
    equal values; 'right': after them). sorted_sequence is 1-D, or has input's leading dims;
    sorter gives the order that sorts an unsorted sequence. int64 indices (int32 with
    out_int32)."""
    gs = _gs()
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    scalar = not isinstance(input, Tensor)
    if scalar:
        input = gs.tensor(input)
    if not isinstance(sorted_sequence, Tensor):
        raise TypeError(f"searchsorted(): argument 'sorted_sequence' must be Tensor, "
                        f"not {type(sorted_sequence).__name__}")
    bshape, vshape = tuple(sorted_sequence.shape), tuple(input.shape)
    if sorted_sequence.dim() == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, "
                           "but got 0 dimension")
    if sorted_sequence.dim() != 1 and (len(bshape) != len(vshape) or bshape[:-1] != vshape[:-1]):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the "
                           "first N-1 dimensions of boundaries tensor and input value tensor must "
                           f"match, but we got boundaries tensor {list(bshape)} and input value "
                           f"tensor {list(vshape)}")
    bounds = _values(sorted_sequence)
    if sorter is not None:
        if tuple(sorter.shape) != bshape:
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, "
                               f"but got boundary tensor {list(bshape)}and got sorter tensor "
                               f"{list(sorter.shape)}")
        order = _values(sorter).astype(np.int64)
        if order.size and (order.min() < 0 or order.max() >= bshape[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
        bounds = np.take_along_axis(bounds, order, axis=-1)
    values = _values(input)
    n = bshape[-1]
    if sorted_sequence.dim() == 1:
        flat = _binary_search(bounds.reshape(1, n), values.reshape(1, -1), right)
    else:
        flat = _binary_search(bounds.reshape(-1, n), values.reshape(-1, vshape[-1] if vshape else 1), right)
    out = gs.tensor(flat.reshape(vshape), dtype=gs.int32 if out_int32 else gs.int64)
    return out


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """torch.bucketize: for each value of input, the index of its bucket among the 1-D sorted
    boundaries (right=False: boundaries[i-1] < v <= boundaries[i]; right=True:
    boundaries[i-1] <= v < boundaries[i])."""
    if not isinstance(boundaries, Tensor) or boundaries.dim() != 1:
        dim = boundaries.dim() if isinstance(boundaries, Tensor) else 0
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({dim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def _reduce_dim(input, dim, name):
    nd = input.dim()
    if nd == 0:
        if dim not in (0, -1):
            raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})")
        return 0
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], "
                         f"but got {dim})")
    return dim % nd


def _pick(input, dim, keepdim, index_rows, result):
    """The values at index_rows (the input's dim moved last and flattened to rows) as a
    (values, indices) pair of the result type (a torch.return_types class): values gathered from
    input, so gradients reach the chosen elements."""
    gs = _gs()
    if input.dim() == 0:
        indices = gs.tensor(int(index_rows.reshape(-1)[0]))
        return result(input.clone(), indices)
    moved = list(input.shape)
    del moved[dim]
    idx = gs.tensor(index_rows.reshape(moved + [1]) if moved else index_rows.reshape(1), dtype=gs.int64)
    idx = idx.movedim(-1, dim) if moved else idx
    values = input.gather(dim, idx)
    if not keepdim:
        values, idx = values.squeeze(dim), idx.squeeze(dim)
    return result(values, idx)


def _rows(input, dim):
    """input's values with dim moved last, as (rows, n)."""
    a = _values(input)
    if input.dim() == 0:
        return a.reshape(1, 1)
    a = np.moveaxis(a, dim, -1)
    return a.reshape(-1, a.shape[-1])


def _gt_or_nan(x, y):
    return (x != x and y == y) or x > y


def _quick_select(vals, idx, k):
    """torch's CPU quickselect (median of three, its partition and swaps) on lists, so the
    index chosen among equal values is the one torch's kthvalue reports."""
    left, right = 0, len(vals) - 1

    def swap(i, j):
        vals[i], vals[j] = vals[j], vals[i]
        idx[i], idx[j] = idx[j], idx[i]

    while True:
        if right <= left:
            return
        if right == left + 1:
            if _gt_or_nan(vals[left], vals[right]):
                swap(left, right)
            return
        pivot = left + (right - left) // 2
        swap(pivot, left + 1)
        if _gt_or_nan(vals[left + 1], vals[right]):
            swap(left + 1, right)
        if _gt_or_nan(vals[left], vals[right]):
            swap(left, right)
        if _gt_or_nan(vals[left + 1], vals[left]):
            swap(left + 1, left)
        i, j, piv = left + 1, right, vals[left]
        while True:
            i += 1
            while _gt_or_nan(piv, vals[i]):
                i += 1
            j -= 1
            while _gt_or_nan(vals[j], piv):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(left, j)
        if j <= k:
            left = i
        if j >= k:
            right = j - 1


def kthvalue(input, k, dim=-1, keepdim=False):
    """torch.kthvalue: the k-th smallest value along dim (k counts from 1; NaN is larger than
    every number) and its index, as (values, indices). Among equal values the index is the one
    torch's CPU quickselect lands on."""
    d = _reduce_dim(input, dim, "kthvalue")
    n = int(input.shape[d]) if input.dim() else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    rows = _rows(input, d)
    picked = np.empty(rows.shape[0], dtype=np.int64)
    for r, row in enumerate(rows):
        vals, idx = row.tolist(), list(range(n))
        _quick_select(vals, idx, k - 1)
        picked[r] = idx[k - 1]
    return _pick(input, d, keepdim, picked, return_types.kthvalue)


def mode(input, dim=-1, keepdim=False):
    """torch.mode: the most frequent value along dim (the smallest of equally frequent ones)
    and the index of its last occurrence, as (values, indices). torch's CPU kernel reports the
    occurrence its sort ends with: the last one for rows of up to 16 elements, and one of them
    for longer rows with repeats."""
    d = _reduce_dim(input, dim, "mode")
    if input.dim() and int(input.shape[d]) == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    rows = _rows(input, d)
    picked = np.empty(rows.shape[0], dtype=np.int64)
    for r, row in enumerate(rows):
        order = np.argsort(row, kind="stable")
        ordered = row[order]
        # Runs of equal values in sorted order; each run ends where the next value differs.
        ends = np.flatnonzero(np.append(ordered[1:] != ordered[:-1], True))
        lengths = np.diff(np.append(-1, ends))
        picked[r] = order[ends[int(np.argmax(lengths))]]
    return _pick(input, d, keepdim, picked, return_types.mode)


def cartesian_prod(*tensors):
    """torch.cartesian_prod: every combination of the 1-D tensors' elements, one per row
    (itertools.product's order); one tensor is returned as it is. Differentiable."""
    gs = _gs()
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = gs.meshgrid(*tensors, indexing="ij")
    return gs.stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """torch.combinations: the length-r combinations of a 1-D tensor's elements (with
    replacement if asked), one per row, as itertools gives them. Differentiable."""
    gs = _gs()
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return gs.empty(0, dtype=input.dtype)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    index = list(pick(range(int(input.shape[0])), r))
    if not index:
        return gs.empty(0, r, dtype=input.dtype)
    return input[gs.tensor(index, dtype=gs.int64).reshape(-1)].reshape(len(index), r)


def _triangle_indices(row, col, offset, lower, dtype):
    gs = _gs()
    if row < 0 or col < 0:
        raise RuntimeError(f"row must be non-negative, got{row}" if row < 0 else
                           f"col must be non-negative, got{col}")
    r, c = np.indices((row, col)) if row and col else (np.zeros((0, 0), int), np.zeros((0, 0), int))
    keep = (c - r <= offset) if lower else (c - r >= offset)
    return gs.tensor(np.stack([r[keep], c[keep]]).reshape(2, -1), dtype=dtype)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """torch.tril_indices: the (row, column) indices of a row x col matrix's lower triangle
    (on and below diagonal offset), as a 2 x N int64 tensor in row-major order."""
    return _triangle_indices(row, col, offset, True, dtype or _gs().int64)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """torch.triu_indices: the (row, column) indices of a row x col matrix's upper triangle
    (on and above diagonal offset), as a 2 x N int64 tensor in row-major order."""
    return _triangle_indices(row, col, offset, False, dtype or _gs().int64)


def _mode_method(self, dim=-1, keepdim=False):
    """Tensor.mode: see gradscope.mode."""
    return mode(self, dim, keepdim)


def _kthvalue_method(self, k, dim=-1, keepdim=False):
    """Tensor.kthvalue: see gradscope.kthvalue."""
    return kthvalue(self, k, dim, keepdim)


for _name, _value in [("mode", _mode_method), ("kthvalue", _kthvalue_method)]:
    _c._extend_type(Tensor, _name, _value)
del _name, _value
