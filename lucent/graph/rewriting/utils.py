"""Rewriting a graph outside ``function``: ``rewrite_graph(outputs, include=...)``."""

from __future__ import annotations

from lucent.graph.basic import Variable
from lucent.graph.fg import FunctionGraph
from lucent.graph.rewriting.db import RewriteDatabaseQuery, optdb


def rewrite_graph(graph, include=("canonicalize",), custom_rewrite=None, clone=False,
                  exclude=(), return_fgraph=False, **kwargs):
    """Rewrite ``graph`` (a Variable, a list of them, or a FunctionGraph).

    ``include`` names the rewrite tags to run (as a mode would query them),
    e.g. ``include=("canonicalize", "stabilize")``. Returns the rewritten
    variable(s) or, for a FunctionGraph, the graph itself (changed in place).
    With ``return_fgraph=True`` returns ``(result, fgraph)`` so the
    ``fgraph.rewrite_history`` can be inspected.
    """
    if isinstance(graph, FunctionGraph):
        fgraph = graph
        single = None
    else:
        single = isinstance(graph, Variable)
        outputs = [graph] if single else list(graph)
        # Cloning copies the computation, never the inputs: the result must
        # still be a function of the caller's variables.
        fgraph = FunctionGraph(outputs=outputs, clone=clone, copy_inputs=False)
    query = RewriteDatabaseQuery(include=include, exclude=exclude, **kwargs)
    rewriter = optdb.query(query)
    if rewriter is not None:
        rewriter.rewrite(fgraph)
    if custom_rewrite is not None:
        custom_rewrite.rewrite(fgraph)
    if single is None:
        result = fgraph
    elif single:
        result = fgraph.outputs[0]
    else:
        result = list(fgraph.outputs)
    if return_fgraph:
        return result, fgraph
    return result


__all__ = ["rewrite_graph"]
