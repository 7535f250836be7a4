"""The rows of a loop's ring buffer, oldest first: ``finish_ring``, emitted as IR where a loop ends.

A compiled ``Scan`` keeps a recurrent output that only needs its last rows
in a shortened buffer used as a ring (``lucent.scan.op``), and at the end
returns its rows oldest first, as ``_finish_ring`` does on the Python path:

* ``total <= len(buf)`` (the ring never wrapped): ``buf`` itself, or for a
  while loop the copy of its first ``total`` rows;
* otherwise the rows rotated by ``total % len(buf)``: within ``buf`` when it
  is C-contiguous (the rotation goes through a C-order copy of the rows),
  else into a new C array.

As a Numba function compiled once per process it cost about 0.18 s of a
cold loop's compile; as an intrinsic it is a few blocks of the loop's own
module (rows are moved with ``memcpy``).
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from lucent.link.numba.dispatch.memory import allocate_extents, c_order_copy


@intrinsic
def finish_ring(typingctx, buf, total, as_while):
    """``buf``'s rows oldest first after ``total`` rows were written into it as a ring (see the module docstring)."""
    if not (isinstance(buf, types.Array) and buf.ndim >= 1 and isinstance(total, types.Integer)):
        return None
    if not isinstance(as_while, types.Boolean):
        return None
    result = buf if buf.layout == "C" else buf.copy(layout="A")
    fresh = types.Array(buf.dtype, buf.ndim, "C")

    def codegen(context, builder, sig, args):
        from lucent.link.numba.dispatch.borrowed import emit_c_contiguous

        buf_t = sig.args[0]
        intp = context.get_value_type(types.intp)
        zero = ir.Constant(intp, 0)
        array = context.make_array(buf_t)(context, builder, args[0])
        shape = cgutils.unpack_tuple(builder, array.shape, buf.ndim)
        strides = cgutils.unpack_tuple(builder, array.strides, buf.ndim)
        store = shape[0]
        count = context.cast(builder, args[1], sig.args[1], types.intp)
        cut = context.cast(builder, args[2], sig.args[2], types.boolean)
        slot = cgutils.alloca_once(builder, context.get_value_type(result))

        def keep():
            context.nrt.incref(builder, buf_t, args[0])
            builder.store(context.cast(builder, args[0], buf_t, result), slot)

        copy_sig, copy_codegen = c_order_copy._defn(context.typing_context, buf_t)
        fits = builder.or_(builder.icmp_signed("<=", count, store), builder.icmp_signed("==", store, zero))
        with builder.if_else(fits) as (unwrapped, wrapped):
            with unwrapped:
                with builder.if_else(cut) as (first_rows, whole):
                    with first_rows:
                        view = context.make_array(buf_t)(context, builder)
                        context.populate_array(
                            view, data=array.data, shape=cgutils.pack_array(builder, [count] + shape[1:], ty=intp),
                            strides=array.strides, itemsize=array.itemsize, meminfo=array.meminfo, parent=array.parent,
                        )
                        copy = copy_codegen(context, builder, copy_sig, [view._getvalue()])
                        builder.store(context.cast(builder, copy, fresh, result), slot)
                    with whole:
                        keep()
            with wrapped:
                shift = builder.srem(count, store)
                with builder.if_else(builder.icmp_signed("==", shift, zero)) as (aligned, rotate):
                    with aligned:
                        keep()
                    with rotate:
                        rows_value = copy_codegen(context, builder, copy_sig, [args[0]])
                        rows = context.make_array(fresh)(context, builder, rows_value)
                        contiguous = emit_c_contiguous(context, builder, buf.dtype, shape, strides)
                        with builder.if_else(contiguous) as (itself, elsewhere):
                            with itself:
                                keep()
                            with elsewhere:
                                new = allocate_extents(context, builder, fresh, shape)
                                builder.store(context.cast(builder, new._getvalue(), fresh, result), slot)
                        out = context.make_array(result)(context, builder, builder.load(slot))
                        width = builder.sdiv(rows.nitems, store)
                        item = context.get_abi_sizeof(context.get_data_type(buf.dtype))
                        with cgutils.for_range(builder, store) as loop:
                            source_row = builder.srem(builder.add(loop.index, shift), store)
                            target = builder.gep(out.data, [builder.mul(loop.index, width)])
                            source = builder.gep(rows.data, [builder.mul(source_row, width)])
                            cgutils.raw_memcpy(builder, target, source, width, item)
                        context.nrt.decref(builder, fresh, rows_value)
        return builder.load(slot)

    return result(buf, total, as_while), codegen


__all__ = ["finish_ring"]
