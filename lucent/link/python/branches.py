"""Planning a graph with branches: which nodes run only when a branch is taken.

An op such as ``IfElse`` declares its branches with
``op.lazy_branches(node) -> (condition position, (then positions, else positions))``.
For such a node the linkers evaluate the condition first and then only the
nodes the chosen branch needs. This module works out, once per graph,
*under which branch choices* each node is needed; both linkers read the
result:

* the Python linker (and the node-by-node builds on top of it: the
  profiled Numba build, DebugMode) runs the nodes in ``BranchPlan.order``,
  skipping a node whose ``guard`` does not hold for the conditions already
  computed;
* the Numba linker writes the same plan as nested ``if``/``else`` blocks
  (``BranchPlan.blocks``).

A node another node must follow (``fgraph.orderings()``: it reads a value
the other overwrites in place) is treated as one of that node's inputs, so
the plan keeps every such ordering, at the price of running it whenever
the overwriting node runs.

How a node's *contexts* are found: a graph output is needed always (the
empty context ``()``). A node needed in context ``C`` needs its inputs in
``C``, except a branching node, whose ``then`` inputs are needed in
``C + ((node, 0),)`` and ``else`` inputs in ``C + ((node, 1),)`` (its
condition in ``C``). A variable needed in both branches of a node is
needed where that node is. A variable needed in several contexts keeps
them all when they exclude each other (they take different branches of one node:
at most one of them holds in a call), so a value used only in the ``else``
of an outer ``if`` and in the ``else`` of an inner one runs in neither
when both ``then`` branches are taken. Contexts that could hold together
(branches of unrelated nodes) are replaced by their longest common prefix:
the node then runs in the context they share, erring on the side of
computing it.

The order: within one context, nodes keep their relative order from the
schedule; the nodes of a branch of node ``B`` come right before ``B``
(``then`` nodes, then ``else`` nodes). A node with several (exclusive)
contexts appears once in each, and at most one of its places runs per
call. Every node of a branch of ``B`` is an ancestor of ``B`` and reads
values of the same or an enclosing context, so each path through the
plan is a valid schedule.

A node another node must follow (``fgraph.orderings()``: it reads a value
the other overwrites in place) is treated as one of that node's inputs, so
the plan keeps every such ordering, at the price of running it whenever
the overwriting node runs.
"""

from __future__ import annotations


def branches_of(node):
    """``(condition position, (then positions, else positions))`` or ``None`` for a plain node."""
    declare = getattr(node.op, "lazy_branches", None)
    if declare is None:
        return None
    return declare(node)


def has_branches(order):
    return any(branches_of(node) is not None for node in order)


def _common_prefix(a, b):
    k = 0
    limit = min(len(a), len(b))
    while k < limit and a[k] == b[k]:
        k += 1
    return a[:k]


def _exclusive(a, b):
    """Whether contexts ``a`` and ``b`` take different branches of one node (never both hold)."""
    k = len(_common_prefix(a, b))
    return k < len(a) and k < len(b) and a[k][0] is b[k][0]


def _add_context(contexts, new):
    """``contexts`` (pairwise exclusive, none a prefix of another) with ``new`` added."""
    contexts = list(contexts)
    while True:
        for old in contexts:
            if new[: len(old)] == old:
                return contexts  # already needed whenever ``new`` holds
        merged = False
        for old in list(contexts):
            if old[: len(new)] == new:
                contexts.remove(old)  # ``new`` covers it
            elif not _exclusive(old, new) or len(old) == len(new) == len(_common_prefix(old, new)) + 1:
                # could hold together, or are the two branches of one node
                # (needed whichever runs): needed where they meet
                contexts.remove(old)
                new = _common_prefix(old, new)
                merged = True
                break
        if not merged:
            contexts.append(new)
            return contexts


class Block:
    """The nodes of one context, in order; a branching node carries its two branch blocks.

    ``items`` holds ``(node, branch_blocks)`` pairs: ``branch_blocks`` is
    ``None`` for a plain node, else ``(then_block, else_block)``, to be run
    (one of them) before the node itself.
    """

    def __init__(self, context):
        self.context = context
        self.items = []

    def walk(self):
        """``(node, context)`` of this block and its branches, in plan order."""
        for node, branch_blocks in self.items:
            if branch_blocks is not None:
                yield from branch_blocks[0].walk()
                yield from branch_blocks[1].walk()
            yield node, self.context


class BranchPlan:
    """When each node of a schedule runs (see module docstring).

    Attributes
    ----------
    contexts
        ``{node: [context, ...]}``; a context is a tuple of
        ``(branching node, 0 or 1)`` choices under which the node is needed
        (``()``: always). A node's contexts exclude each other.
    blocks
        The top-level ``Block``.
    order
        The nodes in plan order; a node with several contexts appears once
        per context.
    guards
        Per entry of ``order``: the context that must hold for it to run.
    """

    def __init__(self, fgraph, schedule):
        # A node that must run before another (it reads what the other
        # overwrites in place) is demanded like an input: it then always runs
        # before it, whatever the branches.
        orderings = fgraph.orderings()
        position = {node: i for i, node in enumerate(schedule)}

        def context_key(ctx):  # deterministic: the plan's text must not depend on ids
            return tuple((position[node], branch) for node, branch in ctx)

        var_contexts = {out: [()] for out in fgraph.outputs}
        contexts = {}
        for node in reversed(schedule):
            ctxs = []
            for out in node.outputs:
                for ctx in var_contexts.get(out, ()):
                    ctxs = _add_context(ctxs, ctx)
            if not ctxs:  # computed for nothing (should not happen in a FunctionGraph)
                ctxs = [()]
            ctxs.sort(key=context_key)
            contexts[node] = ctxs
            branches = branches_of(node)
            for ctx in ctxs:
                if branches is None:
                    demands = [(var, ctx) for var in node.inputs]
                else:
                    cond, (then_pos, else_pos) = branches
                    demands = [(node.inputs[cond], ctx)]
                    demands += [(node.inputs[k], ctx + ((node, 0),)) for k in then_pos]
                    demands += [(node.inputs[k], ctx + ((node, 1),)) for k in else_pos]
                for before in orderings.get(node, ()):
                    demands += [(var, ctx) for var in before.outputs]
                for var, need in demands:
                    if var.owner is not None:
                        var_contexts[var] = _add_context(var_contexts.get(var, []), need)
        self.contexts = contexts

        blocks = {(): Block(())}

        def block_for(ctx):
            if ctx not in blocks:
                blocks[ctx] = Block(ctx)
            return blocks[ctx]

        for node in schedule:
            branching = branches_of(node) is not None
            for ctx in contexts[node]:
                branch_blocks = None
                if branching:
                    branch_blocks = (block_for(ctx + ((node, 0),)), block_for(ctx + ((node, 1),)))
                block_for(ctx).items.append((node, branch_blocks))
        self.blocks = blocks[()]
        walked = list(self.blocks.walk())
        self.order = [node for node, _ in walked]
        self.guards = [ctx for _, ctx in walked]
        assert set(self.order) == set(schedule)

    @property
    def single(self):
        """Whether every node has one context (appears once in ``order``)."""
        return len(self.order) == len(self.contexts)

    def free_points(self, fgraph, storage_map):
        """Per entry of ``order``, the cells to free after it.

        A variable computed in context ``c`` is freed after its last reader
        in ``c`` *at its own level*: a reader inside a branch of node ``B``
        (whose place in ``c`` runs whenever the variable was computed there)
        counts as ``B``. Readers in contexts excluding ``c`` do not count.
        Graph inputs, constants and outputs are never freed.
        """
        keep = set(fgraph.inputs) | set(fgraph.outputs)
        index = {(node, ctx): i for i, (node, ctx) in enumerate(zip(self.order, self.guards))}
        last = {}
        for i, (node, guard) in enumerate(zip(self.order, self.guards)):
            for var in node.inputs:
                if var.owner is None or var in keep:
                    continue
                for own in self.contexts[var.owner]:
                    if guard[: len(own)] == own and len(guard) > len(own):
                        at = index[(guard[len(own)][0], own)]
                    elif own[: len(guard)] == guard:
                        at = i
                    else:
                        continue  # a context excluding this one
                    key = (var, own)
                    last[key] = max(last.get(key, -1), at)
            for var in node.outputs:
                if var not in keep:
                    last.setdefault((var, guard), i)
        per_node = [[] for _ in self.order]
        for (var, _), i in last.items():
            per_node[i].append(storage_map[var])
        return per_node


def guard_checks(plan, storage_map):
    """Per node of ``plan.order``: ``None`` (always runs) or ``[(condition cell, branch)]``."""
    checks = []
    for guard in plan.guards:
        if not guard:
            checks.append(None)
            continue
        cells = []
        for branching, branch in guard:
            cond, _ = branches_of(branching)
            cells.append((storage_map[branching.inputs[cond]], branch))
        checks.append(cells)
    return checks


def guard_holds(check):
    """Whether every branch choice of ``check`` is the one the computed conditions took."""
    for cell, branch in check:
        taken = 0 if cell[0] != 0 else 1
        if taken != branch:
            return False
    return True


__all__ = ["BranchPlan", "Block", "branches_of", "has_branches", "guard_checks", "guard_holds"]
