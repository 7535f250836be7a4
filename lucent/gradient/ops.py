"""Ops that are the identity on values and only change what ``grad`` does through them."""

from __future__ import annotations

from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.graph.rewriting.basic import node_rewriter
from lucent.graph.rewriting.db import canonicalize_db
from lucent.gradient.types import _is_disconnected, _zeros_for, disconnected_type, grad_undefined

# ---------------------------------------------------------------------------
# Ops that only change the gradient
# ---------------------------------------------------------------------------
class _GradientBarrier(Op):
    """Identity on values (a view); subclasses say what the gradient becomes.

    All of them share one Numba kernel (the identity), registered on this
    class in ``lucent.link.numba.dispatch.gradient``.
    """

    __props__ = ()
    view_map = {0: [0]}

    def make_node(self, x):
        from lucent.tensor.basic import as_tensor_variable

        x = as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0]

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])]


class ZeroGrad(_GradientBarrier):
    """Passes values through; the gradient through it is zero."""

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor.elemwise import _zeros_like

        return [_zeros_like(inputs[0])]

    def pushforward(self, inputs, outputs, tangents):
        if _is_disconnected(tangents[0]):
            return [disconnected_type()]
        return [_zeros_for(outputs[0])]


class UndefinedGrad(_GradientBarrier):
    """Passes values through; asking for a gradient through it is an error (NullType)."""

    def L_op(self, inputs, outputs, output_grads):
        return [grad_undefined(self, i, x) for i, x in enumerate(inputs)]

    def pushforward(self, inputs, outputs, tangents):
        return [disconnected_type()]


class DisconnectedGrad(_GradientBarrier):
    """Passes values through; for ``grad`` its input is not connected to its output."""

    def connection_pattern(self, node):
        return [[False]]

    def L_op(self, inputs, outputs, output_grads):
        return [disconnected_type()]

    def pushforward(self, inputs, outputs, tangents):
        return [disconnected_type()]


class GradClip(_GradientBarrier):
    """Passes values through; the gradient through it is clipped to ``[lower, upper]``.

    The bounds change only the gradient, so, like PyTensor, they are not
    part of the op's identity (``__props__`` is empty).
    """

    def __init__(self, clip_lower_bound, clip_upper_bound):
        if not clip_upper_bound >= clip_lower_bound:
            raise ValueError(
                f"`clip_upper_bound` should be >= `clip_lower_bound`, got lower={clip_lower_bound} "
                f"and upper={clip_upper_bound}"
            )
        self.clip_lower_bound = clip_lower_bound
        self.clip_upper_bound = clip_upper_bound

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor.math import clip

        return [clip(g, self.clip_lower_bound, self.clip_upper_bound) for g in output_grads]


class GradScale(_GradientBarrier):
    """Passes values through; the gradient through it is multiplied by ``multiplier``."""

    def __init__(self, multiplier):
        self.multiplier = multiplier

    def L_op(self, inputs, outputs, output_grads):
        return [self.multiplier * g for g in output_grads]


zero_grad_ = ZeroGrad()
undefined_grad_ = UndefinedGrad()
disconnected_grad_ = DisconnectedGrad()
# Older lucent names of the same instances.
_zero_grad, _disconnected_grad = zero_grad_, disconnected_grad_


def zero_grad(x):
    """``x`` itself, but its gradient is zero (it is treated as a constant)."""
    return zero_grad_(x)


def undefined_grad(x):
    """``x`` itself, but a gradient through it is undefined: ``grad`` raises ``NullTypeGradError``."""
    return undefined_grad_(x)


def disconnected_grad(x):
    """``x`` itself, but ``grad`` considers the result independent of ``x``.

    Cheaper than ``zero_grad``: nothing below it is differentiated at all.
    """
    return disconnected_grad_(x)


def grad_clip(x, lower_bound, upper_bound):
    """``x`` itself; the gradient flowing back through it is clipped to ``[lower_bound, upper_bound]``."""
    return GradClip(lower_bound, upper_bound)(x)


def grad_scale(x, multiplier):
    """``x`` itself; the gradient flowing back through it is scaled by ``multiplier``."""
    return GradScale(multiplier)(x)


@node_rewriter([_GradientBarrier])
def local_remove_gradient_barrier(fgraph, node):
    """A gradient-only op is the identity once gradients are built: compiled graphs drop it."""
    return [node.inputs[0]]


canonicalize_db.register(
    "local_remove_gradient_barrier", local_remove_gradient_barrier, "fast_run", "fast_compile", "canonicalize"
)
