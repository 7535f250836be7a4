"""Rewrites of basic indexing: slices that select everything are dropped.

Gradients of loops and of indexing build chains of views such as
``x[0:][:n][::1]``: every bound a slice of a constant ``0`` start or step
``1`` is a node to rewrite, schedule, compile and run that selects what its
input already holds. ``local_useless_slice`` removes such bounds (and the
trailing full slices they leave): a start of ``0`` with a positive step, a
step of ``1``, a stop at or past a dimension's static length. A
``Subtensor`` left with nothing to select is its input itself.
"""

from __future__ import annotations

from lucent.graph.rewriting.basic import node_rewriter
from lucent.tensor.rewriting.basic import _is_output
from lucent.tensor.rewriting.registry import register_canonicalize, register_specialize
from lucent.tensor.shape import Shape_i
from lucent.tensor.subtensor import Subtensor, _const, _is_slice, _split_inputs


def _is_own_length(stop, x, axis):
    """Whether ``stop`` is ``x.shape[axis]`` (a ``Shape_i`` of ``x`` itself)."""
    owner = stop.owner
    return owner is not None and isinstance(owner.op, Shape_i) and owner.op.i == axis and owner.inputs[0] is x


def _simplified_slice(parts, length, x, axis):
    """``(start, stop, step)`` without the bounds that select everything (``None`` where dropped)."""
    start, stop, step = parts
    step_value = None if step is None else _const(step)
    if step is not None and step_value == 1:
        step, step_value = None, 1
    forward = step is None or (step_value is not None and step_value > 0)
    if start is not None and forward and _const(start) == 0:
        start = None
    if stop is not None and forward:
        stop_value = _const(stop)
        if (stop_value is not None and length is not None and stop_value >= length) or _is_own_length(stop, x, axis):
            stop = None
    return start, stop, step


@node_rewriter([Subtensor])
def local_useless_slice(fgraph, node):
    """``x[0:x.shape[0]:1]`` -> ``x[:]``; a ``Subtensor`` selecting everything -> ``x``."""
    x = node.inputs[0]
    entries, inputs, changed = [], [], False
    axis = 0
    for entry, parts in _split_inputs(node.op.idx_list, node.inputs[1:]):
        if not _is_slice(entry):
            entries.append(entry)
            inputs.append(parts)
            axis += 1
            continue
        length = x.type.shape[axis] if axis < x.type.ndim else None
        simplified = _simplified_slice(parts, length, x, axis)
        changed |= any(a is not b for a, b in zip(simplified, parts))
        entries.append(tuple(True if p is not None else None for p in simplified))
        inputs.extend(p for p in simplified if p is not None)
        axis += 1
    while entries and entries[-1] == (None, None, None):
        entries.pop()
        changed = True
    if not changed:
        return False
    if not entries:
        if _is_output(fgraph, node.outputs[0]):
            return False  # an output must not become its input
        new = x
    else:
        new = Subtensor(tuple(entries))(x, *inputs)
    if new.type != node.outputs[0].type and not node.outputs[0].type.is_super(new.type):
        return False
    return [new]


register_canonicalize(local_useless_slice, "fast_compile")
register_specialize(local_useless_slice)


__all__ = ["local_useless_slice"]
