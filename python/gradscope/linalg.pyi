# gradscope/linalg.pyi: the types of gradscope.linalg (torch.linalg's norms, solve, inv, det,
# slogdet, cholesky, eigvalsh, svdvals, svd, qr, lstsq, pinv, matrix_rank). tests/python/
# test_docs.py checks it against the module.
from collections.abc import Sequence
from typing import NamedTuple

from gradscope import Tensor, dtype

class LinAlgError(RuntimeError): ...

class _SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor

def vector_norm(x: Tensor, ord: float = 2, dim: int | Sequence[int] | None = None,
                keepdim: bool = False, *, dtype: dtype | None = None) -> Tensor: ...
def matrix_norm(A: Tensor, ord: str | float = "fro", dim: Sequence[int] = (-2, -1),
                keepdim: bool = False, *, dtype: dtype | None = None) -> Tensor: ...
def norm(A: Tensor, ord: str | float | None = None, dim: int | Sequence[int] | None = None,
         keepdim: bool = False, *, dtype: dtype | None = None) -> Tensor: ...
def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor: ...
def inv(A: Tensor) -> Tensor: ...
def det(A: Tensor) -> Tensor: ...
def slogdet(A: Tensor) -> _SlogdetResult: ...
def cholesky(A: Tensor, *, upper: bool = False) -> Tensor: ...
def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor: ...
def svdvals(A: Tensor) -> Tensor: ...

class _EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor

def eigh(A: Tensor, UPLO: str = "L") -> _EighResult: ...


class _SvdResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor

class _QrResult(NamedTuple):
    Q: Tensor
    R: Tensor

class _LstsqResult(NamedTuple):
    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor

def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None) -> _SvdResult: ...
def qr(A: Tensor, mode: str = "reduced") -> _QrResult: ...
def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *,
          driver: str | None = None) -> _LstsqResult: ...
def pinv(A: Tensor, *, atol: float | None = None, rtol: float | None = None,
         hermitian: bool = False) -> Tensor: ...
def matrix_rank(A: Tensor, *, atol: float | None = None, rtol: float | None = None,
                hermitian: bool = False) -> Tensor: ...
