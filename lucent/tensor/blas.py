"""BLAS-shaped ops: the products that a BLAS library computes in one call.

``dot`` is one op for every rank combination, which is convenient to build
and differentiate. To run fast, the ``specialize`` stage replaces it by the
op that matches the operands' ranks and folds the surrounding scaling and
accumulation into it, exactly the forms BLAS routines compute:

* ``Gemm``  ``beta * Z + alpha * dot(X, Y)``   (matrix-matrix, xGEMM)
* ``Gemv``  ``beta * y + alpha * dot(A, x)``   (matrix-vector, xGEMV)
* ``Ger``   ``A + alpha * outer(x, y)``        (rank-1 update, xGER)
* ``Dot22`` ``dot(X, Y)`` of two matrices      (xGEMM with alpha=1, beta=0)
* ``BatchedDot`` ``out[i] = dot(X[i], Y[i])``  (one xGEMM per batch entry)

All operands have one floating dtype; ``alpha`` and ``beta`` are 0-d
tensors. As in BLAS, ``beta == 0`` means the accumulator is not read, so a
``Z`` holding ``nan`` (or uninitialised memory) does not leak into the
result. ``perform`` uses NumPy's BLAS-backed ``dot`` and writes into a
reused output buffer where it can. The ``inplace`` / ``destructive``
variants overwrite their accumulator (``destroy_map``); only the in-place
rewrites create them.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.tensor.basic import as_tensor_variable
from lucent.tensor.type import TensorType

_FLOATS = ("float32", "float64", "complex64", "complex128")


def _merge_dim(*dims):
    known = [d for d in dims if d is not None]
    return known[0] if known else None


def _check_dims(op, what, *dims):
    known = {d for d in dims if d is not None}
    if len(known) > 1:
        raise ValueError(f"{op}: the {what} do not match: static lengths {sorted(known)}")


def _as_operands(op, arrays, scalars, names):
    """Convert, check ranks and dtypes; scalars (alpha, beta) are cast to the dtype."""
    arrays = [as_tensor_variable(a) for a in arrays]
    dtype = arrays[0].type.dtype
    if dtype not in _FLOATS:
        raise TypeError(f"{op} works on float or complex tensors, got {arrays[0]} of dtype {dtype}")
    for a, n in zip(arrays, names):
        if a.type.dtype != dtype:
            raise TypeError(
                f"{op}: all operands must have one dtype; {names[0]} is {dtype} but {n} is "
                f"{a.type.dtype} (cast it first)"
            )
    out_scalars = []
    for s, n in zip(scalars, ("alpha", "beta")):
        if not hasattr(s, "type"):
            s = as_tensor_variable(np.asarray(s, dtype=dtype))
        s = as_tensor_variable(s)
        if s.type.ndim != 0:
            raise TypeError(f"{op}: {n} must be a 0-d tensor, got {s.type}")
        if s.type.dtype != dtype:
            from lucent.tensor.math import cast

            s = cast(s, dtype)
        out_scalars.append(s)
    return arrays, out_scalars


def _check_rank(op, var, ndim, name):
    if var.type.ndim != ndim:
        raise TypeError(f"{op}: {name} must have {ndim} dimensions, got {var} of type {var.type}")


def _buffer(storage, shape, dtype, inputs=()):
    """The previous output buffer if it fits and no input shares its memory, else a new one."""
    prev = storage[0]
    if (
        isinstance(prev, np.ndarray)
        and prev.shape == shape
        and prev.dtype == dtype
        and prev.flags.c_contiguous
        and prev.flags.writeable
        and not any(np.may_share_memory(prev, a) for a in inputs)
    ):
        return prev
    return np.empty(shape, dtype=dtype)


def _product(a, b, storage, dtype, inputs):
    """``np.dot(a, b)`` written into a reused C-contiguous buffer when possible.

    ``inputs`` are all the node's arrays: a buffer sharing memory with any
    of them is never reused.
    """
    shape = a.shape[:-1] + b.shape[1:]
    buf = _buffer(storage, shape, dtype, inputs)
    if a.dtype == dtype and b.dtype == dtype:
        np.dot(a, b, out=buf)
    else:
        buf[...] = np.dot(a, b)
    return buf


def _accumulate(op, z, alpha, prod, beta, storage, inplace):
    """``beta * z + alpha * prod``; ``z`` is not read when ``beta == 0``."""
    if z.shape != prod.shape:
        raise ValueError(f"{op}: the accumulator has shape {z.shape} but the product has shape {prod.shape}")
    if inplace:
        out = z
        if beta == 0:
            out[...] = 0
        elif beta != 1:
            out *= beta
        out += alpha * prod if alpha != 1 else prod
        storage[0] = out
        return
    out = prod  # a fresh (or reused, non-aliased) buffer
    if alpha != 1:
        out *= alpha
    if beta != 0:
        out += beta * z if beta != 1 else z
    storage[0] = out


class Gemm(Op):
    """``beta * Z + alpha * dot(X, Y)`` for matrices (inputs ``Z, alpha, X, Y, beta``)."""

    __props__ = ("inplace",)

    def __init__(self, inplace=False):
        self.inplace = bool(inplace)
        self.destroy_map = {0: [0]} if self.inplace else {}

    def __str__(self):
        return "Gemm{inplace}" if self.inplace else "Gemm{no_inplace}"

    def make_node(self, Z, alpha, X, Y, beta):
        (Z, X, Y), (alpha, beta) = _as_operands(self, [Z, X, Y], [alpha, beta], ["Z", "X", "Y"])
        for v, n in ((Z, "Z"), (X, "X"), (Y, "Y")):
            _check_rank(self, v, 2, n)
        _check_dims(self, "inner dimensions of X and Y", X.type.shape[1], Y.type.shape[0])
        _check_dims(self, "rows of Z and X", Z.type.shape[0], X.type.shape[0])
        _check_dims(self, "columns of Z and Y", Z.type.shape[1], Y.type.shape[1])
        shape = (_merge_dim(Z.type.shape[0], X.type.shape[0]), _merge_dim(Z.type.shape[1], Y.type.shape[1]))
        return Apply(self, [Z, alpha, X, Y, beta], [TensorType(Z.type.dtype, shape)()])

    def inplace_shape_constraints(self, node):
        """X's columns match Y's rows, and Z is (rows of X, columns of Y)."""
        return [((2, 1), (3, 0)), ((0, 0), (2, 0)), ((0, 1), (3, 1))]

    def check_inputs(self, node, inputs):
        """Raise on misaligned shapes before anything is written."""
        Z, alpha, X, Y, beta = inputs
        if X.shape[1] != Y.shape[0]:
            raise ValueError(f"{self}: X {X.shape} and Y {Y.shape} are not aligned")
        if Z.shape != (X.shape[0], Y.shape[1]):
            raise ValueError(
                f"{self}: the accumulator has shape {Z.shape} but dot(X, Y) has shape "
                f"{(X.shape[0], Y.shape[1])}"
            )

    def perform(self, node, inputs, output_storage):
        Z, alpha, X, Y, beta = inputs
        self.check_inputs(node, inputs)
        dtype = node.outputs[0].type.numpy_dtype
        storage = output_storage[0]
        scratch = [None] if self.inplace else storage
        prod = _product(X, Y, scratch, dtype, (Z, X, Y))
        _accumulate(self, Z, alpha, prod, beta, storage, self.inplace)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor import math as tm
        from lucent.tensor.elemwise import _fit_grad

        Z, alpha, X, Y, beta = inputs
        (g,) = output_grads
        gZ = tm.mul(beta, g)
        ga = tm.sum(tm.mul(g, tm.dot(X, Y)))
        gX = tm.mul(alpha, tm.dot(g, Y.T))
        gY = tm.mul(alpha, tm.dot(X.T, g))
        gb = tm.sum(tm.mul(g, Z))
        return [_fit_grad(v, i) for v, i in zip((gZ, ga, gX, gY, gb), inputs)]


class Gemv(Op):
    """``beta * y + alpha * dot(A, x)`` (inputs ``y, alpha, A, x, beta``)."""

    __props__ = ("inplace",)

    def __init__(self, inplace=False):
        self.inplace = bool(inplace)
        self.destroy_map = {0: [0]} if self.inplace else {}

    def __str__(self):
        return "Gemv{inplace}" if self.inplace else "Gemv{no_inplace}"

    def make_node(self, y, alpha, A, x, beta):
        (y, A, x), (alpha, beta) = _as_operands(self, [y, A, x], [alpha, beta], ["y", "A", "x"])
        _check_rank(self, y, 1, "y")
        _check_rank(self, A, 2, "A")
        _check_rank(self, x, 1, "x")
        _check_dims(self, "columns of A and length of x", A.type.shape[1], x.type.shape[0])
        _check_dims(self, "length of y and rows of A", y.type.shape[0], A.type.shape[0])
        shape = (_merge_dim(y.type.shape[0], A.type.shape[0]),)
        return Apply(self, [y, alpha, A, x, beta], [TensorType(y.type.dtype, shape)()])

    def inplace_shape_constraints(self, node):
        """A's columns match x, and y has A's rows."""
        return [((2, 1), (3, 0)), ((0, 0), (2, 0))]

    def check_inputs(self, node, inputs):
        """Raise on misaligned shapes before anything is written."""
        y, alpha, A, x, beta = inputs
        if A.shape[1] != x.shape[0]:
            raise ValueError(f"{self}: A {A.shape} and x {x.shape} are not aligned")
        if y.shape != (A.shape[0],):
            raise ValueError(
                f"{self}: the accumulator has shape {y.shape} but dot(A, x) has shape {(A.shape[0],)}"
            )

    def perform(self, node, inputs, output_storage):
        y, alpha, A, x, beta = inputs
        self.check_inputs(node, inputs)
        dtype = node.outputs[0].type.numpy_dtype
        storage = output_storage[0]
        scratch = [None] if self.inplace else storage
        prod = _product(A, x, scratch, dtype, (y, A, x))
        _accumulate(self, y, alpha, prod, beta, storage, self.inplace)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor import math as tm
        from lucent.tensor.elemwise import _fit_grad

        y, alpha, A, x, beta = inputs
        (g,) = output_grads
        gy = tm.mul(beta, g)
        ga = tm.dot(g, tm.dot(A, x))
        gA = tm.mul(alpha, tm.outer(g, x))
        gx = tm.mul(alpha, tm.dot(A.T, g))
        gb = tm.dot(g, y)
        return [_fit_grad(v, i) for v, i in zip((gy, ga, gA, gx, gb), inputs)]


class Ger(Op):
    """``A + alpha * outer(x, y)`` (inputs ``A, alpha, x, y``)."""

    __props__ = ("destructive",)

    def __init__(self, destructive=False):
        self.destructive = bool(destructive)
        self.destroy_map = {0: [0]} if self.destructive else {}

    def __str__(self):
        return "Ger{destructive}" if self.destructive else "Ger{non-destructive}"

    def make_node(self, A, alpha, x, y):
        (A, x, y), (alpha,) = _as_operands(self, [A, x, y], [alpha], ["A", "x", "y"])
        _check_rank(self, A, 2, "A")
        _check_rank(self, x, 1, "x")
        _check_rank(self, y, 1, "y")
        _check_dims(self, "rows of A and length of x", A.type.shape[0], x.type.shape[0])
        _check_dims(self, "columns of A and length of y", A.type.shape[1], y.type.shape[0])
        shape = (_merge_dim(A.type.shape[0], x.type.shape[0]), _merge_dim(A.type.shape[1], y.type.shape[0]))
        return Apply(self, [A, alpha, x, y], [TensorType(A.type.dtype, shape)()])

    def inplace_shape_constraints(self, node):
        """A is (length of x, length of y)."""
        return [((0, 0), (2, 0)), ((0, 1), (3, 0))]

    def check_inputs(self, node, inputs):
        """Raise on mismatched shapes before anything is written."""
        A, alpha, x, y = inputs
        if A.shape != (x.shape[0], y.shape[0]):
            raise ValueError(f"{self}: A has shape {A.shape} but outer(x, y) has shape {(x.shape[0], y.shape[0])}")

    def perform(self, node, inputs, output_storage):
        self.check_inputs(node, inputs)
        A, alpha, x, y = inputs
        storage = output_storage[0]
        if self.destructive:
            out = A
        else:
            out = _buffer(storage, A.shape, A.dtype, (A, x, y))
            out[...] = A
        out += np.outer(alpha * x, y)
        storage[0] = out

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor import math as tm
        from lucent.tensor.elemwise import _fit_grad

        A, alpha, x, y = inputs
        (g,) = output_grads
        gA = g
        ga = tm.dot(x, tm.dot(g, y))
        gx = tm.mul(alpha, tm.dot(g, y))
        gy = tm.mul(alpha, tm.dot(g.T, x))
        return [_fit_grad(v, i) for v, i in zip((gA, ga, gx, gy), inputs)]


class Dot22(Op):
    """``dot(X, Y)`` of two matrices of one floating dtype."""

    __props__ = ()

    def __str__(self):
        return "Dot22"

    def make_node(self, X, Y):
        (X, Y), _ = _as_operands(self, [X, Y], [], ["X", "Y"])
        _check_rank(self, X, 2, "X")
        _check_rank(self, Y, 2, "Y")
        _check_dims(self, "inner dimensions of X and Y", X.type.shape[1], Y.type.shape[0])
        return Apply(self, [X, Y], [TensorType(X.type.dtype, (X.type.shape[0], Y.type.shape[1]))()])

    def perform(self, node, inputs, output_storage):
        X, Y = inputs
        if X.shape[1] != Y.shape[0]:
            raise ValueError(f"{self}: X {X.shape} and Y {Y.shape} are not aligned")
        storage = output_storage[0]
        storage[0] = _product(X, Y, storage, node.outputs[0].type.numpy_dtype, (X, Y))

    def infer_shape(self, fgraph, node, input_shapes):
        (sx, sy) = input_shapes
        return [(sx[0], sy[1])]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor import math as tm
        from lucent.tensor.elemwise import _fit_grad

        X, Y = inputs
        (g,) = output_grads
        return [_fit_grad(tm.dot(g, Y.T), X), _fit_grad(tm.dot(X.T, g), Y)]


class BatchedDot(Op):
    """``out[i] = dot(x[i], y[i])`` for two 3-d tensors with the same batch length.

    The batched form of ``Dot22`` that the ``specialize`` stage makes of a
    ``matmul`` whose batch dimensions need no broadcasting
    (``specialize_matmul_to_batched_dot``); each batch entry is one BLAS
    product. Unlike ``matmul``, the batch dimension never broadcasts: a
    batch of length 1 against one of length 5 is an error, statically when
    the lengths are known and at run time otherwise. The inputs are cast to
    their common (upcast) dtype.
    """

    __props__ = ()
    gufunc_signature = "(b,m,k),(b,k,n)->(b,m,n)"

    def __str__(self):
        return "BatchedDot"

    def make_node(self, x, y):
        from lucent.scalar.dtypes import upcast
        from lucent.tensor.math import cast

        x, y = as_tensor_variable(x), as_tensor_variable(y)
        if not (isinstance(x.type, TensorType) and isinstance(y.type, TensorType)):
            raise NotImplementedError(f"BatchedDot supports only dense tensors, got {x.type} and {y.type}")
        if x.type.ndim != 3 or y.type.ndim != 3:
            raise TypeError(
                f"Inputs must have 3 ndim, but got {x.type.ndim} and {y.type.ndim}. Consider using "
                "`dot` with `lucent.tensor.vectorize` or `lucent.graph.replace.vectorize_graph` instead."
            )

        def static(dim_x, dim_y):
            known = {dim_x, dim_y} - {None}
            if len(known) > 1:
                raise ValueError(
                    f"Static dimensions of BatchedDot don't match, got {x.type.shape} and {y.type.shape} "
                    "(the batch dimension does not broadcast, and x's columns must be y's rows)"
                )
            return known.pop() if known else None

        batch = static(x.type.shape[0], y.type.shape[0])
        static(x.type.shape[2], y.type.shape[1])
        dtype = upcast(x.type.dtype, y.type.dtype)
        x = x if x.type.dtype == dtype else cast(x, dtype)
        y = y if y.type.dtype == dtype else cast(y, dtype)
        out = TensorType(dtype, (batch, x.type.shape[1], y.type.shape[2]))()
        return Apply(self, [x, y], [out])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        if x.shape[0] != y.shape[0]:
            raise ValueError(
                f"Inputs of BatchedDot must have the same size in axis 0 (the batch dimension, which "
                f"does not broadcast at run time), but have sizes "
                f"[{x.shape[0]}, {y.shape[0]}] (shapes {x.shape} and {y.shape})"
            )
        if x.shape[2] != y.shape[1]:
            raise ValueError(f"{self}: x {x.shape} and y {y.shape} are not aligned: {x.shape[2]} != {y.shape[1]}")
        output_storage[0][0] = np.matmul(x, y).astype(node.outputs[0].type.dtype, copy=False)

    def infer_shape(self, fgraph, node, input_shapes):
        xshp, yshp = input_shapes
        return [(xshp[0], xshp[1], yshp[2])]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor.elemwise import _fit_grad

        x, y = inputs
        (gz,) = output_grads
        gx = self(gz, y.dimshuffle(0, 2, 1))
        gy = self(x.dimshuffle(0, 2, 1), gz)
        return [_fit_grad(gx, x), _fit_grad(gy, y)]


gemm_no_inplace = Gemm(inplace=False)
gemm_inplace = Gemm(inplace=True)
gemv_no_inplace = Gemv(inplace=False)
gemv_inplace = Gemv(inplace=True)
ger = Ger(destructive=False)
ger_destructive = Ger(destructive=True)
_dot22 = Dot22()
_batched_dot = BatchedDot()


__all__ = [
    "Gemm", "Gemv", "Ger", "Dot22", "BatchedDot",
    "gemm_no_inplace", "gemm_inplace", "gemv_no_inplace", "gemv_inplace", "ger", "ger_destructive",
]
