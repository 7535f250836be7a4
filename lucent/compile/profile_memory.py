"""How much memory a schedule of Apply nodes needs, from the sizes of one call.

A profile records, for every node output, the size of the value it
produced (``Type.get_size``). That alone says how many bytes a call
*creates*, but not how many are *alive at once*, which is what decides
whether a graph fits in memory. This module replays the schedule with a
simple, explicit model:

* an output listed in its op's ``view_map`` (a view) or ``destroy_map``
  (computed in place) reuses an input's buffer and costs 0 new bytes; any
  other output is *created* and costs its size;
* a buffer is alive while any variable using it is alive: the variable
  that created it, and every view or in-place result built on it (chains
  of views included) - so a value seen through a live view is not freed;
* an intermediate variable dies right after the last node reading it has
  run (a variable nobody reads dies right after it is computed); graph
  outputs never die;
* graph inputs and constants are not counted: they exist before the call
  and are not the schedule's to free (their size is reported apart);
* a node with an inner graph (a ``Scan`` loop, an ``OpFromGraph``) whose
  inner graph was profiled: its outputs are its stored buffers (a loop's
  whole traced outputs, all steps), created or reused like any output;
  while it runs, one run of its inner graph is alive as well, so its
  ``inner_peaks`` entry (the peak of the inner schedule replayed with the
  last step's sizes, by this same model, the step's outputs included)
  adds to the live bytes of that node only. The steps run one after
  another, so one step's peak, not their sum, is what the loop adds; the
  step's outputs copied into the stored buffers are counted twice for
  that instant, as they are in the process.

This is what the Python linker does with ``allow_gc=True``; other linkers
(the fused Numba function) may keep fewer or more temporaries, so the
numbers describe the graph and its schedule, not a measured process size.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lucent.graph.basic import Constant

CREATED = "created"
VIEW = "view"
INPLACE = "in-place"


def output_kind(node, index):
    """``"created"``, ``"view"`` or ``"in-place"`` for output ``index`` of ``node``."""
    if index in (node.op.destroy_map or {}):
        return INPLACE
    if index in (node.op.view_map or {}):
        return VIEW
    return CREATED


def _reused_inputs(node, index):
    """Positions of the inputs whose buffer output ``index`` reuses (empty when created)."""
    mapped = (node.op.destroy_map or {}).get(index)
    if mapped is None:
        mapped = (node.op.view_map or {}).get(index)
    return list(mapped or ())


@dataclass
class MemoryUsage:
    """The result of ``schedule_memory``.

    Attributes
    ----------
    created
        ``{node: bytes}``: new bytes each node allocates (its created outputs).
    inner
        ``{node: bytes}``: for a node with a profiled inner graph, the peak of
        one run of it, alive while the node runs (in ``live``, not in
        ``created``).
    total_created
        Sum of ``created``: bytes allocated by one call.
    live
        ``{node: bytes}``: bytes of intermediates and outputs alive while the
        node runs (its inputs and its new outputs included).
    peak
        Largest value of ``live``; 0 when the call allocates nothing.
    peak_node
        The first node at which ``peak`` is reached, or ``None``.
    held_after
        Bytes still alive after the call: the created buffers the graph's
        outputs use.
    """

    created: dict = field(default_factory=dict)
    inner: dict = field(default_factory=dict)
    total_created: int = 0
    live: dict = field(default_factory=dict)
    peak: int = 0
    peak_node: object = None
    held_after: int = 0


def schedule_memory(fgraph, order, sizes, inner_peaks=None):
    """Replay ``order`` with the model of the module docstring.

    Parameters
    ----------
    fgraph
        The FunctionGraph the nodes belong to (its inputs and outputs decide
        what is never counted and what is never freed).
    order
        The nodes in the order they run.
    sizes
        ``{node: [bytes or None per output]}`` from the last call; a node
        missing, or a size ``None``, counts as 0.
    inner_peaks
        ``{node: bytes}``: the peak of one run of a node's inner graph,
        alive (besides the node's outputs) while the node runs.
    """
    inner_peaks = inner_peaks or {}
    graph_outputs = set(fgraph.outputs)
    last_reader = {}
    for i, node in enumerate(order):
        for var in node.inputs:
            last_reader[var] = i
    dying = [[] for _ in order]
    for i, node in enumerate(order):
        for var in node.outputs:
            if var not in graph_outputs:
                dying[last_reader.get(var, i)].append(var)

    usage = MemoryUsage()
    bases = {}  # variable -> buffers (creating variables) it uses
    buffer_bytes = {}
    users = {}  # buffer -> number of live variables using it
    current = 0
    for i, node in enumerate(order):
        node_sizes = sizes.get(node) or []
        new_bytes = 0
        for j, out in enumerate(node.outputs):
            reused = _reused_inputs(node, j)
            if reused:
                used = set()
                for k in reused:
                    used |= bases.get(node.inputs[k], set())
            else:
                size = node_sizes[j] if j < len(node_sizes) and node_sizes[j] is not None else 0
                buffer_bytes[out] = size
                users[out] = 0
                new_bytes += size
                used = {out}
            bases[out] = used
            for buf in used:
                users[buf] += 1
        current += new_bytes
        usage.created[node] = new_bytes
        usage.total_created += new_bytes
        inner = inner_peaks.get(node, 0)
        if inner:
            usage.inner[node] = inner
        usage.live[node] = current + inner
        if current + inner > usage.peak:
            usage.peak = current + inner
            usage.peak_node = node
        for var in dying[i]:
            if var.owner is None or isinstance(var, Constant):
                continue
            for buf in bases.pop(var, ()):
                users[buf] -= 1
                if users[buf] == 0:
                    current -= buffer_bytes[buf]
    usage.held_after = current
    return usage


def min_peak_memory(fgraph, nodes, sizes, max_states=200_000, inner_peaks=None):
    """The smallest peak memory over every valid order of ``nodes``, with the same model.

    Returns ``(peak, order)``, or ``None`` when the search would visit more
    than ``max_states`` sets of finished nodes (the number of valid orders
    grows exponentially with the graph's width).

    The memory alive at any point depends only on *which* nodes have run, not
    in which order, so a search over those sets with memoisation finds the
    optimum without enumerating every order. ``inner_peaks`` is as for
    ``schedule_memory``.
    """
    inner_peaks = inner_peaks or {}
    nodes = list(nodes)
    node_set = set(nodes)
    graph_outputs = set(fgraph.outputs)
    readers = {}
    for node in nodes:
        for var in node.inputs:
            readers.setdefault(var, set()).add(node)
    preds = {
        node: {v.owner for v in node.inputs if v.owner is not None and v.owner in node_set}
        for node in nodes
    }
    bases = {}
    buffer_bytes = {}
    for node in fgraph.toposort():
        if node not in node_set:
            continue
        node_sizes = sizes.get(node) or []
        for j, out in enumerate(node.outputs):
            reused = _reused_inputs(node, j)
            if reused:
                used = set()
                for k in reused:
                    used |= bases.get(node.inputs[k], set())
            else:
                buffer_bytes[out] = node_sizes[j] if j < len(node_sizes) and node_sizes[j] else 0
                used = {out}
            bases[out] = frozenset(used)

    def live(done, running):
        alive = set()
        for node in list(done) + [running]:
            for var in node.outputs:
                if (node is running or var in graph_outputs
                        or any(r not in done for r in readers.get(var, ()))):
                    alive |= bases.get(var, frozenset())
        return sum(buffer_bytes[b] for b in alive) + inner_peaks.get(running, 0)

    memo = {}
    everything = frozenset(nodes)

    def best(done):
        if done == everything:
            return 0, ()
        hit = memo.get(done)
        if hit is not None:
            return hit
        if len(memo) >= max_states:
            raise _TooLarge
        result = None
        for node in nodes:
            if node in done or not preds[node] <= done:
                continue
            here = live(done, node)
            if result is not None and here >= result[0]:
                continue
            rest_peak, rest_order = best(done | {node})
            peak = max(here, rest_peak)
            if result is None or peak < result[0]:
                result = (peak, (node,) + rest_order)
        memo[done] = result
        return result

    try:
        peak, order = best(frozenset())
    except _TooLarge:
        return None
    return peak, list(order)


class _TooLarge(Exception):
    """The search for the smallest peak visited too many states."""


__all__ = [
    "CREATED", "VIEW", "INPLACE", "output_kind", "schedule_memory", "min_peak_memory", "MemoryUsage",
]
