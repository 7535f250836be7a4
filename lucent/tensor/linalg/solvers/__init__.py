"""Solvers of linear systems ``A x = b``."""

from lucent.tensor.linalg.solvers.core import SolveBase  # noqa: F401
from lucent.tensor.linalg.solvers.general import Solve, solve  # noqa: F401
