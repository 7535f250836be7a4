"""Numba kernel of ``Print``: pass the value through, print it from Python.

Printing needs Python objects (the op's ``global_fn``, ``sys.stdout``), so
the kernel leaves nopython mode only for the call to ``global_fn`` through
``numba.objmode``; the value itself stays in compiled code. The factory
returns a closure over the op, so graphs containing a ``Print`` are not
cached on disk (the registration gives no explicit version).
"""

from __future__ import annotations

from lucent.link.numba.dispatch.basic import numba_funcify, numba_njit
from lucent.print_op import Print


@numba_funcify.register(Print)
def numba_funcify_Print(op, node=None, **kwargs):
    import numba

    global_fn = op.global_fn

    @numba_njit
    def print_kernel(x):
        with numba.objmode():
            global_fn(op, x)
        return x

    return print_kernel
