"""Rewriting the inner graph of each ``OpFromGraph`` with the outer graph's rewrites.

An ``OpFromGraph`` that is not inlined keeps its inner graph as the user
wrote it. The Numba path compiles a ``fast_run``-rewritten copy of it, but
``perform`` (the reference path, and so DebugMode's reference) ran the
graph as written: a formula the rewrites stabilise (``exp(x) / sum(exp(x))``
becoming a softmax, ``log(softmax(x))`` a log-softmax) gave ``nan`` on one
path and a number on the other. This pass, at the end of the pipeline, as
``scan_inner_graph`` does for loop bodies, replaces each such node by one
whose inner graph has the ``fast_run`` rewrites (inputs protected), so the
rewritten graph is what every path runs and what ``dprint`` shows.

Rewriting an inner graph records its own ``RewriteHistory`` (every
rewriter attaches one); the rewritten op keeps it as
``inner_rewrite_history`` (so an op served from the cache of rewritten ops
still has it), and the outer graph's history links it to the record of the
replacement (``RewriteHistory.link_inner``), where ``str(history)``,
``RewriteView`` and DebugMode's rewrite check find it.
"""

from __future__ import annotations

import weakref

from lucent.compile.builders import OpFromGraph
from lucent.graph.features import ReplaceValidate
from lucent.graph.fg import InconsistencyError
from lucent.graph.rewriting.basic import GraphRewriter
from lucent.graph.rewriting.db import optdb

#: ``OpFromGraph`` ops already rewritten, so equal ops met again are rewritten once.
_DONE = weakref.WeakKeyDictionary()


def ofg_with_rewritten_inner_graph(op):
    """An ``OpFromGraph`` like ``op`` whose inner graph has the ``fast_run`` rewrites."""
    from lucent.graph.destroyhandler import DestroyHandler
    from lucent.graph.rewriting.db import RewriteDatabaseQuery

    if getattr(op, "_inner_rewritten", False) or op.is_inline:
        return op
    done = _DONE.get(op)
    if done is not None:
        return done
    fgraph = op.fgraph.clone()
    fgraph.destroyable_inputs = set()
    fgraph.attach_feature(DestroyHandler())
    optdb.query(RewriteDatabaseQuery(include=["fast_run"])).rewrite(fgraph)
    new_op = op.clone_with_inner_graph(fgraph)
    new_op._inner_rewritten = True
    new_op.inner_rewrite_history = getattr(fgraph, "rewrite_history", None)
    _DONE[op] = new_op
    return new_op


def tolerate_stabilised(node):
    """Let DebugMode's rewrite check accept finite values where the old node overflowed.

    The inner rewrites include the stabilising ones: where the graph as
    written gave ``inf`` or ``nan``, the rewritten one may give the finite
    value (``removes_overflow``). Everywhere else the values must still agree.
    """
    from lucent.tensor.rewriting.stabilize import removes_overflow
    from lucent.tensor.type import TensorType

    for out in node.outputs:
        if isinstance(out.type, TensorType):
            removes_overflow(out)


class InnerGraphRewriter(GraphRewriter):
    """Replace each node by one whose op has its inner graph rewritten.

    ``rewritten(op)`` gives that op (or ``op`` itself when there is nothing to
    do); a node whose new op no longer fits its inputs, or whose new outputs
    the graph refuses, is kept as it was.
    """

    #: What the inner graphs are called in the rewrite history (``scan`` gives ``scan "rnn" body``).
    kind = "inner graph"

    def rewritten(self, op):
        raise NotImplementedError

    def inner_label(self, op):
        """How the outer rewrite history names ``op``'s inner graph: ``<kind> "<name>" body``."""
        name = getattr(op, "name", None)
        return f'{self.kind} "{name}" body' if name else f"{self.kind} body"

    def add_requirements(self, fgraph):
        super().add_requirements(fgraph)
        fgraph.attach_feature(ReplaceValidate())

    def apply(self, fgraph):
        changed = False
        for node in fgraph.toposort():
            new_op = self.rewritten(node.op)
            if new_op is node.op:
                continue
            try:
                new_node = new_op.make_node(*node.inputs)
                pairs = [
                    (old, new if new.type == old.type else old.type.filter_variable(new))
                    for old, new in zip(node.outputs, new_node.outputs)
                ]
            except (TypeError, ValueError):
                continue  # the rewritten graph no longer fits the node: keep the old one
            # where the graph as written overflowed, the stabilised one may give a
            # finite value (DebugMode's rewrite check accepts exactly that)
            tolerate_stabilised(new_node)
            history = getattr(fgraph, "rewrite_history", None)
            first_record = len(history.records) if history is not None else 0
            try:
                fgraph.replace_all_validate(pairs, reason=self.name)
            except (InconsistencyError, TypeError):
                continue
            inner = getattr(new_op, "inner_rewrite_history", None)
            if history is not None and inner is not None:
                history.link_inner(first_record, self.inner_label(new_op), inner)
            changed = True
        return changed


class OfgInnerGraphRewriter(InnerGraphRewriter):
    """Replace every ``OpFromGraph`` by one whose inner graph is rewritten (see the module docstring)."""

    name = "ofg_inner_graph"
    kind = "OpFromGraph"

    def rewritten(self, op):
        return ofg_with_rewritten_inner_graph(op) if isinstance(op, OpFromGraph) else op


optdb.register(
    "ofg_inner_graph", OfgInnerGraphRewriter(), "fast_run", "compile_inner_graph", "ofg_inner_graph",
    position=100.5,
)

__all__ = ["InnerGraphRewriter", "OfgInnerGraphRewriter", "ofg_with_rewritten_inner_graph", "tolerate_stabilised"]
