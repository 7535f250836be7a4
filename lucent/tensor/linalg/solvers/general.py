"""``solve(a, b)``: ``scipy.linalg.solve`` as an op, for a general or symmetric ``a``.

``assume_a`` picks the algorithm as SciPy does ('gen' LU, 'sym'/'her'
reading one triangle, 'pos' Cholesky, 'tridiagonal', 'banded'); a system
SciPy cannot solve (singular ``a``, ``a`` not positive definite for 'pos')
gives NaN rather than an error, so one bad sample does not stop a
vectorised computation. The triangular and diagonal structures need no
factorisation and are built from the matrix directly by ``solve``.
"""

from __future__ import annotations

import numpy as np

from lucent.tensor.linalg.solvers.core import SolveBase, _default_b_ndim

_VALID_ASSUME_A = ("gen", "sym", "her", "pos", "tridiagonal", "banded")
_LONG_TO_SHORT = {"general": "gen", "symmetric": "sym", "hermitian": "her", "positive definite": "pos"}


class Solve(SolveBase):
    """Solve ``a @ x = b`` for a square ``a`` of the structure ``assume_a``."""

    __props__ = ("assume_a", "lower", "b_ndim", "overwrite_a", "overwrite_b")

    def __init__(self, *, assume_a="gen", **kwargs):
        if not isinstance(assume_a, str):
            raise TypeError(f"Solve: assume_a must be a string, got {assume_a!r}")
        short = _LONG_TO_SHORT.get(assume_a.lower(), assume_a.lower())
        if short not in _VALID_ASSUME_A:
            raise ValueError(
                f"Invalid assume_a: {assume_a}. It must be one of {list(_VALID_ASSUME_A)} "
                f"or {list(_LONG_TO_SHORT)}"
            )
        super().__init__(**kwargs)
        self.assume_a = short

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        a, b = inputs
        dtype = node.outputs[0].type.dtype
        a = np.asarray(a, dtype=dtype)
        b = np.asarray(b, dtype=dtype)
        if a.ndim != 2 or a.shape[0] != a.shape[1]:
            raise ValueError(f"Solve: `a` must be a square matrix, got shape {a.shape}")
        if b.shape[0] != a.shape[0]:
            raise ValueError(f"Solve: incompatible dimensions, `a` has shape {a.shape} and `b` {b.shape}")
        try:
            x = scipy.linalg.solve(
                a, b, lower=self.lower, check_finite=False, assume_a=self.assume_a,
                overwrite_a=self.overwrite_a, overwrite_b=self.overwrite_b,
            )
        except np.linalg.LinAlgError:
            x = np.full(b.shape, np.nan, dtype=dtype)
        output_storage[0][0] = np.asarray(x, dtype=dtype)

    def inplace_on_inputs(self, allowed_inplace_inputs):
        if not allowed_inplace_inputs:
            return self
        props = self._props_dict()
        if 1 in allowed_inplace_inputs:
            props["overwrite_b"] = True
        elif self.assume_a != "tridiagonal":
            props["overwrite_a"] = True
        else:
            return self
        return type(self)(**props)


def solve(
    a,
    b,
    *,
    lower=False,
    overwrite_a=False,
    overwrite_b=False,
    check_finite=True,
    assume_a="gen",
    transposed=False,
    b_ndim=None,
):
    """Solve ``a @ x = b`` for ``x`` (``a.T @ x = b`` with ``transposed=True``).

    ``assume_a``: 'gen'/'general', 'sym'/'symmetric', 'her'/'hermitian',
    'pos'/'positive definite' (with ``lower`` saying which triangle is
    read), 'tridiagonal', 'banded', 'lower triangular', 'upper triangular'
    or 'diagonal'. ``overwrite_a``, ``overwrite_b`` and ``check_finite``
    are accepted for SciPy's signature and ignored: lucent decides what
    is computed in place, and a failed solve gives NaN. ``b_ndim`` says
    whether ``b`` is one right-hand side (1) or several columns (2); by
    default it is ``b.ndim``. ``a`` must be a matrix (no batching).
    """
    from lucent.tensor.basic import as_tensor_variable
    from lucent.tensor.linalg import _structure

    if not isinstance(assume_a, str):
        raise TypeError(f"solve: assume_a must be a string, got {assume_a!r}")
    kind = assume_a.lower()
    a = as_tensor_variable(a)
    b = as_tensor_variable(b)
    b_ndim = _default_b_ndim(b, b_ndim)
    if kind in ("lower triangular", "upper triangular"):
        tri = _structure.lower_triangle if kind.startswith("lower") else _structure.upper_triangle
        a = tri(a)
        return Solve(assume_a="gen", b_ndim=b_ndim)(a.T if transposed else a, b)
    if transposed:
        a = a.T
        lower = not lower
    if kind == "diagonal":
        d = _structure.diagonal_vector(a)
        return b / (d if b_ndim == 1 else d.dimshuffle(0, "x"))
    return Solve(lower=lower, assume_a=kind, b_ndim=b_ndim)(a, b)


__all__ = ["Solve", "solve"]
