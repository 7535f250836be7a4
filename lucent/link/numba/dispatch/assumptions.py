"""Numba kernel of ``SpecifyAssumptions``: the input itself.

The compile pipeline removes these nodes before linking (their facts are
read into the graph first), so the kernel only runs for graphs compiled
without that rewrite, e.g. with ``optimizer=None``.
"""

from __future__ import annotations

from lucent.assumptions.specify import SpecifyAssumptions
from lucent.link.numba.dispatch.basic import numba_funcify
from lucent.link.numba.dispatch.shape import make_kernel


@numba_funcify.register(SpecifyAssumptions, version=1)
def numba_funcify_SpecifyAssumptions(op, node, **kwargs):
    """The input value (``view_map = {0: [0]}``)."""
    return make_kernel("specify_assumptions", ["x"], ["return x"])


__all__ = ["numba_funcify_SpecifyAssumptions"]
