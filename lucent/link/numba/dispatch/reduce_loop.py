"""A reduction kernel's checks, output and loops emitted as LLVM IR by one intrinsic.

The reduction counterpart of :mod:`.elemwise_loop`: ``ReduceCodegen`` makes
a single-threaded reduction whose element expression has no range checks
and whose accumulator ``fold_lanes`` supports one call

    return reduce_loop((i0, i1, ), reduce_body, '', 'Sum', '..|..', 'add', 'float64', 'float64', '0,1', '')

whose lowering emits what the Python statements of the kernel did, in the
same order of operations (the rows loop's results are the same bit for bit;
the general loop now uses the vectorisable math functions where the
statements used libm, within an ulp of each other):

* the broadcast checks of ``kernel_prologue``, and for a maximum or minimum
  the error on an empty reduction (its message is the last argument);
* **rows** (the reduced axes are the trailing ones, every input that is not
  a single element has the full shape and is typed C): the input is a
  ``(rows, cols)`` matrix; each row is cut into blocks of ``BLOCK``
  elements, a block's values (``reduce_body``, the element expression cast
  to the accumulator dtype) fill a buffer on the stack and are folded in
  four interleaved accumulators (``lane_fold.emit_fold``), each block's
  result combined into the row's;
* **general** (any other axes, layouts or broadcasting): every element in
  index order combined into its output element, which starts from the
  identity; an accumulator of another dtype than the output goes through
  a buffer of its own, converted at the end.

The element's value is emitted as :mod:`.elemwise_loop` emits it (the
``scalar_ir`` program, the third argument, or ``reduce_body`` compiled as a
subroutine). The other literal arguments are: who raises, the broadcast pattern, the combining
kind (``lane_fold.KINDS``), the accumulator and output dtypes, the reduced
axes (``,``-separated, sorted) and the message for an empty reduction
(``''``: the kind has an identity).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic
from numba.np.numpy_support import from_dtype

from lucent.link.numba.describe import dispatch_files_digest
from lucent.link.numba.dispatch import lane_fold
from lucent.link.numba.dispatch.elemwise_loop import byte_pointer, element_emitter
from lucent.link.numba.dispatch.kernel_prologue import emit_broadcast_lengths
from lucent.link.numba.dispatch.memory import allocate_extents

#: Digest of the files whose intrinsics emit these kernels (kernels name it in their text).
REDUCE_LOOP_VERSION = dispatch_files_digest(
    "reduce_loop.py", "elemwise_loop.py", "kernel_prologue.py", "lane_fold.py", "scalar_ir.py", "memory.py",
)

#: Elements per block of the rows loop (the buffer lives on the stack).
BLOCK = 512

#: (accumulator, output) dtype pairs whose conversion is the IR cast (the others keep statements).
CONVERSIONS = {("float64", "float32")}


def converts_exactly(acc, out) -> bool:
    """Whether ``reduce_loop`` can convert accumulator ``acc`` to output ``out`` (both dtype names)."""
    return acc == out or (acc, out) in CONVERSIONS


def _literals(*values):
    if not all(isinstance(v, types.StringLiteral) for v in values):
        return None
    return [v.literal_value for v in values]


@intrinsic
def reduce_loop(typingctx, arrays, body, program, who, pattern, kind, acc, out, axes, empty_message):
    """The reduction of ``body(*elements)`` over ``axes`` (see the module docstring)."""
    if not isinstance(body, types.Dispatcher):
        return None
    literal = _literals(program, who, pattern, kind, acc, out, axes, empty_message)
    if literal is None or not isinstance(arrays, types.BaseTuple):
        return None
    program_text, name, pattern_text, how, acc_name, out_name, axes_text, message = literal
    if not all(isinstance(a, types.Array) for a in arrays) or how not in lane_fold.KINDS:
        return None
    if not (lane_fold.supported(acc_name) and converts_exactly(acc_name, out_name)):
        return None
    fields = pattern_text.split("|")
    nin = len(fields)
    nd = arrays[0].ndim
    if len(arrays) != nin or any(a.ndim != nd for a in arrays) or any(len(f) != nd for f in fields):
        return None
    ones = [[c == "1" for c in field] for field in fields]
    reduced = [int(a) for a in axes_text.split(",")] if axes_text else []
    kept = [d for d in range(nd) if d not in reduced]
    acc_type = from_dtype(np.dtype(acc_name))
    out_dtype = from_dtype(np.dtype(out_name))
    result = types.Array(out_dtype, len(kept), "C")
    single = [nd > 0 and all(ones[j]) for j in range(nin)]
    trailing = bool(reduced) and reduced == list(range(min(reduced), nd))
    partial = any(any(ones[j]) and not single[j] for j in range(nin))
    rows_loop = (
        nd > 0 and trailing and not partial and all(a.layout == "C" for a, s in zip(arrays, single) if not s)
    )
    in_types = list(arrays)

    def codegen(context, builder, sig, args):
        intp = context.get_value_type(types.intp)
        zero, one = ir.Constant(intp, 0), ir.Constant(intp, 1)
        values = cgutils.unpack_tuple(builder, args[0], nin)
        structs = [context.make_array(t)(context, builder, v) for t, v in zip(in_types, values)]
        shapes = [cgutils.unpack_tuple(builder, s.shape, nd) for s in structs]
        lengths = emit_broadcast_lengths(context, builder, shapes, ones, name)
        rsize = one
        for d in reduced:
            rsize = builder.mul(rsize, lengths[d])
        if message:
            with cgutils.if_unlikely(builder, builder.icmp_signed("==", rsize, zero)):
                context.call_conv.return_user_exc(builder, ValueError, (message,))
        output = allocate_extents(context, builder, result, [lengths[d] for d in kept])
        acc_ir = context.get_value_type(acc_type)
        identity = lane_fold.identity_constant(acc_ir, acc_type, how)
        combine = lane_fold.combiner(builder, acc_type, how)
        value_types = [t.dtype for t in in_types]
        emit, returns = element_emitter(context, builder, sig.args[1], program_text, value_types)
        value_type = returns[0] if returns else types.float64

        def value(pointers, preloaded):
            """The element's value in the accumulator dtype."""
            loaded = [
                preloaded[j] if preloaded[j] is not None else context.unpack_value(builder, in_types[j].dtype, p)
                for j, p in enumerate(pointers)
            ]
            return context.cast(builder, emit(loaded)[0], value_type, acc_type)

        def to_output(v):
            return context.cast(builder, v, acc_type, out_dtype)

        if rows_loop:
            first = min(reduced)
            rows = one
            for d in range(first):
                rows = builder.mul(rows, lengths[d])
            preloaded = [
                context.unpack_value(builder, in_types[j].dtype, structs[j].data) if single[j] else None
                for j in range(nin)
            ]
            block = ir.Constant(intp, BLOCK)
            buf = cgutils.alloca_once(builder, acc_ir, size=BLOCK)
            with cgutils.for_range(builder, rows) as row_loop:
                base = builder.mul(row_loop.index, rsize)
                total = cgutils.alloca_once_value(builder, identity)
                with cgutils.for_range_slice(builder, zero, rsize, block, intp=intp) as (start, _):
                    end = builder.add(start, block)
                    stop = builder.select(builder.icmp_signed("<", end, rsize), end, rsize)
                    with cgutils.for_range_slice(builder, start, stop, one, intp=intp) as (j, _):
                        at = builder.add(base, j)
                        v = value(
                            [builder.gep(s.data, [at], inbounds=True) if not single[k] else None for k, s in enumerate(structs)],
                            preloaded,
                        )
                        builder.store(v, builder.gep(buf, [builder.sub(j, start)], inbounds=True))
                    folded = lane_fold.emit_fold(
                        builder,
                        lambda q: builder.load(builder.gep(buf, [q], inbounds=True)),
                        zero,
                        builder.sub(stop, start),
                        identity,
                        combine,
                        intp,
                    )
                    builder.store(combine(builder.load(total), folded), total)
                target = builder.gep(output.data, [row_loop.index], inbounds=True)
                context.pack_value(builder, out_dtype, to_output(builder.load(total)), target)
        else:
            direct = acc_type == out_dtype
            accs_type = types.Array(acc_type, len(kept), "C")
            accs = output if direct else allocate_extents(context, builder, accs_type, [lengths[d] for d in kept])
            count = accs.nitems
            with cgutils.for_range(builder, count) as fill:
                context.pack_value(builder, acc_type, identity, builder.gep(accs.data, [fill.index], inbounds=True))
            in_strides = [cgutils.unpack_tuple(builder, s.strides, nd) for s in structs]
            # C strides of the accumulators over the kept dimensions, in elements
            kept_steps = {}
            step = one
            for d in reversed(kept):
                kept_steps[d] = step
                step = builder.mul(step, lengths[d])
            data_ptrs = [context.get_data_type(t.dtype).as_pointer() for t in in_types]

            def level(d, offsets, at):
                if d == nd:
                    pointers = [byte_pointer(builder, s, off, p) for s, off, p in zip(structs, offsets, data_ptrs)]
                    slot = builder.gep(accs.data, [at], inbounds=True)
                    current = context.unpack_value(builder, acc_type, slot)
                    context.pack_value(builder, acc_type, combine(current, value(pointers, [None] * nin)), slot)
                    return
                with cgutils.for_range(builder, lengths[d]) as loop:
                    k = loop.index
                    moved = [
                        off if ones[j][d] else builder.add(off, builder.mul(k, in_strides[j][d]))
                        for j, off in enumerate(offsets)
                    ]
                    where = builder.add(at, builder.mul(k, kept_steps[d])) if d in kept_steps else at
                    level(d + 1, moved, where)

            level(0, [zero] * nin, zero)
            if not direct:
                with cgutils.for_range(builder, count) as copy:
                    v = context.unpack_value(builder, acc_type, builder.gep(accs.data, [copy.index], inbounds=True))
                    context.pack_value(builder, out_dtype, to_output(v), builder.gep(output.data, [copy.index], inbounds=True))
                context.nrt.decref(builder, accs_type, accs._getvalue())
        return output._getvalue()

    return result(arrays, body, program, who, pattern, kind, acc, out, axes, empty_message), codegen


__all__ = ["BLOCK", "REDUCE_LOOP_VERSION", "converts_exactly", "reduce_loop"]
