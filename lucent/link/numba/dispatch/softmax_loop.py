"""A softmax or log-softmax kernel along the last axis emitted as LLVM IR by one intrinsic.

``special.py`` writes these kernels as Python statements: per row, the
maximum (``fold_lanes``), ``exp(x - max)`` into the output, the sum of that
(``fold_lanes``), then the normalisation. Numba typing and lowering those
statements, and LLVM cleaning up their IR, made the kernel one of the most
expensive of a classifier's training step to compile (about 170 ms). The
same passes are emitted here directly by ``softmax_loop(x, kind, dtype)``
(``kind``: ``'softmax'`` or ``'log_softmax'``; ``dtype``: the output's),
for a row along the last axis of an array of any rank and layout (the
leading dimensions are looped over in index order, by strides), in the
same order of operations and with the same conversions as the statements:

* ``m``: the float64 maximum of the row in four interleaved lanes (NaN
  wins), replaced by 0 when not finite, as ``perform`` does;
* ``out[j] = exp(x[j] - m)`` (``vexp``), rounded to the output dtype;
* ``s``: the float64 sum of the output row in four interleaved lanes;
* softmax: ``out[j] = out[j] / s``; log-softmax: ``out[j] = (x[j] - m) - log(s)``
  (``vlog``), each difference rounded to the output dtype as the
  statements round it.

An input row along the last axis of a C array is contiguous (its stride is
the item size, a constant), so every pass is a loop LLVM vectorises.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic
from numba.np.numpy_support import from_dtype

from lucent.link.numba.describe import dispatch_files_digest
from lucent.link.numba.dispatch import lane_fold
from lucent.link.numba.dispatch.memory import allocate_extents
from lucent.link.numba.dispatch.scalar_ir import call_vecmath

#: Digest of the files whose intrinsics emit these kernels (kernels name it in their text).
SOFTMAX_LOOP_VERSION = dispatch_files_digest(
    "softmax_loop.py", "lane_fold.py", "scalar_ir.py", "memory.py",
)

KINDS = ("softmax", "log_softmax")


@intrinsic
def softmax_loop(typingctx, x, kind, dtype):
    """``kind`` of ``x`` along its last axis, as a new C array of ``dtype`` (see the module docstring)."""
    if not (isinstance(x, types.Array) and x.ndim >= 1):
        return None
    if not (isinstance(kind, types.StringLiteral) and kind.literal_value in KINDS):
        return None
    if not isinstance(dtype, types.StringLiteral) or dtype.literal_value not in ("float64", "float32"):
        return None
    if not isinstance(x.dtype, (types.Float, types.Integer, types.Boolean)):
        return None
    how = kind.literal_value
    out_dtype = from_dtype(np.dtype(dtype.literal_value))
    result = types.Array(out_dtype, x.ndim, "C")
    nd = x.ndim

    def codegen(context, builder, sig, args):
        intp = context.get_value_type(types.intp)
        zero = ir.Constant(intp, 0)
        double = ir.DoubleType()
        f64 = types.float64
        src = context.make_array(sig.args[0])(context, builder, args[0])
        shape = cgutils.unpack_tuple(builder, src.shape, nd)
        strides = cgutils.unpack_tuple(builder, src.strides, nd)
        out = allocate_extents(context, builder, result, shape)
        n = shape[-1]
        item = context.get_abi_sizeof(context.get_data_type(x.dtype))
        step = ir.Constant(intp, item) if x.layout == "C" else strides[-1]
        x_ptr = context.get_data_type(x.dtype).as_pointer()

        def to_out(v):
            return context.cast(builder, v, f64, out_dtype)

        def from_out(v):
            return context.cast(builder, v, out_dtype, f64)

        def row(x_offset, out_base):
            """The passes over one row: input at byte offset ``x_offset``, output from element ``out_base``."""
            raw = builder.bitcast(src.data, ir.IntType(8).as_pointer())

            def element(j):
                p = builder.bitcast(builder.gep(raw, [builder.add(x_offset, builder.mul(j, step))]), x_ptr)
                return context.cast(builder, context.unpack_value(builder, x.dtype, p), x.dtype, f64)

            def out_at(j):
                return builder.gep(out.data, [builder.add(out_base, j)], inbounds=True)

            biggest = lane_fold.emit_fold(
                builder, element, zero, n,
                lane_fold.identity_constant(double, f64, "max"), lane_fold.combiner(builder, f64, "max"), intp,
            )
            finite = builder.fcmp_ordered("==", builder.fsub(biggest, biggest), ir.Constant(double, 0.0))
            m = builder.select(finite, biggest, ir.Constant(double, 0.0))
            with cgutils.for_range(builder, n) as loop:
                e = call_vecmath(context, builder, "vexp", builder.fsub(element(loop.index), m))
                builder.store(to_out(e), out_at(loop.index))
            s = lane_fold.emit_fold(
                builder, lambda j: from_out(builder.load(out_at(j))), zero, n,
                lane_fold.identity_constant(double, f64, "add"), lane_fold.combiner(builder, f64, "add"), intp,
            )
            if how == "softmax":
                with cgutils.for_range(builder, n) as loop:
                    slot = out_at(loop.index)
                    builder.store(to_out(builder.fdiv(from_out(builder.load(slot)), s)), slot)
            else:
                log_s = call_vecmath(context, builder, "vlog", s)
                with cgutils.for_range(builder, n) as loop:
                    shifted = from_out(to_out(builder.fsub(element(loop.index), m)))
                    builder.store(to_out(builder.fsub(shifted, log_s)), out_at(loop.index))

        def level(d, x_offset, out_base):
            if d == nd - 1:
                row(x_offset, out_base)
                return
            with cgutils.for_range(builder, shape[d]) as loop:
                k = loop.index
                # out_base is the C index of the leading entries so far, times the next length
                level(d + 1, builder.add(x_offset, builder.mul(k, strides[d])), builder.mul(builder.add(out_base, k), shape[d + 1]))

        level(0, zero, zero)
        return out._getvalue()

    return result(x, kind, dtype), codegen


__all__ = ["KINDS", "SOFTMAX_LOOP_VERSION", "softmax_loop"]
