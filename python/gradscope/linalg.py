"""gradscope.linalg: linear algebra, as torch.linalg (which it answers for under
``python3 -m gradscope.as_torch``).

The work is the engine's (include/gradscope/linalg.h): vector norms, matrix norms built from
them and from svdvals, solve, inv, det and slogdet through an LU factorisation on OpenBLAS's
LAPACK, and cholesky, eigh, eigvalsh and svdvals, batched over the leading dims, each recorded
as torch 1.13 records it (LinalgSolveExBackward0, ...); svd, pinv and matrix_rank through LAPACK's
gesdd, qr (geqrf, orgqr), lstsq (gelsy) and cholesky_solve; matrix_exp, solve_triangular,
cond and the other compositions of ops are linalg_composed's. This module gives them torch's
signatures:
ord='fro', dim=None, and linalg.norm's choice between a vector and a matrix norm. A singular
matrix given to solve or inv, or one that is not positive-definite given to cholesky, raises
LinAlgError, a RuntimeError as torch's.
"""
import math

from gradscope import _gradscope, return_types
from gradscope._missing import unsupported as _unsupported

LinAlgError = _gradscope._LinAlgError

# gs_matrix_norm_ord (include/gradscope/linalg.h), by torch's ord
_MATRIX_ORD = {"fro": 0, 1: 1, -1: 2, math.inf: 3, -math.inf: 4, "nuc": 5, 2: 6, -2: 7}



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




def eigh(A, UPLO="L"):
    """(eigenvalues, eigenvectors) of each symmetric matrix of A [..., n, n], as
    torch.linalg.eigh: the eigenvalues ascending, the eigenvectors as columns (A = V diag(w)
    V^T). Both are differentiable (once); the eigenvectors' gradient needs distinct eigenvalues
    and is meaningful for a loss that does not depend on their signs."""
    if UPLO not in ("L", "U"):
        raise ValueError(f"linalg.eigh: expected UPLO 'L' or 'U', got {UPLO!r}")
    return return_types.linalg_eigh(*_gradscope._linalg_eigh(A if UPLO == "L" else A.transpose(-2, -1)))


def svdvals(A):
    """The singular values, descending, of each matrix of A [..., m, n]: [..., min(m, n)], as
    torch.linalg.svdvals."""
    return _gradscope._linalg_svdvals(A)



# gs_qr_mode (include/gradscope/linalg.h), by torch's mode
_QR_MODE = {"reduced": 0, "complete": 1, "r": 2}
_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _matrices(A, name):
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")


def svd(A, full_matrices=True, *, driver=None):
    """(U, S, Vh) with A = U @ diag(S) @ Vh for each matrix of A [..., m, n], as
    torch.linalg.svd: S [..., k] descending (k = min(m, n)); U [..., m, m] and Vh [..., n, n]
    (full_matrices=False: [..., m, k] and [..., k, n]). All three are differentiable (once):
    the vectors' gradient needs distinct singular values and a loss that does not depend on
    their signs. driver is accepted for CUDA's sake and ignored, as on torch's CPU."""
    _matrices(A, "linalg.svd")
    return return_types.linalg_svd(*_gradscope._linalg_svd(A, bool(full_matrices)))


def _torch_svd(input, some=True, compute_uv=True):
    """torch.svd (gradscope.svd): (U, S, V), V = Vh.mT of linalg.svd(input, not some);
    compute_uv=False gives zero U and V, as torch."""
    if not compute_uv:  # zero U [..., m, m] and V [..., n, n], as torch
        S = svdvals(input)
        *batch, m, n = input.shape
        return return_types.svd(_gradscope.zeros(*batch, m, m, dtype=input.dtype), S,
                               _gradscope.zeros(*batch, n, n, dtype=input.dtype))
    U, S, Vh = svd(input, full_matrices=not some)
    return return_types.svd(U, S, Vh.transpose(-2, -1))


def qr(A, mode="reduced"):
    """(Q, R) with A = Q @ R for each matrix of A [..., m, n], as torch.linalg.qr: Q with
    orthonormal columns, R upper-triangular. mode 'reduced': Q [..., m, k], R [..., k, n]
    (k = min(m, n)); 'complete': Q [..., m, m], R [..., m, n]; 'r': R only, Q empty.
    Differentiable (once) in mode 'reduced', and 'complete' when m <= n."""
    if mode not in _QR_MODE:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    _matrices(A, "linalg.qr")
    return return_types.linalg_qr(*_gradscope._linalg_qr(A, _QR_MODE[mode]))


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution X of A @ X = B for each matrix of A [..., m, n] (B [..., m, k],
    or [m] / [..., m] as a vector), as torch.linalg.lstsq on the CPU: the named tuple
    (solution, residuals, rank, singular_values) with driver 'gelsy' (the default): rank, and
    empty residuals and singular_values; 'gelsd' and 'gelss' fill singular_values and, for m > n
    and full rank, residuals (the sum of squared residuals of each column); 'gels' residuals
    only. rcond: singular values below rcond times the largest count as zero (None: eps *
    max(m, n)). Differentiable in A and B where A has full rank."""
    if driver is not None and driver not in _LSTSQ_DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of "
                           "(gels, gelsy, gelsd, gelss)")
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    X, rank = _gradscope._linalg_lstsq(A, B, math.nan if rcond is None else float(rcond))
    empty = _gradscope.empty(0, dtype=A.dtype)
    driver = driver or "gelsy"
    residuals = values = empty
    if driver in ("gelsd", "gelss"):
        values = svdvals(A.detach())
    if driver == "gels":
        rank = _gradscope.empty(0, dtype=_gradscope.int64)
    m, n = A.shape[-2], A.shape[-1]
    if driver != "gelsy" and m > n and (driver == "gels" or bool((rank == n).all())):
        vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and B.shape == A.shape[:-1])
        Xm, Bm = (X.unsqueeze(-1), B.unsqueeze(-1)) if vector else (X, B)
        residuals = ((A @ Xm - Bm) ** 2).sum(-2)
        residuals = residuals.squeeze(-1) if vector else residuals
    return return_types.linalg_lstsq(X, residuals, rank, values)


def _tolerances(atol, rtol, name):
    def one(t):
        if t is None:
            return math.nan
        if not isinstance(t, (int, float)):
            raise TypeError(f"{name}: gradscope takes atol and rtol as numbers, got "
                            f"{type(t).__name__}")
        return float(t)
    return one(atol), one(rtol)


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """The pseudo-inverse [..., n, m] of each matrix of A [..., m, n], as torch.linalg.pinv:
    singular values at most max(atol, rtol * the largest) count as zero (rtol None: eps *
    max(m, n), or 0 when atol is given and positive). hermitian=True (A symmetric) gives the
    same answer through the SVD."""
    if A.dim() < 2 or not A.is_floating_point():
        raise RuntimeError(f"linalg.pinv({A.dtype}{list(A.shape)}): expected a tensor with 2 or "
                           "more dimensions of float, double, cfloat or cdouble types")
    return _gradscope._linalg_pinv(A, *_tolerances(atol, rtol, "linalg.pinv"))


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """The number of singular values of each matrix of A [..., m, n] above pinv's cut-off
    (max(atol, rtol * the largest)), an int64 tensor [...], as torch.linalg.matrix_rank;
    hermitian=True (A symmetric) counts the same values."""
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at "
                           "least 2 dimensions.")
    return _gradscope._linalg_matrix_rank(A, *_tolerances(atol, rtol, "linalg.matrix_rank"))


def _cholesky_solve(input, input2, upper=False):
    """torch.cholesky_solve (gradscope.cholesky_solve): X with A @ X = input for A = L @ L.mT,
    L = input2 the lower Cholesky factor (upper=True: A = U.mT @ U), both of 2 or more dims
    with broadcasting batch dims."""
    return _gradscope._cholesky_solve(input, input2, bool(upper))


def matrix_power(A, n):
    """A @ A @ ... (n factors) by repeated squaring; n = 0 gives identities, n < 0 the
    inverse's power; batched over the leading dims. Differentiable through the products."""
    if A.dim() < 2 or int(A.shape[-1]) != int(A.shape[-2]):
        rows = int(A.shape[-2]) if A.dim() >= 2 else 1
        cols = int(A.shape[-1]) if A.dim() >= 1 else 1
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they "
                           f"are {rows} by {cols} matrices")
    if n == 0:
        eye = _gradscope.eye(int(A.shape[-1]), dtype=A.dtype)
        return eye.expand(*A.shape).clone()
    base = inv(A) if n < 0 else A
    n = abs(n)
    result = None
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return result


def multi_dot(tensors, *, out=None):
    """The product of the matrices in order (the first may be a 1-D row, the last a 1-D
    column), multiplied in the order that costs the fewest multiplications, as torch's."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first_vec, last_vec = tensors[0].dim() == 1, tensors[-1].dim() == 1
    mats = list(tensors)
    if first_vec:
        mats[0] = mats[0].unsqueeze(0)
    if last_vec:
        mats[-1] = mats[-1].unsqueeze(1)
    for i, m in enumerate(mats):
        if m.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].dim()}D")
    dims = [int(mats[0].shape[0])] + [int(m.shape[1]) for m in mats]
    n = len(mats)
    # the classic matrix-chain order: cost[i][j] of multiplying mats[i..j], split[i][j] where
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def product(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return product(i, k) @ product(k + 1, j)

    result = product(0, n - 1)
    if first_vec and last_vec:
        return result.reshape(())
    if first_vec:
        return result.squeeze(0)
    if last_vec:
        return result.squeeze(1)
    return result


def slogdet(A):
    """(sign, logabsdet) of each matrix of A [..., n, n], as torch.linalg.slogdet: det(A) is
    sign * exp(logabsdet); a singular matrix gives sign 0 and logabsdet -inf. The gradient
    flows through logabsdet."""
    return return_types.linalg_slogdet(*_gradscope._linalg_slogdet(A))


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


def _tensor_svd(self, some=True, compute_uv=True):
    """(U, S, V) of each matrix (torch.Tensor.svd, torch.svd)."""
    return _torch_svd(self, some, compute_uv)


def _tensor_cholesky_solve(self, input2, upper=False):
    """X with (L L^T) X = self, L = input2 (torch.Tensor.cholesky_solve)."""
    return _cholesky_solve(self, input2, upper)


def _tensor_pinverse(self, rcond=1e-15):
    """The pseudo-inverse (torch.Tensor.pinverse: linalg.pinv with rtol=rcond)."""
    return pinv(self, rtol=rcond)


def _tensor_matrix_power(self, n):
    """self to the integer power n (torch.Tensor.matrix_power, linalg.matrix_power)."""
    return matrix_power(self, n)


def _chain_matmul(*matrices):
    """torch.chain_matmul: the product of the matrices (linalg.multi_dot's order)."""
    return multi_dot(matrices)


def _torch_slogdet(input):
    """(sign, logabsdet) of each matrix, as torch.slogdet (linalg.slogdet under torch's older
    name, and its result type: torch.return_types.slogdet)."""
    return return_types.slogdet(*slogdet(input))


def _tensor_slogdet(self):
    """(sign, logabsdet) of each matrix (torch.Tensor.slogdet)."""
    return _torch_slogdet(self)


from gradscope.linalg_composed import (_tensor_matrix_exp, cond, cross, diagonal,  # noqa: E402
                                       matrix_exp, solve_triangular, tensorinv, tensorsolve,
                                       vander, vecdot)

for _name in ("det", "inverse", "logdet", "slogdet", "svd", "cholesky_solve", "pinverse",
              "matrix_power", "matrix_exp"):
    _gradscope._extend_type(_gradscope.Tensor, _name, globals()["_tensor_" + _name])
del _name

__getattr__ = _unsupported(__name__)
