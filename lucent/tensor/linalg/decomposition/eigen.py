"""Eigendecompositions: ``eig`` (general), ``eigh`` / ``eigvalsh`` (symmetric or Hermitian).

``eigh`` and ``eigvalsh`` read one triangle of ``a`` (``lower``), as LAPACK
does, and return eigenvalues in ascending order; with ``b`` they solve the
generalised problem ``a v = w b v`` for a positive-definite ``b``.
Eigenvectors are unique only up to sign (a unit phase when complex), so
their outputs carry a comparison that aligns each vector's phase first
(``_compare``): DebugMode then compares only what is determined.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply
from lucent.tensor.basic import as_tensor_variable
from lucent.tensor.blockwise import BatchedCoreOp
from lucent.tensor.linalg.decomposition._compare import columns_equal_up_to_phase
from lucent.tensor.linalg.dtype_utils import (
    check_core_ndim,
    check_square_value,
    check_static_square,
    linalg_output_dtype,
    linalg_real_output_dtype,
)
from lucent.tensor.type import TensorType


def _complex_dtype(dtype):
    return np.result_type(dtype, np.complex64).name


def _disconnected(g):
    from lucent.gradient.types import DisconnectedType

    return isinstance(g.type, DisconnectedType)


class Eig(BatchedCoreOp):
    """``numpy.linalg.eig`` of a square matrix: complex eigenvalues ``w`` and eigenvectors ``v`` (columns).

    The outputs are complex whatever the input (a real matrix may have
    complex eigenvalues). No gradient: the eigenvectors of a general matrix
    are not differentiable where eigenvalues meet, and the complex
    cotangent convention is left to the caller.
    """

    __props__ = ()
    gufunc_signature = "(m,m)->(m),(m,m)"

    def make_node(self, x):
        x = as_tensor_variable(x)
        check_core_ndim(x, 2, "Eig")
        check_static_square(x, "Eig")
        dtype = _complex_dtype(linalg_output_dtype(x.type.dtype))
        m = x.type.shape[0] if x.type.shape[0] is not None else x.type.shape[1]
        w, v = TensorType(dtype, (m,))(), TensorType(dtype, (m, m))()
        v.tag.values_eq_approx = columns_equal_up_to_phase
        return Apply(self, [x], [w, v])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        check_square_value(x, "Eig")
        w, v = np.linalg.eig(np.asarray(x, dtype=linalg_output_dtype(node.inputs[0].type.dtype)))
        output_storage[0][0] = np.asarray(w, dtype=node.outputs[0].type.dtype)
        output_storage[1][0] = np.asarray(v, dtype=node.outputs[1].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        n = input_shapes[0][0]
        return [(n,), (n, n)]


def eig(x):
    """Eigenvalues and right eigenvectors of a square matrix (complex), ``(w, v)``."""
    return Eig()(x)


class Eigh(BatchedCoreOp):
    """``scipy.linalg.eigh``: ascending real eigenvalues ``w`` and orthonormal eigenvectors ``v``.

    Reads the ``lower`` (or upper) triangle of ``a``. With a second input
    ``b`` (positive definite) it solves ``a v = w b v``. ``driver`` is
    accepted for SciPy's signature; the result does not depend on it.
    """

    __props__ = ("lower", "overwrite_a", "overwrite_b", "driver")

    def __init__(self, lower=True, overwrite_a=False, overwrite_b=False, driver="evr"):
        self.lower = bool(lower)
        self.overwrite_a = bool(overwrite_a)
        self.overwrite_b = bool(overwrite_b)
        self.driver = driver

    @property
    def gufunc_signature(self):
        return "(m,m)->(m),(m,m)"

    def make_node(self, a, b=None):
        a = as_tensor_variable(a)
        check_core_ndim(a, 2, "Eigh")
        check_static_square(a, "Eigh")
        inputs = [a]
        dtypes = [a.type.dtype]
        if b is not None:
            b = as_tensor_variable(b)
            check_core_ndim(b, 2, "Eigh", "the matrix b")
            inputs.append(b)
            dtypes.append(b.type.dtype)
        dtype = linalg_output_dtype(*dtypes)
        m = a.type.shape[0] if a.type.shape[0] is not None else a.type.shape[1]
        w = TensorType(linalg_real_output_dtype(dtype), (m,))()
        v = TensorType(dtype, (m, m))()
        v.tag.values_eq_approx = columns_equal_up_to_phase
        return Apply(self, inputs, [w, v])

    def __call__(self, *inputs, **kwargs):
        if len(inputs) == 2 and inputs[1] is not None:
            return _EighPair(self)(*inputs, **kwargs)
        return super().__call__(*[i for i in inputs if i is not None], **kwargs)

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        dtype = node.outputs[1].type.dtype
        a = np.asarray(inputs[0], dtype=dtype)
        check_square_value(a, "Eigh")
        b = None if len(inputs) == 1 else np.asarray(inputs[1], dtype=dtype)
        w, v = scipy.linalg.eigh(a, b, lower=self.lower, check_finite=False)
        output_storage[0][0] = np.asarray(w, dtype=node.outputs[0].type.dtype)
        output_storage[1][0] = np.asarray(v, dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        n = input_shapes[0][0]
        return [(n,), (n, n)]

    def L_op(self, inputs, outputs, output_grads):
        """For ``A = V diag(w) V^H``: ``G = V (diag(w_bar) + F * (V^H V_bar)) V^H`` with
        ``F_ij = 1 / (w_j - w_i)`` off the diagonal; the cotangent of the triangle read is
        ``tril(G + G^H) - diag(G)`` (its mirror image for ``lower=False``), from the
        Hermitian part of ``G``."""
        from lucent.tensor import math as tm
        from lucent.tensor.creation import identity_like
        from lucent.tensor.linalg import _structure

        w, v = outputs
        gw, gv = output_grads
        if len(inputs) == 2:
            return _generalized_grads(inputs, w, v, None if _disconnected(gw) else gw,
                                      None if _disconnected(gv) else gv, self.lower)
        (a,) = inputs
        vh = tm.conj(v).T
        inner = 0
        if not _disconnected(gw):
            inner = inner + _diag_matrix(gw, v)
        if not _disconnected(gv):
            diff = w.dimshuffle("x", 0) - w.dimshuffle(0, "x")
            eye = identity_like(v)
            f = (1 - eye) / (diff + eye)
            inner = inner + f * tm.dot(vh, gv)
        if isinstance(inner, int):
            from lucent.tensor.basic import zeros_like

            return [zeros_like(a, dtype=v.type.dtype)]
        g = tm.dot(v, tm.dot(inner, vh))
        g = (g + tm.conj(g).T) / 2
        tri = _structure.lower_triangle if self.lower else _structure.upper_triangle
        return [tri(2 * g) - _structure.diagonal_part(g)]


def _generalized_grads(inputs, w, v, gw, gv, lower):
    """Cotangents of ``(a, b)`` for ``a v = w b v`` with ``v^T b v = I`` (real matrices).

    Writing ``dv = v X``, ``P = v^T da v`` and ``Q = v^T db v``, the
    differentials are ``dw_i = P_ii - w_i Q_ii``, ``X_ij = (P_ij - w_j Q_ij) /
    (w_j - w_i)`` off the diagonal and ``X_ii = -Q_ii / 2`` (from the
    normalisation). With ``M = v^T v_bar`` and ``F_ij = 1 / (w_j - w_i)``
    (0 on the diagonal) this gives ``a_bar = v E v^T``, ``E = diag(w_bar) + F * M``,
    and ``b_bar = v G v^T``, ``G = -diag(w_bar * w) - (F * M) diag(w) - diag(M) / 2``;
    each is then folded onto the triangle read, as for the standard problem.
    """
    from lucent.tensor import math as tm
    from lucent.tensor.basic import zeros_like
    from lucent.tensor.creation import identity_like
    from lucent.tensor.linalg import _structure

    a, b = inputs
    if v.type.dtype.startswith("complex"):
        raise NotImplementedError("Eigh: the gradient of the generalised problem is implemented for real input only")
    if gw is None and gv is None:
        return [zeros_like(a, dtype=v.type.dtype), zeros_like(b, dtype=v.type.dtype)]
    e_mat, g_mat = 0, 0
    if gw is not None:
        e_mat = _diag_matrix(gw, v)
        g_mat = -_diag_matrix(gw * w, v)
    if gv is not None:
        eye = identity_like(v)
        diff = w.dimshuffle("x", 0) - w.dimshuffle(0, "x")
        fm = (1 - eye) / (diff + eye) * tm.dot(v.T, gv)
        e_mat = e_mat + fm
        g_mat = g_mat - fm * w.dimshuffle("x", 0) - _structure.diagonal_part(tm.dot(v.T, gv)) / 2
    tri = _structure.lower_triangle if lower else _structure.upper_triangle
    out = []
    for inner in (e_mat, g_mat):
        g = tm.dot(v, tm.dot(inner, v.T))
        g = (g + g.T) / 2
        out.append(tri(2 * g) - _structure.diagonal_part(g))
    return out


def _diag_matrix(vec, like):
    """``diag(vec)`` with the dtype of ``like``."""
    from lucent.tensor.creation import identity_like

    return identity_like(like) * vec.dimshuffle("x", 0)


class _EighPair:
    """``Eigh`` on ``(a, b)``: the same op with the second core input's signature."""

    def __init__(self, op):
        self.op = op

    def __call__(self, a, b, **kwargs):
        from lucent.tensor.blockwise import Blockwise

        a, b = as_tensor_variable(a), as_tensor_variable(b)
        if a.type.ndim > 2 or b.type.ndim > 2:
            return Blockwise(self.op, signature="(m,m),(m,m)->(m),(m,m)")(a, b, **kwargs)
        from lucent.graph.op import Op

        return Op.__call__(self.op, a, b, **kwargs)


def eigh(a, b=None, lower=True, UPLO=None, driver="evr"):
    """``(w, v)``: ascending eigenvalues and eigenvectors of a symmetric/Hermitian ``a``.

    ``UPLO`` ('L' or 'U', NumPy's name) overrides ``lower``. With ``b``,
    the generalised problem ``a v = w b v``.
    """
    if UPLO is not None:
        if UPLO not in ("L", "U"):
            raise ValueError(f"eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
        lower = UPLO == "L"
    return Eigh(lower=lower, driver=driver)(a, b)


class Eigvalsh(BatchedCoreOp):
    """``scipy.linalg.eigvalsh``: the ascending eigenvalues of a symmetric/Hermitian matrix.

    Gradient: ``V diag(w_bar) V^H`` (eigenvectors from ``Eigh``), restricted to
    the triangle read as for ``Eigh``.
    """

    __props__ = ("lower", "overwrite_a", "overwrite_b")
    gufunc_signature = "(m,m)->(m)"

    def __init__(self, lower=True, overwrite_a=False, overwrite_b=False):
        self.lower = bool(lower)
        self.overwrite_a = bool(overwrite_a)
        self.overwrite_b = bool(overwrite_b)

    def make_node(self, a, b=None):
        a = as_tensor_variable(a)
        check_core_ndim(a, 2, "Eigvalsh")
        check_static_square(a, "Eigvalsh")
        inputs, dtypes = [a], [a.type.dtype]
        if b is not None:
            b = as_tensor_variable(b)
            check_core_ndim(b, 2, "Eigvalsh", "the matrix b")
            inputs.append(b)
            dtypes.append(b.type.dtype)
        dtype = linalg_real_output_dtype(*dtypes)
        m = a.type.shape[0] if a.type.shape[0] is not None else a.type.shape[1]
        return Apply(self, inputs, [TensorType(dtype, (m,))()])

    def __call__(self, *inputs, **kwargs):
        if len(inputs) == 2 and inputs[1] is not None:
            from lucent.tensor.blockwise import Blockwise

            a, b = (as_tensor_variable(i) for i in inputs)
            if a.type.ndim > 2 or b.type.ndim > 2:
                return Blockwise(self, signature="(m,m),(m,m)->(m)")(a, b, **kwargs)
            from lucent.graph.op import Op

            return Op.__call__(self, a, b, **kwargs)
        return super().__call__(*[i for i in inputs if i is not None], **kwargs)

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        dtype = linalg_output_dtype(*(i.type.dtype for i in node.inputs))
        a = np.asarray(inputs[0], dtype=dtype)
        check_square_value(a, "Eigvalsh")
        b = None if len(inputs) == 1 else np.asarray(inputs[1], dtype=dtype)
        w = scipy.linalg.eigvalsh(a, b, lower=self.lower, check_finite=False)
        output_storage[0][0] = np.asarray(w, dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [(input_shapes[0][0],)]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor import math as tm
        from lucent.tensor.linalg import _structure

        (gw,) = output_grads
        if len(inputs) == 2:
            w, v = Eigh(lower=self.lower)(*inputs)
            return _generalized_grads(inputs, w, v, gw, None, self.lower)
        (a,) = inputs
        _, v = Eigh(lower=self.lower)(a)
        g = tm.dot(v, tm.dot(_diag_matrix(gw, v), tm.conj(v).T))
        g = (g + tm.conj(g).T) / 2
        tri = _structure.lower_triangle if self.lower else _structure.upper_triangle
        return [tri(2 * g) - _structure.diagonal_part(g)]


def eigvalsh(a, b=None, lower=True):
    """Ascending eigenvalues of a symmetric/Hermitian ``a`` (of ``a v = w b v`` with ``b``)."""
    return Eigvalsh(lower=lower)(a, b)


__all__ = ["Eig", "Eigh", "Eigvalsh", "eig", "eigh", "eigvalsh"]
