"""``FunctionGraph``: a graph with known inputs and outputs that can be edited.

A plain graph only links outputs to inputs. A FunctionGraph additionally
records, for every variable, its *clients* (the ``(apply, input_index)``
pairs that use it), so it can replace a variable by another everywhere it
is used, drop nodes nobody needs any more, and tell attached *features*
(history recorders, validators, in-place safety checks) about every change.
Rewrites and linkers work on FunctionGraphs, never on bare graphs.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Iterable

from lucent.graph.basic import Apply, Constant, Variable
from lucent.graph.features import AlreadyThere, Feature
from lucent.graph.traversal import clone_get_equiv, graph_inputs, io_toposort


class InconsistencyError(Exception):
    """A change would make the graph inconsistent; a feature vetoed it."""


class MissingInputError(Exception):
    """An output depends on a graph input that was not given as an input."""

    def __init__(self, *args, variable=None):
        self.variable = variable
        super().__init__(*args)


class FunctionGraph:
    """An editable graph from ``inputs`` to ``outputs`` with client tracking.

    Parameters
    ----------
    inputs
        The graph inputs; defaults to every ownerless non-constant variable.
    outputs
        The variables the graph computes.
    features
        Features attached at construction.
    clone
        Copy the graph first so edits do not affect the caller's variables.
    """

    def __init__(
        self,
        inputs: Iterable[Variable] | None = None,
        outputs: Iterable[Variable] | None = None,
        features=None,
        clone: bool = True,
        update_mapping=None,
        copy_inputs: bool = True,
        copy_orphans=None,
    ):
        if outputs is None:
            raise ValueError("No outputs specified")
        outputs = list(outputs)
        if inputs is None:
            inputs = [
                i for i in graph_inputs(outputs) if not isinstance(i, Constant)
            ]
        inputs = list(inputs)
        if clone:
            if copy_orphans is None:
                copy_orphans = copy_inputs
            equiv = clone_get_equiv(inputs, outputs, copy_inputs, copy_orphans)
            inputs = [equiv[i] for i in inputs]
            outputs = [equiv[o] for o in outputs]
        self.execute_callbacks_time = 0
        self.execute_callbacks_times = {}
        self._features = []
        self.apply_nodes: set = set()
        self.variables: set = set()
        self.inputs: list = []
        self.outputs: list = []
        self.clients: dict = {}
        self.update_mapping = update_mapping or {}
        for inp in inputs:
            if inp.owner is not None:
                raise ValueError(
                    f"One of the provided inputs is the output of an already existing node: {inp}. "
                    "If that is okay, either discard that input's owner or use graph.clone."
                )
            if inp in self.inputs:
                raise ValueError(f"The input {inp} was given twice")
            self.add_input(inp, check=False)
        for out in outputs:
            self.add_output(out, reason="init")
        for feature in features or ():
            self.attach_feature(feature)

    # --- building ------------------------------------------------------------
    def add_input(self, var, check=True):
        if check and var in self.inputs:
            return
        self.inputs.append(var)
        self.setup_var(var)
        self.variables.add(var)

    def setup_var(self, var):
        self.clients.setdefault(var, [])

    def add_output(self, var, reason=None, import_missing=False):
        """Add ``var`` as an output, importing the nodes it needs."""
        self.outputs.append(var)
        self.import_var(var, reason=reason, import_missing=import_missing)
        self.clients[var].append(("output", len(self.outputs) - 1))

    def import_var(self, var, reason=None, import_missing=False):
        if var.owner is not None and var.owner not in self.apply_nodes:
            self.import_node(var.owner, reason=reason, import_missing=import_missing)
        elif var.owner is None and not isinstance(var, Constant) and var not in self.variables:
            if import_missing:
                self.add_input(var)
            else:
                raise MissingInputError(
                    f"Input {var} of the graph (used to compute an output) was not "
                    "provided and not given a value. Use the lucent flag "
                    "exception_verbosity='high' for more information on this error.",
                    variable=var,
                )
        self.setup_var(var)
        self.variables.add(var)

    def import_node(self, apply, check=True, reason=None, import_missing=False):
        """Add ``apply`` and every node it depends on that is not yet in the graph."""
        new_nodes = io_toposort(list(self.variables), apply.outputs)
        if check:
            for node in new_nodes:
                for var in node.inputs:
                    if (
                        var.owner is None
                        and not isinstance(var, Constant)
                        and var not in self.variables
                    ):
                        if import_missing:
                            self.add_input(var)
                        else:
                            raise MissingInputError(
                                f"Input {node.inputs.index(var)} ({var}) of the node "
                                f"{node} is not an input of the graph and has no value. "
                                "Pass it in `inputs` (or give it a value with givens).",
                                variable=var,
                            )
        for node in new_nodes:
            if node in self.apply_nodes:
                continue
            self.apply_nodes.add(node)
            for out in node.outputs:
                self.setup_var(out)
                self.variables.add(out)
            for i, inp in enumerate(node.inputs):
                if inp not in self.variables:
                    self.setup_var(inp)
                    self.variables.add(inp)
                self.clients[inp].append((node, i))
            self.execute_callbacks("on_import", node, reason)

    # --- removing ------------------------------------------------------------
    def remove_client(self, var, client_to_remove, reason=None, remove_if_empty=False):
        """Drop one client of ``var``; prune ``var``'s node when nobody uses it."""
        removal_stack = [(var, client_to_remove)]
        while removal_stack:
            var, client = removal_stack.pop()
            clients = self.clients[var]
            try:
                clients.remove(client)
            except ValueError:
                pass
            if clients:
                continue
            if var.owner is None:
                if remove_if_empty and var in self.variables and var not in self.inputs:
                    self.variables.discard(var)
                continue
            node = var.owner
            if node not in self.apply_nodes:
                continue
            if any(self.clients.get(out) for out in node.outputs):
                continue
            self.apply_nodes.remove(node)
            for out in node.outputs:
                self.variables.discard(out)
                self.clients.pop(out, None)
            self.execute_callbacks("on_prune", node, reason)
            for i, inp in enumerate(node.inputs):
                removal_stack.append((inp, (node, i)))
            for inp in node.inputs:
                if inp.owner is None and inp not in self.inputs and isinstance(inp, Constant):
                    pass

    # --- editing ---------------------------------------------------------------
    def change_node_input(self, node, i, new_var, reason=None, import_missing=False, check=True):
        """Make input ``i`` of ``node`` (or output ``i`` when node is "output") ``new_var``."""
        r = self.outputs[i] if node == "output" else node.inputs[i]
        if check and not r.type.is_super(new_var.type):
            raise TypeError(
                f"The type of the replacement ({new_var.type}) must be compatible "
                f"with the type of the original Variable ({r.type})."
            )
        if r is new_var:
            return
        # Import first: if the replacement needs a missing input this raises
        # before the graph was touched, so a failed replace changes nothing.
        self.import_var(new_var, reason=reason, import_missing=import_missing)
        if node == "output":
            self.outputs[i] = new_var
        else:
            node.inputs[i] = new_var
        self.clients[new_var].append((node, i))
        self.remove_client(r, (node, i), reason=reason)
        self.execute_callbacks("on_change_input", node, i, r, new_var, reason=reason)

    def replace(self, var, new_var, reason=None, verbose=None, import_missing=False):
        """Replace every use of ``var`` in the graph by ``new_var``.

        ``new_var`` is first passed through ``var.type.filter_variable`` so
        that it has a compatible type (a ``SpecifyShape`` may be added); an
        incompatible replacement raises ``TypeError`` and changes nothing.
        With ``config.optimizer_verbose`` the graph's ``RewriteHistory`` prints
        each replacement; ``verbose=True`` prints this one regardless.
        """
        if var not in self.variables:
            return
        new_var = var.type.filter_variable(new_var, allow_convert=True)
        if verbose:
            print(f"rewriting: rewrite {reason} replaces {var} of {var.owner} with {new_var} of {new_var.owner}")
        for node, i in list(self.clients[var]):
            self.change_node_input(node, i, new_var, reason=reason, import_missing=import_missing, check=False)

    def replace_all(self, pairs, **kwargs):
        for var, new_var in pairs:
            self.replace(var, new_var, **kwargs)

    # --- features ---------------------------------------------------------------
    def attach_feature(self, feature):
        """Attach ``feature`` and call its ``on_attach``; ``AlreadyThere`` is ignored."""
        if feature in self._features:
            return
        attach = getattr(feature, "on_attach", None)
        if attach is not None:
            try:
                attach(self)
            except AlreadyThere:
                return
        self.execute_callbacks_times.setdefault(feature, 0)
        self._features.append(feature)

    def remove_feature(self, feature):
        try:
            self._features.remove(feature)
        except ValueError:
            return
        detach = getattr(feature, "on_detach", None)
        if detach is not None:
            detach(self)

    def execute_callbacks(self, name, *args, **kwargs):
        for feature in self._features:
            fn = getattr(feature, name, None)
            if fn is not None:
                fn(self, *args, **kwargs)

    def collect_callbacks(self, name, *args):
        out = {}
        for feature in self._features:
            fn = getattr(feature, name, None)
            if fn is not None:
                out[feature] = fn(*args)
        return out

    # --- queries ----------------------------------------------------------------
    def toposort(self):
        """The Apply nodes in an order in which they can be executed."""
        if len(self.apply_nodes) < 2:
            return list(self.apply_nodes)
        return io_toposort(self.inputs, self.outputs, self.orderings())

    def orderings(self):
        """Extra ``{node: [nodes that must run before]}`` constraints from features."""
        ords = OrderedDict()
        for feature in self._features:
            if hasattr(feature, "orderings"):
                for node, prereqs in feature.orderings(self).items():
                    ords.setdefault(node, []).extend(prereqs)
        return ords

    def check_integrity(self):
        """Raise if the client bookkeeping disagrees with the graph's structure."""
        nodes = set(io_toposort(self.inputs, self.outputs))
        if nodes != self.apply_nodes:
            raise Exception("The nodes are inappropriately cached. missing, in excess: ",
                            nodes - self.apply_nodes, self.apply_nodes - nodes)
        for node in nodes:
            for i, var in enumerate(node.inputs):
                if (node, i) not in self.clients[var]:
                    raise Exception(f"Inconsistent clients list {(node, i)} in {self.clients[var]}")

    def clone(self, check_integrity=True):
        return self.clone_get_equiv(check_integrity)[0]

    def clone_get_equiv(self, check_integrity=True, attach_feature=True):
        equiv = clone_get_equiv(self.inputs, self.outputs)
        if check_integrity:
            self.check_integrity()
        e = FunctionGraph(
            [equiv[i] for i in self.inputs],
            [equiv[o] for o in self.outputs],
            clone=False,
            update_mapping=dict(self.update_mapping),
        )
        if attach_feature:
            for feature in self._features:
                if hasattr(feature, "clone"):
                    e.attach_feature(feature.clone())
        return e, equiv

    def get_clients(self, var):
        return self.clients[var]

    def __str__(self):
        from lucent.printing import debugprint

        return f"FunctionGraph({', '.join(str(o) for o in self.outputs)})"

    def __repr__(self):
        return str(self)

    def __contains__(self, item):
        if isinstance(item, Variable):
            return item in self.variables
        if isinstance(item, Apply):
            return item in self.apply_nodes
        raise TypeError()

    def dprint(self, **kwargs):
        from lucent.printing import debugprint

        return debugprint(self, **kwargs)

    def _repr_html_(self):
        """A drawing of the graph, for notebooks (the ``dprint`` text when Graphviz is missing; never raises)."""
        from lucent.graph.dot import graph_html

        return graph_html(self)

    def __getstate__(self):
        return self.__dict__.copy()


__all__ = ["FunctionGraph", "InconsistencyError", "MissingInputError"]
