"""Least squares and tensor equations: ``lstsq`` (``numpy.linalg.lstsq``) and ``tensorsolve``.

``tensorsolve`` reshapes the tensor equation into a square linear system,
so it is a graph of ``solve`` and reshapes (its gradient and kernels are
theirs).
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.tensor.basic import as_tensor_variable
from lucent.tensor.linalg.dtype_utils import linalg_output_dtype, linalg_real_output_dtype
from lucent.tensor.type import TensorType


class Lstsq(Op):
    """``numpy.linalg.lstsq(a, b, rcond)``: ``(x, residuals, rank, s)``.

    ``x`` minimises ``||b - a x||``; ``residuals`` are the squared residual
    norms per column of ``b`` (empty when ``a`` is rank deficient or has
    no more rows than columns), ``rank`` is ``int32``, ``s`` the singular
    values of ``a``. Gradient of ``x`` as that of ``pinv(a) @ b``.
    """

    __props__ = ()

    def make_node(self, x, y, rcond=None):
        x, y = as_tensor_variable(x), as_tensor_variable(y)
        rcond = as_tensor_variable(-1.0 if rcond is None else rcond)
        if x.type.ndim != 2:
            raise np.linalg.LinAlgError(f"lstsq: the coefficient matrix must be 2-d, got {x.type}")
        if y.type.ndim not in (1, 2):
            raise np.linalg.LinAlgError(f"lstsq: the right-hand side must be 1-d or 2-d, got {y.type}")
        if rcond.type.ndim != 0:
            raise np.linalg.LinAlgError(f"lstsq: rcond must be a scalar, got {rcond.type}")
        dtype = linalg_output_dtype(x.type.dtype, y.type.dtype)
        real = linalg_real_output_dtype(dtype)
        n = x.type.shape[1]
        sol_shape = (n,) if y.type.ndim == 1 else (n, y.type.shape[1])
        outs = [
            TensorType(dtype, sol_shape)(),
            TensorType(real, (None,))(),
            TensorType("int32", ())(),
            TensorType(real, (None,))(),
        ]
        return Apply(self, [x, y, rcond], outs)

    def perform(self, node, inputs, output_storage):
        x, y, rcond = inputs
        dtype = node.outputs[0].type.dtype
        rc = float(rcond)
        sol, res, rank, s = np.linalg.lstsq(np.asarray(x, dtype=dtype), np.asarray(y, dtype=dtype), rcond=rc)
        output_storage[0][0] = np.asarray(sol, dtype=dtype)
        output_storage[1][0] = np.asarray(res, dtype=node.outputs[1].type.dtype)
        output_storage[2][0] = np.asarray(rank, dtype="int32")
        output_storage[3][0] = np.asarray(s, dtype=node.outputs[3].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        from lucent.tensor.math import minimum
        from lucent.tensor.shape import Shape_i

        xs, ys, _ = input_shapes
        sol = (xs[1],) if len(ys) == 1 else (xs[1], ys[1])
        return [sol, (Shape_i(0)(node.outputs[1]),), (), (minimum(xs[0], xs[1]),)]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.gradient import grad
        from lucent.gradient.types import DisconnectedType, disconnected_type
        from lucent.tensor.linalg.inverse import pinv
        from lucent.tensor.math import dot

        x, y, rcond = inputs
        g = output_grads[0]
        if any(not isinstance(og.type, DisconnectedType) for og in output_grads[1:]):
            raise NotImplementedError("Lstsq: only the solution (output 0) has a gradient")
        if isinstance(g.type, DisconnectedType):
            return [x.zeros_like(), y.zeros_like(), disconnected_type()]
        sol = dot(pinv(x), y)
        gx, gy = grad((sol * g).sum(), [x, y])
        return [gx, gy, disconnected_type()]

    def connection_pattern(self, node):
        return [[True, True, True, True], [True, True, False, False], [False, False, False, False]]


#: ``lstsq(a, b, rcond)``: least-squares solution, residuals, rank and singular values.
lstsq = Lstsq()


def tensorsolve(a, b, axes=None):
    """Solve ``tensordot(a, x, axes=b.ndim) == b`` for ``x`` (``numpy.linalg.tensorsolve``).

    ``axes`` are axes of ``a`` moved to the end first. The leading
    ``b.ndim`` axes of ``a`` (rows) and the others (columns, the shape of
    ``x``) must hold the same number of entries.
    """
    from lucent.tensor.creation import make_vector
    from lucent.tensor.linalg.solvers.general import solve
    from lucent.tensor.math import prod
    from lucent.tensor.rearrange import moveaxis
    from lucent.tensor.shape import reshape

    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if axes is not None:
        axes = tuple(axes)
        a = moveaxis(a, axes, tuple(range(a.type.ndim - len(axes), a.type.ndim)))
    x_ndim = a.type.ndim - b.type.ndim
    if x_ndim <= 0:
        raise ValueError(f"tensorsolve: a ({a.type}) must have more dimensions than b ({b.type})")
    x_shape = [a.shape[d] for d in range(b.type.ndim, a.type.ndim)]
    rows = prod(make_vector(*[a.shape[d] for d in range(b.type.ndim)], dtype="int64"))
    cols = prod(make_vector(*x_shape, dtype="int64"))
    dtype = linalg_output_dtype(a.type.dtype, b.type.dtype)
    mat = reshape(a.astype(dtype), make_vector(rows, cols, dtype="int64"), ndim=2)
    vec = reshape(b.astype(dtype), make_vector(rows, dtype="int64"), ndim=1)
    x = solve(mat, vec, b_ndim=1)
    return reshape(x, make_vector(*x_shape, dtype="int64"), ndim=x_ndim)


__all__ = ["Lstsq", "lstsq", "tensorsolve"]
