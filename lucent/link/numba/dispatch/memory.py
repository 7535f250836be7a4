"""Kernel outputs of several megabytes, backed by transparent huge pages.

Writing a fresh 80 MB array page-faults once per 4 KiB page: 20,000 faults,
about 45 ms on this kind of machine - more than computing ``exp`` of every
element. NumPy avoids most of it by asking Linux to back arrays of 4 MiB and
more with huge pages (``madvise(MADV_HUGEPAGE)``, 2 MiB per fault); an
``np.empty`` inside a Numba kernel goes through Numba's allocator, which does
not. ``empty_output(shape, dtype)`` is ``np.empty`` plus that advice, so a
kernel's large outputs cost what NumPy's do (measured: 46 ms -> 8.5 ms to
allocate and fill 80 MB).

The advice is only a hint: where the kernel ignores it (transparent huge
pages set to ``never``) nothing changes, and on other systems the call is
not emitted at all. ``madvise`` is called by its C symbol, not through
ctypes, so kernels using it stay cacheable on disk.

Smaller outputs fault for another reason. A compiled function allocates
its intermediates and frees them at the end of every call; glibc's malloc
gives the freed top of its heap back to the OS as soon as more than its
trim threshold is free, so the next call faults every page in again. That
threshold starts at 128 KiB and only grows when the program happens to
free a large mapped block, so whether a function with a few megabytes of
intermediates (an MLP training step: 7 MB, 1,760 faults, +4 ms a call)
re-faults depends on the process's history. ``keep_freed_heap`` fixes
the thresholds where glibc's own rule would take them after one 32 MiB
block was freed (see its docstring); it runs once, when the Numba backend
is first imported.
"""

from __future__ import annotations

import ctypes
import os
import sys

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

#: Arrays at least this large get the advice (NumPy's threshold).
HUGE_PAGE_THRESHOLD = 1 << 22
_PAGE = 4096
_MADV_HUGEPAGE = 14  # Linux
_ON_LINUX = sys.platform.startswith("linux")


def _emit_huge_page_advice(context, builder, array):
    """Emit ``madvise(MADV_HUGEPAGE)`` over ``array``'s pages when it is at least the threshold."""
    if not _ON_LINUX:
        return
    intp = context.get_value_type(types.intp)
    nbytes = builder.mul(array.nitems, array.itemsize)
    large = builder.icmp_signed(">=", nbytes, ir.Constant(intp, HUGE_PAGE_THRESHOLD))
    with builder.if_then(large, likely=False):
        address = builder.ptrtoint(array.data, intp)
        # madvise needs a page-aligned start
        start = builder.and_(builder.add(address, ir.Constant(intp, _PAGE - 1)), ir.Constant(intp, ~(_PAGE - 1)))
        length = builder.sub(nbytes, builder.sub(start, address))
        byte_ptr = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.IntType(32), [byte_ptr, intp, ir.IntType(32)])
        madvise = cgutils.get_or_insert_function(builder.module, fnty, "madvise")
        builder.call(madvise, [builder.inttoptr(start, byte_ptr), length, ir.Constant(ir.IntType(32), _MADV_HUGEPAGE)])


@intrinsic
def advise_large(typingctx, array):
    """Ask for huge pages behind ``array`` when it is large and not yet written."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        _emit_huge_page_advice(context, builder, context.make_array(signature.args[0])(context, builder, args[0]))
        return context.get_dummy_value()

    return types.none(array), codegen


def _output_type(shape, dtype):
    """The C array type ``np.empty(shape, dtype)`` has, or ``None`` for other arguments."""
    from numba.core.typing.npydecl import parse_dtype, parse_shape

    ndim = parse_shape(shape)
    nb_dtype = parse_dtype(dtype)
    if ndim is None or nb_dtype is None:
        return None
    return types.Array(nb_dtype, ndim, "C")


def allocate_array(context, builder, array_type, shape_type, shape):
    """Emit the allocation of a new ``array_type`` of ``shape`` (of type ``shape_type``), with the advice."""
    from numba.np.arrayobj import _parse_shape

    return allocate_extents(context, builder, array_type, _parse_shape(context, builder, shape_type, shape))


def new_c_array(context, builder, array_type, extents):
    """Emit the allocation of a new C-ordered ``array_type`` of the lengths ``extents`` (IR values).

    What Numba's ``np.empty`` lowering does (the length and byte-size
    overflow check with NumPy's message, C strides, the runtime's aligned
    allocation), except that the allocation is one call of the runtime's
    allocator: Numba's goes through a jitted trampoline, an overload every
    new process compiled (about 35 ms) and every allocating kernel linked in.
    """
    from numba.core import cgutils as cg
    from numba.np.arrayobj import get_itemsize, make_array, populate_array

    intp = context.get_value_type(types.intp)
    array = make_array(array_type)(context, builder)
    itemsize = context.get_constant(types.intp, get_itemsize(context, array_type))
    length = context.get_constant(types.intp, 1)
    overflow = cg.false_bit
    for extent in extents:
        product = builder.smul_with_overflow(length, extent)
        length = builder.extract_value(product, 0)
        overflow = builder.or_(overflow, builder.extract_value(product, 1))
    strides = [itemsize]
    for extent in reversed(list(extents)[1:]):
        strides.append(builder.mul(strides[-1], extent))
    strides = list(reversed(strides))[: len(extents)]
    size = builder.smul_with_overflow(length, itemsize)
    overflow = builder.or_(overflow, builder.extract_value(size, 1))
    with builder.if_then(overflow, likely=False):
        context.call_conv.return_user_exc(
            builder,
            ValueError,
            ("array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size.",),
        )
    align = context.get_constant(types.uint32, context.get_preferred_array_alignment(array_type.dtype))
    meminfo = context.nrt.meminfo_alloc_aligned(builder, builder.extract_value(size, 0), align)
    data = context.nrt.meminfo_data(builder, meminfo)
    populate_array(
        array,
        data=builder.bitcast(data, context.get_data_type(array_type.dtype).as_pointer()),
        shape=cg.pack_array(builder, list(extents), ty=intp),
        strides=cg.pack_array(builder, strides, ty=intp),
        itemsize=itemsize,
        meminfo=meminfo,
    )
    return array


def allocate_extents(context, builder, array_type, extents):
    """Emit the allocation of a new ``array_type`` of the lengths ``extents`` (IR values), with the advice."""
    array = new_c_array(context, builder, array_type, extents)
    _emit_huge_page_advice(context, builder, array)
    return array


def _allocate(context, builder, signature, args):
    return allocate_array(context, builder, signature.return_type, signature.args[0], args[0])


@intrinsic
def empty_output(typingctx, shape, dtype):
    """``np.empty(shape, dtype)``, backed by huge pages when large (see the module docstring).

    An intrinsic, so it is lowered inline where a kernel calls it: as a
    jitted function it was compiled once per (shape, dtype) type in every
    new cache, which made it one of the larger costs of compiling a model.
    """
    result = _output_type(shape, dtype)
    if result is None:
        return None

    def codegen(context, builder, signature, args):
        return _allocate(context, builder, signature, args)._getvalue()

    return result(shape, dtype), codegen


@intrinsic
def full_output(typingctx, shape, value, dtype):
    """``np.full(shape, value, dtype)``, lowered inline like ``empty_output``."""
    result = _output_type(shape, dtype)
    if result is None or not isinstance(value, (types.Number, types.Boolean)):
        return None

    def codegen(context, builder, signature, args):
        array = _allocate(context, builder, signature, args)
        fill = context.cast(builder, args[1], signature.args[1], result.dtype)
        with cgutils.for_range(builder, array.nitems) as loop:
            context.pack_value(builder, result.dtype, fill, builder.gep(array.data, [loop.index]))
        return array._getvalue()

    return result(shape, value, dtype), codegen


@intrinsic
def c_order_copy(typingctx, x):
    """A new C-contiguous array holding ``x``'s values: ``x.copy()``, lowered inline.

    Numba's ``copy`` of an array that is not typed C is a function of its
    own, compiled once per array type in every new process; a BLAS kernel
    copies the rare operand with strides BLAS cannot read, and paid that
    compile (about 30 ms) whether or not a copy ever happened. An array
    already in C order (as typed, or checked at run time) is copied with
    one ``memcpy``; the loop over general strides is a small function of
    the kernel's module, shared by its call sites
    (``cold_paths.copy_to_c_order``).
    """
    if not isinstance(x, types.Array):
        return None
    result = types.Array(x.dtype, x.ndim, "C")

    def codegen(context, builder, signature, args):
        from lucent.link.numba.dispatch.borrowed import emit_c_contiguous
        from lucent.link.numba.dispatch.cold_paths import copy_to_c_order

        source = context.make_array(signature.args[0])(context, builder, args[0])
        shape = cgutils.unpack_tuple(builder, source.shape, x.ndim)
        copy = allocate_extents(context, builder, result, shape)
        strides = cgutils.unpack_tuple(builder, source.strides, x.ndim)
        itemsize = context.get_abi_sizeof(context.get_data_type(x.dtype))
        if x.layout == "C":
            cgutils.raw_memcpy(builder, copy.data, source.data, copy.nitems, itemsize)
            return copy._getvalue()
        # one block of memory in C order (a C array typed A, a 0-d or 1-element one): one memcpy;
        # other strides go through the general loop
        with builder.if_else(emit_c_contiguous(context, builder, x.dtype, shape, strides)) as (contiguous, strided):
            with contiguous:
                cgutils.raw_memcpy(builder, copy.data, source.data, copy.nitems, itemsize)
            with strided:
                copy_to_c_order(context, builder, x.dtype, x.ndim, source.data, shape, strides, copy.data)
        return copy._getvalue()

    return result(x), codegen


#: glibc's ``mallopt`` parameters and the values ``keep_freed_heap`` gives them: the
#: largest mmap threshold glibc's dynamic rule reaches on 64-bit systems, and the trim
#: threshold that rule pairs with it (twice as much).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 64 << 20


def keep_freed_heap():
    """Let glibc keep up to 64 MiB of freed heap for reuse instead of returning it at once.

    Sets malloc's mmap threshold to 32 MiB and its trim threshold to
    64 MiB: blocks under 32 MiB come from the heap, and freed heap is only
    returned to the OS past 64 MiB, so a function's intermediates reuse the
    pages of its previous call. glibc moves to exactly these values by
    itself once a program frees a 32 MiB mapped block; fixing them makes
    the speed of a compiled function independent of what ran before it.
    Blocks of 32 MiB and more are still mapped and unmapped per call (and
    advised to use huge pages when written by a kernel).

    Nothing is changed when the C library is not glibc, or when the
    process's malloc was tuned already (``MALLOC_TRIM_THRESHOLD_``,
    ``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TOP_PAD_`` or ``glibc.malloc``
    tunables in the environment). Returns whether the thresholds were set.
    """
    if not _ON_LINUX:
        return False
    tuned = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_")
    if any(name in os.environ for name in tuned) or "glibc.malloc" in os.environ.get("GLIBC_TUNABLES", ""):
        return False
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # glibc only; other C libraries' mallopt differ
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))


keep_freed_heap()


__all__ = ["empty_output", "full_output", "c_order_copy", "advise_large", "keep_freed_heap", "HUGE_PAGE_THRESHOLD"]







@intrinsic
def zero_d(typingctx, value):
    """A new 0-d array holding the number ``value`` (how a 0-d tensor is held in compiled code)."""
    if not isinstance(value, (types.Integer, types.Float, types.Boolean, types.Complex)):
        return None
    result = types.Array(value, 0, "C")

    def codegen(context, builder, sig, args):
        array = new_c_array(context, builder, result, [])
        context.pack_value(builder, value, args[0], array.data)
        return array._getvalue()

    return result(value), codegen
