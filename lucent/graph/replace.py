"""Rebuilding graphs with some variables substituted by others."""

from __future__ import annotations

from lucent.graph.basic import Constant, Variable
from lucent.graph.traversal import graph_inputs, io_toposort


def _normalise_replace(replace):
    if replace is None:
        return []
    if isinstance(replace, dict):
        items = list(replace.items())
    else:
        items = list(replace)
    out = []
    for old, new in items:
        if not isinstance(old, Variable):
            raise TypeError(f"Only Variables can be replaced, got {old!r} as a key")
        if not isinstance(new, Variable):
            from lucent.graph.type import Type

            new = old.type.filter_variable(new) if isinstance(old.type, Type) else new
        out.append((old, new))
    return out


def clone_replace(output, replace=None, strict=True, share_inputs=True, copy_inputs=None):
    """Clone the graph of ``output`` with the variables of ``replace`` substituted.

    ``replace`` is a dict or a list of ``(old, new)`` pairs. Graph inputs are
    shared with the original graph (``share_inputs=True``), so the result can
    be compiled together with the original. A replacement whose type differs
    is converted with ``old.type.filter_variable(new)``; with ``strict=False``
    the ops are re-made so output types follow the new inputs.
    """
    if copy_inputs is not None:
        share_inputs = not copy_inputs
    pairs = _normalise_replace(replace)
    single = isinstance(output, Variable)
    outputs = [output] if single else list(output)
    memo = {}
    for old, new in pairs:
        memo[old] = new
    rebuilt = _rebuild(outputs, memo, strict, share_inputs)
    return rebuilt[0] if single else rebuilt


def _rebuild(outputs, memo, strict, share_inputs):
    replaced = set(memo)
    for inp in graph_inputs(outputs, blockers=replaced):
        if inp in memo:
            continue
        if share_inputs or isinstance(inp, Constant):
            memo[inp] = inp
        else:
            memo[inp] = inp.clone()
    for node in io_toposort(list(replaced), outputs):
        new_inputs = [memo.get(i, i) for i in node.inputs]
        if all(a is b for a, b in zip(new_inputs, node.inputs)):
            for out in node.outputs:
                memo.setdefault(out, out)
            continue
        new_node = node.clone_with_new_inputs(new_inputs, strict=strict)
        for out, new_out in zip(node.outputs, new_node.outputs):
            memo.setdefault(out, new_out)
    return [memo.get(o, o) for o in outputs]


def graph_replace(outputs, replace=None, strict=True):
    """Replace variables in ``outputs``' graph, without cloning unrelated parts."""
    return clone_replace(outputs, replace, strict=strict, share_inputs=True)
