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
"""

from __future__ import annotations

import sys

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

#: Arrays at least this large get the advice (NumPy's threshold).
HUGE_PAGE_THRESHOLD = 1 << 22
_PAGE = 4096
_MADV_HUGEPAGE = 14  # Linux
_ON_LINUX = sys.platform.startswith("linux")


@intrinsic
def _advise_huge_pages(typingctx, address, length):
    """``madvise(address, length, MADV_HUGEPAGE)`` on Linux; nothing elsewhere."""
    sig = types.intc(types.uintp, types.uintp)

    def codegen(context, builder, signature, args):
        if not _ON_LINUX:
            return ir.Constant(ir.IntType(32), 0)
        byte_ptr = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.IntType(32), [byte_ptr, args[1].type, ir.IntType(32)])
        madvise = cgutils.get_or_insert_function(builder.module, fnty, "madvise")
        pointer = builder.inttoptr(args[0], byte_ptr)
        return builder.call(madvise, [pointer, args[1], ir.Constant(ir.IntType(32), _MADV_HUGEPAGE)])

    return sig, codegen


@njit(cache=True, no_cfunc_wrapper=True)
def advise_large(array):
    """Ask for huge pages behind ``array`` when it is large and not yet written."""
    if array.nbytes >= HUGE_PAGE_THRESHOLD:
        address = array.ctypes.data
        start = (address + _PAGE - 1) & ~(_PAGE - 1)  # madvise needs a page-aligned start
        _advise_huge_pages(start, array.nbytes - (start - address))


@njit(cache=True, no_cfunc_wrapper=True)
def empty_output(shape, dtype):
    """``np.empty(shape, dtype)``, backed by huge pages when large (see the module docstring)."""
    out = np.empty(shape, dtype)
    advise_large(out)
    return out


__all__ = ["empty_output", "advise_large", "HUGE_PAGE_THRESHOLD"]
