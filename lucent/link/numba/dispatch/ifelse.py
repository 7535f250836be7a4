"""Numba kernels for ``IfElse`` and the helpers of the native branches.

Inside a graph function the Numba linker does not call an ``IfElse``
kernel: it writes a native ``if``/``else`` (``codegen.BodyWriter``) so that
only the chosen branch's nodes run. That code uses the three helpers here:
``branch_truth`` (a condition, 0-d array or scalar, as a bool),
``branch_fresh`` (a copy of a branch's value, as the op's outputs are
copies) and ``branch_view`` (the value itself, for ``as_view``). Both
return arrays, so that a 0-d value computed as a scalar in one branch and
as a 0-d array in the other still has one type after the ``if``.

The registered kernel selects among values already computed; it is what
a node-by-node build (DebugMode's per-node comparison) calls.
"""

from __future__ import annotations

from lucent.ifelse import IfElse
from lucent.link.numba.dispatch.basic import kernel_from_source, numba_funcify

_HELPERS = '''
def branch_truth(c):
    return item_of(c) != 0


def branch_fresh(v):
    return np.asarray(v).copy()


def branch_view(v):
    return np.asarray(v)
'''


def branch_helpers():
    """``{name: kernel}`` of the helpers the generated branches call."""
    return {
        name: kernel_from_source(_HELPERS, name)
        for name in ("branch_truth", "branch_fresh", "branch_view")
    }


@numba_funcify.register(IfElse)
def numba_funcify_ifelse(op, node=None, **kwargs):
    """``kernel(cond, *then_values, *else_values)`` returning the chosen values."""
    n = op.n_outs
    thens = [f"t{k}" for k in range(n)]
    elses = [f"f{k}" for k in range(n)]
    take_then = "branch_view" if op.as_view else "branch_fresh"
    picked_t = ", ".join(f"{take_then}({v})" for v in thens)
    picked_f = ", ".join(f"branch_fresh({v})" for v in elses)
    if n > 1:
        picked_t, picked_f = f"({picked_t},)", f"({picked_f},)"
    source = (
        _HELPERS
        + f"\n\ndef ifelse_kernel(c, {', '.join(thens + elses)}):\n"
        f"    if branch_truth(c):\n        return {picked_t}\n"
        f"    return {picked_f}\n"
    )
    return kernel_from_source(source, "ifelse_kernel")


__all__ = ["numba_funcify_ifelse", "branch_helpers"]
