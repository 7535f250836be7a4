"""Reading ``assume(...)`` declarations into the graph's facts, then removing them.

A ``SpecifyAssumptions`` node is an opaque view of its input: left in the
graph it would hide ``inv(assume(x))`` from a rewrite looking for
``inv(x)``. So, first of all rewrites, every declared fact is resolved
into the graph's ``AssumptionFeature`` and the node is replaced by its
input; the feature carries the facts over to that input, where the
rewrites that consult ``check_assumption`` find them.
"""

from __future__ import annotations

from lucent.assumptions import ALL_KEYS, AssumptionFeature
from lucent.assumptions.specify import SpecifyAssumptions
from lucent.graph.rewriting.basic import GraphRewriter
from lucent.graph.rewriting.db import optdb

_KEY_BY_NAME = {key.name: key for key in ALL_KEYS}


class DrainSpecifyAssumptions(GraphRewriter):
    """Resolve every ``SpecifyAssumptions`` node's facts, then replace it by its input."""

    def apply(self, fgraph):
        nodes = [node for node in fgraph.toposort() if isinstance(node.op, SpecifyAssumptions)]
        if not nodes:
            return None
        feature = getattr(fgraph, "assumption_feature", None)
        if feature is None:
            feature = AssumptionFeature()
            fgraph.attach_feature(feature)
        replacements = []
        for node in nodes:
            (out,) = node.outputs
            for name, _ in node.op.assumptions:
                feature.get(out, _KEY_BY_NAME[name])
            inner = node.inputs[0]
            # assume(assume(x)) collapses to x in one replacement.
            while inner.owner is not None and isinstance(inner.owner.op, SpecifyAssumptions):
                inner = inner.owner.inputs[0]
            replacements.append((out, inner))
        fgraph.replace_all(replacements, reason="drain_specify_assumptions")


optdb.register(
    "drain_specify_assumptions", DrainSpecifyAssumptions(), "fast_run", "fast_compile", position=0.8
)
