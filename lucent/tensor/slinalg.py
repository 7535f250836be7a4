"""Deprecated path of the SciPy-style linear algebra: use ``lucent.tensor.linalg``.

Kept so programs written for the older layout still import; each name is
looked up in its new home on first access, with a ``DeprecationWarning``.
"""

import importlib
import warnings

_MOVED_NAMES = {
    "Cholesky": "lucent.tensor.linalg.decomposition.cholesky",
    "cholesky": "lucent.tensor.linalg.decomposition.cholesky",
    "SolveBase": "lucent.tensor.linalg.solvers.core",
    "Solve": "lucent.tensor.linalg.solvers.general",
    "solve": "lucent.tensor.linalg.solvers.general",
}


def __getattr__(name):
    if name in _MOVED_NAMES:
        warnings.warn(
            f"Importing {name!r} from '{__name__}' is deprecated. "
            f"Use 'from lucent.tensor.linalg import {name}' instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(_MOVED_NAMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return list(_MOVED_NAMES)
