"""Solvers of linear systems ``A x = b`` and of matrix equations."""

from lucent.tensor.linalg.solvers.core import SolveBase  # noqa: F401
from lucent.tensor.linalg.solvers.general import Solve, lu_solve, solve  # noqa: F401
from lucent.tensor.linalg.solvers.psd import CholeskySolve, cho_solve  # noqa: F401
from lucent.tensor.linalg.solvers.triangular import SolveTriangular, solve_triangular  # noqa: F401
from lucent.tensor.linalg.solvers.tridiagonal import (  # noqa: F401
    LUFactorTridiagonal,
    SolveLUFactorTridiagonal,
    tridiagonal_lu_factor,
    tridiagonal_lu_solve,
)
