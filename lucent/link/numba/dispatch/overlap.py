"""Whether two arrays share memory, decided inline in a kernel.

In-place kernels must know whether an operand they read overlaps the
array they write: Numba, unlike NumPy, does not buffer overlapping
operands. These helpers are intrinsics, lowered where a kernel calls them
from the arrays' data pointers, shapes and strides (unrolled over the
static rank): as jitted functions they were compiled again for every pair
of array types, a large part of compiling an in-place kernel.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic


def _memory_extent(context, builder, array, ndim):
    """``(lo, hi, empty)``: the byte range ``array`` touches, and whether it has no element."""
    intp = context.get_value_type(types.intp)
    zero, one = ir.Constant(intp, 0), ir.Constant(intp, 1)
    lo = hi = builder.ptrtoint(array.data, intp)
    empty = cgutils.false_bit
    shapes = cgutils.unpack_tuple(builder, array.shape, ndim)
    strides = cgutils.unpack_tuple(builder, array.strides, ndim)
    for extent, stride in zip(shapes, strides):
        empty = builder.or_(empty, builder.icmp_signed("==", extent, zero))
        span = builder.mul(builder.sub(extent, one), stride)
        negative = builder.icmp_signed("<", span, zero)
        lo = builder.add(lo, builder.select(negative, span, zero))
        hi = builder.add(hi, builder.select(negative, zero, span))
    return lo, builder.add(hi, array.itemsize), empty


def _intersect(context, builder, x, x_ndim, y, y_ndim):
    """Emit: do the (non-empty) byte ranges of the arrays ``x`` and ``y`` intersect?"""
    xlo, xhi, xempty = _memory_extent(context, builder, x, x_ndim)
    ylo, yhi, yempty = _memory_extent(context, builder, y, y_ndim)
    overlap = builder.and_(builder.icmp_signed("<", xlo, yhi), builder.icmp_signed("<", ylo, xhi))
    return builder.and_(overlap, builder.not_(builder.or_(xempty, yempty)))


def same_view_conflict(context, builder, t, target, o, other):
    """Emit: does the array ``o`` (type ``other``) overlap ``t`` (type ``target``) without being the same view?

    Writing ``t`` in place while reading ``o`` is then unsafe (Numba, unlike
    NumPy, does not buffer overlapping operands). The same view (same
    start, same strides where ``o`` is not broadcast) is safe: every
    element is read before it is written.
    """
    same = cgutils.false_bit
    if target.ndim == other.ndim:
        same = builder.icmp_unsigned("==", builder.ptrtoint(t.data, cgutils.intp_t), builder.ptrtoint(o.data, cgutils.intp_t))
        one = context.get_constant(types.intp, 1)
        o_shapes = cgutils.unpack_tuple(builder, o.shape, other.ndim)
        o_strides = cgutils.unpack_tuple(builder, o.strides, other.ndim)
        t_strides = cgutils.unpack_tuple(builder, t.strides, target.ndim)
        for extent, ostride, tstride in zip(o_shapes, o_strides, t_strides):
            fits = builder.or_(builder.icmp_signed("==", extent, one), builder.icmp_signed("==", ostride, tstride))
            same = builder.and_(same, fits)
    return builder.and_(_intersect(context, builder, t, target.ndim, o, other.ndim), builder.not_(same))


@intrinsic
def conflicts(typingctx, target, other):
    """True when ``other``'s memory overlaps ``target``'s but is not the same view of it (``same_view_conflict``)."""
    if not (isinstance(target, types.Array) and isinstance(other, types.Array)):
        return None

    def codegen(context, builder, sig, args):
        t = context.make_array(sig.args[0])(context, builder, args[0])
        o = context.make_array(sig.args[1])(context, builder, args[1])
        return same_view_conflict(context, builder, t, target, o, other)

    return types.boolean(target, other), codegen


@intrinsic
def overlaps(typingctx, a, b):
    """True when the memory ``a`` touches and the memory ``b`` touches intersect."""
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)):
        return None

    def codegen(context, builder, sig, args):
        x = context.make_array(sig.args[0])(context, builder, args[0])
        y = context.make_array(sig.args[1])(context, builder, args[1])
        return _intersect(context, builder, x, a.ndim, y, b.ndim)

    return types.boolean(a, b), codegen


@intrinsic
def same_memory(typingctx, a, b):
    """Whether the arrays ``a`` and ``b`` start at the same address (one is the other, or a view of it)."""
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)):
        return None

    def codegen(context, builder, sig, args):
        x = context.make_array(sig.args[0])(context, builder, args[0])
        y = context.make_array(sig.args[1])(context, builder, args[1])
        return builder.icmp_unsigned("==", builder.ptrtoint(x.data, cgutils.intp_t), builder.ptrtoint(y.data, cgutils.intp_t))

    return types.boolean(a, b), codegen


__all__ = ["conflicts", "overlaps", "same_memory", "same_view_conflict"]
