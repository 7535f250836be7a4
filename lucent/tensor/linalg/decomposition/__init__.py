"""Matrix factorisations."""

from lucent.tensor.linalg.decomposition.cholesky import Cholesky, cholesky  # noqa: F401
from lucent.tensor.linalg.decomposition.eigen import Eig, Eigh, Eigvalsh, eig, eigh, eigvalsh  # noqa: F401
from lucent.tensor.linalg.decomposition.lu import LU, LUFactor, lu, lu_factor, pivot_to_permutation  # noqa: F401
from lucent.tensor.linalg.decomposition.qr import QR, qr  # noqa: F401
from lucent.tensor.linalg.decomposition.schur import QZ, Schur, ordqz, qz, schur  # noqa: F401
from lucent.tensor.linalg.decomposition.svd import SVD, svd  # noqa: F401
