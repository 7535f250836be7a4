"""``solve(a, b)``: ``scipy.linalg.solve`` as an op, for a general or symmetric ``a``.

``assume_a`` picks the algorithm as SciPy does ('gen' LU, 'sym'/'her'
reading one triangle, 'pos' Cholesky, 'tridiagonal', 'banded'); a system
SciPy cannot solve (singular ``a``, ``a`` not positive definite for 'pos')
gives NaN rather than an error, so one bad sample does not stop a
vectorised computation. The triangular and diagonal structures need no
factorisation: ``solve`` hands them to ``solve_triangular`` or divides by
the diagonal.
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
    default it is ``min(b.ndim, 2)``; it says which dimensions of ``b`` are
batch dimensions when ``a`` and ``b`` are stacks (then the result is a
``Blockwise`` of ``Solve``).
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
        from lucent.tensor.linalg.solvers.triangular import solve_triangular

        return solve_triangular(a, b, lower=kind.startswith("lower"), trans=int(transposed), b_ndim=b_ndim)
    if transposed:
        a = a.mT
        lower = not lower
    if kind == "diagonal":
        d = _structure.diagonal_vector(a)
        return b / (d if b_ndim == 1 else d.dimshuffle(*range(d.type.ndim), "x"))
    return Solve(lower=lower, assume_a=kind, b_ndim=b_ndim)(a, b)


def lu_solve(LU_and_pivots, b, trans=False, b_ndim=None, check_finite=True, overwrite_b=False):
    """Solve ``a x = b`` (``a.T x = b`` with ``trans``) from ``lu_factor(a)`` (``scipy.linalg.lu_solve``).

    A graph of a row permutation and two triangular solves, so its gradient
    and kernels are theirs. Batched factors and right-hand sides are mapped
    with ``vectorize_graph`` over the core graph.
    """
    from lucent.graph.replace import vectorize_graph
    from lucent.tensor.basic import as_tensor_variable
    from lucent.tensor.linalg.decomposition.lu import pivot_to_permutation
    from lucent.tensor.linalg.solvers.triangular import solve_triangular
    from lucent.tensor.type import tensor

    try:
        LU, piv = LU_and_pivots
    except (TypeError, ValueError):
        raise TypeError(f"lu_solve expects a pair (LU, pivots) as its first argument, got {LU_and_pivots!r}") from None
    LU, piv, b = as_tensor_variable(LU), as_tensor_variable(piv), as_tensor_variable(b)
    b_ndim = _default_b_ndim(b, b_ndim)
    core_lu = tensor(dtype=LU.type.dtype, shape=LU.type.shape[-2:])
    core_piv = tensor(dtype=piv.type.dtype, shape=piv.type.shape[-1:])
    core_b = tensor(dtype=b.type.dtype, shape=b.type.shape[b.type.ndim - b_ndim:])
    if not trans:
        perm = pivot_to_permutation(core_piv, inverse=True)
        y = solve_triangular(core_lu, core_b[perm], lower=True, unit_diagonal=True, b_ndim=b_ndim)
        x = solve_triangular(core_lu, y, lower=False, b_ndim=b_ndim)
    else:
        y = solve_triangular(core_lu, core_b, lower=False, trans=1, b_ndim=b_ndim)
        z = solve_triangular(core_lu, y, lower=True, unit_diagonal=True, trans=1, b_ndim=b_ndim)
        x = z[pivot_to_permutation(core_piv, inverse=False)]
    return vectorize_graph(x, {core_lu: LU, core_piv: piv, core_b: b})


__all__ = ["Solve", "lu_solve", "solve"]
