"""Following a discrepancy into a loop: which step and which inner node of a scan parted the paths.

When the Numba kernel of a node with an inner graph (a ``Scan``) disagrees
with its ``perform``, the outer node is only where the difference shows. The
loop is rerun here on the reference path (the op's ``run_reference``); at
each step the inner graph's nodes are run one by one on both paths
(``NodeCheck``) with the step's reference inner values, and the first inner
node with a problem is reported with the step number. Ops that do not offer
``run_reference`` are not followed.
"""

from __future__ import annotations

from lucent.debugmode.values import copy_value, is_immutable


class _Found(Exception):
    """Stops the rerun loop at the first problem."""


def locate_in_inner_graph(node, values, max_steps=100_000):
    """``(step, inner node, first problem)`` inside ``node``'s loop, or ``None``.

    ``values`` are the outer node's input values (not modified).
    """
    op = node.op
    run = getattr(op, "run_reference", None)
    fgraph = getattr(op, "fgraph", None)
    if run is None or fgraph is None:
        return None
    from lucent.debugmode.node_check import NodeCheck

    order = fgraph.toposort()
    checks = {}
    found = []

    def on_step(t, args):
        if t >= max_steps:
            raise _Found()
        # A row of a step's buffer is a NumPy scalar, not a 0-d array: give each
        # inner input a value of its declared type, as a compiled graph would.
        env = {}
        for var, a in zip(fgraph.inputs, args):
            try:
                env[var] = var.type.filter(a)
            except (TypeError, ValueError):
                env[var] = a
        for inner in order:
            ins = [env[i] if i in env else i.data for i in inner.inputs]
            check = checks.get(inner)
            if check is None:
                check = checks[inner] = NodeCheck(inner, fgraph=fgraph)
            ref, problems, _ = check.run(ins)
            if problems:
                found.append((t, inner, problems[0]))
                raise _Found()
            env.update(zip(inner.outputs, ref))

    copies = [v if is_immutable(v) else copy_value(v) for v in values]
    try:
        run(node, copies, None, on_step)
    except _Found:
        pass
    return found[0] if found else None


def describe_location(node, located):
    """``scan "name", step 4: Op (created at ...)`` for a ``locate_in_inner_graph`` result."""
    from lucent.debugmode.describe import format_trace

    step, inner, _ = located
    name = getattr(node.op, "name", None) or type(node.op).__name__
    kind = type(node.op).__name__.lower()
    trace = format_trace(getattr(inner.tag, "trace", None)).strip().splitlines()
    where = f" (created at {trace[0].strip()})" if trace and trace[0].strip() else ""
    return f'{kind} "{name}", step {step}: {inner.op}{where}'


__all__ = ["describe_location", "locate_in_inner_graph"]
