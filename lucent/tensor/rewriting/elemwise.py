"""Elementwise fusion: connected groups of ``Elemwise`` nodes become one node.

A chain such as ``exp(-x*x)*sin(y) + log1p(abs(x*y))`` is, unfused, one
NumPy call and one temporary array per operation. Fusion rewrites every
maximal group of element-wise nodes into a single
``Elemwise(Composite(...))`` node whose scalar graph describes the whole
group, so a backend can run it as one loop with no intermediate arrays, and
the reference path still computes exactly the same values.

Which nodes form a group
------------------------
Starting from a node (the walk goes from the outputs towards the inputs),
the group grows through data edges to neighbouring nodes that are

* ``Elemwise`` nodes that do not work in place, and
* of the same rank (number of dimensions) as the group,

as long as the group stays *convex*: no path leaves the group and comes
back into it. Without that rule, a node outside the group that reads one
group value and feeds another would have to run both before and after the
fused node.

An intermediate value that something outside the group still reads (or
that is an output of the graph) becomes an extra output of the fused node;
everything else stays inside the composite. Every output of an
``Elemwise`` has the broadcast shape of all its inputs, so a value whose
static shape is smaller (say ``(3, 1)`` inside a ``(3, 4)`` group) cannot be
an extra output: such a node is left out of the group instead.

Constants whose every dimension has length 1 (including ``ExpandDims`` of
such a constant, which is how ``1 + y`` looks before constant folding) are
inlined into the composite as scalar constants rather than passed as
inputs.
"""

from __future__ import annotations

import hashlib

import numpy as np

from lucent.graph.basic import Constant
from lucent.graph.rewriting.basic import GraphRewriter, replace_validated
from lucent.graph.fg import InconsistencyError
from lucent.graph.traversal import io_toposort
from lucent.scalar import basic as ps
from lucent.scalar.composite import Composite
from lucent.tensor.elemwise import DimShuffle, Elemwise
from lucent.tensor.rewriting.registry import register_fusion


def _fusable(node):
    return (
        node != "output"
        and type(node.op) is Elemwise
        and not node.op.destroy_map
    )


def _rank(node):
    return node.outputs[0].type.ndim


def _users(fgraph, node):
    """Apply nodes reading an output of ``node`` (graph outputs excluded)."""
    out = []
    for o in node.outputs:
        for client, _ in fgraph.clients.get(o, ()):
            if client != "output":
                out.append(client)
    return out


def _is_convex(fgraph, group, index):
    """True when no path leaves ``group`` and re-enters it.

    Walks down from the group's outside readers; nodes later in the
    topological order than every group member cannot lead back into it.
    """
    limit = max(index[n] for n in group)
    stack = [c for n in group for c in _users(fgraph, n) if c not in group]
    seen = set()
    while stack:
        node = stack.pop()
        if node in seen or index.get(node, limit + 1) > limit:
            continue
        seen.add(node)
        for c in _users(fgraph, node):
            if c in group:
                return False
            stack.append(c)
    return True


def _grow(fgraph, seed, index, excluded):
    """The largest convex group around ``seed`` reachable through fusable neighbours."""
    rank = _rank(seed)
    group = {seed}
    frontier = [seed]
    while frontier:
        node = frontier.pop()
        producers = [v.owner for v in node.inputs if v.owner is not None]
        for cand in producers + _users(fgraph, node):
            if cand in group or cand in excluded or not _fusable(cand) or _rank(cand) != rank:
                continue
            group.add(cand)
            if _is_convex(fgraph, group, index):
                frontier.append(cand)
            else:
                group.discard(cand)
    return group


def _inlined_constant(var):
    """A scalar constant standing for ``var`` if it is a one-element constant."""
    src = var
    if (
        var.owner is not None
        and isinstance(var.owner.op, DimShuffle)
        and not var.owner.op.drop
        and isinstance(var.owner.inputs[0], Constant)
    ):
        src = var.owner.inputs[0]
    if not isinstance(src, Constant):
        return None
    shape = getattr(src.type, "shape", None)
    if shape is None or any(s != 1 for s in shape):
        return None
    data = np.asarray(src.data)
    if data.size != 1:
        return None
    if any(s != 1 for s in var.type.shape):
        return None
    return ps.constant(data.reshape(())[()], dtype=data.dtype.name)


_COMMUTATIVE = (ps.Add, ps.Mul)


def _canonical_operands(scalar_op, operands, keys):
    """``operands`` of a two-operand ``add`` or ``mul`` in a canonical order.

    ``a * b`` and ``b * a`` are the same value bit for bit, but two fused
    groups that differ only in that order (the gradients of ``tanh`` at two
    layers, say) would be two kernels to compile. Ordering by the operands'
    structure (composite inputs by position, then constants, then computed
    values by their expression) makes them one composite, so the second
    group reuses the first one's kernel. Only two operands of one dtype are
    swapped: reordering three would reassociate the computation.
    """
    if type(scalar_op) not in _COMMUTATIVE or len(operands) != 2:
        return operands
    a, b = operands
    if a.type != b.type:
        return operands
    return sorted(operands, key=lambda v: _scalar_key(v, keys))


def _scalar_key(var, keys):
    """A flat, sortable description of a scalar value of the composite being built.

    Inputs are keyed by position; constants by type only; a computed
    value by a digest of its op and its operands' keys. Constants' values
    stay out of every key: a variant of a model with other numbers (whose
    constants become inputs of one shared kernel, ``composite_constants``)
    must order its operands the same way. The members are built in
    topological order and every output is keyed as it is made
    (``_key_outputs``), so this never recurses, however deep the group.
    """
    key = keys.get(var)
    if key is None:  # a constant (inputs and computed values are keyed already)
        key = keys[var] = (1, str(var.type))
    return key


def _key_outputs(node, keys):
    operands = "|".join(repr(_scalar_key(v, keys)) for v in node.inputs)
    for k, out in enumerate(node.outputs):
        text = f"{node.op}#{k}({operands})"
        keys[out] = (2, hashlib.sha1(text.encode()).hexdigest())


def _exposed(fgraph, group, members):
    """Outputs of group members read outside the group or returned by the graph."""
    out = []
    for node in members:
        for o in node.outputs:
            if any(c == "output" or c not in group for c, _ in fgraph.clients.get(o, ())):
                out.append(o)
    return out


def _build(fgraph, group, order):
    """``(exposed outputs, fused outputs)``, or ``(mismatched nodes, None)``.

    The second form names the members whose output cannot be an output of
    the fused node because its type differs from the fused broadcast type.
    """
    members = [n for n in order if n in group]
    produced = {o for n in members for o in n.outputs}
    smap = {}
    s_inputs, t_inputs = [], []
    for node in members:
        for v in node.inputs:
            if v in produced or v in smap:
                continue
            c = _inlined_constant(v)
            if c is None:
                c = ps.get_scalar_type(v.type.dtype)()
                s_inputs.append(c)
                t_inputs.append(v)
            smap[v] = c
    if not t_inputs:
        return [], None  # only constants: constant folding's job
    order_keys = {c: (0, k) for k, c in enumerate(s_inputs)}
    for node in members:
        operands = _canonical_operands(node.op.scalar_op, [smap[v] for v in node.inputs], order_keys)
        s_node = node.op.scalar_op.make_node(*operands)
        _key_outputs(s_node, order_keys)
        smap.update(zip(node.outputs, s_node.outputs))
    exposed = _exposed(fgraph, group, members)
    comp = Composite(s_inputs, [smap[o] for o in exposed])
    new_outs = Elemwise(comp)(*t_inputs, return_list=True)
    bad = [o.owner for o, n in zip(exposed, new_outs) if o.type != n.type]
    if bad:
        return bad, None
    return exposed, new_outs


class FusionRewriter(GraphRewriter):
    """Replaces maximal groups of element-wise nodes by ``Elemwise(Composite)`` nodes.

    Groups are formed one at a time on the current graph (outputs first),
    so each group is checked against the graph as it is after the previous
    fusions.
    """

    name = "elemwise_fusion"

    def apply(self, fgraph):
        changed = False
        tried = set()
        while True:
            order = io_toposort(fgraph.inputs, fgraph.outputs)
            index = {n: k for k, n in enumerate(order)}
            fused = False
            for seed in reversed(order):
                if seed in tried or not _fusable(seed):
                    continue
                tried.add(seed)
                new_node = self._fuse_from(fgraph, seed, order, index)
                if new_node is not None:
                    tried.add(new_node)
                    fused = changed = True
                    break
            if not fused:
                return changed

    def _fuse_from(self, fgraph, seed, order, index):
        excluded = set()
        for _ in range(len(order)):
            group = _grow(fgraph, seed, index, excluded)
            if len(group) < 2:
                return None
            exposed, new_outs = _build(fgraph, group, order)
            if new_outs is None:
                if not exposed or seed in exposed:
                    return None
                excluded.update(exposed)
                continue
            try:
                replace_validated(fgraph, list(zip(exposed, new_outs)), reason=self)
            except InconsistencyError:
                return None
            return new_outs[0].owner
        return None  # pragma: no cover - each retry excludes at least one node


fusion_rewriter = FusionRewriter()
register_fusion(fusion_rewriter, name="elemwise_fusion")

__all__ = ["FusionRewriter", "fusion_rewriter"]
