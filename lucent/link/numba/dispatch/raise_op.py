"""Numba kernel of ``CheckAndRaise`` / ``Assert``.

The exception class and message are properties of the op, so they are
compile-time constants of the kernel: Numba raises ``exc_type(msg)``
itself, and the caller sees the same exception class and message as on the
Python path.
"""

from __future__ import annotations

from lucent.link.numba.dispatch.basic import numba_funcify, numba_njit
from lucent.raise_op import CheckAndRaise


@numba_funcify.register(CheckAndRaise, version=1)
def numba_funcify_CheckAndRaise(op, node, **kwargs):
    """Return the value (a view) when every condition holds, else raise the op's exception."""
    exc_type = op.exc_type
    msg = op.msg
    n = len(node.inputs) - 1
    names = [f"c{k}" for k in range(n)]
    test = " and ".join(f"bool({c})" for c in names) or "True"
    src = (
        f"def check_and_raise(value, {', '.join(names)}):\n"
        f"    if not ({test}):\n"
        "        raise exc_type(msg)\n"
        "    return value\n"
    )
    namespace = {"exc_type": exc_type, "msg": msg}
    exec(compile(src, "<check_and_raise>", "exec"), namespace)
    return numba_njit(namespace["check_and_raise"])


__all__ = ["numba_funcify_CheckAndRaise"]
