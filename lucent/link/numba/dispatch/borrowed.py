"""Views that hold no reference to their memory, for loop steps and kernels.

A view made in Numba code owns a reference to its array's memory: an
atomic increment when it is made and a decrement when it dies. On a loop
step of a few dozen nanoseconds (the rows a loop passes to its step, a
kernel's second name for an argument) those updates were a third of the
time. The views here have no owner (a null ``meminfo``), so making and
dropping them costs nothing; each must not outlive the array it views,
which is why they are only made where that array is a kernel's argument,
its returned output, or a loop's own buffer.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def borrowed(typingctx, array):
    """``array`` itself, as a value that holds no reference to its memory (see ``borrowed_row``).

    For a kernel's second name of an argument (``_A = borrowed(a)``, then
    ``_A = a.copy()`` in the rare branch that needs a copy): the alias
    costs no atomic reference-count updates, and the copy, which is a new
    reference, is still freed when the name dies.
    """
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, sig, args):
        src = context.make_array(sig.args[0])(context, builder, args[0])
        out = context.make_array(sig.return_type)(context, builder)
        context.populate_array(
            out, data=src.data, shape=src.shape, strides=src.strides, itemsize=src.itemsize, meminfo=None,
        )
        return out._getvalue()

    return array(array), codegen

@intrinsic
def borrowed_row(typingctx, array, index):
    """``array[index]`` (index in range, non-negative) as a view that does not own its memory.

    A view made by indexing holds a reference to its array's memory: an
    atomic increment when it is made and a decrement when it dies. A loop
    kernel makes a few per step (the step's sequence rows, the states it
    reads and writes), and on a small step those atomics were a third of
    its time. This view has no owner, so they cost nothing. It must not
    outlive ``array`` or leave the kernel that made it; the loop kernels
    only pass it to the step and copy what the step returns.
    """
    if not (isinstance(array, types.Array) and array.ndim >= 1 and isinstance(index, types.Integer)):
        return None
    row_layout = "C" if array.layout == "C" else "A"
    row_type = array.copy(ndim=array.ndim - 1, layout=row_layout) if array.ndim > 1 else None
    if row_type is None:
        return None

    def codegen(context, builder, sig, args):
        src, data, shapes, strides = _row_parts(context, builder, sig.args[0], args[0], sig.args[1], args[1])
        out = context.make_array(sig.return_type)(context, builder)
        context.populate_array(
            out, data=data, shape=cgutils.pack_array(builder, shapes),
            strides=cgutils.pack_array(builder, strides), itemsize=src.itemsize, meminfo=None,
        )
        return out._getvalue()

    return row_type(array, index), codegen

def _row_parts(context, builder, array_type, value, index_type, index):
    """Data pointer, shapes and strides of ``value[index]`` (a row of an array of ``array_type``)."""
    src = context.make_array(array_type)(context, builder, value)
    shapes = cgutils.unpack_tuple(builder, src.shape, array_type.ndim)
    strides = cgutils.unpack_tuple(builder, src.strides, array_type.ndim)
    offset = builder.mul(context.cast(builder, index, index_type, types.intp), strides[0])
    data = builder.gep(builder.bitcast(src.data, ir.IntType(8).as_pointer()), [offset])
    return src, builder.bitcast(data, src.data.type), shapes[1:], strides[1:]

def emit_c_contiguous(context, builder, dtype, shapes, strides):
    """Emit: is the array of these shapes and strides C-contiguous (a length-1 dimension may have any
    stride; an empty array is contiguous whatever its strides)."""
    intp = context.get_value_type(types.intp)
    expected = ir.Constant(intp, context.get_abi_sizeof(context.get_data_type(dtype)))
    one, zero = ir.Constant(intp, 1), ir.Constant(intp, 0)
    ok, empty = cgutils.true_bit, cgutils.false_bit
    for extent, stride in reversed(list(zip(shapes, strides))):
        fits = builder.or_(builder.icmp_signed("==", stride, expected), builder.icmp_signed("<=", extent, one))
        ok = builder.and_(ok, fits)
        empty = builder.or_(empty, builder.icmp_signed("==", extent, zero))
        expected = builder.mul(expected, extent)
    return builder.or_(ok, empty)


@intrinsic
def row_is_contiguous(typingctx, array, index):
    """Whether ``array[index]`` is C-contiguous (a constant True when ``array`` is typed C).

    A loop over a reversed or transposed sequence (the gradient of a
    recurrence walks its forward states backwards) holds an array typed
    ``A`` whose rows are usually contiguous all the same: with this test
    the loop passes them to the step as C rows (``c_row_view``), so the
    step's kernels are compiled for, and vectorise, contiguous vectors.
    """
    if not (isinstance(array, types.Array) and array.ndim >= 2 and isinstance(index, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        if array.layout == "C":
            return cgutils.true_bit
        _, _, shapes, strides = _row_parts(context, builder, sig.args[0], args[0], sig.args[1], args[1])
        return emit_c_contiguous(context, builder, array.dtype, shapes, strides)

    return types.boolean(array, index), codegen

@intrinsic
def c_row_view(typingctx, array, index):
    """``array[index]`` as a borrowed view typed C (see ``borrowed_row``); the row must be contiguous.

    The caller checked ``row_is_contiguous``: the strides are rebuilt as
    those of a C array of the row's shape.
    """
    if not (isinstance(array, types.Array) and array.ndim >= 2 and isinstance(index, types.Integer)):
        return None
    row_type = types.Array(array.dtype, array.ndim - 1, "C", readonly=not array.mutable)

    def codegen(context, builder, sig, args):
        src, data, shapes, _ = _row_parts(context, builder, sig.args[0], args[0], sig.args[1], args[1])
        intp = context.get_value_type(types.intp)
        step = ir.Constant(intp, context.get_abi_sizeof(context.get_data_type(array.dtype)))
        strides = []
        for extent in reversed(shapes):
            strides.append(step)
            step = builder.mul(step, extent)
        out = context.make_array(sig.return_type)(context, builder)
        context.populate_array(
            out, data=data, shape=cgutils.pack_array(builder, shapes),
            strides=cgutils.pack_array(builder, list(reversed(strides))), itemsize=src.itemsize, meminfo=None,
        )
        return out._getvalue()

    return row_type(array, index), codegen


@intrinsic
def padded_c_view(typingctx, array, rows, ld):
    """A matrix stored by rows ``ld`` items apart, as a borrowed ``rows x ld`` view typed C.

    For the small matrix-vector loops of ``Gemv`` kernels (``blas_loops``):
    ``array``'s memory read as ``rows`` rows of ``ld`` items from its
    first element, so element ``[i, j]`` of a matrix stored by rows with
    leading dimension ``ld`` (or ``[j, i]`` of one stored by columns) is
    ``view[i, j]`` for ``j`` below its row length. The items past the row
    length are never read (the last row's may lie past the array's end).
    Whatever ``array``'s type (C, or A for a transposed or row-strided
    matrix), the loops see one type per dtype, so they are compiled once
    and vectorised along the rows. The view is only read, holds no
    reference, and must not outlive ``array``.
    """
    if not (isinstance(array, types.Array) and array.ndim == 2):
        return None
    if not (isinstance(rows, types.Integer) and isinstance(ld, types.Integer)):
        return None
    view_type = types.Array(array.dtype, 2, "C")

    def codegen(context, builder, sig, args):
        src = context.make_array(sig.args[0])(context, builder, args[0])
        intp = context.get_value_type(types.intp)
        item = ir.Constant(intp, context.get_abi_sizeof(context.get_data_type(array.dtype)))
        n_rows = context.cast(builder, args[1], sig.args[1], types.intp)
        n_cols = context.cast(builder, args[2], sig.args[2], types.intp)
        out = context.make_array(sig.return_type)(context, builder)
        context.populate_array(
            out, data=src.data, shape=cgutils.pack_array(builder, [n_rows, n_cols]),
            strides=cgutils.pack_array(builder, [builder.mul(n_cols, item), item]),
            itemsize=src.itemsize, meminfo=None,
        )
        return out._getvalue()

    return view_type(array, rows, ld), codegen


__all__ = ["borrowed", "borrowed_row", "c_row_view", "padded_c_view", "row_is_contiguous"]
