"""Loops on paths a kernel seldom takes, emitted once per module as small functions.

A product kernel copies an operand whose strides BLAS cannot read (a
slice with steps in both dimensions, a reversed view) and accumulates the
product in a loop when BLAS cannot write the accumulator (``alpha == 0``,
an accumulator overlapping an operand or strided in both dimensions).
Neither happens for the operands models pass, yet each such loop was
written into the kernel where it was used: LLVM optimised, vectorised and
emitted every copy of it, about a quarter of compiling a ``Gemm`` kernel.

Here each loop is a function of the kernel's module, defined once however
many call sites use it, marked ``noinline`` and ``minsize``: LLVM compiles
it small (no vectorised variants, no unrolling) and once. Such a loop runs
at the speed of a plain strided loop, which is what a gather over general
strides runs at anyway.

The functions take raw data pointers and byte strides, so one serves every
layout of its arguments.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


def _small_function(module, name, fnty):
    """The module's function ``name`` and whether its body is still to be written."""
    existing = module.globals.get(name)
    if existing is not None:
        return existing, False
    fn = ir.Function(module, fnty, name)
    fn.linkage = "internal"
    for attribute in ("noinline", "minsize", "optsize", "nounwind"):
        fn.attributes.add(attribute)
    return fn, True


def _pack(builder, values, intp):
    """A pointer to a stack array holding ``values`` (intp)."""
    array = cgutils.pack_array(builder, values, ty=intp)
    slot = cgutils.alloca_once(builder, array.type)
    builder.store(array, slot)
    return builder.bitcast(slot, intp.as_pointer())


def _unpack(builder, pointer, count, intp):
    return [builder.load(builder.gep(pointer, [ir.Constant(intp, d)])) for d in range(count)]


def copy_to_c_order(context, builder, dtype, ndim, source_data, shape, source_strides, dest_data):
    """Emit a call copying a strided ``ndim``-d array of ``dtype`` into C-ordered ``dest_data``."""
    intp = context.get_value_type(types.intp)
    element = context.get_data_type(dtype).as_pointer()
    fnty = ir.FunctionType(ir.VoidType(), [element, element, intp.as_pointer(), intp.as_pointer()])
    fn, new = _small_function(builder.module, f"lucent.cold.copy_c.{dtype}.{ndim}", fnty)
    if new:
        body = ir.IRBuilder(fn.append_basic_block("entry"))
        src, dst, shape_p, strides_p = fn.args
        extents = _unpack(body, shape_p, ndim, intp)
        strides = _unpack(body, strides_p, ndim, intp)
        position = cgutils.alloca_once_value(body, ir.Constant(intp, 0))
        with cgutils.loop_nest(body, extents, intp) as index:
            at = cgutils.get_item_pointer2(context, body, src, extents, strides, "A", index, wraparound=False)
            k = body.load(position)
            body.store(body.load(at), body.gep(dst, [k]))
            body.store(body.add(k, ir.Constant(intp, 1)), position)
        body.ret_void()
    builder.call(fn, [source_data, dest_data, _pack(builder, shape, intp), _pack(builder, source_strides, intp)])


@intrinsic
def blend_into(typingctx, target, z, out, alpha, beta):
    """``target[...] = alpha * out`` where ``beta == 0``, else ``beta * z + alpha * out``, element by element.

    What ``perform`` does to accumulate a product ``out`` into ``z`` (``z``
    is not read when ``beta`` is 0, so its NaNs do not spread). The three
    arrays have one shape (``target`` may be ``z`` or ``out``); the
    arithmetic is done in the type NumPy gives ``beta * z + alpha * out``.
    """
    arrays = (target, z, out)
    if not all(isinstance(a, types.Array) and isinstance(a.dtype, types.Float) for a in arrays):
        return None
    if len({a.ndim for a in arrays}) != 1 or not target.mutable:
        return None
    if not (isinstance(alpha, types.Float) and isinstance(beta, types.Float)):
        return None
    compute = max((alpha, beta, target.dtype, z.dtype, out.dtype), key=lambda t: t.bitwidth)
    ndim = target.ndim

    def codegen(context, builder, sig, args):
        intp = context.get_value_type(types.intp)
        value = context.get_value_type(compute)
        parts = [context.make_array(t)(context, builder, v) for t, v in zip(sig.args[:3], args[:3])]
        pointers = [context.get_data_type(t.dtype).as_pointer() for t in sig.args[:3]]
        name = f"lucent.cold.blend.{target.dtype}.{z.dtype}.{out.dtype}.{compute}.{ndim}"
        fnty = ir.FunctionType(ir.VoidType(), pointers + [intp.as_pointer()] * 4 + [value, value])
        fn, new = _small_function(builder.module, name, fnty)
        if new:
            body = ir.IRBuilder(fn.append_basic_block("entry"))
            t_data, z_data, o_data, shape_p, t_p, z_p, o_p, alpha_v, beta_v = fn.args
            extents = _unpack(body, shape_p, ndim, intp)
            strides = [_unpack(body, p, ndim, intp) for p in (t_p, z_p, o_p)]
            beta_is_zero = body.fcmp_ordered("==", beta_v, ir.Constant(value, 0.0))
            with cgutils.loop_nest(body, extents, intp) as index:
                at = [
                    cgutils.get_item_pointer2(context, body, data, extents, s, "A", index, wraparound=False)
                    for data, s in zip((t_data, z_data, o_data), strides)
                ]
                o_val = context.cast(body, body.load(at[2]), out.dtype, compute)
                product = body.fmul(alpha_v, o_val)
                z_val = context.cast(body, body.load(at[1]), z.dtype, compute)
                blended = body.select(beta_is_zero, product, body.fadd(body.fmul(beta_v, z_val), product))
                body.store(context.cast(body, blended, compute, target.dtype), at[0])
            body.ret_void()
        shape = cgutils.unpack_tuple(builder, parts[0].shape, ndim)
        strides = [_pack(builder, cgutils.unpack_tuple(builder, p.strides, ndim), intp) for p in parts]
        builder.call(
            fn,
            [p.data for p in parts]
            + [_pack(builder, shape, intp)]
            + strides
            + [
                context.cast(builder, args[3], sig.args[3], compute),
                context.cast(builder, args[4], sig.args[4], compute),
            ],
        )
        return context.get_dummy_value()

    return types.none(target, z, out, alpha, beta), codegen


@intrinsic
def copy_row_into(typingctx, dest, source, index):
    """``dest[...] = source[index]`` for a C ``dest`` of ``source``'s row shape, through ``copy_to_c_order``.

    A loop's sequence row that is not contiguous is copied into a scratch
    row before the step reads it. That happens for few sequences (a
    transposed or doubly strided one), yet as statements each such copy was
    a view, a vectorised loop and its remainder in every loop's code.
    ``index`` is in range (the loop's step number).
    """
    if not (isinstance(dest, types.Array) and isinstance(source, types.Array) and isinstance(index, types.Integer)):
        return None
    if source.ndim < 2 or dest.ndim != source.ndim - 1 or dest.layout != "C" or dest.dtype != source.dtype:
        return None
    if not dest.mutable:
        return None
    ndim = dest.ndim

    def codegen(context, builder, sig, args):
        target = context.make_array(sig.args[0])(context, builder, args[0])
        array = context.make_array(sig.args[1])(context, builder, args[1])
        strides = cgutils.unpack_tuple(builder, array.strides, source.ndim)
        row = context.cast(builder, args[2], sig.args[2], types.intp)
        raw = builder.bitcast(array.data, ir.IntType(8).as_pointer())
        start = builder.bitcast(builder.gep(raw, [builder.mul(row, strides[0])]), array.data.type)
        shape = cgutils.unpack_tuple(builder, array.shape, source.ndim)[1:]
        copy_to_c_order(context, builder, source.dtype, ndim, start, shape, strides[1:], target.data)
        return context.get_dummy_value()

    return types.none(dest, source, index), codegen


__all__ = ["blend_into", "copy_row_into", "copy_to_c_order"]
