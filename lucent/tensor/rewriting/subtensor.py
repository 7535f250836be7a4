"""Rewrites of basic indexing: views and writes that change nothing are dropped.

Gradients of loops and of indexing build chains of views such as
``x[0:][:n][::1]``: every bound a slice of a constant ``0`` start or step
``1`` is a node to rewrite, schedule, compile and run that selects what its
input already holds. ``local_useless_slice`` removes such bounds (and the
trailing full slices they leave): a start of ``0`` with a positive step, a
step of ``1``, a stop at or past a dimension's static length. A
``Subtensor`` left with nothing to select is its input itself.

Loops' gradients also build their zero states as "allocate zeros, write
zeros into the first rows, read row 0". ``local_setsubtensor_of_constants``
drops a write of a value into an array already filled with that value
(and an increment by zeros; the element of the ``Alloc`` left is read by
``subtensor_lift.local_subtensor_of_alloc``), and the rows a gradient
writes into zeros and reads back are the value written
(``local_read_of_write_same_indices``). They apply only when the original
could not have raised: a write whose value provably fits the region it
writes.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.rewriting.basic import node_rewriter
from lucent.tensor.rewriting.basic import _is_output, scalar_fill_value
from lucent.tensor.rewriting.registry import register_canonicalize, register_specialize
from lucent.tensor.shape import Shape_i
from lucent.tensor.subtensor import IncSubtensor, Subtensor, _const, _is_slice, _split_inputs


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


def _write_cannot_fail(node):
    """Whether a basic ``IncSubtensor`` provably writes without an error.

    Its index has only slices with no step (a slice never raises for its
    bounds; a step could be 0), and every dimension of the value either
    broadcasts by its type (static length 1) or provably has the region's
    length there (the symbolic shapes of ``x[index]`` and of the value are
    the same expression).
    """
    from lucent.tensor.rewriting.shape_feature import ShapeFeature

    x, y, *indices = node.inputs
    if any(not _is_slice(e) or e[2] for e in node.op.idx_list):
        return False
    # every slice keeps its dimension: the region has x's rank
    offset = x.type.ndim - y.type.ndim
    region = None
    # not the graph's own feature: the region below is a new variable outside the graph
    features = ShapeFeature()
    for d in range(y.type.ndim):
        if y.type.shape[d] == 1:
            continue
        if region is None:
            region = Subtensor(node.op.idx_list)(x, *indices)
        if not features.same_shape(region, y, d + offset, d):
            return False
    return True


@node_rewriter([IncSubtensor])
def local_setsubtensor_of_constants(fgraph, node):
    """``set_subtensor(zeros(s)[:k], zeros_like(v))`` -> ``zeros(s)``; ``inc_subtensor(x[:k], 0)`` -> ``x``.

    Writing into an array every element of which already has the value
    written (both filled with one constant), or adding zeros, leaves it as
    it was, as long as the write could not have raised
    (``_write_cannot_fail``).
    """
    x, y = node.inputs[0], node.inputs[1]
    fill_y = scalar_fill_value(y)
    if fill_y is None or x.type != node.outputs[0].type:
        return False
    if node.op.set_instead_of_inc:
        fill_x = scalar_fill_value(x)
        if fill_x is None or not _same_number(fill_x, fill_y, x.type.dtype):
            return False
    elif fill_y != 0:
        # adding zeros: the neutral element, as for ``x + 0`` (``local_neutral_elements``)
        return False
    if not _write_cannot_fail(node):
        return False
    if _is_output(fgraph, node.outputs[0]) and x.owner is None:
        return False  # an output must not become an input of the graph
    return [x]


def _same_number(a, b, dtype):
    """Whether ``a`` and ``b`` are the same value once stored in ``dtype`` (NaN never is)."""
    with np.errstate(all="ignore"):
        a, b = np.asarray(a).astype(dtype), np.asarray(b).astype(dtype)
    return bool(a == b) and np.signbit(a) == np.signbit(b)


@node_rewriter([Subtensor])
def local_read_of_write_same_indices(fgraph, node):
    """``set_subtensor(x[i:], y)[i:]`` -> ``y``; ``inc_subtensor(zeros[i:], y)[i:]`` -> ``y``.

    Reading back the region just written gives the value written (added
    to zeros, for an increment), when the write could not have raised
    (``_write_cannot_fail``) and the value provably has the region's
    shape, so that nothing of it was broadcast. A loop's gradient writes
    its output gradient into zeros and reads the same rows back.
    """
    write = node.inputs[0].owner
    if write is None or type(write.op) is not IncSubtensor or write.op.idx_list != node.op.idx_list:
        return False
    x, y, *indices = write.inputs
    if len(indices) != len(node.inputs) - 1 or any(a is not b for a, b in zip(indices, node.inputs[1:])):
        return False
    if not write.op.set_instead_of_inc:
        fill = scalar_fill_value(x)
        if fill is None or fill != 0:
            return False
    out = node.outputs[0]
    if y.type.ndim != out.type.ndim or y.type.dtype != out.type.dtype:
        return False
    if y.type != out.type and not out.type.is_super(y.type):
        return False
    if _is_output(fgraph, out) and y.owner is None:
        return False  # an output must not become an input of the graph
    from lucent.tensor.rewriting.shape_feature import ShapeFeature

    if not _write_cannot_fail(write) or not ShapeFeature().same_shape(out, y):
        return False
    return [y]


register_canonicalize(local_setsubtensor_of_constants)
register_specialize(local_setsubtensor_of_constants)
register_canonicalize(local_read_of_write_same_indices)
register_specialize(local_read_of_write_same_indices)


__all__ = [
    "local_useless_slice",
    "local_setsubtensor_of_constants",
    "local_read_of_write_same_indices",
]
