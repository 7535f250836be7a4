"""Deprecated path of the NumPy-style linear algebra: use ``lucent.tensor.linalg``.

Kept so programs written for the older layout still import; each name is
looked up in its new home on first access, with a ``DeprecationWarning``.
"""

import importlib
import warnings

_MOVED_NAMES = {
    "MatrixInverse": "lucent.tensor.linalg.inverse",
    "inv": "lucent.tensor.linalg.inverse",
    "matrix_inverse": "lucent.tensor.linalg.inverse",
    "MatrixPinv": "lucent.tensor.linalg.inverse",
    "pinv": "lucent.tensor.linalg.inverse",
    "TensorInv": "lucent.tensor.linalg.inverse",
    "tensorinv": "lucent.tensor.linalg.inverse",
    "matrix_dot": "lucent.tensor.linalg.products",
    "Det": "lucent.tensor.linalg.summary",
    "det": "lucent.tensor.linalg.summary",
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
