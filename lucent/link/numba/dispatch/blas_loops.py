"""The small matrix-vector loops of ``Gemv`` kernels, emitted as LLVM IR where the kernel calls them.

A loop step's product of a small matrix and a vector is dominated by the
cost of a BLAS call, not by its arithmetic, so ``Gemv`` kernels multiply
matrices of at most ``SMALL_GEMV`` elements with these loops. As Numba
functions linked into each kernel they cost twice: their own compile
(typing and lowering their statements, about 0.35 s for the two in a cold
process) and then LLVM optimising and emitting their linked copy again
inside every kernel that calls them. As intrinsics they are a few loops of
the kernel's own module, optimised and emitted once, with the same order
of operations and the same fast-math flags the statements had (so LLVM
vectorises them the same way). Kernels name this file's hash in their
text (``LOOPS_HASH``), so a change here gives new kernels.

Arithmetic follows the statements' types: the row sums start from a
``float64`` zero, so a ``float32`` matrix's products are summed in
``float64``; ``alpha`` and ``beta`` take their own types.
"""

from __future__ import annotations

import hashlib

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic
from numba.np.numpy_support import as_dtype, from_dtype

#: Matrices of at most this many elements are multiplied by a vector with the loops
#: below instead of BLAS: for the 16x16 step of a recurrence ``rows_gemv`` takes 30 ns
#: where the BLAS call takes 70, and it stays level with BLAS up to 512x512 on one thread.
SMALL_GEMV = 128 * 128

with open(__file__, "rb") as _f:
    LOOPS_HASH = hashlib.sha256(_f.read()).hexdigest()[:16]

#: The statements' ``fastmath`` flags: ``reassoc`` lets LLVM split each sum into vector lanes.
_FAST = ("reassoc", "contract", "nsz")


class _Emitter:
    """Typed scalar arithmetic and element addresses for one kernel's loops."""

    def __init__(self, context, builder):
        self.context = context
        self.builder = builder
        self.intp = context.get_value_type(types.intp)

    def const(self, value, ty):
        return self.context.get_constant(ty, value)

    def cast(self, value, src, dst):
        return self.context.cast(self.builder, value, src, dst)

    def arith(self, op, a, b):
        """``a op b`` for ``(value, type)`` pairs, in the types NumPy (and Numba) promote them to."""
        (av, at), (bv, bt) = a, b
        ty = from_dtype(np.promote_types(as_dtype(at), as_dtype(bt)))
        av, bv = self.cast(av, at, ty), self.cast(bv, bt, ty)
        emit = {"add": self.builder.fadd, "mul": self.builder.fmul}[op]
        result = emit(av, bv)
        result.flags.extend(_FAST)
        return result, ty

    def vector(self, array_type, value):
        """``(data, step)``: an element pointer and the vector's step in bytes (``None`` when contiguous)."""
        array = self.context.make_array(array_type)(self.context, self.builder, value)
        if array_type.layout in "CF":
            return array.data, None
        (step,) = cgutils.unpack_tuple(self.builder, array.strides, 1)
        return array.data, step

    def element(self, vector, index):
        data, step = vector
        if step is None:
            return self.builder.gep(data, [index])
        raw = self.builder.bitcast(data, ir.IntType(8).as_pointer())
        return self.builder.bitcast(self.builder.gep(raw, [self.builder.mul(index, step)]), data.type)

    def matrix(self, array_type, value):
        """``(data, row step in bytes, rows)`` of a ``padded_c_view`` (rows of unit step)."""
        array = self.context.make_array(array_type)(self.context, self.builder, value)
        rows = cgutils.unpack_tuple(self.builder, array.shape, 2)[0]
        row_step = cgutils.unpack_tuple(self.builder, array.strides, 2)[0]
        return array.data, row_step, rows

    def operands(self, sig, args):
        """``(matrix, n, x, z, out, alpha, beta)`` of a loop's call: views, ``intp`` count, ``(value, type)`` scalars."""
        matrix_t, n_t, x_t, z_t, out_t, alpha_t, beta_t = sig.args
        return (
            self.matrix(matrix_t, args[0]),
            self.cast(args[1], n_t, types.intp),
            self.vector(x_t, args[2]),
            self.vector(z_t, args[3]),
            self.vector(out_t, args[4]),
            (args[5], alpha_t),
            (args[6], beta_t),
        )

    def matrix_element(self, matrix, row, column):
        data, row_step, _ = matrix
        raw = self.builder.bitcast(data, ir.IntType(8).as_pointer())
        start = self.builder.bitcast(self.builder.gep(raw, [self.builder.mul(row, row_step)]), data.type)
        return self.builder.gep(start, [column])


def _valid(A, n, x, z, out, alpha, beta):
    arrays = (x, z, out)
    return (
        isinstance(A, types.Array) and A.ndim == 2 and A.layout == "C" and isinstance(A.dtype, types.Float)
        and isinstance(n, types.Integer)
        and all(isinstance(v, types.Array) and v.ndim == 1 and isinstance(v.dtype, types.Float) for v in arrays)
        and isinstance(alpha, types.Float) and isinstance(beta, types.Float)
    )


def _finish(e, total, alpha, beta, z_value, out_type):
    """``alpha * total`` (``beta == 0``: ``z`` is never read) or ``alpha * total + beta * z[i]``, as ``out``'s dtype."""
    builder = e.builder
    scaled = e.arith("mul", alpha, total)
    zero = e.const(0.0, beta[1])
    result = cgutils.alloca_once(builder, e.context.get_value_type(out_type.dtype))
    is_zero = builder.fcmp_ordered("==", beta[0], zero)
    with builder.if_else(is_zero) as (no_z, with_z):
        with no_z:
            builder.store(e.cast(scaled[0], scaled[1], out_type.dtype), result)
        with with_z:
            blended = e.arith("add", scaled, e.arith("mul", beta, z_value()))
            builder.store(e.cast(blended[0], blended[1], out_type.dtype), result)
    return builder.load(result)


@intrinsic
def rows_gemv(typingctx, A, k, x, z, out, alpha, beta):
    """``out = alpha * A[:, :k] @ x + beta * z`` for a matrix stored by rows.

    ``A`` is the matrix's ``padded_c_view`` (rows ``A.shape[1] >= k`` items
    apart). Four rows at a time: four independent sums that LLVM vectorises
    along the row (``reassoc`` lets it split each sum into lanes, so the
    summation order differs from BLAS's by rounding only). ``beta == 0``
    never reads ``z``; ``out`` may be ``z``.
    """
    if not _valid(A, k, x, z, out, alpha, beta):
        return None

    def codegen(context, builder, sig, args):
        A_t, _, x_t, z_t, out_t, _, _ = sig.args
        e = _Emitter(context, builder)
        matrix, k_v, xs, zs, outs, alpha_p, beta_p = e.operands(sig, args)
        m = matrix[2]
        acc_type = types.float64
        sums = [cgutils.alloca_once(builder, context.get_value_type(acc_type)) for _ in range(4)]

        def load(pointer_value, ty):
            return builder.load(pointer_value), ty

        def rows_at(first, count):
            for s in sums[:count]:
                builder.store(e.const(0.0, acc_type), s)
            with cgutils.for_range(builder, k_v) as loop:
                j = loop.index
                xj = load(e.element(xs, j), x_t.dtype)
                for r in range(count):
                    row = builder.add(first, ir.Constant(e.intp, r))
                    product = e.arith("mul", load(e.matrix_element(matrix, row, j), A_t.dtype), xj)
                    total = e.arith("add", load(sums[r], acc_type), product)
                    builder.store(e.cast(total[0], total[1], acc_type), sums[r])
            for r in range(count):
                row = builder.add(first, ir.Constant(e.intp, r))
                value = _finish(
                    e, load(sums[r], acc_type), alpha_p, beta_p,
                    lambda row=row: load(e.element(zs, row), z_t.dtype), out_t,
                )
                builder.store(value, e.element(outs, row))

        four = ir.Constant(e.intp, 4)
        blocks = builder.sdiv(m, four)
        with cgutils.for_range(builder, blocks) as block:
            rows_at(builder.mul(block.index, four), 4)
        with cgutils.for_range_slice(builder, builder.mul(blocks, four), m, ir.Constant(e.intp, 1), intp=e.intp) as (i, _):
            rows_at(i, 1)
        return context.get_dummy_value()

    return types.none(A, k, x, z, out, alpha, beta), codegen


@intrinsic
def cols_gemv(typingctx, At, m, x, z, out, alpha, beta):
    """``out = alpha * At[:, :m].T @ x + beta * z`` for a matrix stored by columns (a transposed C array).

    ``At`` is the ``padded_c_view`` of the matrix's columns: column ``j``
    is ``At[j, :m]``. The columns scaled by ``alpha * x[j]`` are added in
    turn, each a loop along a contiguous column that LLVM vectorises (the
    gradient of a recurrence multiplies by ``W.T``). ``beta == 0`` never
    reads ``z``; ``out`` may be ``z``.
    """
    if not _valid(At, m, x, z, out, alpha, beta):
        return None

    def codegen(context, builder, sig, args):
        At_t, _, x_t, z_t, out_t, _, beta_t = sig.args
        e = _Emitter(context, builder)
        matrix, m_v, xs, zs, outs, alpha_p, beta_p = e.operands(sig, args)
        dtype = out_t.dtype
        is_zero = builder.fcmp_ordered("==", beta_p[0], e.const(0.0, beta_t))
        with builder.if_else(is_zero) as (no_z, with_z):
            with no_z:
                with cgutils.for_range(builder, m_v) as loop:
                    builder.store(e.cast(e.const(0.0, types.float64), types.float64, dtype), e.element(outs, loop.index))
            with with_z:
                with cgutils.for_range(builder, m_v) as loop:
                    zi = (builder.load(e.element(zs, loop.index)), z_t.dtype)
                    scaled = e.arith("mul", beta_p, zi)
                    builder.store(e.cast(scaled[0], scaled[1], dtype), e.element(outs, loop.index))
        with cgutils.for_range(builder, matrix[2]) as column:
            j = column.index
            xj = e.arith("mul", alpha_p, (builder.load(e.element(xs, j)), x_t.dtype))
            with cgutils.for_range(builder, m_v) as loop:
                i = loop.index
                target = e.element(outs, i)
                product = e.arith("mul", (builder.load(e.matrix_element(matrix, j, i)), At_t.dtype), xj)
                total = e.arith("add", (builder.load(target), dtype), product)
                builder.store(e.cast(total[0], total[1], dtype), target)
        return context.get_dummy_value()

    return types.none(At, m, x, z, out, alpha, beta), codegen


__all__ = ["LOOPS_HASH", "SMALL_GEMV", "cols_gemv", "rows_gemv"]
