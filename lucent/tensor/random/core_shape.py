"""``RandomVariableWithCoreShape``: a draw with its core (support) shape as an explicit input.

PyTensor's Numba backend wraps every draw in this op so the kernel can
allocate its output before drawing: the extra first input is the shape of
the core dimensions (``[]`` for scalar families, ``[k]`` for a
``dirichlet`` over ``k`` categories), computed from the draw's own inputs.
lucent's kernels size their outputs themselves, so the wrapper is not part
of lucent's default pipeline; it exists so that graphs and rewrites written
for PyTensor's Numba backend (``introduce_explicit_core_shape_rv``) build
and run. It draws exactly as the wrapped op does, on both paths (the core
shape input is not read), and is in place when the wrapped op is.

The constructor takes PyTensor's arguments ``(inputs, outputs,
destroy_map=None)``: ``outputs`` are the outputs of one ``RandomVariable``
node and ``inputs`` are ``[core_shape, *that node's inputs]``.
"""

from __future__ import annotations

from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.tensor.basic import as_tensor_variable
from lucent.tensor.random.op import RandomVariable


class RandomVariableWithCoreShape(Op):
    """A ``RandomVariable`` node with an extra leading ``core_shape`` input (see the module doc)."""

    __props__ = ("core_op",)

    def __init__(self, inputs, outputs, destroy_map=None, **kwargs):
        if kwargs:
            raise TypeError(f"RandomVariableWithCoreShape got unexpected arguments {sorted(kwargs)}")
        outputs = list(outputs)
        node = outputs[0].owner if outputs else None
        if node is None or not isinstance(node.op, RandomVariable) or list(node.outputs) != outputs:
            raise ValueError(
                "RandomVariableWithCoreShape needs the outputs of one RandomVariable node "
                f"(next generator, draw), got {outputs}"
            )
        inputs = list(inputs)
        if len(inputs) != len(node.inputs) + 1 or any(a is not b for a, b in zip(inputs[1:], node.inputs)):
            raise ValueError(
                "RandomVariableWithCoreShape needs inputs [core_shape, *inputs of the RandomVariable node]"
            )
        self.core_op = node.op
        expected = {0: [1]} if node.op.inplace else None
        if destroy_map not in (None, {}) and destroy_map != expected:
            raise ValueError(
                f"RandomVariableWithCoreShape: destroy_map {destroy_map} does not match the wrapped op "
                f"({'in place: {0: [1]}' if node.op.inplace else 'not in place: None'})"
            )
        if node.op.inplace:
            self.destroy_map = {0: [1]}

    # The node's structure, as the wrapped op's with one more input.
    @property
    def ndim_supp(self):
        return self.core_op.ndim_supp

    def update(self, node):
        return {node.inputs[1]: node.outputs[0]}

    def core_node(self, node):
        """The wrapped op applied to this node's inputs (without the core shape)."""
        return Apply(self.core_op, list(node.inputs[1:]), [o.type() for o in node.outputs])

    def make_node(self, core_shape, rng, size, *dist_params):
        core_shape = as_tensor_variable(core_shape)
        if core_shape.type.ndim != 1 or core_shape.type.dtype not in ("int64", "int32", "int16", "int8"):
            raise TypeError(f"core_shape must be an integer vector, got {core_shape.type}")
        if core_shape.type.shape[0] not in (None, self.core_op.ndim_supp):
            raise ValueError(
                f"core_shape has length {core_shape.type.shape[0]}, but {self.core_op.name} has "
                f"{self.core_op.ndim_supp} core dimension(s)"
            )
        inner = self.core_op.make_node(rng, size, *dist_params)
        return Apply(self, [core_shape, *inner.inputs], [o.type() for o in inner.outputs])

    def perform(self, node, inputs, outputs):
        self.core_op.perform(self.core_node(node), inputs[1:], outputs)

    def infer_shape(self, fgraph, node, input_shapes):
        return self.core_op.infer_shape(fgraph, self.core_node(node), input_shapes[1:])

    def L_op(self, inputs, outputs, output_grads):
        from lucent.gradient import grad_undefined

        return [
            grad_undefined(self, k, inp, f"No gradient defined for random variables ({self.core_op.name})")
            for k, inp in enumerate(inputs)
        ]

    def do_constant_folding(self, fgraph, node):
        return False

    def __str__(self):
        return f"[{self.core_op}]"


__all__ = ["RandomVariableWithCoreShape"]
