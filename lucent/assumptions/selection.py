"""Inference rules for SELECTION: a 0/1 matrix with exactly one 1 in every column.

``A @ S`` then picks columns of ``A``. A selection matrix may have more
rows than columns (``eye(n, m)`` with ``n >= m``); keeping a subset of
its columns (a column slice) leaves a selection.
"""

from __future__ import annotations

import numpy as np

from lucent.assumptions.core import SELECTION, FactState, register_assumption, register_constant_inference, true_if
from lucent.tensor.creation import Eye
from lucent.tensor.subtensor import Subtensor
from lucent.tensor.variable import TensorConstant

_FULL = (None, None, None)


def one_hot_columns(data):
    """True when every entry of ``data`` is 0 or 1 and every column (axis -2 sums) holds one 1."""
    with np.errstate(invalid="ignore"):
        return bool(np.isin(data, (0, 1)).all() and (data.sum(axis=-2) == 1).all())


def selection_from_constant(var):
    """SELECTION of a constant, read from its data (cached on ``var.tag``)."""
    cached = getattr(var.tag, "is_selection", None)
    if cached is not None:
        return cached
    data = np.asarray(var.data)
    state = FactState.TRUE if data.ndim >= 2 and one_hot_columns(data) else FactState.FALSE
    var.tag.is_selection = state
    return state


register_constant_inference(SELECTION, selection_from_constant)


@register_assumption(SELECTION, Eye)
def _eye(key, op, feature, fgraph, node, input_states):
    """``eye(n, m, k)`` selects columns iff ``k == 0`` and ``n >= m`` (no empty column)."""
    n, m, k = node.inputs
    if not isinstance(k, TensorConstant):
        return [FactState.UNKNOWN]
    if int(k.data.item()) != 0:
        return [FactState.FALSE]
    if n is m:
        return [FactState.TRUE]
    rows, cols = node.outputs[0].type.shape
    if isinstance(n, TensorConstant) and isinstance(m, TensorConstant):
        rows, cols = int(n.data.item()), int(m.data.item())
    if rows is None or cols is None:
        return [FactState.UNKNOWN]
    return true_if(rows >= cols, else_false=True)


@register_assumption(SELECTION, Subtensor)
def _column_slice(key, op, feature, fgraph, node, input_states):
    """``S[..., a:b]`` of a selection keeps whole one-hot columns (tried after the batch rule)."""
    if input_states[0] is not FactState.TRUE:
        return [FactState.UNKNOWN]
    idx_list = tuple(op.idx_list)
    ndim = node.inputs[0].type.ndim
    if ndim >= 2 and len(idx_list) == ndim and all(e == _FULL for e in idx_list[:-1]):
        return true_if(isinstance(idx_list[-1], tuple))
    return [FactState.UNKNOWN]


def _register_column_pick():
    from lucent.tensor.advanced_subtensor import AdvancedSubtensor

    @register_assumption(SELECTION, AdvancedSubtensor)
    def _column_pick(key, op, feature, fgraph, node, input_states):
        """``S[..., idx]`` with an integer vector ``idx`` picks columns of a selection: still one."""
        if input_states[0] is not FactState.TRUE:
            return [FactState.UNKNOWN]
        idx_list = tuple(op.idx_list)
        ndim = node.inputs[0].type.ndim
        if ndim < 2 or len(idx_list) != ndim or any(e != _FULL for e in idx_list[:-1]) or idx_list[-1] != "a":
            return [FactState.UNKNOWN]
        index = node.inputs[1]
        return true_if(index.type.ndim == 1 and index.type.dtype.startswith(("int", "uint")))


_register_column_pick()
