"""The Numba path of ``COp`` subclasses that register no kernel of their own.

lucent compiles no C. A ``COp`` with a ``perform`` runs it through the
object-mode fallback (after one warning that its C code is unused); one
with only C code is refused when the function is compiled, with a message
on how to register a kernel. A subclass that registers its own kernel with
``numba_funcify.register(TheOp)`` never reaches this function.
"""

from __future__ import annotations

from lucent.link.c.op import (
    COp,
    has_python_implementation,
    no_implementation_error,
    warn_c_code_unused,
)
from lucent.link.numba.dispatch.basic import NoNumbaImplementation, numba_funcify


@numba_funcify.register(COp)
def numba_funcify_COp(op, node=None, **kwargs):
    if not has_python_implementation(op):
        raise no_implementation_error(op, "Numba")
    warn_c_code_unused(op)
    raise NoNumbaImplementation(
        f"{type(op).__name__} is a COp with no Numba kernel; lucent runs its perform"
    )
