"""Rebuilding graphs with some variables substituted by others.

``clone_replace`` / ``graph_replace`` substitute variables of the same type;
``vectorize_graph`` substitutes variables that gained leading batch
dimensions and rebuilds every dependent node for them.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import singledispatch

from lucent.graph.basic import Apply, Constant, Variable
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


def clone_replace(output, replace=None, strict=True, share_inputs=True, copy_inputs=None,
                  rebuild_strict=None):
    """Clone the graph of ``output`` with the variables of ``replace`` substituted.

    ``replace`` is a dict or a list of ``(old, new)`` pairs. Graph inputs are
    shared with the original graph (``share_inputs=True``), so the result can
    be compiled together with the original. A replacement whose type differs
    is converted with ``old.type.filter_variable(new)``; with ``strict=False``
    the ops are re-made so output types follow the new inputs.
    ``rebuild_strict`` is PyTensor's name for ``strict``.
    """
    if rebuild_strict is not None:
        strict = rebuild_strict
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


# ---------------------------------------------------------------------------
# Vectorization: the same graph, mapped over new leading (batch) dimensions
# ---------------------------------------------------------------------------
@singledispatch
def _vectorize_node(op, node, *batched_inputs):
    """Rebuild ``node`` for inputs that may carry extra leading (batch) dimensions.

    Dispatched on the type of ``op``; a rule returns the new Apply (or its
    outputs). Each op family registers its rule next to the ops it knows
    (``lucent.tensor.vectorize`` for the tensor ops; ``lucent.tensor.blockwise``
    registers the rule of every ``Op``: wrap it in ``Blockwise``). An object
    that is not an ``Op`` can still be rebuilt when no input gained
    dimensions; otherwise this says which op stopped the vectorization.
    """
    if not _has_new_batch_dims(node, batched_inputs):
        return _vectorize_not_needed(op, node, *batched_inputs)
    grown = [
        f"input {i} ({old.type} -> {new.type})"
        for i, (old, new) in enumerate(zip(node.inputs, batched_inputs))
        if _ndim(new) != _ndim(old)
    ]
    raise NotImplementedError(
        f"vectorize_graph has no rule to map {op} (op type {type(op).__name__}) over batch "
        f"dimensions; it got batched {', '.join(grown)}. Register one with "
        f"lucent.graph.replace._vectorize_node.register({type(op).__name__})."
    )


def _ndim(var):
    return getattr(var.type, "ndim", None)


def _has_new_batch_dims(node, batched_inputs):
    return any(_ndim(new) != _ndim(old) for old, new in zip(node.inputs, batched_inputs))


def _vectorize_not_needed(op, node, *batched_inputs):
    """The rule of ops whose ``make_node`` already accepts inputs of any rank."""
    return op.make_node(*batched_inputs).outputs


def vectorize_graph(outputs, replace):
    """The graph of ``outputs`` with the variables of ``replace`` given extra leading dimensions.

    ``replace`` maps variables of the graph to versions with batch dimensions
    added on the left (like ``numpy.vectorize``): a vector ``x`` replaced by a
    matrix ``X`` makes every node that depends on ``x`` compute, row by row,
    what it computed for ``x``. Nodes are rebuilt in topological order by the
    per-op rules of ``_vectorize_node``; nodes that do not depend on a
    replaced variable are kept as they are. Returns one variable for one
    output, a list for a sequence.
    """
    if not isinstance(replace, Mapping):
        raise TypeError(f"vectorize_graph: replace must be a mapping {{old: new}}, got {type(replace).__name__}")
    single = isinstance(outputs, Variable)
    seq_outputs = [outputs] if single else list(outputs)
    for out in seq_outputs:
        if not isinstance(out, Variable):
            raise TypeError(f"vectorize_graph: outputs must be Variables, got {out!r}")
    if not all(isinstance(k, Variable) and isinstance(v, Variable) for k, v in replace.items()):
        raise ValueError(f"Some of the replaced items are not Variables: {replace}")

    vect_vars = dict(replace)
    for node in io_toposort(list(replace), seq_outputs):
        vect_inputs = [vect_vars.get(inp, inp) for inp in node.inputs]
        if all(a is b for a, b in zip(vect_inputs, node.inputs)):
            continue  # untouched by the replacement: keep the node
        result = _vectorize_node(node.op, node, *vect_inputs)
        vect_outputs = result.outputs if isinstance(result, Apply) else list(result)
        if len(vect_outputs) != len(node.outputs):
            raise ValueError(
                f"The vectorization rule of {node.op} returned {len(vect_outputs)} outputs "
                f"for a node with {len(node.outputs)}"
            )
        for out, vect_out in zip(node.outputs, vect_outputs):
            # A replacement given for one output of a multi-output node wins.
            vect_vars.setdefault(out, vect_out)
    result = [vect_vars.get(out, out) for out in seq_outputs]
    return result[0] if single else result
