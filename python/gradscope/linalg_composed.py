"""torch.linalg's functions that are compositions of other ops: matrix_exp, solve_triangular,
cond, vecdot, cross, diagonal, vander, tensorinv and tensorsolve.

Each is built from ops that autograd already differentiates (matmul, solve, triu, sums), so
their gradients are those ops' chains, checked by finite differences in the tests. gradscope.linalg
re-exports them; torch.matrix_exp and Tensor.matrix_exp are matrix_exp.
"""
import math

from gradscope import _gradscope


def _square(A, fn):
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{fn}: expected a batch of square matrices [..., n, n], got "
                           f"{tuple(A.shape)}")


# Taylor terms of exp: with the scaled matrix's 1-norm at most 1/2, the first omitted term is
# below 0.5^19 / 19! ~ 1.6e-23, far under double rounding.
_TAYLOR_DEGREE = 18
_SCALED_NORM = 0.5


def matrix_exp(A):
    """exp(A) = sum A^k / k! of each square matrix of A [..., n, n], as torch.linalg.matrix_exp:
    by scaling and squaring (A / 2^s has 1-norm <= 1/2, its Taylor series to degree 18 by
    Horner's rule, then squared s times)."""
    _square(A, "matrix_exp")
    if A.numel() == 0:
        return A.clone()
    n = A.shape[-1]
    with _gradscope.no_grad():
        norm = float(A.abs().sum(-2).amax(-1).max())  # the largest 1-norm of the batch
    s = max(0, math.ceil(math.log2(norm / _SCALED_NORM))) if norm > _SCALED_NORM else 0
    X = A / (2.0 ** s) if s else A
    eye = _gradscope.eye(n, dtype=A.dtype).expand(tuple(A.shape))
    result = eye + X / _TAYLOR_DEGREE
    for k in range(_TAYLOR_DEGREE - 1, 0, -1):
        result = eye + (X @ result) / k
    for _ in range(s):
        result = result @ result
    return result


def _tensor_matrix_exp(self):
    """exp of each square matrix of self (torch.Tensor.matrix_exp, linalg.matrix_exp)."""
    return matrix_exp(self)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with A @ X = B (left=False: X @ A = B) for triangular A [..., n, n], as
    torch.linalg.solve_triangular: only A's upper (upper=True) or lower triangle is read, and
    with unitriangular=True its diagonal is taken as ones (so gradients reach only the
    entries read)."""
    _square(A, "solve_triangular")
    T = A.triu() if upper else A.tril()
    if unitriangular:
        T = T.triu(1) if upper else T.tril(-1)
        T = T + _gradscope.eye(A.shape[-1], dtype=A.dtype)
    from gradscope.linalg import solve
    return solve(T, B, left=left)


def cond(A, p=None):
    """The condition number of each matrix of A, as torch.linalg.cond: p None or 2 (the
    largest over the smallest singular value), -2 (its inverse), or a matrix norm's ord
    ('fro', 'nuc', 1, -1, inf, -inf) of A times that of its inverse."""
    from gradscope.linalg import inv, matrix_norm, svdvals
    if p is None or p in (2, -2):
        s = svdvals(A)
        big, small = s[..., 0], s[..., -1]
        return small / big if p == -2 else big / small
    _square(A, "cond")
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def vecdot(x, y, *, dim=-1):
    """The dot product of x and y (broadcast) along dim, as torch.linalg.vecdot."""
    return (x * y).sum(dim)


def cross(input, other, *, dim=-1):
    """The cross product of 3-vectors along dim (default the last, unlike torch.cross) of
    input and other broadcast together, as torch.linalg.cross."""
    from gradscope.rearrange import broadcast_tensors
    input, other = broadcast_tensors(input, other)
    return _gradscope.cross(input, other, dim=dim)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of A's matrices (dims -2, -1 by default), as torch.linalg.diagonal."""
    return A.diagonal(offset, dim1, dim2)


def vander(x, *, N=None):
    """The Vandermonde matrix of x [..., n]: column j holds x ** j, j < N (default n), as
    torch.linalg.vander (increasing powers, unlike numpy's)."""
    n = x.shape[-1] if N is None else N
    if n < 1:
        raise ValueError(f"linalg.vander: N must be at least 1, got {n}")
    powers = [_gradscope.ones_like(x)]
    for _ in range(1, n):
        powers.append(powers[-1] * x)
    return _gradscope.stack(powers, -1)


def _split_shape(shape, at, fn):
    left, right = math.prod(shape[:at]), math.prod(shape[at:])
    if left != right:
        raise RuntimeError(f"linalg.{fn}: expected the product of the first {at} dims of "
                           f"{tuple(shape)} ({left}) to equal the product of the rest ({right})")
    return left


def tensorinv(A, ind=2):
    """The tensor B with tensordot(B, A, ind) the identity, as torch.linalg.tensorinv: A's
    first ind dims against the rest, as one square matrix."""
    if ind <= 0:
        raise ValueError(f"linalg.tensorinv: expected ind > 0, got {ind}")
    shape = tuple(A.shape)
    n = _split_shape(shape, ind, "tensorinv")
    from gradscope.linalg import inv
    return inv(A.reshape(n, n)).reshape(shape[ind:] + shape[:ind])


def tensorsolve(A, B, dims=None):
    """X with tensordot(A, X, X.dim()) = B, as torch.linalg.tensorsolve; dims moves those dims
    of A to the end first."""
    if dims is not None:
        dims = [d % A.dim() for d in dims]
        A = A.permute([d for d in range(A.dim()) if d not in dims] + dims)
    shape = tuple(A.shape)
    n = _split_shape(shape, B.dim(), "tensorsolve")
    from gradscope.linalg import solve
    return solve(A.reshape(n, n), B.reshape(n)).reshape(shape[B.dim():])
