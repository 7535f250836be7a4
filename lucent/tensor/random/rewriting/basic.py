"""``random_make_inplace``: FAST_RUN draws advance the generator they are given.

A ``RandomVariable`` draws from a *copy* of its generator input, because
the same input may be read elsewhere. When nothing else needs the old state
- the generator is a shared variable updated with this draw's next state,
or an ``In(rng, mutable=True)`` argument - the copy is wasted work: the
in-place op (``inplace=True``, ``destroy_map = {0: [0]}``) advances the
given generator instead. Whether that is allowed is decided by the graph's
``DestroyHandler`` (and, for shared variables, by ``SharedUpdateGuard``,
which keeps "a failed call changes no shared variable" true); each
candidate is tried and kept only if the graph still validates.
"""

from __future__ import annotations

from lucent.graph.destroyhandler import DestroyHandler
from lucent.graph.fg import InconsistencyError
from lucent.graph.rewriting.basic import GraphRewriter, replace_validated
from lucent.tensor.random.op import RandomVariable
from lucent.tensor.rewriting.registry import register_inplace


class RandomMakeInplace(GraphRewriter):
    """Replaces each ``RandomVariable`` by its in-place version where the graph allows it."""

    name = "random_make_inplace"

    def add_requirements(self, fgraph):
        super().add_requirements(fgraph)
        if not hasattr(fgraph, "destroy_handler"):
            fgraph.attach_feature(DestroyHandler())

    def apply(self, fgraph):
        changed = False
        for node in fgraph.toposort():
            if node not in fgraph.apply_nodes or not isinstance(node.op, RandomVariable):
                continue
            if node.op.inplace:
                continue
            props = node.op._props_dict()
            props["inplace"] = True
            new_op = type(node.op)(**props)
            new_node = _same_node(new_op, node)
            try:
                replace_validated(fgraph, list(zip(node.outputs, new_node.outputs)), reason=self)
            except InconsistencyError:
                continue
            changed = True
        return changed


def _same_node(op, node):
    """``node`` with ``op`` in place of its op (same inputs, outputs of the same types)."""
    from lucent.graph.basic import Apply

    return Apply(op, list(node.inputs), [o.type() for o in node.outputs])


random_make_inplace = RandomMakeInplace()
register_inplace(random_make_inplace, name="random_make_inplace")

# The lifts live in their own module; PyTensor programs import them from here.
from lucent.tensor.random.rewriting.lift import *  # noqa: E402,F401,F403
from lucent.tensor.random.rewriting.lift import __all__ as _lift_all  # noqa: E402

__all__ = ["random_make_inplace", "RandomMakeInplace", *_lift_all]
