"""An Elemwise kernel's checks, outputs and loops emitted as LLVM IR by one intrinsic.

Written as Python statements for Numba, the kernel of ``a1 * (1 - a0*a0)``
cost about 85 ms to compile: Numba types and lowers its range loop, its
array indexing and the views it takes, then LLVM spends as long again
cleaning that IR up. What the loop needs is known when the kernel is
generated (the rank, which inputs broadcast along which dimensions, the
layouts of the argument types), so here the whole kernel is one call

    return elemwise_loop((i0, i1, ), elemwise_body, '', 'Elemwise', '..|..', 'float64', 'i1')

whose lowering emits the IR directly: the broadcast checks and messages of
``kernel_prologue``, the outputs (new, in place as ``inplace_output``
decides, or the caller's destination), and the loop, which is

* **flat** (one loop over ``size`` elements, LLVM vectorises it) when every
  input that has the output's shape and every output is typed C and the
  other inputs have a single element (loaded once);
* **nested** otherwise: one loop per dimension over byte offsets, the
  broadcast dimensions of an input not advancing it; the innermost stride
  of an array typed C is the item size, a constant, so that loop
  vectorises too.

The element itself is the node's scalar program: emitted directly when it
is float64 arithmetic and vectorisable functions (the third argument, its
``scalar_ir`` text), else ``elemwise_body``, the program as a Python
function of the kernel's module, compiled as a subroutine of the kernel
(Numba's ``compile_subroutine``, with the kernel's flags), marked
``alwaysinline`` and inlined into the loop. The kernel then costs
about 40% of the statements' compile time and computes the same values.

``ElemwiseCodegen`` uses this for single-threaded kernels whose scalar
program has no range checks (the fast/safe blocks of ``sin``/``cos`` and
the parallel chunks stay Python statements).

The arguments after the body and the program are string constants of the kernel's source:
who raises, the broadcast pattern (``kernel_prologue.broadcast_pattern``),
the output dtypes (``,``-separated), and for each output (``,``-separated)
``new``, ``iJ`` (computed in place of input ``J``) or ``dest`` (written
into the array passed after the inputs).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba.core import cgutils, targetconfig, types
from numba.core.imputils import impl_ret_borrowed
from numba.core.typing import signature
from numba.extending import intrinsic
from numba.np.numpy_support import from_dtype

from lucent.link.numba.describe import dispatch_files_digest
from lucent.link.numba.dispatch.kernel_prologue import emit_broadcast_lengths, emit_inplace_choice
from lucent.link.numba.dispatch.memory import allocate_extents
from lucent.link.numba.dispatch.scalar_ir import emit_program

#: Digest of the files whose intrinsics emit these kernels (kernels name it in their text).
ELEMWISE_LOOP_VERSION = dispatch_files_digest(
    "elemwise_loop.py", "kernel_prologue.py", "scalar_ir.py", "memory.py", "overlap.py",
)


def _parse(arrays, who, pattern, dtypes, outputs):
    """``(who, ones, nin, out_dtypes, out_kinds)`` from the literal arguments, or ``None``."""
    literals = (who, pattern, dtypes, outputs)
    if not all(isinstance(x, types.StringLiteral) for x in literals):
        return None
    if not isinstance(arrays, types.BaseTuple) or not all(isinstance(a, types.Array) for a in arrays):
        return None
    fields = pattern.literal_value.split("|")  # one field per input (a 0-d input's is empty)
    out_kinds = outputs.literal_value.split(",")
    out_dtypes = [from_dtype(np.dtype(d)) for d in dtypes.literal_value.split(",")]
    nin = len(fields)
    has_dest = "dest" in out_kinds
    if len(arrays) != nin + has_dest or len(out_kinds) != len(out_dtypes) or nin == 0:
        return None
    nd = arrays[0].ndim
    if any(a.ndim != nd for a in arrays) or any(len(f) != nd for f in fields):
        return None
    ones = [[c == "1" for c in field] for field in fields]
    return who.literal_value, ones, nin, out_dtypes, out_kinds


def _output_types(arrays, nin, out_dtypes, out_kinds):
    """The type of each output array (as ``inplace_output`` and the destination give them)."""
    nd = arrays[0].ndim
    result = []
    for dtype, kind in zip(out_dtypes, out_kinds):
        fresh = types.Array(dtype, nd, "C")
        if kind == "new":
            result.append(fresh)
        elif kind == "dest":
            dest = arrays[nin]
            if dest.dtype != dtype or not dest.mutable:
                return None
            result.append(dest)
        else:
            target = arrays[int(kind[1:])]
            if target.dtype != dtype:
                return None
            if not target.mutable:
                result.append(fresh)
            else:
                result.append(target if target.layout == "C" else target.copy(layout="A"))
    return result


def compile_body(context, builder, body, arg_types):
    """The body's compile result for ``arg_types``, inlined into the kernel's module when optimised."""
    flags = targetconfig.ConfigStack().top().copy()
    # the return type is inferred: typing the body through its dispatcher would compile it on its own
    cres = context.compile_subroutine(builder, body.dispatcher.py_func, signature(None, *arg_types), flags=flags)
    cres.library.get_function(cres.fndesc.mangled_name).add_function_attribute("alwaysinline")
    return cres, cres.signature


def element_emitter(context, builder, body, program, value_types):
    """``(emit, result_types)``: ``emit(values)`` emits one element's results from its input values.

    The ``scalar_ir`` program when there is one (float64 results), else a
    call of ``body`` compiled as an inlined subroutine (``compile_body``),
    whose status is propagated; ``result_types`` are the results' types.
    """
    if program:
        return (lambda values: emit_program(context, builder, program, values)), None
    cres, body_sig = compile_body(context, builder, body, value_types)
    body_fn = context.declare_function(builder.module, cres.fndesc)
    returned = body_sig.return_type
    several = isinstance(returned, types.BaseTuple)

    def emit(values):
        status, value = context.call_conv.call_function(builder, body_fn, returned, value_types, values)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        return cgutils.unpack_tuple(builder, value, len(returned)) if several else [value]

    return emit, list(returned) if several else [returned]


def byte_pointer(builder, array, offset, dtype_ptr):
    """A pointer of type ``dtype_ptr`` ``offset`` bytes past the data of the array struct ``array``."""
    raw = builder.bitcast(array.data, ir.IntType(8).as_pointer())
    return builder.bitcast(builder.gep(raw, [offset]), dtype_ptr)


@intrinsic
def elemwise_loop(typingctx, arrays, body, program, who, pattern, dtypes, outputs):
    """The outputs of an Elemwise node over ``arrays`` (see the module docstring)."""
    if not isinstance(body, types.Dispatcher):
        return None
    parsed = _parse(arrays, who, pattern, dtypes, outputs)
    if parsed is None or not isinstance(program, types.StringLiteral):
        return None
    program_text = program.literal_value
    name, ones, nin, out_dtypes, out_kinds = parsed
    out_types = _output_types(arrays, nin, out_dtypes, out_kinds)
    if out_types is None:
        return None
    nd = arrays[0].ndim
    in_types = list(arrays)[:nin]
    # the output has a static length 1 where every input has one
    out_one = [all(ones[j][d] for j in range(nin)) for d in range(nd)]
    # an input with the output's shape, and one with a single element
    full = [all(out_one[d] for d in range(nd) if ones[j][d]) for j in range(nin)]
    single = [all(ones[j]) for j in range(nin)]
    flat = nd > 0 and all(f or s for f, s in zip(full, single))
    flat = flat and all(t.layout == "C" for t, f in zip(in_types, full) if f)
    flat = flat and all(t.layout == "C" for t in out_types)
    result = out_types[0] if len(out_types) == 1 else types.Tuple(out_types)

    def codegen(context, builder, sig, args):
        intp = context.get_value_type(types.intp)
        zero = ir.Constant(intp, 0)
        array_types = list(sig.args[0])
        values = cgutils.unpack_tuple(builder, args[0], len(array_types))
        structs = [context.make_array(t)(context, builder, v) for t, v in zip(array_types, values)]
        shapes = [cgutils.unpack_tuple(builder, s.shape, nd) for s in structs]
        lengths = emit_broadcast_lengths(context, builder, shapes[:nin], ones, name)
        if "dest" in out_kinds:
            dest_shape = shapes[nin]
            wrong = cgutils.false_bit
            for have, want in zip(dest_shape, lengths):
                wrong = builder.or_(wrong, builder.icmp_signed("!=", have, want))
            with cgutils.if_unlikely(builder, wrong):
                context.call_conv.return_user_exc(
                    builder, ValueError, (f"{name}: the destination given for the result has the wrong shape",)
                )
        outs = []
        for o, (kind, out_type) in enumerate(zip(out_kinds, out_types)):
            if kind == "new" or (kind != "dest" and not array_types[int(kind[1:])].mutable):
                out = allocate_extents(context, builder, out_type, lengths)._getvalue()
            elif kind == "dest":
                out = impl_ret_borrowed(context, builder, out_type, values[nin])
            else:
                j = int(kind[1:])
                others = [(array_types[k], structs[k]) for k in range(nin) if k != j]
                out = emit_inplace_choice(
                    context, builder, array_types[j], values[j], structs[j], others, out_type, lengths
                )
            outs.append(out)
        out_structs = [context.make_array(t)(context, builder, v) for t, v in zip(out_types, outs)]

        value_types = [t.dtype for t in in_types]
        emit, returns = element_emitter(context, builder, sig.args[1], program_text, value_types)
        returns = returns or [types.float64] * len(out_types)
        data_ptrs = [context.get_data_type(t.dtype).as_pointer() for t in in_types]
        out_ptrs = [context.get_data_type(t.dtype).as_pointer() for t in out_types]

        def element(in_pointers, out_pointers, preloaded):
            loaded = [
                preloaded[j] if preloaded[j] is not None else context.unpack_value(builder, in_types[j].dtype, p)
                for j, p in enumerate(in_pointers)
            ]
            parts = emit(loaded)
            for part, from_type, out_type, pointer in zip(parts, returns, out_types, out_pointers):
                context.pack_value(builder, out_type.dtype, context.cast(builder, part, from_type, out_type.dtype), pointer)

        if nd == 0:
            element([s.data for s in structs[:nin]], [s.data for s in out_structs], [None] * nin)
        elif flat:
            size = ir.Constant(intp, 1)
            for n in lengths:
                size = builder.mul(size, n)
            preloaded = [
                context.unpack_value(builder, in_types[j].dtype, structs[j].data) if not full[j] else None
                for j in range(nin)
            ]
            with cgutils.for_range(builder, size) as loop:
                k = loop.index
                element(
                    [builder.gep(s.data, [k], inbounds=True) if full[j] else None for j, s in enumerate(structs[:nin])],
                    [builder.gep(s.data, [k], inbounds=True) for s in out_structs],
                    preloaded,
                )
        else:
            in_strides = [cgutils.unpack_tuple(builder, s.strides, nd) for s in structs[:nin]]
            out_strides = [cgutils.unpack_tuple(builder, s.strides, nd) for s in out_structs]

            def stride(array_type, strides, d):
                if d == nd - 1 and array_type.layout == "C":
                    return context.get_constant(types.intp, context.get_abi_sizeof(context.get_data_type(array_type.dtype)))
                return strides[d]

            def level(d, in_offsets, out_offsets):
                with cgutils.for_range(builder, lengths[d]) as loop:
                    k = loop.index
                    ins = [
                        off if ones[j][d] else builder.add(off, builder.mul(k, stride(in_types[j], in_strides[j], d)))
                        for j, off in enumerate(in_offsets)
                    ]
                    outs_ = [
                        builder.add(off, builder.mul(k, stride(out_types[o], out_strides[o], d)))
                        for o, off in enumerate(out_offsets)
                    ]
                    if d == nd - 1:
                        element(
                            [byte_pointer(builder, s, off, p) for s, off, p in zip(structs, ins, data_ptrs)],
                            [byte_pointer(builder, s, off, p) for s, off, p in zip(out_structs, outs_, out_ptrs)],
                            [None] * nin,
                        )
                    else:
                        level(d + 1, ins, outs_)

            level(0, [zero] * nin, [zero] * len(out_types))
        if len(outs) == 1:
            return outs[0]
        return context.make_tuple(builder, result, outs)

    return result(arrays, body, program, who, pattern, dtypes, outputs), codegen


__all__ = ["ELEMWISE_LOOP_VERSION", "byte_pointer", "compile_body", "element_emitter", "elemwise_loop"]
