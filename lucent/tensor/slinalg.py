"""Deprecated path of the SciPy-style linear algebra: use ``lucent.tensor.linalg``.

Kept so programs written for the older layout still import; each name is
looked up in its new home on first access, with a ``DeprecationWarning``.
"""

from lucent.tensor.linalg.moved import moved_names

_MOVED_NAMES = {
    "BaseBlockDiagonal": "lucent.tensor.linalg.constructors",
    "BlockDiagonal": "lucent.tensor.linalg.constructors",
    "block_diag": "lucent.tensor.linalg.constructors",
    "Cholesky": "lucent.tensor.linalg.decomposition.cholesky",
    "cholesky": "lucent.tensor.linalg.decomposition.cholesky",
    "Eigvalsh": "lucent.tensor.linalg.decomposition.eigen",
    "eigvalsh": "lucent.tensor.linalg.decomposition.eigen",
    "LU": "lucent.tensor.linalg.decomposition.lu",
    "LUFactor": "lucent.tensor.linalg.decomposition.lu",
    "PivotToPermutations": "lucent.tensor.linalg.decomposition.lu",
    "lu": "lucent.tensor.linalg.decomposition.lu",
    "lu_factor": "lucent.tensor.linalg.decomposition.lu",
    "pivot_to_permutation": "lucent.tensor.linalg.decomposition.lu",
    "QR": "lucent.tensor.linalg.decomposition.qr",
    "qr": "lucent.tensor.linalg.decomposition.qr",
    "QZ": "lucent.tensor.linalg.decomposition.schur",
    "Schur": "lucent.tensor.linalg.decomposition.schur",
    "ordqz": "lucent.tensor.linalg.decomposition.schur",
    "qz": "lucent.tensor.linalg.decomposition.schur",
    "schur": "lucent.tensor.linalg.decomposition.schur",
    "Expm": "lucent.tensor.linalg.products",
    "expm": "lucent.tensor.linalg.products",
    "SolveBase": "lucent.tensor.linalg.solvers.core",
    "Solve": "lucent.tensor.linalg.solvers.general",
    "lu_solve": "lucent.tensor.linalg.solvers.general",
    "solve": "lucent.tensor.linalg.solvers.general",
    "CholeskySolve": "lucent.tensor.linalg.solvers.psd",
    "cho_solve": "lucent.tensor.linalg.solvers.psd",
    "SolveTriangular": "lucent.tensor.linalg.solvers.triangular",
    "solve_triangular": "lucent.tensor.linalg.solvers.triangular",
    "solve_continuous_lyapunov": "lucent.tensor.linalg.solvers.linear_control",
    "solve_discrete_are": "lucent.tensor.linalg.solvers.linear_control",
    "solve_discrete_lyapunov": "lucent.tensor.linalg.solvers.linear_control",
    "solve_sylvester": "lucent.tensor.linalg.solvers.linear_control",
}


__getattr__, __dir__ = moved_names(__name__, _MOVED_NAMES)
