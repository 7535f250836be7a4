"""Matrix factorisations."""

from lucent.tensor.linalg.decomposition.cholesky import Cholesky, cholesky  # noqa: F401
