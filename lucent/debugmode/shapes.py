"""Checking each output's shape against the node's ``infer_shape``.

A node's output shape is stated three times: by ``perform`` (the value it
returns), by the Numba kernel, and by the op's ``infer_shape``, which the
shape rewrites use to compute shapes *without running the node* (so a wrong
``infer_shape`` gives wrong results only in graphs where a rewrite relied
on it, which makes it hard to find). When the three disagree, the one that
disagrees with the other two is at fault; ``BadShape`` names it.

``ShapeOracle(node)`` builds the ``infer_shape`` graph once, over the
node's own input variables (lengths as ``Shape_i`` of the inputs, so an
``infer_shape`` that reads an input's *value*, like ``reshape``'s shape
argument, works too), and evaluates it on each call's input values with
``perform``. An op without ``infer_shape``, or one whose ``infer_shape``
cannot be built or evaluated, is not checked this way.
"""

from __future__ import annotations

import numpy as np

from lucent.debugmode.values import copy_value
from lucent.graph.basic import Constant, Variable


class ShapeOracle:
    """The output shapes ``infer_shape`` predicts for ``node``, evaluated on concrete inputs.

    Attributes
    ----------
    available
        False when the op has no usable ``infer_shape``; ``reason`` says why.
    """

    def __init__(self, node, fgraph=None):
        self.node = node
        self.reason = None
        self._shapes = None
        self._prepared = set()
        from lucent.tensor.type import TensorType

        infer = getattr(node.op, "infer_shape", None)
        if infer is None:
            self.reason = "the op has no infer_shape"
            return
        if not all(isinstance(out.type, TensorType) for out in node.outputs):
            self.reason = "not every output is a tensor"
            return
        from lucent.tensor.shape import shape_i

        input_shapes = []
        for inp in node.inputs:
            if isinstance(inp.type, TensorType):
                input_shapes.append(tuple(shape_i(inp, d) for d in range(inp.type.ndim)))
            else:
                input_shapes.append(())
        try:
            shapes = infer(fgraph, node, input_shapes)
        except Exception as e:  # NotImplementedError, MethodNotDefined, or an op needing fgraph
            self.reason = f"its infer_shape is not available here ({type(e).__name__})"
            return
        if shapes is None or len(shapes) != len(node.outputs):
            self.reason = "its infer_shape did not give one shape per output"
            return
        self._shapes = [None if s is None else tuple(s) for s in shapes]

    @property
    def available(self):
        return self._shapes is not None

    def predict(self, values):
        """``[shape tuple or None, ...]`` per output for the node's input ``values``.

        ``None`` for an output whose predicted shape could not be evaluated.
        """
        if self._shapes is None:
            return [None] * len(self.node.outputs)
        memo = dict(zip(self.node.inputs, values))
        out = []
        for shape in self._shapes:
            if shape is None:
                out.append(None)
                continue
            try:
                out.append(tuple(int(self._value(length, memo)) for length in shape))
            except Exception:  # an expression perform cannot evaluate: no prediction
                out.append(None)
        return out

    def _value(self, length, memo):
        if isinstance(length, (int, np.integer)):
            return length
        if isinstance(length, Constant):
            return np.asarray(length.data)
        if not isinstance(length, Variable):
            return np.asarray(length)
        stack = [length]
        while stack:
            v = stack[-1]
            if v in memo:
                stack.pop()
                continue
            if v.owner is None:
                if isinstance(v, Constant):
                    memo[v] = v.data
                    stack.pop()
                    continue
                raise KeyError(f"no value for {v}")
            node = v.owner
            pending = [i for i in node.inputs if i not in memo]
            if pending:
                stack.extend(pending)
                continue
            if node not in self._prepared:
                node.op.prepare_node(node, None, None, "py")
                self._prepared.add(node)
            cells = [[None] for _ in node.outputs]
            # The memo holds the call's own values: an op that writes into an input
            # (a loop whose shape is its own output's, run in place) gets a copy.
            destroyed = {i for ins in (getattr(node.op, "destroy_map", None) or {}).values() for i in ins}
            args = [copy_value(memo[i]) if k in destroyed else memo[i] for k, i in enumerate(node.inputs)]
            node.op.perform(node, args, cells)
            for o, cell in zip(node.outputs, cells):
                memo[o] = cell[0]
            stack.pop()
        return np.asarray(memo[length])


def shape_of(value):
    """The shape of a run-time value, or ``None`` when it has none."""
    shape = getattr(value, "shape", None)
    return tuple(shape) if shape is not None else None


def blame(perform_shape, kernel_shape, inferred):
    """Which of the three statements of one output's shape is wrong, or ``None``.

    Returns ``"perform"``, ``"numba"``, ``"infer_shape"``, ``"perform and infer_shape"``
    (no kernel to decide between them) or ``"all"`` (three different
    shapes). ``kernel_shape`` / ``inferred`` are ``None`` when unknown.
    """
    if inferred is None:
        return None
    if kernel_shape is None:
        return None if perform_shape == inferred else "perform and infer_shape"
    if perform_shape == kernel_shape:
        return None if perform_shape == inferred else "infer_shape"
    if kernel_shape == inferred:
        return "perform"
    if perform_shape == inferred:
        return "numba"
    return "all"


__all__ = ["ShapeOracle", "blame", "shape_of"]
