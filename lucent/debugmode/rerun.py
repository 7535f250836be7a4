"""Running every node again, in another valid order, on the same inputs.

A node must compute a function of its inputs: the same inputs, the same
outputs, whatever ran before it. An op that keeps state between calls
(a cache keyed on the wrong thing, a module-level buffer, a global random
generator, a kernel reading uninitialised memory) breaks that and gives
results that change from call to call or with the schedule, which no
single run shows.

After a call, ``RerunCheck`` runs each node once more, with the nodes in
a different valid order (``alternate_order``: among the nodes ready to
run, the one latest in the first order goes first), on copies of the
same input values the first run gave it, on both paths, and compares each
output with the first run's (``BadThunkOutput`` with ``rerun=True``).
Feeding every node the first run's inputs means one nondeterministic
node is reported once, not again by every node downstream of it.

An op whose outputs are meant to vary (it draws from a generator it does
not take as an input) declares ``nondeterministic = True`` and is not
rerun; ops taking their generator as an input are deterministic and
checked. An op whose running has an effect beyond its outputs (``Print``)
declares ``has_side_effects = True`` and is not rerun either.
"""

from __future__ import annotations

import heapq

from lucent.debugmode.describe import node_context
from lucent.debugmode.errors import BadThunkOutput
from lucent.debugmode.values import (
    abbreviate,
    copy_value,
    difference,
    format_difference,
    is_immutable,
)


def alternate_order(fgraph, order):
    """Another topological order of ``order`` (the same when the graph allows no other).

    Respects data dependencies and the graph's extra ``orderings()`` (from
    the DestroyHandler: a node destroying a value runs after its readers).
    """
    position = {node: k for k, node in enumerate(order)}
    preds = {node: set() for node in order}
    for node in order:
        for inp in node.inputs:
            if inp.owner is not None and inp.owner in preds:
                preds[node].add(inp.owner)
    try:
        extra = fgraph.orderings() if hasattr(fgraph, "orderings") else {}
    except Exception:  # a feature failing to report orderings: data dependencies only
        extra = {}
    for node, before in extra.items():
        if node in preds:
            preds[node].update(b for b in before if b in preds and b is not node)
    succs = {node: [] for node in order}
    waiting = {}
    for node, before in preds.items():
        waiting[node] = len(before)
        for b in before:
            succs[b].append(node)
    ready = [(-position[n], id(n), n) for n in order if waiting[n] == 0]
    heapq.heapify(ready)
    result = []
    while ready:
        _, _, node = heapq.heappop(ready)
        result.append(node)
        for s in succs[node]:
            waiting[s] -= 1
            if waiting[s] == 0:
                heapq.heappush(ready, (-position[s], id(s), s))
    if len(result) != len(order):  # a cycle in the orderings: keep the original
        return list(order)
    return result


class RerunCheck:
    """Reruns ``checks`` (the linker's ``NodeCheck`` objects) in another order (see module docstring)."""

    def __init__(self, fgraph, checks, origins=None):
        self.origins = origins
        self.by_node = {check.node: check for check in checks}
        self.order = alternate_order(fgraph, [check.node for check in checks])

    def check(self, known):
        """Problems found rerunning every node; ``known`` maps variables to the first run's values."""
        problems = []
        for node in self.order:
            if getattr(node.op, "nondeterministic", False) or getattr(node.op, "has_side_effects", False):
                continue
            if any(v not in known for v in node.outputs):
                continue  # in a branch that was not taken: it did not run
            check = self.by_node[node]
            values = [known.get(v) for v in node.inputs]  # a branch selector reads the taken ones
            first = [known[v] for v in node.outputs]
            cells = [[None] for _ in node.outputs]
            node.op.perform(node, [_private(v) for v in values], cells)
            problems.extend(self._compare(check, values, first, [c[0] for c in cells], "perform"))
            kernel = check.kernel
            first_kernel = check.last_kernel_outputs
            if kernel is not None and first_kernel is not None:
                try:
                    again = kernel([_private(v) for v in values])
                except Exception:  # it ran the first time; a failure now is reported as a difference
                    again = [None] * len(node.outputs)
                problems.extend(self._compare(check, values, first_kernel, again, "numba"))
        return problems

    def _compare(self, check, values, first, again, path):
        node = check.node
        problems = []
        for j, (a, b) in enumerate(zip(first, again)):
            if b is not None and check.agree[j](a, b):
                continue
            diff = difference(a, b)
            where = "perform" if path == "perform" else "The Numba kernel"
            problems.append(BadThunkOutput(
                f"{where[0].upper() + where[1:]} of {node.op} gave a different output {j} when the "
                "node ran again on the same input values (in another valid order of the graph's "
                "nodes): expected a node's outputs to depend only on its inputs. An op that is "
                "random on purpose declares nondeterministic = True",
                node_context(node, values, self.origins) + [
                    (f"output {j} (first run)", abbreviate(a)),
                    (f"output {j} (second run)", abbreviate(b)),
                    ("difference", format_difference(diff) or "(not numeric)"),
                ],
                node=node, path=path, output_index=j, perform_value=a if path == "perform" else None,
                numba_value=b if path == "numba" else None, difference=diff, rerun=True,
            ))
        return problems


def _private(value):
    return value if is_immutable(value) else copy_value(value)


__all__ = ["RerunCheck", "alternate_order"]
