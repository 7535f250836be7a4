"""``cho_solve``: ``A x = b`` given the Cholesky factor of ``A`` (``scipy.linalg.cho_solve``)."""

from __future__ import annotations

import numpy as np

from lucent.tensor.linalg.solvers.core import SolveBase, _default_b_ndim


class CholeskySolve(SolveBase):
    """Solve ``(C C^H) x = b`` for a lower ``C`` (``(C^H C) x = b`` for an upper one).

    Only ``C``'s triangle is read. Gradient: ``b_bar = cho_solve(C, x_bar)``;
    with ``A_bar = -b_bar x^T``, ``C_bar = (A_bar + A_bar^T) C`` (``C (A_bar +
    A_bar^T)`` for an upper factor), on the triangle read.
    """

    __props__ = ("lower", "b_ndim", "overwrite_b")

    def __init__(self, **kwargs):
        kwargs.setdefault("lower", True)
        kwargs.pop("overwrite_a", None)
        super().__init__(**kwargs)

    def _props_dict(self):
        return {p: getattr(self, p) for p in self.__props__}

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        c, b = inputs
        dtype = node.outputs[0].type.dtype
        c = np.asarray(c, dtype=dtype)
        b = np.asarray(b, dtype=dtype)
        if c.shape[0] != c.shape[1] or b.shape[0] != c.shape[0]:
            raise ValueError(f"CholeskySolve: incompatible shapes, `c` {c.shape} and `b` {b.shape}")
        with np.errstate(all="ignore"):
            try:
                x = scipy.linalg.cho_solve((c, self.lower), b, check_finite=False)
            except (np.linalg.LinAlgError, ValueError):
                x = np.full(b.shape, np.nan, dtype=dtype)
        output_storage[0][0] = np.asarray(x, dtype=dtype)

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor.linalg import _structure
        from lucent.tensor.math import dot, outer

        c, _ = inputs
        (x,), (x_bar,) = outputs, output_grads
        b_bar = type(self)(lower=self.lower, b_ndim=self.b_ndim)(c, x_bar)
        A_bar = -outer(b_bar, x) if self.b_ndim == 1 else -dot(b_bar, x.T)
        sym = A_bar + A_bar.T
        if self.lower:
            return [_structure.lower_triangle(dot(sym, c)), b_bar]
        return [_structure.upper_triangle(dot(c, sym)), b_bar]

    def inplace_on_inputs(self, allowed_inplace_inputs):
        if 1 not in allowed_inplace_inputs:
            return self
        return type(self)(lower=self.lower, b_ndim=self.b_ndim, overwrite_b=True)


def cho_solve(c_and_lower, b, *, check_finite=True, b_ndim=None):
    """Solve ``A x = b`` from ``(c, lower)``, the Cholesky factor of ``A`` and its triangle."""
    try:
        c, lower = c_and_lower
    except (TypeError, ValueError):
        raise TypeError(f"cho_solve expects a pair (c, lower) as its first argument, got {c_and_lower!r}") from None
    b_ndim = _default_b_ndim(b, b_ndim)
    return CholeskySolve(lower=lower, b_ndim=b_ndim)(c, b)


__all__ = ["CholeskySolve", "cho_solve"]
