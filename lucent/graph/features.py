"""Features: objects attached to a ``FunctionGraph`` that observe its changes.

A FunctionGraph calls, on every attached feature that defines them,
``on_attach(fgraph)``, ``on_detach(fgraph)``, ``on_import(fgraph, node,
reason)``, ``on_prune(fgraph, node, reason)`` and ``on_change_input(fgraph,
node, i, old_var, new_var, reason)``. ``orderings(fgraph)`` may add
execution-order constraints. This is how rewrite histories, validation and
in-place safety are added without touching the graph class itself.

A feature may also give the graph *methods*: each name in its ``provides``
becomes callable as ``fgraph.name(...)``, which calls
``feature.name(fgraph, ...)``. Every FunctionGraph carries a
:class:`ReplaceValidate`, which provides ``replace_validate``,
``replace_all_validate``, ``validate``, ``checkpoint`` and ``revert``:
replacements that are undone when a feature's ``on_validate`` vetoes them.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any


class AlreadyThere(Exception):
    """Raised by ``on_attach`` when an equivalent feature is already attached."""


class ReplacementDidNotRemoveError(Exception):
    """A replacement left in the graph a node it was meant to remove (it was undone)."""


class Feature:
    """Base class of FunctionGraph features; every callback is optional.

    ``provides`` names methods of the feature that the graph exposes as its
    own (``fgraph.name(*args)`` calls ``feature.name(fgraph, *args)``).
    """

    provides: tuple = ()

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

    def on_validate(self, fgraph):
        """Called by ``fgraph.validate()``; raise ``InconsistencyError`` to veto the graph."""


class Bookkeeper(Feature):
    """A feature that sees the nodes already in the graph as imported when attached."""

    def on_attach(self, fgraph):
        from lucent.graph.traversal import io_toposort

        for node in io_toposort(fgraph.inputs, fgraph.outputs):
            self.on_import(fgraph, node, "on_attach")

    def on_detach(self, fgraph):
        from lucent.graph.traversal import io_toposort

        for node in io_toposort(fgraph.inputs, fgraph.outputs):
            self.on_prune(fgraph, node, "Bookkeeper.detach")


@dataclass
class HistoryEntry:
    """One recorded input change: ``node.inputs[i]`` was ``var`` before it (for ``reason``)."""

    node: Any
    i: int
    var: Any
    reason: Any = None


class History(Feature):
    """Records input changes since the last ``checkpoint`` so they can be ``revert``-ed.

    Only the latest checkpoint can be reverted to, which keeps the memory
    used bounded by the changes of one transaction.
    """

    provides = ("checkpoint", "revert")

    def __init__(self):
        self.history = {}
        self._checkpoints = {}

    def on_attach(self, fgraph):
        if "checkpoint" in getattr(fgraph, "_feature_methods", {}):
            raise AlreadyThere("A History feature is already attached to this graph")
        self.history[fgraph] = []
        self._checkpoints[fgraph] = 0

    def on_detach(self, fgraph):
        self.history.pop(fgraph, None)
        self._checkpoints.pop(fgraph, None)

    def clone(self):
        return type(self)()

    def __getstate__(self):
        # Pending changes name the rewrites that made them (arbitrary
        # objects); a pickled graph starts a new transaction instead.
        state = self.__dict__.copy()
        state["history"] = {fgraph: [] for fgraph in self.history}
        return state

    def on_change_input(self, fgraph, node, i, var, new_var, reason=None):
        entries = self.history.get(fgraph)
        if entries is not None:
            entries.append(HistoryEntry(node, i, var, reason))

    def checkpoint(self, fgraph):
        """Forget earlier changes and return a token for ``revert``."""
        self.history[fgraph] = []
        self._checkpoints[fgraph] += 1
        return self._checkpoints[fgraph]

    def revert(self, fgraph, checkpoint):
        """Undo every change made since ``checkpoint`` (the latest one)."""
        if checkpoint != self._checkpoints[fgraph]:
            raise ValueError(
                f"revert({checkpoint}) but the latest checkpoint is {self._checkpoints[fgraph]}; "
                "only the latest checkpoint can be reverted to"
            )
        entries = self.history[fgraph]
        self.history[fgraph] = None  # the undoing changes are not recorded
        try:
            while entries:
                entry = entries.pop()
                fgraph.change_node_input(
                    entry.node, entry.i, entry.var, reason=("Revert", entry.reason), check=False
                )
        finally:
            self.history[fgraph] = entries


class Validator(Feature):
    """Gives the graph ``validate()`` (every feature's ``on_validate``) and ``consistent()``."""

    provides = ("validate", "consistent")

    def on_attach(self, fgraph):
        if "validate" in getattr(fgraph, "_feature_methods", {}):
            raise AlreadyThere("A Validator feature is already attached to this graph")

    def validate(self, fgraph):
        """Raise ``InconsistencyError`` if an attached feature rejects the graph."""
        fgraph.execute_callbacks("on_validate")
        return True

    def consistent(self, fgraph):
        """True if ``validate`` passes."""
        try:
            fgraph.validate()
            return True
        except Exception:
            return False


class ReplaceValidate(History, Validator):
    """Replacements as transactions: apply them, validate, undo all if rejected.

    ``fgraph.replace_validate(var, new_var, reason)`` and
    ``fgraph.replace_all_validate([(var, new_var), ...], reason)`` replace,
    then run ``fgraph.validate()``; if a replacement or the validation
    raises, every change of the call is reverted before the error
    propagates, so a rejected rewrite leaves the graph as it was.
    ``replace_all_validate_remove`` also checks that the nodes in ``remove``
    left the graph (and refuses the change otherwise).
    """

    provides = (
        *History.provides,
        *Validator.provides,
        "replace_validate",
        "replace_all_validate",
        "replace_all_validate_remove",
    )

    def __init__(self):
        super().__init__()
        self._nodes_removed = set()
        self.fail_validate = False

    def on_attach(self, fgraph):
        if "replace_validate" in getattr(fgraph, "_feature_methods", {}):
            raise AlreadyThere("A ReplaceValidate feature is already attached to this graph")
        self._nodes_removed = set()
        self.fail_validate = False
        History.on_attach(self, fgraph)
        Validator.on_attach(self, fgraph)

    def on_detach(self, fgraph):
        History.on_detach(self, fgraph)
        Validator.on_detach(self, fgraph)

    def clone(self):
        return type(self)()

    def replace_validate(self, fgraph, var, new_var, reason=None, **kwargs):
        """Replace ``var`` by ``new_var`` and validate; undone if validation fails."""
        self.replace_all_validate(fgraph, [(var, new_var)], reason=reason, **kwargs)

    def replace_all_validate(self, fgraph, replacements, reason=None, verbose=None, **kwargs):
        """Replace each ``(var, new_var)`` pair, then validate; all undone on failure.

        Returns the checkpoint token of the transaction.
        """
        chk = fgraph.checkpoint()
        try:
            for var, new_var in replacements:
                fgraph.replace(var, new_var, reason=reason, verbose=False, **kwargs)
            fgraph.validate()
        except Exception:
            fgraph.revert(chk)
            raise
        if verbose:
            for var, new_var in replacements:
                print(
                    f"rewriting: rewrite {reason} replaces {var} of {var.owner} "
                    f"with {new_var} of {new_var.owner}"
                )
        return chk

    def replace_all_validate_remove(self, fgraph, replacements, remove, reason=None,
                                    warn=True, **kwargs):
        """Like ``replace_all_validate``; undone if a node or variable of ``remove`` stays."""
        chk = fgraph.replace_all_validate(replacements, reason=reason, **kwargs)
        self._nodes_removed.update(remove)
        for rm in remove:
            if rm in fgraph.apply_nodes or rm in fgraph.variables:
                fgraph.revert(chk)
                if warn:
                    warnings.warn(
                        f"The replacement {replacements} (reason: {reason}) did not remove "
                        f"{rm} from the graph; it was undone.",
                        stacklevel=2,
                    )
                raise ReplacementDidNotRemoveError(
                    f"{rm} is still in the graph after the replacement (reason: {reason})"
                )

    def on_import(self, fgraph, node, reason):
        if node in self._nodes_removed:
            self.fail_validate = True

    def on_validate(self, fgraph):
        if self.fail_validate:
            self.fail_validate = False
            from lucent.graph.fg import InconsistencyError

            raise InconsistencyError("Trying to reintroduce a removed node")


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


class BadOptimization(Exception):
    """A rewrite replaced a variable by one that takes a different value.

    Raised by checkers that evaluate both sides of a replacement (DebugMode).
    It lives here, beside the features that record replacements, so that code
    at the graph level can catch it without importing the checker.

    Attributes: ``old_r`` (the replaced variable), ``new_r`` (its
    replacement), ``old_r_val`` / ``new_r_val`` (their values), ``reason``
    (what asked for the replacement, usually the rewrite's name) and
    ``old_graph`` / ``new_graph`` (text of both graphs). Given a single string,
    the exception carries it as its message (so it can be re-raised with more
    text).
    """

    old_r = None
    new_r = None
    old_r_val = None
    new_r_val = None
    reason = None
    old_graph = ""
    new_graph = ""

    def __init__(self, old_r, new_r=None, old_r_val=None, new_r_val=None, reason=None,
                 old_graph="", new_graph=""):
        if isinstance(old_r, str) and new_r is None and reason is None:
            super().__init__(old_r)
            return
        super().__init__(
            f"The replacement of {old_r} by {new_r} (reason: {reason}) changed the computed "
            f"value: {old_r_val!r} became {new_r_val!r}"
        )
        self.old_r = old_r
        self.new_r = new_r
        self.old_r_val = old_r_val
        self.new_r_val = new_r_val
        self.reason = reason
        self.old_graph = old_graph
        self.new_graph = new_graph


__all__ = [
    "Feature", "AlreadyThere", "BadOptimization", "ChangeTracker", "NodeFinder",
    "Bookkeeper", "History", "HistoryEntry", "Validator", "ReplaceValidate",
    "ReplacementDidNotRemoveError",
]
