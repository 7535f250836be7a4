"""The shape checks that run before the first in-place write into a shared variable.

FAST_RUN computes an update such as ``W - lr*g`` straight into ``W``'s
buffer. With two or more such writers, the second must not fail after the
first one wrote, or a call that raises would leave one shared variable
changed. The compile layer's ``SharedUpdateGuard`` makes the writers run
last; this module supplies the other half, for every linker alike: before
the first writer runs, the shapes all writers need to agree are checked.

What must agree is declared by each op (``Op.inplace_shape_constraints``:
pairs of input dimensions that must have the same length) and collected
here once, by ``shared_write_constraints``. The Python linker evaluates the
pairs on the cells before the first writer's thunk; the Numba linker writes
the same pairs into the generated graph function.
"""

from __future__ import annotations


def shared_write_constraints(fgraph, order):
    """``(first writer, [(node, (i, d), (j, e)), ...])`` for ``order``, or ``None``.

    ``None`` when fewer than two nodes of ``order`` write a shared buffer
    (one writer cannot fail after another wrote) or when no writer declares
    a constraint. ``(i, d), (j, e)``: the length of dimension ``d`` of input
    ``i`` of ``node`` must equal that of dimension ``e`` of its input ``j``.
    """
    writers_of = getattr(fgraph, "shared_buffer_writers", None)
    writers = writers_of() if writers_of is not None else {}
    in_order = [node for node in order if node in writers]
    if len(set(in_order)) < 2:
        return None
    pairs = [
        (node, a, b)
        for node in dict.fromkeys(in_order)
        for a, b in node.op.inplace_shape_constraints(node)
    ]
    if not pairs:
        return None
    return in_order[0], pairs


def constraint_message(node, a, b):
    """The error of a failed constraint; the same text on every path."""
    (i, d), (j, e) = a, b
    return (
        f"{node.op}: input {i} ({node.inputs[i]}) and input {j} ({node.inputs[j]}) must have the "
        f"same length in dimensions {d} and {e}; this call would fail while updating shared "
        "variables in place, so it stopped before changing any"
    )


def check_constraints(pairs, cells_of):
    """Raise ``ValueError`` for the first pair whose lengths differ (``cells_of(node)``: input cells)."""
    for node, a, b in pairs:
        cells = cells_of(node)
        x, y = cells[a[0]][0], cells[b[0]][0]
        if x is None or y is None:  # an untaken branch's value: that writer does not run
            continue
        if x.shape[a[1]] != y.shape[b[1]]:
            raise ValueError(constraint_message(node, a, b))


__all__ = ["shared_write_constraints", "constraint_message", "check_constraints"]
