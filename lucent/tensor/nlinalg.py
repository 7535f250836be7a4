"""Deprecated path of the NumPy-style linear algebra: use ``lucent.tensor.linalg``.

Kept so programs written for the older layout still import; each name is
looked up in its new home on first access, with a ``DeprecationWarning``.
"""

from lucent.tensor.linalg.moved import moved_names

_MOVED_NAMES = {
    "Eig": "lucent.tensor.linalg.decomposition.eigen",
    "Eigh": "lucent.tensor.linalg.decomposition.eigen",
    "eig": "lucent.tensor.linalg.decomposition.eigen",
    "eigh": "lucent.tensor.linalg.decomposition.eigen",
    "SVD": "lucent.tensor.linalg.decomposition.svd",
    "svd": "lucent.tensor.linalg.decomposition.svd",
    "MatrixInverse": "lucent.tensor.linalg.inverse",
    "MatrixPinv": "lucent.tensor.linalg.inverse",
    "TensorInv": "lucent.tensor.linalg.inverse",
    "inv": "lucent.tensor.linalg.inverse",
    "matrix_inverse": "lucent.tensor.linalg.inverse",
    "pinv": "lucent.tensor.linalg.inverse",
    "tensorinv": "lucent.tensor.linalg.inverse",
    "kron": "lucent.tensor.linalg.products",
    "matrix_dot": "lucent.tensor.linalg.products",
    "matrix_power": "lucent.tensor.linalg.products",
    "Lstsq": "lucent.tensor.linalg.solvers.lstsq",
    "lstsq": "lucent.tensor.linalg.solvers.lstsq",
    "tensorsolve": "lucent.tensor.linalg.solvers.lstsq",
    "Det": "lucent.tensor.linalg.summary",
    "SLogDet": "lucent.tensor.linalg.summary",
    "det": "lucent.tensor.linalg.summary",
    "norm": "lucent.tensor.linalg.summary",
    "slogdet": "lucent.tensor.linalg.summary",
    "trace": "lucent.tensor.linalg.summary",
}


__getattr__, __dir__ = moved_names(__name__, _MOVED_NAMES)
