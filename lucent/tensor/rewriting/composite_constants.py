"""Number constants of a fused element-wise node become inputs of it.

Fusion inlines small constants into a ``Composite`` (``Composite{(i1 -
(0.05 * i0))}``), and the Numba path writes a Composite's constants into
its kernel's text. A model compiled again with another learning rate,
momentum or decay therefore needed new kernels, although the loops are the
same. This rewrite, which runs after fusion, turns such constants back
into inputs of the fused node: constants whose every dimension has length
1 (``TensorConstant{[[0.05]]}``), which the kernels read once before their
loop. The kernel is then the same for every value, and only the (cheap)
graph function that passes the value changes.

Only number constants (float or integer) that are operands of ``+``,
``-``, ``*`` and ``/`` are lifted, and not the handful of values (0, ±1, ±2, ±0.5) that scalar
code generation may simplify, nor any constant of a power, comparison or
other op whose code may depend on the value.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Constant
from lucent.graph.rewriting.basic import GraphRewriter, replace_validated
from lucent.graph.fg import InconsistencyError
from lucent.scalar import basic as ps
from lucent.scalar.composite import Composite
from lucent.tensor.elemwise import Elemwise
from lucent.tensor.rewriting import elemwise as _fusion, fused_reduction as _fused_reduction  # noqa: F401
from lucent.tensor.rewriting.registry import register_fusion

#: Values kept in the kernel's code: simplifications may depend on them.
KEPT_VALUES = frozenset({0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5})

#: Scalar ops whose code does not depend on a constant operand's value.
LIFTABLE_CLIENTS = (ps.Add, ps.Sub, ps.Mul, ps.TrueDiv)


def _liftable_constants(comp):
    """The constants of ``comp``'s inner graph that are lifted, in a stable order."""
    clients = {}
    for node in comp.nodes:
        for v in node.inputs:
            if isinstance(v, Constant):
                clients.setdefault(v, []).append(node.op)
    found = []
    for c, ops in clients.items():
        data = np.asarray(c.data)
        if data.dtype.kind not in "fiu" or data.ndim != 0 or not np.isfinite(data):
            continue
        if float(data) in KEPT_VALUES:
            continue
        if all(isinstance(op, LIFTABLE_CLIENTS) for op in ops):
            found.append(c)
    return found


def _rebuilt(comp, lifted):
    """A Composite like ``comp`` with the constants ``lifted`` as extra trailing inputs."""
    new_inputs = [v.type() for v in comp.inputs]
    extra = [c.type() for c in lifted]
    memo = dict(zip(comp.inputs, new_inputs))
    memo.update(zip(lifted, extra))
    for node in comp.nodes:
        outs = node.op.make_node(*[memo.get(v, v) for v in node.inputs]).outputs
        memo.update(zip(node.outputs, outs))
    return Composite(new_inputs + extra, [memo.get(o, o) for o in comp.outputs])


class LiftCompositeConstants(GraphRewriter):
    """Turns the lifted constants of each ``Elemwise(Composite)`` into broadcastable inputs."""

    name = "lift_composite_constants"

    def apply(self, fgraph):
        from lucent.tensor.basic import constant as tensor_constant

        changed = False
        for node in list(fgraph.toposort()):
            if node not in fgraph.apply_nodes:
                continue  # replaced earlier in this pass
            op = node.op
            if type(op) is not Elemwise or op.destroy_map or not isinstance(op.scalar_op, Composite):
                continue
            lifted = _liftable_constants(op.scalar_op)
            if not lifted:
                continue
            ndim = node.outputs[0].type.ndim
            outer = [
                tensor_constant(np.full((1,) * ndim, c.data, dtype=c.type.dtype))
                for c in lifted
            ]
            new_outs = Elemwise(_rebuilt(op.scalar_op, lifted))(
                *node.inputs, *outer, return_list=True
            )
            if any(o.type != n.type for o, n in zip(node.outputs, new_outs)):
                continue
            try:
                replace_validated(fgraph, list(zip(node.outputs, new_outs)), reason=self)
            except InconsistencyError:  # pragma: no cover - same inputs, no new cycle
                continue
            changed = True
        return changed


lift_composite_constants = LiftCompositeConstants()
# After the fusion rewrites (imported above, so they are registered first).
register_fusion(lift_composite_constants, name="lift_composite_constants")

__all__ = ["LiftCompositeConstants", "KEPT_VALUES", "lift_composite_constants"]
