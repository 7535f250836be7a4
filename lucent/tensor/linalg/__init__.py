"""Linear algebra: inverses, determinants, norms, factorisations, solvers, matrix equations.

The module layout follows PyTensor's ``pytensor.tensor.linalg``
(``constructors``, ``decomposition``, ``inverse``, ``products``,
``solvers``, ``summary``). Every matrix op is written for its core case
(a matrix, or a matrix and a right-hand side; its ``gufunc_signature``);
called on stacks of matrices it becomes a
``lucent.tensor.blockwise.Blockwise`` of itself, mapped over the leading
dimensions (``tensorinv`` takes any rank by definition). Each op computes
in the LAPACK dtype of its inputs (see ``dtype_utils``); NumPy/SciPy is
the reference implementation and ``lucent/link/numba/dispatch/linalg*.py``
hold the Numba kernels.
"""

from lucent.tensor.linalg.constructors import BaseBlockDiagonal, BlockDiagonal, block_diag
from lucent.tensor.linalg.decomposition.cholesky import Cholesky, cholesky
from lucent.tensor.linalg.decomposition.eigen import Eig, Eigh, Eigvalsh, eig, eigh, eigvalsh
from lucent.tensor.linalg.decomposition.lu import LU, LUFactor, PivotToPermutations, lu, lu_factor, pivot_to_permutation
from lucent.tensor.linalg.decomposition.qr import QR, qr
from lucent.tensor.linalg.decomposition.schur import QZ, Schur, ordqz, qz, schur
from lucent.tensor.linalg.decomposition.svd import SVD, svd
from lucent.tensor.linalg.inverse import MatrixInverse, MatrixPinv, TensorInv, inv, matrix_inverse, pinv, tensorinv
from lucent.tensor.linalg.products import Expm, expm, kron, matrix_dot, matrix_power
from lucent.tensor.linalg.solvers.core import SolveBase
from lucent.tensor.linalg.solvers.general import Solve, lu_solve, solve
from lucent.tensor.linalg.solvers.linear_control import (
    solve_continuous_lyapunov,
    solve_discrete_are,
    solve_discrete_lyapunov,
    solve_sylvester,
)
from lucent.tensor.linalg.solvers.lstsq import Lstsq, lstsq, tensorsolve
from lucent.tensor.linalg.solvers.psd import CholeskySolve, cho_solve
from lucent.tensor.linalg.solvers.triangular import SolveTriangular, solve_triangular
from lucent.tensor.linalg.solvers.tridiagonal import (
    LUFactorTridiagonal,
    SolveLUFactorTridiagonal,
    tridiagonal_lu_factor,
    tridiagonal_lu_solve,
)
from lucent.tensor.linalg.summary import Det, SLogDet, det, norm, slogdet, trace

__all__ = [
    "block_diag",
    "cho_solve",
    "cholesky",
    "det",
    "eig",
    "eigh",
    "eigvalsh",
    "expm",
    "inv",
    "kron",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_solve",
    "matrix_dot",
    "matrix_power",
    "norm",
    "ordqz",
    "pinv",
    "pivot_to_permutation",
    "qr",
    "qz",
    "schur",
    "slogdet",
    "solve",
    "solve_continuous_lyapunov",
    "solve_discrete_are",
    "solve_discrete_lyapunov",
    "solve_sylvester",
    "solve_triangular",
    "svd",
    "tensorinv",
    "tensorsolve",
    "trace",
    "tridiagonal_lu_factor",
    "tridiagonal_lu_solve",
]
