"""Deprecated path of the NumPy-style linear algebra: use ``lucent.tensor.linalg``.

Kept so programs written for the older layout still import; each name is
looked up in its new home on first access, with a ``DeprecationWarning``.
"""

from lucent.tensor.linalg.moved import moved_names

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


__getattr__, __dir__ = moved_names(__name__, _MOVED_NAMES)
