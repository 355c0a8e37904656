"""gradscope.linalg: linear algebra, as torch.linalg (which it answers for under
``python3 -m gradscope.as_torch``).

The work is the engine's (include/gradscope/linalg.h): vector norms, matrix norms built from
them and from svdvals, solve, inv, det and slogdet through an LU factorisation on OpenBLAS's
LAPACK, and cholesky, eigh, eigvalsh and svdvals, batched over the leading dims, each recorded
as torch 1.13 records it (LinalgSolveExBackward0, ...). svd and qr are not there yet. This module gives them torch's signatures:
ord='fro', dim=None, and linalg.norm's choice between a vector and a matrix norm. A singular
matrix given to solve or inv, or one that is not positive-definite given to cholesky, raises
LinAlgError, a RuntimeError as torch's.
"""
import collections
import math

from gradscope import _gradscope
from gradscope._missing import unsupported as _unsupported

LinAlgError = _gradscope._LinAlgError

# gs_matrix_norm_ord (include/gradscope/linalg.h), by torch's ord
_MATRIX_ORD = {"fro": 0, 1: 1, -1: 2, math.inf: 3, -math.inf: 4, "nuc": 5, 2: 6, -2: 7}

_SlogdetResult = collections.namedtuple("linalg_slogdet", ["sign", "logabsdet"])
_SlogdetResult.__doc__ = "linalg.slogdet's result: (sign, logabsdet), as torch.return_types."


def _cast(x, dtype):
    return x if dtype is None else x.to(dtype)


def _dims(dim):
    return (dim,) if isinstance(dim, int) else dim


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The ord-norm of x over dim (None: every element), as torch.linalg.vector_norm: ord 2 is
    sqrt(sum x^2), inf max |x|, -inf min |x|, 0 the count of non-zeros, else
    sum(|x|^ord)^(1/ord). dtype converts x first."""
    if isinstance(ord, str):
        raise TypeError(f"linalg.vector_norm: expected ord to be a number, got {ord!r}")
    return _gradscope._linalg_vector_norm(_cast(x, dtype), float(ord), _dims(dim), keepdim)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The ord-norm of the matrices in dims dim of A, as torch.linalg.matrix_norm: 'fro'
    (sqrt of the sum of squares), 1 / -1 (largest / smallest column sum of |A|), inf / -inf
    (largest / smallest row sum), 'nuc' (sum of the singular values), 2 / -2 (largest /
    smallest singular value)."""
    if ord not in _MATRIX_ORD or isinstance(ord, bool):
        raise ValueError(f"linalg.matrix_norm: expected ord 'fro', 'nuc', 1, -1, 2, -2, inf or "
                         f"-inf, got {ord!r}")
    dim = _dims(dim)
    if len(dim) != 2:
        raise ValueError(f"linalg.matrix_norm: expected dim to be a 2-tuple, got {dim!r}")
    return _gradscope._linalg_matrix_norm(_cast(A, dtype), _MATRIX_ORD[ord], dim[0], dim[1],
                                          keepdim)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector or a matrix norm, chosen as torch.linalg.norm does: a matrix norm when dim
    names two dims, or when ord is given without dim and A is 2-D; a vector norm otherwise
    (ord and dim both None: the 2-norm of every element)."""
    dim = _dims(dim)
    if ord is None:
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        if A.dim() not in (1, 2):
            raise RuntimeError("linalg.norm: if dim is not given but ord is, the input must "
                               f"be 1-D or 2-D, got {A.dim()}-D")
        dim = tuple(range(A.dim()))
    if len(dim) == 2:
        return matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.norm: ord={ord!r} is a matrix norm, which needs 2 dims, "
                           f"got dim={dim!r}")
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)


def solve(A, B, *, left=True):
    """X with A @ X = B (left=False: X @ A = B), as torch.linalg.solve: A is [..., n, n], B
    [..., n, k] or a vector ([n], or [..., n] matching A's batch); batch dims broadcast. A
    singular A raises LinAlgError."""
    if left:
        return _gradscope._linalg_solve(A, B)
    return _gradscope._linalg_solve(A.transpose(-2, -1), B.transpose(-2, -1)).transpose(-2, -1)


def inv(A):
    """The inverse of each matrix of A [..., n, n], as torch.linalg.inv; a singular one raises
    LinAlgError."""
    return _gradscope._linalg_inv(A)


def _inverse(A):
    """torch.inverse: linalg.inv (gradscope.inverse; torch.linalg has no inverse)."""
    return inv(A)


def det(A):
    """The determinant of each matrix of A [..., n, n], as torch.linalg.det."""
    return _gradscope._linalg_det(A)


def cholesky(A, *, upper=False):
    """The lower-triangular L with L @ L.mT = A for each matrix of A [..., n, n] (upper=True:
    its transpose U, with U.mT @ U = A), as torch.linalg.cholesky; only A's lower triangle is
    read. A matrix that is not positive-definite raises LinAlgError."""
    L = _gradscope._linalg_cholesky(A)
    return L.transpose(-2, -1) if upper else L


def eigvalsh(A, UPLO="L"):
    """The eigenvalues, ascending, of each symmetric matrix of A [..., n, n], as
    torch.linalg.eigvalsh; UPLO='U' reads the upper triangle instead of the lower."""
    if UPLO not in ("L", "U"):
        raise ValueError(f"linalg.eigvalsh: expected UPLO 'L' or 'U', got {UPLO!r}")
    return _gradscope._linalg_eigvalsh(A if UPLO == "L" else A.transpose(-2, -1))


_EighResult = collections.namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
_EighResult.__doc__ = "linalg.eigh's result: (eigenvalues, eigenvectors), as torch.return_types."


def eigh(A, UPLO="L"):
    """(eigenvalues, eigenvectors) of each symmetric matrix of A [..., n, n], as
    torch.linalg.eigh: the eigenvalues ascending, the eigenvectors as columns (A = V diag(w)
    V^T). Both are differentiable (once); the eigenvectors' gradient needs distinct eigenvalues
    and is meaningful for a loss that does not depend on their signs."""
    if UPLO not in ("L", "U"):
        raise ValueError(f"linalg.eigh: expected UPLO 'L' or 'U', got {UPLO!r}")
    return _EighResult(*_gradscope._linalg_eigh(A if UPLO == "L" else A.transpose(-2, -1)))


def svdvals(A):
    """The singular values, descending, of each matrix of A [..., m, n]: [..., min(m, n)], as
    torch.linalg.svdvals."""
    return _gradscope._linalg_svdvals(A)


def slogdet(A):
    """(sign, logabsdet) of each matrix of A [..., n, n], as torch.linalg.slogdet: det(A) is
    sign * exp(logabsdet); a singular matrix gives sign 0 and logabsdet -inf. The gradient
    flows through logabsdet."""
    return _SlogdetResult(*_gradscope._linalg_slogdet(A))


def _logdet(A):
    """log det(A) for each matrix of A [..., n, n], as torch.logdet (gradscope.logdet): NaN where det(A) < 0, -inf
    where it is 0 (through slogdet, recorded as torch records it: WhereBackward0)."""
    sign, logabsdet = slogdet(A)
    nan = _gradscope.full_like(logabsdet, math.nan)
    return _gradscope.where(sign < 0, nan, logabsdet)


def _tensor_det(self):
    """The determinant of each matrix (torch.Tensor.det, linalg.det)."""
    return det(self)


def _tensor_inverse(self):
    """The inverse of each matrix (torch.Tensor.inverse, linalg.inv)."""
    return inv(self)


def _tensor_logdet(self):
    """log det of each matrix, NaN where det < 0 (torch.Tensor.logdet)."""
    return _logdet(self)


def _tensor_slogdet(self):
    """(sign, logabsdet) of each matrix (torch.Tensor.slogdet, linalg.slogdet)."""
    return slogdet(self)


for _name in ("det", "inverse", "logdet", "slogdet"):
    _gradscope._extend_type(_gradscope.Tensor, _name, globals()["_tensor_" + _name])
del _name

__getattr__ = _unsupported(__name__)
