"""``solve_triangular``: ``a x = b`` for a triangular ``a``, by substitution (no factorisation).

Only the triangle named by ``lower`` is read; ``unit_diagonal`` assumes
ones on the diagonal without reading it; ``trans`` solves with ``a.T``
(1, 'T') or ``a.conj().T`` (2, 'C') instead (0, 'N').
"""

from __future__ import annotations

import numpy as np

from lucent.tensor.linalg.solvers.core import SolveBase, _default_b_ndim

_TRANS = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2}


class SolveTriangular(SolveBase):
    """``scipy.linalg.solve_triangular`` as an op (singular ``a`` gives inf/NaN, never an error)."""

    __props__ = ("unit_diagonal", "lower", "b_ndim", "overwrite_b", "trans")

    def __init__(self, *, unit_diagonal=False, trans=0, **kwargs):
        kwargs.pop("overwrite_a", None)
        if trans not in _TRANS:
            raise ValueError(f"SolveTriangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
        super().__init__(**kwargs)
        self.unit_diagonal = bool(unit_diagonal)
        self.trans = _TRANS[trans]

    def _props_dict(self):
        return {p: getattr(self, p) for p in self.__props__}

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        a, b = inputs
        dtype = node.outputs[0].type.dtype
        a = np.asarray(a, dtype=dtype)
        b = np.asarray(b, dtype=dtype)
        if a.shape[0] != a.shape[1]:
            raise ValueError(f"SolveTriangular: `a` must be a square matrix, got shape {a.shape}")
        if b.shape[0] != a.shape[0]:
            raise ValueError(f"SolveTriangular: incompatible dimensions, `a` has shape {a.shape} and `b` {b.shape}")
        with np.errstate(all="ignore"):
            try:
                x = scipy.linalg.solve_triangular(
                    a, b, trans=self.trans, lower=self.lower, unit_diagonal=self.unit_diagonal, check_finite=False
                )
            except np.linalg.LinAlgError:
                x = np.full(b.shape, np.nan, dtype=dtype)
        output_storage[0][0] = np.asarray(x, dtype=dtype)

    def L_op(self, inputs, outputs, output_grads):
        """``b_bar`` solves with the transposed system; ``A_bar`` is ``-b_bar x^T`` (``-x b_bar^T``
        for a transposed solve) restricted to the triangle read (without the diagonal when it is unit)."""
        from lucent.tensor.linalg import _structure
        from lucent.tensor.math import conj, dot, outer

        A, _ = inputs
        (x,), (x_bar,) = outputs, output_grads
        props = self._props_dict()
        props["trans"] = {0: 1, 1: 0, 2: 0}[self.trans]
        props["overwrite_b"] = False
        b_bar = type(self)(**props)(A, x_bar if self.trans != 2 else conj(x_bar))
        if self.trans == 2:
            b_bar = conj(b_bar)
        if self.b_ndim == 1:
            A_bar = -outer(b_bar, x) if self.trans == 0 else -outer(x, b_bar)
        else:
            A_bar = -dot(b_bar, x.T) if self.trans == 0 else -dot(x, b_bar.T)
        if self.trans == 2:
            A_bar = conj(A_bar)
        tri = _structure.lower_triangle if self.lower else _structure.upper_triangle
        A_bar = tri(A_bar)
        if self.unit_diagonal:
            A_bar = A_bar - _structure.diagonal_part(A_bar)
        return [A_bar, b_bar]

    def inplace_on_inputs(self, allowed_inplace_inputs):
        if 1 not in allowed_inplace_inputs:
            return self
        props = self._props_dict()
        props["overwrite_b"] = True
        return type(self)(**props)


def solve_triangular(a, b, *, trans=0, lower=False, unit_diagonal=False, check_finite=True, b_ndim=None):
    """Solve ``a x = b`` for a triangular ``a`` (``scipy.linalg.solve_triangular``).

    ``check_finite`` is accepted for SciPy's signature and ignored.
    ``b_ndim`` (1 or 2) says whether ``b``'s core is a vector or a matrix
    when ``a`` and ``b`` are batched.
    """
    b_ndim = _default_b_ndim(b, b_ndim)
    return SolveTriangular(trans=trans, lower=lower, unit_diagonal=unit_diagonal, b_ndim=b_ndim)(a, b)


__all__ = ["SolveTriangular", "solve_triangular"]
