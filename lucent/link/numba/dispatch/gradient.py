"""Numba kernels of the gradient-only ops (``ZeroGrad``, ``DisconnectedGrad``,
``UndefinedGrad``, ``GradClip``, ``GradScale``).

These ops change only what ``grad`` does; on values they are the identity
(a view of their input), so one kernel serves the whole family, registered
on their common base class.
"""

from __future__ import annotations

from lucent.gradient import _GradientBarrier
from lucent.link.numba.dispatch.basic import NoNumbaImplementation, numba_funcify
from lucent.link.numba.dispatch.shape import make_kernel
from lucent.tensor.type import TensorType


@numba_funcify.register(_GradientBarrier, version=1)
def numba_funcify_GradientBarrier(op, node, **kwargs):
    """The input itself (``view_map = {0: [0]}``)."""
    t = node.inputs[0].type
    if not isinstance(t, TensorType):
        raise NoNumbaImplementation(f"{type(op).__name__} has no Numba implementation for values of type {t}")
    return make_kernel("gradient_barrier", ["x"], ["return x"])


__all__ = ["numba_funcify_GradientBarrier"]
