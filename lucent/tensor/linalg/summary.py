"""Numbers that summarise a matrix: ``det``, ``slogdet``, ``trace``, ``norm``.

``det`` and ``SLogDet`` are ops (one LU factorisation each); ``slogdet``
returns the plain graph ``sign(det(x)), log(abs(det(x)))`` and the
stabilising rewrite in ``lucent.tensor.rewriting.linalg`` turns it into
``SLogDet`` (which does not overflow for large matrices). ``trace`` and
``norm`` are graphs of existing ops, so their gradients and kernels come
from those ops.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.tensor.basic import as_tensor_variable
from lucent.tensor.blockwise import BatchedCoreOp
from lucent.tensor.linalg.dtype_utils import (
    check_core_ndim,
    check_square_value,
    check_static_square,
    linalg_output_dtype,
    linalg_real_output_dtype,
)
from lucent.tensor.type import TensorType


class Det(BatchedCoreOp):
    """``numpy.linalg.det`` of a square matrix, a 0-d tensor.

    Computed from an LU factorisation, so a singular matrix gives 0 (not an
    error) and a NaN anywhere gives NaN. Gradient (Jacobi's formula):
    ``d det(X) = det(X) tr(inv(X) dX)``, i.e. ``G det(X) inv(X)^T``.
    """

    __props__ = ()
    gufunc_signature = "(m,m)->()"

    def make_node(self, x):
        x = as_tensor_variable(x)
        check_core_ndim(x, 2, "Det")
        rows, cols = x.type.shape
        if rows is not None and cols is not None and rows != cols:
            raise ValueError(
                f"Determinant not defined for non-square matrix inputs. Shape received is {x.type.shape}"
            )
        out_dtype = linalg_output_dtype(x.type.dtype)
        return Apply(self, [x], [TensorType(out_dtype, ())()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        dtype = node.outputs[0].type.dtype
        if x.shape[0] != x.shape[1]:
            raise ValueError(f"Determinant not defined for non-square matrix of shape {x.shape}")
        output_storage[0][0] = np.asarray(np.linalg.det(np.asarray(x, dtype=dtype)), dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor.linalg.inverse import matrix_inverse

        (x,), (d,), (gz,) = inputs, outputs, output_grads
        return [gz * d * matrix_inverse(x).T]

    def __str__(self):
        return "Det"


#: The determinant of a square matrix (batched over leading dimensions).
det = Det()


class SLogDet(BatchedCoreOp):
    """``numpy.linalg.slogdet``: the sign and ``log|det|`` of a square matrix, two 0-d tensors.

    A singular matrix gives sign 0 and ``-inf``. Gradient: ``log|det X|``
    has cotangent ``G inv(X)^T``; the sign is piecewise constant.
    """

    __props__ = ()
    gufunc_signature = "(m,m)->(),()"

    def make_node(self, x):
        x = as_tensor_variable(x)
        check_core_ndim(x, 2, "SLogDet")
        check_static_square(x, "SLogDet")
        dtype = linalg_output_dtype(x.type.dtype)
        return Apply(self, [x], [TensorType(dtype, ())(), TensorType(linalg_real_output_dtype(dtype), ())()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        check_square_value(x, "SLogDet")
        sign, logdet = np.linalg.slogdet(np.asarray(x, dtype=node.outputs[0].type.dtype))
        output_storage[0][0] = np.asarray(sign, dtype=node.outputs[0].type.dtype)
        output_storage[1][0] = np.asarray(logdet, dtype=node.outputs[1].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [(), ()]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.gradient.types import DisconnectedType
        from lucent.tensor.linalg.inverse import matrix_inverse

        (x,) = inputs
        _, g_logdet = output_grads
        if isinstance(g_logdet.type, DisconnectedType):
            from lucent.tensor.basic import zeros_like

            return [zeros_like(x, dtype=outputs[0].type.dtype)]
        return [g_logdet * matrix_inverse(x).T]


def slogdet(x):
    """``(sign, log|det x|)`` of square matrices (batched over leading dimensions).

    Built as ``sign(det(x)), log(abs(det(x)))``; compiled functions compute
    it with ``SLogDet``, which does not overflow where ``det`` would.
    """
    from lucent.tensor.math import abs as abs_, log, sign

    d = det(x)
    return sign(d), log(abs_(d))


def trace(X):
    """Sum of the diagonal of the last two axes of ``X`` (batched over the others).

    Deprecated at this path (a ``FutureWarning``, as in PyTensor): the
    general ``lucent.tensor.trace`` is the one to use.
    """
    import warnings

    from lucent.tensor.diagonal import diagonal

    warnings.warn(
        "lucent.tensor.linalg.trace is deprecated. Use lucent.tensor.trace instead.",
        FutureWarning,
        stacklevel=2,
    )
    X = as_tensor_variable(X)
    if X.type.ndim < 2:
        raise ValueError(f"trace expects a matrix (or stack of matrices), got a {X.type.ndim}-d input {X.type}")
    return diagonal(X, axis1=-2, axis2=-1).sum(-1)


_VECTOR_ORDS = (None, "inf", "-inf")
_MATRIX_ORDS = ("fro", "f", "nuc", 1, -1, 2, -2, np.inf, -np.inf)


def norm(x, ord=None, axis=None, keepdims=False):
    """``numpy.linalg.norm``: a vector norm over one axis, a matrix norm over two.

    With ``axis=None`` the norm is taken over the *core* dimensions: the
    whole vector of a 1-d ``x``, the last two dimensions of an ``x`` with
    two or more (leading dimensions are a batch, one norm per matrix, as
    PyTensor does; NumPy would refuse more than two dimensions).
    Vector ``ord``: ``None``/2, ``inf``, ``-inf``, 0 (the count of non-zero
    entries), any other number ``p`` (``sum(|x|**p)**(1/p)``). Matrix
    ``ord``: ``None``/'fro', 'nuc' (sum of singular values), ``inf``/``-inf``
    (largest/smallest row sum of ``|x|``), 1/-1 (column sums), 2/-2
    (largest/smallest singular value). An explicit ``axis`` counts from the
    first dimension, as in NumPy.
    """
    from lucent.tensor import math as tm

    x = as_tensor_variable(x)
    if isinstance(ord, str) and ord in ("inf", "-inf"):
        ord = float(ord)
    nd = x.type.ndim
    core_ndim = min(2, nd)
    if core_ndim < 1:
        raise ValueError(
            f"Cannot compute norm when core_dims < 1 or core_dims > 3, found: core_dims = {core_ndim}"
        )
    if axis is None:
        axis = tuple(range(nd - core_ndim, nd))
        if ord is None or (ord in ("fro", "f") and core_ndim == 2) or (ord == 2 and core_ndim == 1):
            return _keep(tm.sqrt(tm.sum(_abs_sq(x), axis=axis)), axis, nd, keepdims)
    elif isinstance(axis, (int, np.integer)):
        axis = (int(axis),)
    elif isinstance(axis, (tuple, list)) and all(isinstance(a, (int, np.integer)) for a in axis):
        axis = tuple(int(a) for a in axis)
    else:
        raise TypeError(f"'axis' must be None, an integer, or a tuple of integers, got {axis!r}")
    axis = tuple(a + nd if a < 0 else a for a in axis)
    if any(a < 0 or a >= nd for a in axis) or len(set(axis)) != len(axis):
        raise ValueError(f"norm: invalid axis {axis} for an input with {nd} dimensions")
    if len(axis) == 1:
        res = _vector_norm(x, ord, axis[0])
    elif len(axis) == 2:
        res = _matrix_norm(x, ord, axis)
    else:
        raise ValueError(f"Improper number of dimensions to norm: axis={axis}")
    return _keep(res, axis, nd, keepdims)


def _abs_sq(x):
    from lucent.tensor import math as tm

    return tm.real(x * tm.conj(x)) if x.type.dtype.startswith("complex") else tm.sqr(x)


def _keep(res, axes, nd, keepdims):
    if not keepdims:
        return res
    order, k = [], 0
    for d in range(nd):
        if d in axes:
            order.append("x")
        else:
            order.append(k)
            k += 1
    return res.dimshuffle(*order)


def _vector_norm(x, ord, axis):
    from lucent.tensor import math as tm

    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order {ord!r} for vectors")
    if ord is None or ord == 2:
        return tm.sqrt(tm.sum(_abs_sq(x), axis=axis))
    a = tm.abs(x)
    if ord == np.inf:
        return tm.max(a, axis=axis)
    if ord == -np.inf:
        return tm.min(a, axis=axis)
    if ord == 0:
        return tm.sum(tm.neq(x, 0), axis=axis).astype(linalg_real_output_dtype(x.type.dtype))
    if ord == 1:
        return tm.sum(a, axis=axis)
    return tm.sum(a**ord, axis=axis) ** (1.0 / ord)


def _matrix_norm(x, ord, axis):
    from lucent.tensor import math as tm
    from lucent.tensor.linalg.decomposition.svd import svd

    row_axis, col_axis = axis
    if ord is None or ord in ("fro", "f"):
        return tm.sqrt(tm.sum(_abs_sq(x), axis=axis))
    if ord in ("nuc", 2, -2):
        rest = [d for d in range(x.type.ndim) if d not in axis]
        s = svd(x.dimshuffle(*rest, row_axis, col_axis), compute_uv=False)
        if ord == "nuc":
            return tm.sum(s, axis=-1)
        return tm.max(s, axis=-1) if ord == 2 else tm.min(s, axis=-1)
    a = tm.abs(x)
    if ord in (np.inf, -np.inf):
        sums = tm.sum(a, axis=col_axis)
        row = row_axis if row_axis < col_axis else row_axis - 1
        return tm.max(sums, axis=row) if ord == np.inf else tm.min(sums, axis=row)
    if ord in (1, -1):
        sums = tm.sum(a, axis=row_axis)
        col = col_axis if col_axis < row_axis else col_axis - 1
        return tm.max(sums, axis=col) if ord == 1 else tm.min(sums, axis=col)
    raise ValueError(f"Invalid norm order for matrices: {ord}")


__all__ = ["Det", "SLogDet", "det", "norm", "slogdet", "trace"]
