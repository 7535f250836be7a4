"""Graph rewriting: node rewriters, graph walkers and the equilibrium rewriter.

Two kinds of rewriters exist:

* a **node rewriter** looks at one Apply node and returns replacements for
  its outputs (``transform(fgraph, node)`` returns ``False``/``None`` for "no
  change", a list with one variable per output, or a ``{old: new}`` dict).
  ``@node_rewriter([OpClass])`` turns a function into one; a
  ``PatternNodeRewriter`` is written as an input and an output pattern;
* a **graph rewriter** changes a whole FunctionGraph (``apply(fgraph)``).
  ``WalkingGraphRewriter`` applies node rewriters to every node, inputs to
  outputs (``in2out``) or outputs to inputs (``out2in``);
  ``EquilibriumGraphRewriter`` repeats its rewriters until none applies.

Every replacement goes through :func:`replace_validated`, which checks the
new types against the old ones before touching the graph, records the
rewrite's name as the *reason* (so ``RewriteHistory`` can show it), and
undoes everything if a feature rejects the change. A rewriter that raises
is reported with its name and skipped (``config.on_opt_error``), so a buggy
rewrite can never leave a half-changed graph behind.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence

from lucent.graph.basic import Apply, Constant, Variable
from lucent.graph.fg import InconsistencyError, hand_on_trace
from lucent.graph.op import Op
from lucent.graph.rewriting.history import RewriteHistory


class RewriteFailure(Warning):
    """A rewrite raised an exception; it was skipped."""


class Rewriter:
    """Base of every rewriter: something with a name that can be queried by tags."""

    name: str | None = None

    def __str__(self):
        return self.name or type(self).__name__

    def __repr__(self):
        return str(self)

    def add_requirements(self, fgraph):
        """Attach the features this rewriter needs (history, validation, ...)."""
        fgraph.attach_feature(RewriteHistory())


class GraphRewriter(Rewriter):
    """Rewrites a whole FunctionGraph in ``apply``."""

    def apply(self, fgraph):
        raise NotImplementedError()

    def rewrite(self, fgraph, *args, **kwargs):
        self.add_requirements(fgraph)
        return self.apply(fgraph, *args, **kwargs)

    def __call__(self, fgraph):
        return self.rewrite(fgraph)


class NodeRewriter(Rewriter):
    """Rewrites one node; ``tracks()`` lists the ops (or op classes) it looks at."""

    def tracks(self):
        return None

    def transform(self, fgraph, node):
        raise NotImplementedError()

    def apply_to(self, fgraph, node, failure_callback=None):
        """Transform ``node`` and make the replacements; True if the graph changed.

        A failure goes to ``failure_callback(exc, walker, pairs, rewriter,
        node)`` when given, else it follows ``config.on_opt_error``.
        """
        return _transform_and_replace(fgraph, self, node, failure_callback)


class FromFunctionNodeRewriter(NodeRewriter):
    """A node rewriter made from a plain function by :func:`node_rewriter`."""

    def __init__(self, fn, tracks=None, requirements=(), name=None):
        self.fn = fn
        self._tracks = tracks
        self.requirements = tuple(requirements)
        self.name = name or fn.__name__
        self.__name__ = getattr(fn, "__name__", self.name)
        self.__doc__ = fn.__doc__

    def tracks(self):
        return self._tracks

    def transform(self, fgraph, node):
        return self.fn(fgraph, node)

    def add_requirements(self, fgraph):
        super().add_requirements(fgraph)
        for req in self.requirements:
            req(fgraph)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)


def node_rewriter(tracks: Sequence | None, inplace=False, requirements=()):
    """Decorator making ``fn(fgraph, node)`` a node rewriter for the ops in ``tracks``.

    ``tracks`` holds Op instances or Op classes (``None`` means every node).
    """
    if tracks is not None:
        if len(tracks) == 0:
            raise ValueError("Use None instead of an empty list to track every node")
        for t in tracks:
            if not (isinstance(t, Op) or (isinstance(t, type) and issubclass(t, Op))):
                raise TypeError(f"node_rewriter tracks Ops or Op classes, got {t!r}")

    def decorator(fn):
        reqs = tuple(requirements)
        if inplace:
            from lucent.graph.destroyhandler import DestroyHandler

            def attach_destroy_handler(fgraph):
                fgraph.attach_feature(DestroyHandler())

            reqs = reqs + (attach_destroy_handler,)
        return FromFunctionNodeRewriter(fn, tracks, reqs)

    return decorator


def _tracks_node(tracks, node):
    if tracks is None:
        return True
    op = node.op
    for t in tracks:
        if isinstance(t, type):
            if isinstance(op, t):
                return True
        elif t == op:
            return True
    return False


def _may_track_type(tracks, op_type):
    """Whether ``tracks`` can hold for some op of class ``op_type`` (``_tracks_node`` decides for a node)."""
    if tracks is None:
        return True
    for t in tracks:
        if isinstance(t, type):
            if issubclass(op_type, t):
                return True
        # an Op instance equals only ops of its own class, unless one of the classes defines equality
        elif type(t) is op_type or type(t).__eq__ is not Op.__eq__ or op_type.__eq__ is not Op.__eq__:
            return True
    return False


class _RewritersByOpType:
    """The rewriters of a list that may apply to an op of a given class, in list order.

    A rewriting pass tries every rewriter on every node; most track a few op
    classes, so testing each pair was most of the time a pass spent on nodes
    no rewriter changed. The candidates are worked out once per op class
    (for the rewriters' ``tracks()`` as they are when the pass starts), and
    ``_tracks_node`` still decides for each node.
    """

    def __init__(self, rewriters):
        self.rewriters = [(rw, rw.tracks()) for rw in rewriters]
        self._by_type = {}

    def __call__(self, op):
        found = self._by_type.get(type(op))
        if found is None:
            found = self._by_type[type(op)] = [
                (rw, tracks) for rw, tracks in self.rewriters if _may_track_type(tracks, type(op))
            ]
        return found


def _on_error(rewriter, node, exc):
    from lucent.configdefaults import config

    policy = config.on_opt_error
    if policy == "raise":
        raise exc
    if policy == "warn":
        warnings.warn(
            f"Rewrite {rewriter} raised {type(exc).__name__}: {exc} on the node {node}; "
            "the rewrite was skipped and the graph left unchanged.",
            RewriteFailure,
            stacklevel=3,
        )


def replace_validated(fgraph, pairs, reason):
    """Replace ``(old, new)`` pairs in ``fgraph`` atomically.

    Types are checked (and converted with ``filter_variable``) for every pair
    before any change; if a feature then rejects the change with
    ``InconsistencyError``, all changes made so far are undone and the error
    is raised again.
    """
    checked = []
    for old, new in pairs:
        if old is new or old not in fgraph.variables:
            continue
        new = old.type.filter_variable(new, allow_convert=True)
        checked.append((old, new))
    if not checked:
        return False
    # The graph's ReplaceValidate feature records the changes since this
    # checkpoint, which also keeps its record from growing across rewrites.
    chk = fgraph.checkpoint() if "checkpoint" in getattr(fgraph, "_feature_methods", {}) else None
    done = []  # (node, index, previous variable)
    try:
        for old, new in checked:
            if old not in fgraph.variables:
                continue
            if old.owner is not None and new.owner is not None:
                hand_on_trace(old.owner, new, fgraph.apply_nodes)
            for client, i in list(fgraph.clients[old]):
                fgraph.change_node_input(client, i, new, reason=reason, check=False, import_missing=False)
                done.append((client, i, old))
        validate = getattr(fgraph, "validate", None)
        if validate is not None:
            validate()
    except Exception:
        for client, i, previous in reversed(done):
            try:
                fgraph.change_node_input(client, i, previous, reason=f"revert:{reason}", check=False)
            except Exception:  # pragma: no cover - best effort
                pass
        raise
    finally:
        if chk is not None:
            fgraph.checkpoint()
    return True


def apply_node_rewriter(fgraph, rewriter, node, failure_callback=None):
    """Run one node rewriter on ``node``; return True if the graph changed."""
    if node not in fgraph.apply_nodes:
        return False
    if failure_callback is None:
        return rewriter.apply_to(fgraph, node)
    return rewriter.apply_to(fgraph, node, failure_callback=failure_callback)


def _failed(rewriter, node, exc, failure_callback, pairs=()):
    if failure_callback is not None:
        failure_callback(exc, None, list(pairs), rewriter, node)
    else:
        _on_error(rewriter, node, exc)


def _transform_and_replace(fgraph, rewriter, node, failure_callback=None):
    try:
        result = rewriter.transform(fgraph, node)
    except Exception as exc:  # a failing rewrite must not break compilation
        _failed(rewriter, node, exc, failure_callback)
        return False
    if result is False or result is None:
        return False
    if isinstance(result, dict):
        pairs = list(result.items())
        pairs = [(k, v) for k, v in pairs if isinstance(k, Variable)]
    else:
        if not isinstance(result, (list, tuple)):
            result = [result]
        if len(result) != len(node.outputs):
            _on_error(
                rewriter,
                node,
                ValueError(
                    f"{rewriter} returned {len(result)} replacements for a node with "
                    f"{len(node.outputs)} outputs"
                ),
            )
            return False
        pairs = [(o, n) for o, n in zip(node.outputs, result) if n is not None]
    try:
        return replace_validated(fgraph, pairs, reason=rewriter)
    except InconsistencyError as exc:
        if failure_callback is not None:
            failure_callback(exc, None, pairs, rewriter, node)
        return False
    except Exception as exc:
        _failed(rewriter, node, exc, failure_callback, pairs)
        return False


class WalkingGraphRewriter(GraphRewriter):
    """Applies a node rewriter to every node, walking the graph in one direction.

    ``order`` is ``"in_to_out"`` (topological order), ``"out_to_in"`` (its
    reverse) or ``"dfs"`` (depth first from the outputs, each node before
    the nodes it depends on are expanded). Nodes a rewrite creates are
    visited too unless ``ignore_newtrees``. A rewrite that raises goes to
    ``failure_callback(exc, walker, pairs, rewriter, node)`` when given
    (see :meth:`warn`, :meth:`warn_inplace`, :meth:`warn_ignore`), else it
    follows ``config.on_opt_error``.
    """

    def __init__(self, node_rewriter, order="in_to_out", ignore_newtrees=False,
                 failure_callback=None, name=None):
        if order not in ("in_to_out", "out_to_in", "dfs"):
            raise ValueError(
                f"order must be 'in_to_out', 'out_to_in' or 'dfs', got {order!r}"
            )
        if isinstance(node_rewriter, (list, tuple)):
            node_rewriter = NodeRewriterGroup(*node_rewriter)
        if not isinstance(node_rewriter, NodeRewriter):
            raise TypeError(
                f"WalkingGraphRewriter walks with a NodeRewriter, got {node_rewriter!r}"
            )
        self.node_rewriter = node_rewriter
        self.order = order
        self.ignore_newtrees = ignore_newtrees
        self.failure_callback = failure_callback
        self.name = name or f"{order}({node_rewriter})"

    # --- failure callbacks (PyTensor's names) -----------------------------
    @staticmethod
    def warn(exc, walker, pairs, node_rewriter, node):
        """Report a failed rewrite; re-raise assertion errors and with ``on_opt_error='raise'``."""
        from lucent.configdefaults import config

        if isinstance(exc, AssertionError) or config.on_opt_error == "raise":
            raise exc
        if config.on_opt_error != "ignore":
            warnings.warn(
                f"Rewrite {node_rewriter} raised {type(exc).__name__}: {exc} on the node "
                f"{node}; the rewrite was skipped and the graph left unchanged.",
                RewriteFailure,
                stacklevel=2,
            )

    @staticmethod
    def warn_inplace(exc, walker, pairs, node_rewriter, node):
        """Like :meth:`warn`, but a rejected in-place change is silently skipped."""
        if isinstance(exc, InconsistencyError):
            return
        WalkingGraphRewriter.warn(exc, walker, pairs, node_rewriter, node)

    @staticmethod
    def warn_ignore(exc, walker, pairs, node_rewriter, node):
        """Ignore the failure."""

    def add_requirements(self, fgraph):
        super().add_requirements(fgraph)
        self.node_rewriter.add_requirements(fgraph)

    def _start_nodes(self, fgraph, start_from):
        if self.order == "dfs":
            from lucent.graph.traversal import apply_ancestors

            roots = fgraph.outputs if start_from is None else start_from
            return [n for n in apply_ancestors(roots) if n in fgraph.apply_nodes]
        nodes = fgraph.toposort()
        if start_from is not None:
            from lucent.graph.traversal import ancestors

            needed = {v.owner for v in ancestors(start_from) if v.owner is not None}
            nodes = [n for n in nodes if n in needed]
        if self.order == "out_to_in":
            nodes = list(reversed(nodes))
        return nodes

    def apply(self, fgraph, start_from=None):
        callback = self.failure_callback
        if callback is not None:
            walker = self

            def callback(exc, _walker, pairs, rewriter, node, _cb=self.failure_callback):
                return _cb(exc, walker, pairs, rewriter, node)

        changed = False
        queue = self._start_nodes(fgraph, start_from)
        seen_new = set()
        tracks = self.node_rewriter.tracks()
        while queue:
            node = queue.pop(0)
            if node not in fgraph.apply_nodes or not _tracks_node(tracks, node):
                continue
            before = set(fgraph.apply_nodes) if not self.ignore_newtrees else None
            if apply_node_rewriter(fgraph, self.node_rewriter, node, callback):
                changed = True
                if before is not None:
                    new_nodes = [n for n in fgraph.toposort() if n not in before and n not in seen_new]
                    seen_new.update(new_nodes)
                    if self.order == "out_to_in":
                        new_nodes.reverse()
                    queue = new_nodes + queue
        return changed


def walking_rewriter(order, *node_rewriters, name=None, failure_callback=None,
                     ignore_newtrees=False):
    """A :class:`WalkingGraphRewriter` applying ``node_rewriters`` in ``order``.

    Several node rewriters are tried in turn on each node (the first that
    applies wins).
    """
    if not node_rewriters:
        raise TypeError("walking_rewriter needs at least one node rewriter")
    if len(node_rewriters) == 1:
        rw = node_rewriters[0]
    else:
        rw = NodeRewriterGroup(*node_rewriters)
    return WalkingGraphRewriter(
        rw, order, ignore_newtrees=ignore_newtrees, failure_callback=failure_callback, name=name
    )


def in2out(*node_rewriters, name=None, failure_callback=None, ignore_newtrees=False):
    """Walk the graph from inputs to outputs applying ``node_rewriters``."""
    return walking_rewriter("in_to_out", *node_rewriters, name=name,
                            failure_callback=failure_callback, ignore_newtrees=ignore_newtrees)


def out2in(*node_rewriters, name=None, failure_callback=None, ignore_newtrees=False):
    """Walk the graph from outputs to inputs applying ``node_rewriters``."""
    return walking_rewriter("out_to_in", *node_rewriters, name=name,
                            failure_callback=failure_callback, ignore_newtrees=ignore_newtrees)


def dfs_rewriter(*node_rewriters, name=None, failure_callback=None, ignore_newtrees=False):
    """Walk the graph depth first from the outputs applying ``node_rewriters``."""
    return walking_rewriter("dfs", *node_rewriters, name=name,
                            failure_callback=failure_callback, ignore_newtrees=ignore_newtrees)


class FromFunctionGraphRewriter(GraphRewriter):
    """A graph rewriter made from a function ``fn(fgraph)`` by :func:`graph_rewriter`."""

    def __init__(self, fn, requirements=(), name=None):
        self.fn = fn
        self.requirements = tuple(requirements)
        self.name = name or getattr(fn, "__name__", None)
        self.__name__ = self.name
        self.__doc__ = fn.__doc__

    def apply(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def add_requirements(self, fgraph):
        super().add_requirements(fgraph)
        for req in self.requirements:
            req(fgraph)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)


def graph_rewriter(fn):
    """Decorator making ``fn(fgraph)`` a graph rewriter (usable in databases and walkers)."""
    return FromFunctionGraphRewriter(fn)


def inplace_graph_rewriter(fn):
    """Like :func:`graph_rewriter`, and attaches a ``DestroyHandler`` before running."""
    from lucent.graph.destroyhandler import DestroyHandler

    def attach_destroy_handler(fgraph):
        fgraph.attach_feature(DestroyHandler())

    return FromFunctionGraphRewriter(fn, (attach_destroy_handler,))


class NodeRewriterGroup(NodeRewriter):
    """Tries several node rewriters on a node; the first that applies wins."""

    def __init__(self, *rewriters, name=None):
        self.rewriters = list(rewriters)
        self.name = name or "group(" + ", ".join(str(r) for r in rewriters) + ")"
        self._tracks = None
        all_tracks = [r.tracks() for r in self.rewriters]
        if all(t is not None for t in all_tracks):
            self._tracks = [t for ts in all_tracks for t in ts]

    def tracks(self):
        return self._tracks

    def transform(self, fgraph, node):
        for rw in self.rewriters:
            if _tracks_node(rw.tracks(), node):
                result = rw.transform(fgraph, node)
                if result:
                    return result
        return False

    def apply_to(self, fgraph, node, failure_callback=None):
        for rw in self.rewriters:
            if node not in fgraph.apply_nodes:
                return True
            if not _tracks_node(rw.tracks(), node):
                continue
            if failure_callback is None:
                applied = rw.apply_to(fgraph, node)
            else:
                applied = rw.apply_to(fgraph, node, failure_callback=failure_callback)
            if applied:
                return True
        return False

    def add_requirements(self, fgraph):
        for rw in self.rewriters:
            rw.add_requirements(fgraph)


class SequentialGraphRewriter(GraphRewriter):
    """Runs graph rewriters one after the other."""

    def __init__(self, *rewriters, name=None):
        if len(rewriters) == 1 and isinstance(rewriters[0], (list, tuple)):
            rewriters = tuple(rewriters[0])
        self.data = list(rewriters)
        self.name = name or "seq(" + ", ".join(str(r) for r in self.data) + ")"

    def add_requirements(self, fgraph):
        super().add_requirements(fgraph)
        for rw in self.data:
            rw.add_requirements(fgraph)

    def apply(self, fgraph):
        changed = False
        self.timings = []
        for rw in self.data:
            t0 = time.perf_counter()
            if isinstance(rw, NodeRewriter):
                rw = in2out(rw)
            changed = bool(rw.apply(fgraph)) or changed
            self.timings.append((str(rw), time.perf_counter() - t0))
        return changed


class EquilibriumGraphRewriter(GraphRewriter):
    """Applies node and graph rewriters repeatedly until the graph stops changing.

    ``max_use_ratio`` bounds how many times the rewriters may apply relative
    to the graph's size, so a pair of rewrites undoing each other cannot loop
    forever; reaching the bound is reported, not silent.
    """

    def __init__(self, rewriters, max_use_ratio=20, name=None):
        self.node_rewriters = [r for r in rewriters if isinstance(r, NodeRewriter)]
        self.graph_rewriters = [r for r in rewriters if isinstance(r, GraphRewriter)]
        self.max_use_ratio = max_use_ratio
        self.name = name or "equilibrium"

    def add_requirements(self, fgraph):
        super().add_requirements(fgraph)
        for rw in self.node_rewriters + self.graph_rewriters:
            rw.add_requirements(fgraph)

    def apply(self, fgraph):
        budget = max(1, int(self.max_use_ratio * max(len(fgraph.apply_nodes), 1)))
        candidates = _RewritersByOpType(self.node_rewriters)
        used = 0
        any_change = False
        while True:
            changed = False
            for grw in self.graph_rewriters:
                if grw.apply(fgraph):
                    changed = True
            for node in fgraph.toposort():
                for rw, tracks in candidates(node.op):
                    if node not in fgraph.apply_nodes:
                        break
                    if not _tracks_node(tracks, node):
                        continue
                    if apply_node_rewriter(fgraph, rw, node):
                        changed = True
                        used += 1
                        if used >= budget:
                            warnings.warn(
                                f"{self.name} stopped after {used} rewrites (max_use_ratio="
                                f"{self.max_use_ratio}); some rewrites may loop",
                                RewriteFailure,
                            )
                            return True
                        break
            any_change = any_change or changed
            if not changed:
                return any_change


class PatternNodeRewriter(NodeRewriter):
    """A node rewriter written as patterns: ``(op, 'x', ...)`` -> ``(op2, 'x')``.

    In a pattern, a string is a pattern variable matching any variable (the
    same string must match the same variable), a tuple ``(op, *args)`` matches
    an Apply of ``op`` (an Op instance, or an Op class) with arguments
    matching ``args``, and a number matches a constant with that value (in
    every element). The output pattern is built with the matched variables;
    numbers there become constants. A match whose inner nodes are used
    elsewhere is skipped unless ``allow_multiple_clients``.
    """

    def __init__(self, in_pattern, out_pattern, allow_multiple_clients=False, name=None):
        if not isinstance(in_pattern, tuple) or not in_pattern:
            raise TypeError("in_pattern must be a non-empty tuple (op, *args)")
        self.in_pattern = in_pattern
        self.out_pattern = out_pattern
        self.allow_multiple_clients = allow_multiple_clients
        self.op = in_pattern[0]
        self.name = name or f"{_pattern_str(in_pattern)} -> {_pattern_str(out_pattern)}"

    def tracks(self):
        return [self.op]

    def transform(self, fgraph, node):
        u = {}
        if not self._match(fgraph, self.in_pattern, node.outputs[0], u, top=True):
            return False
        new = self._build(self.out_pattern, u)
        if not isinstance(new, Variable):
            return False
        return [new]

    def _match(self, fgraph, pattern, var, u, top=False):
        import numpy as np

        if isinstance(pattern, str):
            if pattern in u:
                return u[pattern] is var
            u[pattern] = var
            return True
        if isinstance(pattern, tuple):
            node = var.owner
            if node is None:
                return False
            op = pattern[0]
            if isinstance(op, type):
                if not isinstance(node.op, op):
                    return False
            elif node.op != op:
                return False
            if len(pattern) - 1 != len(node.inputs):
                return False
            if not top and not self.allow_multiple_clients and len(fgraph.clients.get(var, [])) > 1:
                return False
            return all(self._match(fgraph, p, i, u) for p, i in zip(pattern[1:], node.inputs))
        if isinstance(pattern, (int, float)):
            if not isinstance(var, Constant):
                return False
            data = np.asarray(var.data)
            return data.size > 0 and bool(np.all(data == pattern))
        raise TypeError(f"Unsupported pattern element {pattern!r}")

    def _build(self, pattern, u):
        # Numbers are passed to the op as they are: ops convert Python
        # numbers into constants of a fitting type themselves.
        if isinstance(pattern, str):
            return u[pattern]
        if isinstance(pattern, tuple):
            op = pattern[0]
            return op(*[self._build(p, u) for p in pattern[1:]])
        if isinstance(pattern, (int, float, Variable)):
            return pattern
        raise TypeError(f"Unsupported pattern element {pattern!r}")


def _pattern_str(p):
    if isinstance(p, tuple):
        return f"{p[0]}(" + ", ".join(_pattern_str(x) for x in p[1:]) + ")"
    return str(p)


class MergeRewriter(GraphRewriter):
    """Merges equal constants and identical computations (common subexpressions).

    Two constants with the same signature (type and value) become one; two
    Apply nodes with the same op and the same inputs become one. Working in
    topological order, merged inputs make their users identical in turn, so
    one pass merges whole duplicated subgraphs.
    """

    name = "merge"

    def apply(self, fgraph):
        changed = False
        constants = {}
        for var in list(fgraph.variables):
            if isinstance(var, Constant) and var in fgraph.variables:
                try:
                    sig = var.signature()
                    hash(sig)
                except TypeError:
                    continue
                kept = constants.get(sig)
                if kept is None:
                    constants[sig] = var
                elif kept is not var and fgraph.clients.get(var):
                    if replace_validated(fgraph, [(var, kept)], reason=self):
                        changed = True
        seen = {}
        for node in fgraph.toposort():
            if node not in fgraph.apply_nodes:
                continue
            try:
                key = (node.op, tuple(node.inputs))
                hash(key)
            except TypeError:
                continue
            other = seen.get(key)
            if other is None or other not in fgraph.apply_nodes:
                seen[key] = node
                continue
            if node.op.destroy_map:
                continue
            pairs = list(zip(node.outputs, other.outputs))
            if all(a.type == b.type for a, b in pairs):
                try:
                    if replace_validated(fgraph, pairs, reason=self):
                        changed = True
                except InconsistencyError:
                    pass
        return changed


MergeOptimizer = MergeRewriter
SequentialNodeRewriter = NodeRewriterGroup

from lucent.graph.rewriting.stack_trace import check_stack_trace, copy_stack_trace  # noqa: E402


__all__ = [
    "Rewriter",
    "GraphRewriter",
    "NodeRewriter",
    "FromFunctionNodeRewriter",
    "node_rewriter",
    "PatternNodeRewriter",
    "WalkingGraphRewriter",
    "NodeRewriterGroup",
    "in2out",
    "out2in",
    "dfs_rewriter",
    "walking_rewriter",
    "FromFunctionGraphRewriter",
    "graph_rewriter",
    "inplace_graph_rewriter",
    "SequentialNodeRewriter",
    "SequentialGraphRewriter",
    "EquilibriumGraphRewriter",
    "MergeRewriter",
    "MergeOptimizer",
    "replace_validated",
    "apply_node_rewriter",
    "RewriteFailure",
    "check_stack_trace",
    "copy_stack_trace",
]
