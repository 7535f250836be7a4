"""Rewrites that move an indexing operation towards the values it reads.

``local_subtensor_of_alloc``: an element of an array filled with one value
(``alloc(c, n + 1, m)[0]``) is a smaller filled array (``alloc(c, m)``),
without the large one. Loops' gradients read their zero states this way.
It applies only when the original could not raise: integer indices that
are constants provably inside their dimension (``_lower_bound`` of the
dimension's length), whole slices elsewhere.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Constant
from lucent.graph.rewriting.basic import node_rewriter
from lucent.scalar import basic as ps
from lucent.tensor.basic import Alloc
from lucent.tensor.elemwise import Elemwise
from lucent.tensor.rewriting.registry import register_canonicalize, register_specialize
from lucent.tensor.shape import Shape_i
from lucent.tensor.subtensor import Subtensor, _const, _is_slice, _split_inputs


def _lower_bound(var, depth=16):
    """A number ``var`` (an integer scalar) is provably at least, or ``None``.

    Knows constants, lengths (``Shape_i``, never negative) and ``+``,
    ``maximum``, ``minimum`` of such values: what loops' gradients write
    their lengths with (``n + 1``, ``minimum(0, n) + 1``).
    """
    if depth == 0:
        return None
    if isinstance(var, Constant):
        data = np.asarray(var.data)
        return int(data) if data.ndim == 0 and data.dtype.kind in "iu" else None
    node = var.owner
    if node is None:
        return None
    if isinstance(node.op, Shape_i):
        return 0
    if not isinstance(node.op, Elemwise) or node.op.scalar_op.nout != 1:
        return None
    op = node.op.scalar_op
    if not isinstance(op, (ps.Add, ps.Maximum, ps.Minimum)):
        return None
    bounds = [_lower_bound(v, depth - 1) for v in node.inputs]
    if isinstance(op, ps.Maximum):
        known = [b for b in bounds if b is not None]
        return max(known) if known else None
    if any(b is None for b in bounds):
        return None
    return sum(bounds) if isinstance(op, ps.Add) else min(bounds)


@node_rewriter([Subtensor])
def local_subtensor_of_alloc(fgraph, node):
    """``alloc(c, n + 1, m, k)[0]`` -> ``alloc(c, m, k)``: an element of a filled array is a filled array.

    Only integer indices that are constants provably inside their
    dimension (``_lower_bound`` of its length), followed by nothing or
    whole dimensions, and a 0-d fill value: the original could not raise.
    """
    alloc = node.inputs[0].owner
    if alloc is None or not isinstance(alloc.op, Alloc) or alloc.inputs[0].type.ndim != 0:
        return False
    value, *lengths = alloc.inputs
    kept = []
    for axis, (entry, parts) in enumerate(_split_inputs(node.op.idx_list, node.inputs[1:])):
        if _is_slice(entry):
            if entry != (None, None, None):
                return False
            kept.append(lengths[axis])
            continue
        index = _const(parts)
        bound = _lower_bound(lengths[axis])
        if index is None or bound is None or not (-bound <= index < bound):
            return False
    kept.extend(lengths[len(node.op.idx_list):])
    new = alloc.op(value, *kept)
    if new.type != node.outputs[0].type:
        return False
    return [new]


register_canonicalize(local_subtensor_of_alloc)
register_specialize(local_subtensor_of_alloc)


__all__ = ["local_subtensor_of_alloc"]
