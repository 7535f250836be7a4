"""Cholesky factorisation: ``L`` lower triangular with ``L @ L.T == x``.

Only the triangle named by ``lower`` is read (as LAPACK's ``potrf``), so
the other may hold anything. A matrix that is not positive definite gives
a matrix of NaN instead of an error, the same on both paths: a sampler or
an optimiser can then reject the point rather than stop.
"""

from __future__ import annotations

import warnings

import numpy as np

from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.tensor.basic import as_tensor_variable
from lucent.tensor.blockwise import BatchedCoreOp
from lucent.tensor.linalg.dtype_utils import check_static_square, linalg_output_dtype
from lucent.tensor.type import TensorType


class Cholesky(BatchedCoreOp):
    """Lower (``lower=True``) or upper Cholesky factor of a symmetric positive-definite matrix."""

    __props__ = ("lower", "overwrite_a")

    def __init__(self, *, lower=True, overwrite_a=False):
        self.lower = bool(lower)
        self.overwrite_a = bool(overwrite_a)
        self.gufunc_signature = "(m,m)->(m,m)"
        if self.overwrite_a:
            self.destroy_map = {0: [0]}

    def make_node(self, x):
        x = as_tensor_variable(x)
        if x.type.ndim != 2:
            raise TypeError(
                f"Cholesky only allowed on matrix (2-D) inputs, got {x.type.ndim}-D input of type "
                f"{x.type}"
            )
        check_static_square(x, "Cholesky")
        dtype = linalg_output_dtype(x.type.dtype)
        return Apply(self, [x], [TensorType(dtype, x.type.shape)()])

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        (x,) = inputs
        dtype = node.outputs[0].type.dtype
        x = np.asarray(x, dtype=dtype)
        if x.shape[0] != x.shape[1]:
            raise ValueError(f"Input array is expected to be square but has the shape: {x.shape}.")
        if x.size == 0:
            output_storage[0][0] = np.empty(x.shape, dtype=dtype)
            return
        try:
            c = scipy.linalg.cholesky(x, lower=self.lower, check_finite=False)
        except np.linalg.LinAlgError:
            c = np.full(x.shape, np.nan, dtype=dtype)
        output_storage[0][0] = np.asarray(c, dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])]

    def L_op(self, inputs, outputs, output_grads):
        """Murray (2016), "Differentiation of the Cholesky decomposition", in matrix form.

        With ``L`` lower and ``P = Phi(L^T G)`` (lower triangle, diagonal
        halved; only that triangle is computed, ``TriangleOfProduct``),
        ``S = L^-T P L^-1`` (``L^-T P^T`` is upper triangular:
        ``SolveTriangularOfTriangle``) and the cotangent of ``x`` is the lower
        (upper for ``lower=False``) triangle of ``S + S^T`` minus the
        diagonal of ``S``. An upper factor is handled through ``U = L^T``.
        """
        from lucent.tensor.linalg import _structure
        from lucent.tensor.linalg.solvers.general import Solve
        from lucent.tensor.math import dot

        from lucent.tensor.linalg.solvers.triangle_rhs import solve_triangular_of_triangle
        from lucent.tensor.linalg.triangle_product import lower_triangle_of_product

        (chol,), (g,) = outputs, output_grads
        if not self.lower:
            chol, g = chol.T, g.T
        solve_upper = Solve(assume_a="gen", b_ndim=2)
        if chol.type.dtype in ("float32", "float64"):
            # Only the lower triangle of the product, with chol.T upper triangular;
            # then L^-T P^T is upper triangular, a third of a full solve.
            phi = lower_triangle_of_product(chol.T, g, a_upper=True)
            phi = phi - _structure.diagonal_part(phi) / 2.0
            inner = solve_triangular_of_triangle(chol.T, phi.T, lower=False)
        else:
            phi = _structure.lower_triangle(dot(chol.T, g))
            phi = phi - _structure.diagonal_part(phi) / 2.0
            inner = solve_upper(chol.T, phi.T)
        s = solve_upper(chol.T, inner.T)
        tri = _structure.lower_triangle if self.lower else _structure.upper_triangle
        return [tri(s + s.T) - _structure.diagonal_part(s)]

    def inplace_on_inputs(self, allowed_inplace_inputs):
        if not allowed_inplace_inputs:
            return self
        return type(self)(lower=self.lower, overwrite_a=True)


def cholesky(x, lower=True, *, check_finite=True, overwrite_a=False, on_error="nan"):
    """Triangular square root ``L`` of a positive-definite ``x``: ``L @ L.T == x``.

    ``lower=False`` returns the upper factor ``U`` (``U.T @ U == x``).
    ``check_finite`` and ``overwrite_a`` are accepted for SciPy's signature
    and ignored. ``on_error='nan'`` (default) gives NaN for a matrix that is
    not positive definite; ``'raise'`` (deprecated, with a FutureWarning)
    raises ``numpy.linalg.LinAlgError`` when the result holds NaN.
    """
    if on_error not in ("nan", "raise"):
        raise ValueError(f"cholesky: on_error must be 'nan' or 'raise', got {on_error!r}")
    res = Cholesky(lower=lower)(x)
    if on_error == "raise":
        warnings.warn(
            'Cholesky on_error == "raise" is deprecated: the factorisation returns NaN when it fails. '
            "Setting this argument will fail in the future",
            FutureWarning,
            stacklevel=2,
        )
        res = _raise_if_nan(res)
    return res


def _raise_if_nan(res):
    """``res`` guarded by a check that raises LinAlgError when it holds NaN."""
    try:
        from lucent.raise_op import CheckAndRaise
    except ImportError:
        raise NotImplementedError(
            "cholesky(on_error='raise') needs lucent.raise_op.CheckAndRaise, which this build "
            "lacks; use the default on_error='nan' and test the result with isnan"
        ) from None
    from lucent.tensor.math import any as any_, invert, neq

    has_nan = any_(neq(res, res))
    return CheckAndRaise(np.linalg.LinAlgError, "Matrix is not positive definite")(res, invert(has_nan))


__all__ = ["Cholesky", "cholesky"]
