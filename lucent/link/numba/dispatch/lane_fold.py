"""Folding a 1-d array with four interleaved accumulators, emitted as LLVM IR in one piece.

Reductions and the softmax kernels fold a row (a sum, a maximum, ...) with
four accumulators taking every fourth element, combined pairwise at the end:
independent accumulators let the processor overlap the additions (and
LLVM vectorise the loop) without reordering the floating-point operations
in a way that depends on the machine. Written as Python statements, the
four accumulators, the loop over groups of four, the loop over the rest and
the final combination were about a third of compiling such a kernel: Numba
typed and lowered each statement, and a maximum with NaN semantics is
several. Here the fold is one intrinsic, written straight to IR:

``fold_lanes(row, start, stop, kind, acc)`` folds ``row[start:stop]`` with
``kind`` (``'add'``, ``'mul'``, ``'max'``, ``'min'``, ``'and'``, ``'or'``,
``'xor'``), each element first cast to the accumulator dtype ``acc`` (a
dtype name). Accumulator ``q`` starts from ``kind``'s identity and takes
the elements at ``start + q``, ``start + q + 4``, ...; elements after the
last whole group of four go to accumulator 0; the result is
``(l0 . l1) . (l2 . l3)``. ``max``/``min`` of floats let a NaN win, as
NumPy's do. Booleans add with ``or`` and multiply with ``and``; integers
wrap around at the accumulator's width. ``row`` may have any layout.
Complex accumulators are not supported (the kernels keep their Python
loops for them).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import load_item
from numba.np.numpy_support import from_dtype

LANES = 4
KINDS = ("add", "mul", "max", "min", "and", "or", "xor")


def supported(acc) -> bool:
    """Whether ``fold_lanes`` can accumulate in dtype ``acc`` (a name or dtype)."""
    return np.dtype(acc).kind in "biuf"


def identity_constant(ir_type, numba_type, kind):
    if isinstance(numba_type, types.Boolean):
        return ir.Constant(ir_type, 0 if kind in ("add", "or", "xor", "max") else 1)
    if isinstance(numba_type, types.Float):
        if kind in ("add", "or", "xor"):
            return ir.Constant(ir_type, 0.0)
        if kind in ("mul", "and"):
            return ir.Constant(ir_type, 1.0)
        return ir.Constant(ir_type, float("-inf") if kind == "max" else float("inf"))
    if kind in ("add", "or", "xor"):
        return ir.Constant(ir_type, 0)
    if kind in ("mul", "and"):
        return ir.Constant(ir_type, 1)
    info = np.iinfo(numba_type.name)
    return ir.Constant(ir_type, int(info.min if kind == "max" else info.max))


def combiner(builder, numba_type, kind):
    """``(a, b) -> a . b`` for ``kind`` on values of ``numba_type``."""
    if isinstance(numba_type, types.Boolean):
        if kind in ("add", "or", "max"):
            return builder.or_
        if kind in ("mul", "and", "min"):
            return builder.and_
        return builder.xor
    if isinstance(numba_type, types.Float):
        if kind == "add":
            return builder.fadd
        if kind == "mul":
            return builder.fmul
        cmp = ">=" if kind == "max" else "<="

        def extreme(a, b):
            keep = builder.or_(builder.fcmp_ordered(cmp, a, b), builder.fcmp_unordered("!=", a, a))
            return builder.select(keep, a, b)

        return extreme
    if kind == "add":
        return builder.add
    if kind == "mul":
        return builder.mul
    if kind in ("and", "or", "xor"):
        return {"and": builder.and_, "or": builder.or_, "xor": builder.xor}[kind]
    compare = builder.icmp_signed if numba_type.signed else builder.icmp_unsigned
    cmp = ">=" if kind == "max" else "<="

    def extreme(a, b):
        return builder.select(compare(cmp, a, b), a, b)

    return extreme


def _accumulator_type(acc):
    if not isinstance(acc, types.StringLiteral):
        return None
    try:
        dtype = np.dtype(acc.literal_value)
    except TypeError:
        return None
    return from_dtype(dtype) if supported(dtype) else None


@intrinsic
def fold_lanes(typingctx, row, start, stop, kind, acc):
    """``row[start:stop]`` folded with ``kind`` in four interleaved accumulators of dtype ``acc``."""
    if not (isinstance(row, types.Array) and row.ndim == 1):
        return None
    if not (isinstance(start, types.Integer) and isinstance(stop, types.Integer)):
        return None
    if not (isinstance(kind, types.StringLiteral) and kind.literal_value in KINDS):
        return None
    acc_type = _accumulator_type(acc)
    if acc_type is None or not isinstance(row.dtype, (types.Boolean, types.Integer, types.Float)):
        return None
    if isinstance(acc_type, types.Boolean) and not isinstance(row.dtype, types.Boolean):
        return None
    how = kind.literal_value

    def codegen(context, builder, sig, args):
        row_type = sig.args[0]
        intp = context.get_value_type(types.intp)
        value_type = context.get_value_type(acc_type)
        array = context.make_array(row_type)(context, builder, args[0])
        shape = cgutils.unpack_tuple(builder, array.shape, 1)
        strides = cgutils.unpack_tuple(builder, array.strides, 1)
        lo = context.cast(builder, args[1], sig.args[1], types.intp)
        hi = context.cast(builder, args[2], sig.args[2], types.intp)
        hi = builder.select(builder.icmp_signed("<", hi, lo), lo, hi)
        combine = combiner(builder, acc_type, how)

        def element(index):
            ptr = cgutils.get_item_pointer2(
                context, builder, array.data, shape, strides, row_type.layout, [index]
            )
            return context.cast(builder, load_item(context, builder, row_type, ptr), row_type.dtype, acc_type)

        return emit_fold(builder, element, lo, hi, identity_constant(value_type, acc_type, how), combine, intp)

    return acc_type(row, start, stop, kind, acc), codegen


def emit_fold(builder, element, lo, hi, identity, combine, intp):
    """Emit the fold of ``element(index)`` for ``lo <= index < hi`` in ``LANES`` interleaved accumulators.

    ``identity`` is the accumulators' first value (an IR constant) and
    ``combine(a, b)`` emits ``a . b``; see the module docstring for the order.
    """
    lanes = [cgutils.alloca_once_value(builder, identity) for _ in range(LANES)]
    count = builder.sub(hi, lo)
    whole = builder.add(lo, builder.sub(count, builder.srem(count, ir.Constant(intp, LANES))))
    with cgutils.for_range_slice(builder, lo, whole, ir.Constant(intp, LANES), intp=intp) as (index, _):
        for q, lane in enumerate(lanes):
            at = builder.add(index, ir.Constant(intp, q)) if q else index
            builder.store(combine(builder.load(lane), element(at)), lane)
    with cgutils.for_range_slice(builder, whole, hi, ir.Constant(intp, 1), intp=intp) as (index, _):
        builder.store(combine(builder.load(lanes[0]), element(index)), lanes[0])
    l0, l1, l2, l3 = (builder.load(lane) for lane in lanes)
    return combine(combine(l0, l1), combine(l2, l3))


__all__ = ["KINDS", "LANES", "combiner", "emit_fold", "fold_lanes", "identity_constant", "supported"]
