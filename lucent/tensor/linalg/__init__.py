"""Linear algebra on matrices: inverses, determinant, solving, Cholesky.

The module layout follows PyTensor's ``pytensor.tensor.linalg``
(``inverse``, ``summary``, ``solvers``, ``decomposition``, ``products``).
Every matrix op here works on its core case only (a matrix, or a matrix
and a right-hand side): lucent has no ``Blockwise`` yet, and an input with
more dimensions is refused with an error naming its type (``tensorinv``
takes any rank by definition). Each op computes in
the LAPACK dtype of its inputs (see ``dtype_utils``); NumPy/SciPy is the
reference implementation and ``lucent/link/numba/dispatch/linalg.py`` holds
the Numba kernels.
"""

from lucent.tensor.linalg.decomposition.cholesky import Cholesky, cholesky
from lucent.tensor.linalg.inverse import MatrixInverse, MatrixPinv, TensorInv, inv, matrix_inverse, pinv, tensorinv
from lucent.tensor.linalg.products import matrix_dot
from lucent.tensor.linalg.solvers.core import SolveBase
from lucent.tensor.linalg.solvers.general import Solve, solve
from lucent.tensor.linalg.summary import Det, det

__all__ = ["cholesky", "det", "inv", "matrix_dot", "pinv", "solve", "tensorinv"]
