"""What a generated Elemwise or reduction kernel does before its loop, emitted as LLVM IR in one piece.

Before its loop, a kernel checks the inputs' shapes against the node's
broadcast pattern and picks the array it writes. Written as Python
statements, these checks were half of compiling a typical element-wise
kernel: every ``raise`` is a block of its own that Numba types, lowers and
frees every live array on, and an output that is "the destroyed input,
unless it overlaps another input" is a variable assigned on two paths,
which Numba merges with reference counting. For an MLP training step that
was about 60 ms of each of its dozen kernels.

Here each is one intrinsic, lowered straight to IR:

* ``broadcast_shape((i0, i1, ...), who, pattern)`` checks the run-time
  lengths and returns the output's shape, raising the same ``ValueError``
  messages as ``perform``;
* ``inplace_output(target, shape, (others...), dtype)`` is ``target``
  itself, or a new array when ``target`` is read-only or overlaps one of
  ``others`` in a different layout (NumPy buffers overlapping operands;
  a Numba loop does not).

``who`` and ``pattern`` are string constants of the kernel's source, read
when it is typed: the pattern has one field per input, separated by
``|``, each with one character per dimension, ``1`` where the input's type
has a static length 1 there and ``.`` elsewhere.

A check that fails returns the error from inside the kernel, as a call to
another compiled function that raises does: the arrays the kernel holds are
not released on that path (Numba's rule for errors raised by callees).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from lucent.link.numba.dispatch.memory import _output_type, allocate_array, allocate_extents
from lucent.link.numba.dispatch.overlap import same_view_conflict

RUNTIME_BROADCAST_HINT = (
    "an input has length 1 there at run time but its type does not say so. Runtime broadcasting is "
    "not allowed: give the variable a static shape with 1 there (e.g. lt.tensor(shape=(1, None)) or "
    "specify_shape)"
)


def broadcast_pattern(in_static) -> str:
    """The ``pattern`` argument of ``broadcast_shape`` for the inputs' static shapes."""
    return "|".join("".join("1" if length == 1 else "." for length in shape) for shape in in_static)


def broadcast_shape_lines(in_static, nd, who="Elemwise"):
    """Statements setting ``shape`` and ``n0, n1, ...`` from the kernel's inputs ``i0, i1, ...``.

    A dimension's length comes from the inputs that do not have static
    length 1 there; they must agree, and the static-1 inputs must have
    length 1 (runtime broadcasting of other lengths is refused, as in
    ``perform``).
    """
    arrays = "".join(f"i{j}, " for j in range(len(in_static)))
    lines = [f"shape = broadcast_shape(({arrays}), {who!r}, {broadcast_pattern(in_static)!r})"]
    if nd:
        lines.append("".join(f"n{d}, " for d in range(nd)) + "= shape")
    return lines


def _raise_when(context, builder, condition, message):
    with cgutils.if_unlikely(builder, condition):
        context.call_conv.return_user_exc(builder, ValueError, (message,))


def _parse_pattern(arrays, who, pattern):
    """``(who, [per-input static-1 flags])`` or ``None`` when the arguments do not fit."""
    if not (isinstance(who, types.StringLiteral) and isinstance(pattern, types.StringLiteral)):
        return None
    if not isinstance(arrays, types.BaseTuple) or not all(isinstance(a, types.Array) for a in arrays):
        return None
    fields = pattern.literal_value.split("|")
    if len(fields) != len(arrays) or any(len(f) != a.ndim for f, a in zip(fields, arrays)):
        return None
    if len({a.ndim for a in arrays}) > 1:
        return None
    return who.literal_value, [[c == "1" for c in field] for field in fields]


def emit_broadcast_lengths(context, builder, shapes, ones, name):
    """Emit the checks of ``broadcast_shape`` on the inputs' ``shapes`` (IR values); return the output's lengths.

    ``ones[j][d]``: input ``j`` has a static length 1 in dimension ``d``.
    """
    intp = context.get_value_type(types.intp)
    one = ir.Constant(intp, 1)
    nd = len(shapes[0]) if shapes else 0
    lengths = []
    for d in range(nd):
        full = [j for j in range(len(ones)) if not ones[j][d]]
        if full:
            n = shapes[full[0]][d]
            if len(full) > 1:
                # the first input that differs decides the message
                n_is_one = builder.icmp_signed("==", n, one)
                code = ir.Constant(intp, 0)
                for j in reversed(full[1:]):
                    m = shapes[j][d]
                    kind = builder.select(
                        builder.or_(n_is_one, builder.icmp_signed("==", m, one)), ir.Constant(intp, 2), one
                    )
                    code = builder.select(builder.icmp_signed("!=", m, n), kind, code)
                _raise_when(
                    context,
                    builder,
                    builder.icmp_signed("==", code, ir.Constant(intp, 2)),
                    f"{name}: input shapes are not compatible in dimension {d}: {RUNTIME_BROADCAST_HINT}",
                )
                _raise_when(
                    context,
                    builder,
                    builder.icmp_signed("==", code, one),
                    f"{name}: input shapes are not compatible in dimension {d}",
                )
        else:
            n = one
        for j in range(len(ones)):
            if ones[j][d]:
                _raise_when(
                    context,
                    builder,
                    builder.icmp_signed("!=", shapes[j][d], one),
                    f"{name}: input {j} has a static length 1 in dimension {d}",
                )
        lengths.append(n)
    return lengths


@intrinsic
def broadcast_shape(typingctx, arrays, who, pattern):
    """The output shape of inputs ``arrays`` with static-1 ``pattern``; raises ``ValueError`` naming ``who``."""
    parsed = _parse_pattern(arrays, who, pattern)
    if parsed is None:
        return None
    name, ones = parsed
    nd = arrays[0].ndim if len(arrays) else 0
    result = types.UniTuple(types.intp, nd) if nd else types.Tuple(())

    def codegen(context, builder, sig, args):
        values = cgutils.unpack_tuple(builder, args[0], len(sig.args[0]))
        shapes = [
            cgutils.unpack_tuple(builder, context.make_array(ty)(context, builder, value).shape, nd)
            for ty, value in zip(sig.args[0], values)
        ]
        lengths = emit_broadcast_lengths(context, builder, shapes, ones, name)
        return context.make_tuple(builder, result, lengths)

    return result(arrays, who, pattern), codegen


def emit_inplace_choice(context, builder, target, value, t, others, result, extents, fresh=None):
    """Emit ``inplace_output``'s choice: the array ``value`` (type ``target``, struct ``t``), increfed,
    or a new C array of ``extents`` when it overlaps one of ``others`` (``(type, struct)`` pairs)
    without being the same view. The value has type ``result``."""
    if fresh is None:
        fresh = types.Array(target.dtype, target.ndim, "C")
    unsafe = cgutils.false_bit
    for other_type, o in others:
        unsafe = builder.or_(unsafe, same_view_conflict(context, builder, t, target, o, other_type))
    with builder.if_else(unsafe, likely=False) as (then, otherwise):
        with then:
            new = allocate_extents(context, builder, fresh, extents)._getvalue()
            new = context.cast(builder, new, fresh, result)
            new_block = builder.block
        with otherwise:
            same = context.cast(builder, value, target, result)
            context.nrt.incref(builder, result, same)
            same_block = builder.block
    chosen = builder.phi(new.type)
    chosen.add_incoming(new, new_block)
    chosen.add_incoming(same, same_block)
    return chosen


@intrinsic
def inplace_output(typingctx, target, shape, others, dtype):
    """``target``, or a new array of ``shape`` and ``dtype`` when writing ``target`` is unsafe.

    Unsafe: ``target`` is typed read-only, or its memory overlaps one of
    ``others`` without being the same view of it (see
    ``overlap.same_view_conflict``). The result is typed ``target``'s type
    when that is C-contiguous, else layout ``A`` (it may be either).
    """
    if not (isinstance(target, types.Array) and isinstance(others, types.BaseTuple)):
        return None
    if not all(isinstance(o, types.Array) for o in others):
        return None
    fresh = _output_type(shape, dtype)
    if fresh is None or fresh.ndim != target.ndim or fresh.dtype != target.dtype:
        return None
    if not target.mutable:

        def allocate(context, builder, sig, args):
            return allocate_array(context, builder, fresh, sig.args[1], args[1])._getvalue()

        return fresh(target, shape, others, dtype), allocate
    result = target if target.layout == "C" else target.copy(layout="A")

    def codegen(context, builder, sig, args):
        from numba.np.arrayobj import _parse_shape

        t = context.make_array(target)(context, builder, args[0])
        others_ = [
            (other_type, context.make_array(other_type)(context, builder, other))
            for other_type, other in zip(sig.args[2], cgutils.unpack_tuple(builder, args[2], len(sig.args[2])))
        ]
        extents = _parse_shape(context, builder, sig.args[1], args[1])
        return emit_inplace_choice(context, builder, target, args[0], t, others_, result, extents, fresh)

    return result(target, shape, others, dtype), codegen


__all__ = [
    "broadcast_shape",
    "broadcast_shape_lines",
    "broadcast_pattern",
    "emit_broadcast_lengths",
    "emit_inplace_choice",
    "inplace_output",
]
