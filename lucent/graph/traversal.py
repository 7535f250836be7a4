"""Walks over expression graphs: ancestors, inputs, topological order, cloning.

All walks are iterative (no recursion), so graphs thousands of nodes deep,
such as long gradient chains, do not hit Python's recursion limit.
"""

from __future__ import annotations

from collections import deque
from typing import Callable, Iterable


def walk(nodes, expand: Callable, bfs=True, return_children=False):
    """Yield every node reachable from ``nodes`` through ``expand``, once each."""
    nodes = deque(nodes)
    seen = set()
    pop = nodes.popleft if bfs else nodes.pop
    while nodes:
        node = pop()
        if node in seen:
            continue
        seen.add(node)
        children = expand(node)
        if return_children:
            yield node, children
        else:
            yield node
        if children:
            nodes.extend(children)


def ancestors(graphs: Iterable, blockers=None):
    """Every variable that ``graphs`` depend on (including themselves), depth first.

    Walking stops at the variables in ``blockers``.
    """
    blockers = set(blockers) if blockers is not None else set()

    def expand(r):
        if r.owner is not None and r not in blockers:
            return reversed(r.owner.inputs)
        return None

    yield from walk(list(reversed(list(graphs))), expand, bfs=False)


def graph_inputs(graphs: Iterable, blockers=None):
    """The ownerless variables (and ``blockers``) that ``graphs`` depend on, in order."""
    blockers = set(blockers) if blockers is not None else set()
    return [r for r in ancestors(graphs, blockers) if r.owner is None or r in blockers]


def is_in_ancestors(l_apply, f_apply):
    """True if the Apply ``f_apply`` is an ancestor of the Apply ``l_apply``."""
    for var in ancestors(l_apply.inputs):
        if var.owner is f_apply:
            return True
    return False


def vars_between(ins, outs):
    """The variables on paths from ``ins`` to ``outs`` (both included)."""
    ins = set(ins)

    def expand(r):
        if r.owner is not None and r not in ins:
            return reversed(r.owner.inputs + r.owner.outputs)
        return None

    return list(walk(list(outs), expand))


def variables(ins, outs):
    return vars_between(ins, outs)


def orphans_between(ins, outs):
    """Ownerless variables used by ``outs`` that are not in ``ins`` (e.g. constants)."""
    ins = set(ins)
    return [r for r in vars_between(ins, outs) if r.owner is None and r not in ins]


def applys_between(ins, outs):
    """The Apply nodes on paths from ``ins`` to ``outs``."""
    ins = set(ins)
    result = []
    seen = set()
    for r in vars_between(ins, outs):
        if r not in ins and r.owner is not None and r.owner not in seen:
            seen.add(r.owner)
            result.append(r.owner)
    return result


def io_toposort(inputs, outputs, orderings=None, clients=None):
    """Apply nodes between ``inputs`` and ``outputs`` in an executable order.

    ``orderings`` maps an Apply to Applys that must run before it (used by
    features that add extra constraints, e.g. in-place safety).
    """
    inputs = set(inputs)
    order = []
    visited = set()
    extra = orderings or {}
    # Iterative post-order DFS over Apply nodes.
    for out in outputs:
        if out.owner is None or out in inputs:
            continue
        stack = [(out.owner, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if node in visited:
                continue
            visited.add(node)
            stack.append((node, True))
            deps = []
            for inp in node.inputs:
                if inp.owner is not None and inp not in inputs:
                    deps.append(inp.owner)
            deps.extend(extra.get(node, ()))
            for dep in reversed(deps):
                if dep not in visited:
                    stack.append((dep, False))
    return order


def toposort(outputs, blockers=None):
    """Variables of the graph in topological order (inputs first)."""
    blockers = set(blockers) if blockers is not None else set()
    result = []
    seen = set()
    for out in outputs:
        stack = [(out, False)]
        while stack:
            var, expanded = stack.pop()
            if expanded:
                result.append(var)
                continue
            if var in seen:
                continue
            seen.add(var)
            stack.append((var, True))
            if var.owner is not None and var not in blockers:
                for inp in reversed(var.owner.inputs):
                    if inp not in seen:
                        stack.append((inp, False))
    return result


def clone_node_and_cache(node, clone_d, **kwargs):
    """Clone ``node`` on the clones of its inputs found in ``clone_d``; record it there.

    Returns ``None`` (and clones nothing) when every output of ``node``
    already has a replacement in ``clone_d``: a node whose outputs were all
    substituted is not needed in the new graph.
    """
    if all(out in clone_d for out in node.outputs):
        return None
    new_node = node.clone_with_new_inputs([clone_d[i] for i in node.inputs], **kwargs)
    clone_d[node] = new_node
    for old, new in zip(node.outputs, new_node.outputs):
        clone_d.setdefault(old, new)
    return new_node


def clone_get_equiv(
    inputs, outputs, copy_inputs=True, copy_orphans=True, memo=None,
    clone_inner_graphs=False, **kwargs,
):
    """Clone the graph between ``inputs`` and ``outputs``; return the old->new map.

    ``memo`` may be pre-filled with replacements (``{old_var: new_var}``):
    those are used instead of cloning, and nodes whose outputs are all
    replaced are skipped. The given dict is filled in place and returned.
    ``copy_inputs`` clones the inputs, ``copy_orphans`` the other ownerless
    variables; constants are never cloned (they are values, so sharing them
    is safe and lets merging see equal constants). ``kwargs`` go to each
    node's ``clone_with_new_inputs`` (e.g. ``strict=False``).
    """
    from lucent.graph.basic import Constant

    if memo is None:
        memo = {}
    for inp in inputs:
        if copy_inputs and not isinstance(inp, Constant):
            cpy = inp.clone()
            cpy.owner = None
            cpy.index = None
            memo.setdefault(inp, cpy)
        else:
            memo.setdefault(inp, inp)
    for apply in io_toposort(inputs, outputs):
        for inp in apply.inputs:
            if inp not in memo:
                if copy_orphans and not isinstance(inp, Constant):
                    memo[inp] = inp.clone()
                else:
                    memo[inp] = inp
        clone_node_and_cache(apply, memo, **kwargs)
    for out in outputs:
        if out not in memo:
            memo[out] = out.clone()
    return memo


def clone(inputs, outputs, copy_inputs=True, copy_orphans=None, clone_inner_graphs=False):
    """Copy the graph between ``inputs`` and ``outputs``; return new inputs and outputs.

    Constants are shared, not copied; ``copy_orphans`` (default: like
    ``copy_inputs``) decides whether other ownerless variables are copied.
    """
    if copy_orphans is None:
        copy_orphans = copy_inputs
    equiv = clone_get_equiv(inputs, outputs, copy_inputs, copy_orphans)
    return [equiv[i] for i in inputs], [equiv[o] for o in outputs]


def apply_ancestors(graphs, blockers=None):
    """The Apply nodes that ``graphs`` depend on, each once, depth first from the outputs."""
    seen = set()
    for var in ancestors(graphs, blockers):
        node = var.owner
        if node is not None and node not in seen:
            seen.add(node)
            yield node


def get_var_by_name(graphs, target_var_id):
    """The variables of ``graphs`` whose ``name`` (or ``auto_name``) is ``target_var_id``.

    Inner graphs of ops (``HasInnerGraph``) are searched too. Returns a tuple.
    """

    def expand(r):
        node = r.owner
        if node is None:
            return None
        inner = getattr(node.op, "inner_outputs", None) if hasattr(node.op, "fgraph") else None
        if inner is not None:
            return list(node.inputs) + list(inner)
        return node.inputs

    return tuple(
        var
        for var in walk(list(graphs), expand)
        if target_var_id == var.name or target_var_id == getattr(var, "auto_name", None)
    )


def explicit_graph_inputs(graph):
    """The inputs of ``graph`` that need a value: ownerless and not constant (nor nominal)."""
    from lucent.graph.basic import AtomicVariable

    if not isinstance(graph, (list, tuple)) and hasattr(graph, "owner"):
        graph = [graph]
    return (v for v in graph_inputs(graph) if not isinstance(v, AtomicVariable))
