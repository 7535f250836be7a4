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

from functools import partial

from lucent.graph.basic import AbstractApply, Apply, AtomicVariable, Constant, Variable
from lucent.graph.features import AlreadyThere, Feature, ReplaceValidate
from lucent.graph.op import Op
from lucent.graph.traversal import clone_get_equiv, graph_inputs, io_toposort
from lucent.graph.utils import hand_on_backward


class InconsistencyError(Exception):
    """A change would make the graph inconsistent; a feature vetoed it."""


class MissingInputError(Exception):
    """An output depends on a graph input that was not given as an input."""

    def __init__(self, *args, variable=None):
        self.variable = variable
        super().__init__(*args)


class AbstractFunctionGraph:
    """What every function graph offers for reading: ``inputs``, ``outputs``,
    ``apply_nodes``, ``variables``, ``clients`` and ``toposort()``.

    Shared by the editable :class:`FunctionGraph` and the immutable
    :class:`FrozenFunctionGraph`, so linkers and printers accept both.
    """

    def toposort(self):
        raise NotImplementedError()


class Output(Op):
    """Marks "output ``idx`` of the graph" as a node, in frozen graphs.

    A frozen graph is identified by its nodes, so its outputs are nodes too
    (``Output(i)`` applied to the output variable): two frozen graphs are
    equal exactly when their output nodes are the same interned objects.
    It is never computed.
    """

    __props__ = ("idx",)

    def __init__(self, idx):
        self.idx = idx

    def make_node(self, inp):
        return Apply(self, [inp], [])

    def perform(self, node, inputs, outputs):
        raise RuntimeError("Output nodes mark graph outputs; they are never computed")

    def __str__(self):
        return f"output[{self.idx}]"


class FunctionGraph(AbstractFunctionGraph):
    """An editable graph from ``inputs`` to ``outputs`` with client tracking.

    Parameters
    ----------
    inputs
        The graph inputs; defaults to every ownerless variable that is not a
        constant (nor another ``AtomicVariable``).
    outputs
        The variables the graph computes.
    features
        Features attached at construction (a :class:`ReplaceValidate` is
        always attached too, so ``fgraph.replace_validate`` and
        ``fgraph.validate`` exist on every graph).
    clone
        Copy the graph first so edits do not affect the caller's variables.
    update_mapping
        ``{output index: input index}`` of the outputs that update inputs.
    **clone_kwds
        With ``clone=True``, passed to ``clone_get_equiv``: ``copy_inputs``,
        ``copy_orphans`` and ``memo`` (a dict of replacements to use while
        cloning, filled in with the old-to-new map).
    """

    def __init__(
        self,
        inputs: Iterable[Variable] | None = None,
        outputs: Iterable[Variable] | None = None,
        features=None,
        clone: bool = True,
        update_mapping=None,
        **clone_kwds,
    ):
        if outputs is None:
            raise ValueError("No outputs specified")
        outputs = list(outputs)
        if inputs is None:
            inputs = [
                i for i in graph_inputs(outputs) if not isinstance(i, AtomicVariable)
            ]
        inputs = list(inputs)
        if clone:
            if clone_kwds.get("copy_orphans", None) is None:
                clone_kwds["copy_orphans"] = clone_kwds.get("copy_inputs", True)
            equiv = clone_get_equiv(inputs, outputs, **clone_kwds)
            inputs = [equiv[i] for i in inputs]
            outputs = [equiv[o] for o in outputs]
        self.execute_callbacks_time = 0
        self.execute_callbacks_times = {}
        self._features = []
        self._feature_methods = {}
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
        self.attach_feature(ReplaceValidate())

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
        elif var.owner is None and not isinstance(var, AtomicVariable) and var not in self.variables:
            from lucent.graph.null_type import NullType

            if isinstance(var.type, NullType):
                raise TypeError(
                    f"Computation graph contains a NaN (a NullType variable, {var}): "
                    f"{var.type.why_null}"
                )
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
                        and not isinstance(var, AtomicVariable)
                        and var not in self.variables
                    ):
                        from lucent.graph.null_type import NullType

                        if isinstance(var.type, NullType):
                            raise TypeError(
                                f"Computation graph contains a NaN (a NullType variable, "
                                f"{var}, used by {node}): {var.type.why_null}"
                            )
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
            imported_by = getattr(node.tag, "imported_by", None)
            if imported_by is None:
                node.tag.imported_by = imported_by = []
            imported_by.append(str(reason))
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
            removed_by = getattr(node.tag, "removed_by", None)
            if removed_by is None:
                node.tag.removed_by = removed_by = []
            removed_by.append(str(reason))
            for out in node.outputs:
                self.variables.discard(out)
                self.clients.pop(out, None)
            self.execute_callbacks("on_prune", node, reason)
            for i, inp in enumerate(node.inputs):
                removal_stack.append((inp, (node, i)))
            for inp in node.inputs:
                if inp.owner is None and inp not in self.inputs and isinstance(inp, Constant):
                    pass

    def remove_node(self, node, reason=None):
        """Remove ``node``, everything computed from it (outputs included) and
        whatever only it used.
        """
        if node not in self.apply_nodes:
            return
        self.apply_nodes.remove(node)
        removed_by = getattr(node.tag, "removed_by", None)
        if removed_by is None:
            node.tag.removed_by = removed_by = []
        removed_by.append(str(reason))
        clients = self.clients
        for out in node.outputs:
            self.variables.discard(out)
            out_clients = clients.get(out, [])
            while out_clients:
                client, idx = out_clients.pop()
                if client == "output":
                    self.remove_output(idx, remove_client=False)
                else:
                    self.remove_node(client, reason=reason)
            clients.pop(out, None)
        for i, inp in enumerate(node.inputs):
            inp_clients = clients.get(inp, [])
            if (node, i) not in inp_clients:
                continue
            inp_clients.remove((node, i))
            if inp_clients or inp in self.outputs:
                continue
            if inp.owner is not None:
                if not any(o in self.variables for o in inp.owner.outputs if o is not inp):
                    self.remove_node(inp.owner, reason=reason)
            elif inp not in self.inputs:
                self.variables.discard(inp)
        self.execute_callbacks("on_prune", node, reason)

    def remove_input(self, input_idx, reason=None):
        """Remove input ``input_idx`` and every node (and output) that depends on it."""
        var = self.inputs.pop(input_idx)
        for client, _ in list(self.clients.get(var, [])):
            if client != "output":
                self.remove_node(client, reason=reason)
        if var not in self.outputs:
            self.variables.discard(var)
            self.clients.pop(var, None)

    def remove_output(self, output_idx, reason=None, remove_client=True):
        """Remove output ``output_idx``; later outputs move down one place.

        Nodes only that output needed are pruned (unless ``remove_client`` is
        False, used when the output's node is being removed anyway).
        """
        outputs = self.outputs
        if not 0 <= output_idx < len(outputs):
            raise IndexError(f"The graph has {len(outputs)} outputs; there is no output {output_idx}")
        for j in range(output_idx + 1, len(outputs)):
            entries = self.clients[outputs[j]]
            entries[entries.index(("output", j))] = ("output", j - 1)
        if remove_client:
            self.remove_client(outputs[output_idx], ("output", output_idx), reason=reason,
                               remove_if_empty=True)
        outputs.pop(output_idx)

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
        if var.owner is not None and new_var.owner is not None:
            hand_on_trace(var.owner, new_var, self.apply_nodes)
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
        for name in getattr(feature, "provides", ()):
            self._feature_methods[name] = feature

    def remove_feature(self, feature):
        try:
            self._features.remove(feature)
        except ValueError:
            return
        for name, provider in list(self._feature_methods.items()):
            if provider is feature:
                del self._feature_methods[name]
        detach = getattr(feature, "on_detach", None)
        if detach is not None:
            detach(self)

    def __getattr__(self, name):
        # Methods provided by attached features (``Feature.provides``).
        if name.startswith("_"):
            raise AttributeError(name)
        provider = self.__dict__.get("_feature_methods", {}).get(name)
        if provider is None:
            raise AttributeError(
                f"{type(self).__name__} has no attribute {name!r} (no attached feature provides it)"
            )
        return partial(getattr(provider, name), self)

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

    def unfreeze(self, *, return_memo=False):
        """A copy of this graph to rewrite or compile (and, with ``return_memo``, the
        ``{old: new}`` map), leaving this one (an op's inner graph) as it is."""
        fgraph, memo = self.clone_get_equiv(check_integrity=False, attach_feature=False)
        return (fgraph, memo) if return_memo else fgraph

    def clone_get_equiv(self, check_integrity=True, attach_feature=True, **kwargs):
        """A copy of the graph and the ``{old: new}`` map (``kwargs`` go to ``clone_get_equiv``)."""
        equiv = clone_get_equiv(self.inputs, self.outputs, **kwargs)
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
        if isinstance(item, AbstractApply):
            return item in self.apply_nodes
        raise TypeError()

    def dprint(self, **kwargs):
        from lucent.printing import debugprint

        return debugprint(self, **kwargs)

    def freeze(self):
        """An immutable, hashable copy of this graph (:class:`FrozenFunctionGraph`).

        The current execution order (``toposort()``, which honours in-place
        constraints) is baked into the frozen graph.
        """
        return FrozenFunctionGraph.from_toposort(self.inputs, self.outputs, self.toposort())

    def _repr_html_(self):
        """A drawing of the graph, for notebooks (the ``dprint`` text when Graphviz is missing; never raises)."""
        from lucent.graph.dot import graph_html

        return graph_html(self)

    def __getstate__(self):
        return self.__dict__.copy()


class FrozenFunctionGraph(AbstractFunctionGraph):
    """An immutable, hashable function graph, for the inner graphs of ops.

    Its inputs are :class:`NominalVariable` s (known by position and type)
    and its nodes interned :class:`FrozenApply` s, so two frozen graphs built
    from the same computation are made of the very same objects: equality
    and hashing are cheap identity checks, which lets ops that carry an
    inner graph be compared and cached by content. Build one with
    ``FunctionGraph.freeze()``, :meth:`from_io` or :meth:`from_toposort`;
    get an editable graph back with :meth:`unfreeze` or new outputs over
    other inputs with :meth:`bind`.
    """

    def __init__(self, inputs, toposort, output_nodes):
        self.inputs = tuple(inputs)
        self._toposort = tuple(toposort)
        self._output_nodes = tuple(output_nodes)
        self.outputs = tuple(node.inputs[0] for node in self._output_nodes)
        self.apply_nodes = frozenset(self._toposort)
        self._variables = None
        self._clients = None

    @classmethod
    def from_io(cls, inputs, outputs, dedup_nodes=False):
        """Freeze the graph between ``inputs`` and ``outputs`` in topological order.

        Structurally identical nodes stay distinct (keyed by position) unless
        ``dedup_nodes=True``, which folds them into one node; only do that for
        graphs without in-place ops, where sharing a result is harmless.
        """
        return cls._freeze(inputs, outputs, io_toposort(list(inputs), list(outputs)), dedup_nodes)

    @classmethod
    def from_toposort(cls, inputs, outputs, toposort):
        """Freeze the graph with ``toposort`` baked in as its execution order."""
        return cls._freeze(inputs, outputs, toposort, dedup_nodes=False)

    @classmethod
    def _freeze(cls, inputs, outputs, toposort, dedup_nodes):
        from lucent.graph.basic import FrozenApply, NominalVariable

        inputs, outputs = list(inputs), list(outputs)
        nominal = tuple(NominalVariable(i, inp.type) for i, inp in enumerate(inputs))
        memo = dict(zip(inputs, nominal))

        def resolve(var):
            if var in memo:
                return memo[var]
            if isinstance(var, Constant):
                memo[var] = var
                return var
            raise ValueError(
                f"Orphan {var} found in the graph: every variable must be an input, a "
                "constant, or computed from the inputs."
            )

        nodes = []
        for k, node in enumerate(toposort):
            new = FrozenApply(
                node.op,
                tuple(resolve(i) for i in node.inputs),
                tuple(o.type for o in node.outputs),
                topo_idx=-1 if dedup_nodes else k,
            )
            nodes.append(new)
            memo.update(zip(node.outputs, new.outputs))
        output_nodes = []
        for i, out in enumerate(outputs):
            if out in memo:
                output_nodes.append(FrozenApply(Output(i), (memo[out],), ()))
            elif isinstance(out, AtomicVariable):
                node = FrozenApply(Output(i), (out,), ())
                output_nodes.append(node)
                memo[out] = node.inputs[0]
            else:
                raise ValueError(
                    f"Output variable {out} could not be mapped to a frozen graph variable: it "
                    f"is not computed from the inputs {inputs} (nor a constant)"
                )
        return cls(nominal, nodes, output_nodes)

    @classmethod
    def from_structural_inputs(cls, inputs, outputs):
        """Freeze ``outputs`` with ``inputs`` that may be *intermediate* expressions.

        Each input computed by some node is matched by structure against the
        outputs' graph, and every occurrence of it becomes that input (the
        opposite of :meth:`bind`). ``outputs`` must be computable from
        ``inputs`` alone, else freezing raises ``ValueError``; an input the
        outputs do not use is kept as an unused input.
        """
        inputs, outputs = list(inputs), list(outputs)
        roots = [v for v in graph_inputs(inputs + outputs) if not isinstance(v, Constant)]
        # Deduplicated interning makes each intermediate input the very same
        # object as its occurrences in the outputs, so the second freeze can
        # stop at it.
        both = cls.from_io(roots, inputs + outputs, dedup_nodes=True)
        n = len(inputs)
        return cls.from_io(both.outputs[:n], both.outputs[n:], dedup_nodes=True)

    def __reduce__(self):
        return FrozenFunctionGraph, (self.inputs, self._toposort, self._output_nodes)

    def __hash__(self):
        return hash(self._output_nodes)

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, FrozenFunctionGraph):
            return False
        return (
            len(self.outputs) == len(other.outputs)
            and all(a is b for a, b in zip(self.outputs, other.outputs))
            and self.inputs == other.inputs
        )

    def __repr__(self):
        return f"FrozenFunctionGraph(inputs={list(self.inputs)}, outputs={list(self.outputs)})"

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def toposort(self):
        return self._toposort

    @property
    def variables(self):
        if self._variables is None:
            from lucent.graph.traversal import vars_between

            self._variables = frozenset(vars_between(self.inputs, self.outputs)) | set(self.inputs)
        return self._variables

    @property
    def clients(self):
        """``{variable: [(node, i), ...]}``; outputs have ``("output", i)`` clients."""
        if self._clients is None:
            clients = {v: [] for v in self.variables}
            for node in self._toposort:
                for i, inp in enumerate(node.inputs):
                    clients.setdefault(inp, []).append((node, i))
            for i, out in enumerate(self.outputs):
                clients.setdefault(out, []).append(("output", i))
            self._clients = clients
        return self._clients

    def bind(self, replace, *, return_memo=False):
        """New (editable) outputs computed from ``replace`` instead of the inputs.

        ``replace`` is a list (one variable per input) or a ``{input: var}``
        dict. Constants are shared. With ``return_memo=True`` also returns
        the map from frozen objects to the new ones.
        """
        if isinstance(replace, dict):
            memo = dict(replace)
        else:
            replace = list(replace)
            if len(replace) != len(self.inputs):
                raise ValueError(
                    f"bind needs {len(self.inputs)} replacements (one per input), got {len(replace)}"
                )
            memo = dict(zip(self.inputs, replace))
        for node in self._toposort:
            for i in node.inputs:
                if i not in memo:
                    if isinstance(i, Constant):
                        memo[i] = i
                    else:
                        raise KeyError(f"Missing replacement for input {i}")
            new = Apply(node.op, [memo[i] for i in node.inputs], [o.type() for o in node.outputs])
            memo[node] = new
            memo.update(zip(node.outputs, new.outputs))
        for out in self.outputs:
            if isinstance(out, Constant):
                memo.setdefault(out, out)
        outputs = [memo[out] for out in self.outputs]
        return (outputs, memo) if return_memo else outputs

    def unfreeze(self, *, return_memo=False):
        """An editable FunctionGraph with the same computation on fresh inputs."""
        fresh = [inp.type() for inp in self.inputs]
        outputs, memo = self.bind(dict(zip(self.inputs, fresh)), return_memo=True)
        fgraph = FunctionGraph(fresh, outputs, clone=False)
        return (fgraph, memo) if return_memo else fgraph



def hand_on_trace(old_node, new_var, known):
    """Give the nodes a replacement brings into the graph the creation trace of the node they replace.

    A node built by a rewrite records the user frame outside lucent, which is
    the line that compiled the function; the line that matters to the user
    is the one that wrote the replaced computation, so it goes first (what
    the node recorded itself stays after it).
    """
    trace = list(getattr(old_node.tag, "trace", None) or [])
    if not trace:
        return
    stack, seen = [new_var.owner], set()
    while stack:
        node = stack.pop()
        if node is None or node in known or node in seen:
            continue
        seen.add(node)
        hand_on_backward(old_node, node)
        own = list(getattr(node.tag, "trace", None) or [])
        if own[: len(trace)] != trace:
            node.tag.trace = trace + [entry for entry in own if entry not in trace]
        stack.extend(inp.owner for inp in node.inputs)

__all__ = [
    "AbstractFunctionGraph",
    "FrozenFunctionGraph",
    "Output",
    "FunctionGraph", "InconsistencyError", "MissingInputError",
    "AbstractFunctionGraph", "FrozenFunctionGraph", "Output",
]
