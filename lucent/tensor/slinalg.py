"""Deprecated path of the SciPy-style linear algebra: use ``lucent.tensor.linalg``.

Kept so programs written for the older layout still import; each name is
looked up in its new home on first access, with a ``DeprecationWarning``.
"""

from lucent.tensor.linalg.moved import moved_names

_MOVED_NAMES = {
    "Cholesky": "lucent.tensor.linalg.decomposition.cholesky",
    "cholesky": "lucent.tensor.linalg.decomposition.cholesky",
    "SolveBase": "lucent.tensor.linalg.solvers.core",
    "Solve": "lucent.tensor.linalg.solvers.general",
    "solve": "lucent.tensor.linalg.solvers.general",
}


__getattr__, __dir__ = moved_names(__name__, _MOVED_NAMES)
