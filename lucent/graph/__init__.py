"""The graph layer: variables, applies, types, ops and editable function graphs."""

from lucent.graph.basic import Apply, Constant, Variable
from lucent.graph.fg import FunctionGraph
from lucent.graph.op import Op
from lucent.graph.replace import clone_replace, graph_replace
from lucent.graph.traversal import ancestors, graph_inputs, io_toposort, toposort
from lucent.graph.type import Type

__all__ = [
    "Apply", "Constant", "Variable", "FunctionGraph", "Op", "Type",
    "clone_replace", "graph_replace", "ancestors", "graph_inputs", "io_toposort", "toposort",
]
