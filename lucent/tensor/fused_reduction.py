"""``FusedCAReduce``: a reduction of an element-wise expression, as one op.

``sum(x * x)`` is, unfused, an ``Elemwise`` that writes a whole temporary
array and a ``CAReduce`` that reads it back. The fusion rewrite
(``lucent.tensor.rewriting.fused_reduction``) replaces the pair by one
``FusedCAReduce(scalar_op, reduce_op)`` node whose inputs are the
element-wise node's inputs, so a backend can compute each element and fold
it into the accumulator in the same pass, without the temporary.

The op keeps both halves as they were: ``scalar_op`` (a ``Composite`` or
any scalar op) and ``reduce_op`` (the ``CAReduce`` instance, with its axes
and dtypes). Its ``perform`` runs exactly the two original ``perform``
methods, so the reference path gives the same values as the unfused
graph, and its gradient is the gradient of the unfused expression.
"""

from __future__ import annotations

from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.tensor.elemwise import Elemwise
from lucent.tensor.reduction import CAReduce


class FusedCAReduce(Op):
    """``reduce_op(Elemwise(scalar_op)(*inputs))`` computed in one pass."""

    __props__ = ("scalar_op", "reduce_op")

    def __init__(self, scalar_op, reduce_op):
        if not isinstance(reduce_op, CAReduce):
            raise TypeError(f"FusedCAReduce needs a CAReduce, got {reduce_op!r}")
        if scalar_op.nout != 1:
            raise ValueError(f"FusedCAReduce needs a one-output scalar op, {scalar_op} has {scalar_op.nout}")
        self.scalar_op = scalar_op
        self.reduce_op = reduce_op
        self.elemwise = Elemwise(scalar_op)

    def __str__(self):
        return f"{self.reduce_op}({self.scalar_op})"

    def _unfused(self, inputs):
        """The element-wise output and the reduction node built on ``inputs``."""
        elem = self.elemwise.make_node(*inputs)
        red = self.reduce_op.make_node(elem.outputs[0])
        return elem, red

    def make_node(self, *inputs):
        elem, red = self._unfused(inputs)
        if red.op != self.reduce_op:
            # The reduction normalised its axes for this rank: keep the normal form.
            return FusedCAReduce(self.scalar_op, red.op).make_node(*inputs)
        return Apply(self, list(elem.inputs), [red.outputs[0].type()])

    def perform(self, node, inputs, output_storage):
        elem, red = self._unfused(node.inputs)
        tmp = [[None]]
        self.elemwise.perform(elem, inputs, tmp)
        self.reduce_op.perform(red, [tmp[0][0]], output_storage)

    def infer_shape(self, fgraph, node, input_shapes):
        elem, red = self._unfused(node.inputs)
        (shape,) = self.elemwise.infer_shape(fgraph, elem, input_shapes)
        return self.reduce_op.infer_shape(fgraph, red, [shape])

    def L_op(self, inputs, outputs, output_grads):
        # Chain the two ops' own gradients: one entry per input position,
        # also when the same variable is given twice.
        elem, red = self._unfused(inputs)
        (g_elem,) = self.reduce_op.L_op(elem.outputs, red.outputs, output_grads)
        return self.elemwise.L_op(list(elem.inputs), elem.outputs, [g_elem])


__all__ = ["FusedCAReduce"]
