"""Features: objects attached to a ``FunctionGraph`` that observe its changes.

A FunctionGraph calls, on every attached feature that defines them,
``on_attach(fgraph)``, ``on_detach(fgraph)``, ``on_import(fgraph, node,
reason)``, ``on_prune(fgraph, node, reason)`` and ``on_change_input(fgraph,
node, i, old_var, new_var, reason)``. ``orderings(fgraph)`` may add
execution-order constraints. This is how rewrite histories, validation and
in-place safety are added without touching the graph class itself.
"""

from __future__ import annotations


class AlreadyThere(Exception):
    """Raised by ``on_attach`` when an equivalent feature is already attached."""


class Feature:
    """Base class of FunctionGraph features; every callback is optional."""

    def on_attach(self, fgraph):
        """Called when attached; may raise ``AlreadyThere``."""

    def on_detach(self, fgraph):
        """Called when removed."""

    def on_import(self, fgraph, node, reason):
        """Called when ``node`` enters the graph."""

    def on_prune(self, fgraph, node, reason):
        """Called when ``node`` leaves the graph."""

    def on_change_input(self, fgraph, node, i, var, new_var, reason=None):
        """Called when input ``i`` of ``node`` changes from ``var`` to ``new_var``."""

    def orderings(self, fgraph):
        """Extra ordering constraints ``{node: [prerequisite nodes]}``."""
        return {}


class ChangeTracker(Feature):
    """Remembers whether the graph changed since the last ``reset``."""

    def __init__(self):
        self.changed = False
        self.nb_imported = 0

    def on_import(self, fgraph, node, reason):
        self.nb_imported += 1
        self.changed = True

    def on_change_input(self, fgraph, node, i, var, new_var, reason=None):
        self.changed = True

    def reset(self):
        self.changed = False

    def on_attach(self, fgraph):
        if hasattr(fgraph, "change_tracker"):
            raise AlreadyThere()
        fgraph.change_tracker = self

    def on_detach(self, fgraph):
        del fgraph.change_tracker


class NodeFinder(Feature):
    """Indexes the graph's nodes by op, for rewrites that look for one op."""

    def on_attach(self, fgraph):
        if hasattr(fgraph, "get_nodes"):
            raise AlreadyThere()
        self.d = {}
        fgraph.get_nodes = self.query
        for node in fgraph.toposort():
            self.on_import(fgraph, node, "on_attach")

    def on_detach(self, fgraph):
        del fgraph.get_nodes

    def on_import(self, fgraph, node, reason):
        self.d.setdefault(node.op, []).append(node)

    def on_prune(self, fgraph, node, reason):
        nodes = self.d.get(node.op, [])
        if node in nodes:
            nodes.remove(node)
        if not nodes:
            self.d.pop(node.op, None)

    def query(self, fgraph, op):
        return list(self.d.get(op, []))


__all__ = ["Feature", "AlreadyThere", "ChangeTracker", "NodeFinder"]
