"""The graph layer: variables, applies, types, ops and editable function graphs."""

from lucent.graph.basic import Apply, Constant, Variable, clone
from lucent.graph.fg import FunctionGraph
from lucent.graph.op import Op
from lucent.graph.replace import clone_replace, graph_replace, vectorize_graph
from lucent.graph.traversal import (
    ancestors, explicit_graph_inputs, graph_inputs, io_toposort, toposort,
)
from lucent.graph.type import Type
from lucent.graph.rewriting.basic import graph_rewriter, node_rewriter  # noqa: E402
from lucent.graph.rewriting.db import RewriteDatabaseQuery  # noqa: E402
from lucent.graph.rewriting.utils import rewrite_graph  # noqa: E402

__all__ = [
    "Apply", "Constant", "Variable", "FunctionGraph", "Op", "Type",
    "clone_replace", "graph_replace", "vectorize_graph", "ancestors", "graph_inputs", "io_toposort", "toposort",
    "clone", "explicit_graph_inputs", "graph_rewriter", "node_rewriter", "RewriteDatabaseQuery",
    "rewrite_graph",
]
