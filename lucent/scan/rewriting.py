"""Rewrites of ``Scan`` nodes: do less inside the loop, store less, carry nothing unused.

* ``scan_push_out_non_seq``: a computation in the body that uses only
  non-sequences and constants gives the same value at every step; it is
  computed once, before the loop, and enters as a new non-sequence.
* ``scan_push_out_seq``: an element-wise computation in the body on sequence
  slices (and non-sequences) is done on the whole sequences before the loop,
  and enters as a new sequence.
* ``scan_remove_unused``: inputs the body does not read and ``nit_sot``
  outputs nobody reads are removed.
* ``scan_save_mem``: an output of which only the last step is read keeps
  only the rows its taps need (a ring buffer, see ``lucent.scan.op``)
  instead of one row per step.

All of them build a new ``Scan`` with ``clone_with_inner_graph`` on a new
inner graph; the op's inner graph is never changed in place.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from lucent.graph.basic import Constant, Variable
from lucent.graph.fg import FunctionGraph
from lucent.graph.replace import clone_replace
from lucent.graph.rewriting.basic import in2out, node_rewriter
from lucent.graph.rewriting.db import optdb
from lucent.scan.op import Scan


def _rebuild(op, inner_inputs, inner_outputs, info):
    return op.clone_with_inner_graph(FunctionGraph(inner_inputs, inner_outputs, clone=False), info=info)


def _movable(node):
    """Whether ``node`` can run once outside the loop instead of at every step."""
    from lucent.tensor.type import TensorType

    if isinstance(node.op, Scan) or getattr(node.op, "destroy_map", None):
        return False
    return all(isinstance(o.type, TensorType) for o in node.outputs) and all(
        isinstance(i.type, TensorType) for i in node.inputs
    )


@node_rewriter([Scan])
def scan_push_out_non_seq(fgraph, node):
    """Compute once, before the loop, what the body computes from non-sequences and constants only."""
    op = node.op
    info, lay = op.info, op.layout
    inner_in, inner_out = list(op.fgraph.inputs), list(op.fgraph.outputs)
    non_seq_inner = inner_in[lay.i_non_seqs :]
    invariant = set(non_seq_inner)
    order = op.fgraph.toposort()
    for n in order:
        if _movable(n) and all(i in invariant or isinstance(i, Constant) for i in n.inputs):
            invariant.update(n.outputs)
    # the invariant values the rest of the body (or the outputs) read
    boundary = []
    for n in order:
        if all(o in invariant for o in n.outputs):
            continue
        for i in n.inputs:
            if i in invariant and i.owner is not None and i not in boundary:
                boundary.append(i)
    for o in inner_out:
        if o in invariant and o.owner is not None and o not in boundary:
            boundary.append(o)
    if not boundary:
        return False
    to_outer = dict(zip(non_seq_inner, node.inputs[lay.o_non_seqs :]))
    outer_values = clone_replace(boundary, replace=to_outer)
    new_inner = [b.type() for b in boundary]
    replaced = clone_replace(inner_out, replace=dict(zip(boundary, new_inner)))
    replaced = [dict(zip(boundary, new_inner)).get(o, r) for o, r in zip(inner_out, replaced)]
    new_info = dataclasses.replace(info, n_non_seqs=info.n_non_seqs + len(boundary))
    new_op = _rebuild(op, inner_in + new_inner, replaced, new_info)
    return new_op(*node.inputs, *outer_values, return_list=True)


@node_rewriter([Scan])
def scan_push_out_seq(fgraph, node):
    """Do element-wise work on sequence slices on the whole sequences, before the loop."""
    from lucent.tensor.elemwise import Elemwise
    from lucent.tensor.shape import shape_padleft

    op = node.op
    info, lay = op.info, op.layout
    inner_in, inner_out = list(op.fgraph.inputs), list(op.fgraph.outputs)
    seq_inner = inner_in[: info.n_seqs]
    non_seq_inner = inner_in[lay.i_non_seqs :]
    n_steps = node.inputs[0]
    # the whole-sequence value of each pushable inner variable
    outer_of = {s: node.inputs[lay.o_seqs + i][:n_steps] for i, s in enumerate(seq_inner)}
    non_seq_outer = dict(zip(non_seq_inner, node.inputs[lay.o_non_seqs :]))
    pushed = []
    for n in op.fgraph.toposort():
        if not isinstance(n.op, Elemwise) or not _movable(n) or len(n.outputs) != 1:
            continue
        if not any(i in outer_of for i in n.inputs):
            continue
        args = []
        for i in n.inputs:
            if i in outer_of:
                args.append(outer_of[i])
            elif i in non_seq_outer:
                args.append(shape_padleft(non_seq_outer[i]))
            elif isinstance(i, Constant):
                args.append(shape_padleft(i))
            else:
                break
        else:
            outer_of[n.outputs[0]] = n.op(*args)
            pushed.append(n.outputs[0])
    if not pushed:
        return False
    used = set()
    for n in op.fgraph.toposort():
        if n.outputs[0] in pushed and len(n.outputs) == 1:
            continue
        used.update(i for i in n.inputs if i in pushed)
    used.update(o for o in inner_out if o in pushed)
    boundary = [v for v in pushed if v in used]
    if not boundary:
        return False
    new_inner = [b.type() for b in boundary]
    mapping = dict(zip(boundary, new_inner))
    replaced = [mapping.get(o, r) for o, r in zip(inner_out, clone_replace(inner_out, replace=mapping))]
    new_inputs = seq_inner + new_inner + inner_in[info.n_seqs :]
    new_info = dataclasses.replace(info, n_seqs=info.n_seqs + len(boundary))
    new_op = _rebuild(op, new_inputs, replaced, new_info)
    outer = list(node.inputs)
    outer = outer[: lay.o_states] + [outer_of[b] for b in boundary] + outer[lay.o_states :]
    return new_op(*outer, return_list=True)


@node_rewriter([Scan])
def scan_remove_unused(fgraph, node):
    """Drop the sequences and non-sequences the body never reads, and the nit_sot outputs nobody reads."""
    from lucent.graph.traversal import graph_inputs

    op = node.op
    info, lay = op.info, op.layout
    inner_in, inner_out = list(op.fgraph.inputs), list(op.fgraph.outputs)
    clients = fgraph.clients if fgraph is not None else {}
    dead_nit = [
        k for k in range(info.n_nit_sot)
        if fgraph is not None and not clients.get(node.outputs[lay.out_nit + k])
    ]
    kept_out = [o for j, o in enumerate(inner_out) if not (lay.out_nit <= j < lay.out_untraced and j - lay.out_nit in dead_nit)]
    read = set(graph_inputs(kept_out))
    dead_seq = [i for i in range(info.n_seqs) if inner_in[i] not in read]
    dead_non = [i for i in range(info.n_non_seqs) if inner_in[lay.i_non_seqs + i] not in read]
    if not (dead_nit or dead_seq or dead_non):
        return False
    if len(dead_nit) == info.n_nit_sot and lay.n_states == 0 and info.n_untraced_sit_sot == 0:
        return False  # a loop with no output left: leave it to the dead-code removal
    new_in = [v for i, v in enumerate(inner_in[: info.n_seqs]) if i not in dead_seq]
    new_in += inner_in[info.n_seqs : lay.i_non_seqs]
    new_in += [v for i, v in enumerate(inner_in[lay.i_non_seqs :]) if i not in dead_non]
    new_info = dataclasses.replace(
        info,
        n_seqs=info.n_seqs - len(dead_seq),
        n_nit_sot=info.n_nit_sot - len(dead_nit),
        n_non_seqs=info.n_non_seqs - len(dead_non),
    )
    new_op = _rebuild(op, new_in, kept_out, new_info)
    ins = node.inputs
    outer = [ins[0]]
    outer += [v for i, v in enumerate(ins[lay.o_seqs : lay.o_states]) if i not in dead_seq]
    outer += ins[lay.o_states : lay.o_nit]
    outer += [v for k, v in enumerate(ins[lay.o_nit : lay.o_non_seqs]) if k not in dead_nit]
    outer += [v for i, v in enumerate(ins[lay.o_non_seqs :]) if i not in dead_non]
    new_outs = new_op(*outer, return_list=True)
    it = iter(new_outs)
    result = {}
    for j, old in enumerate(node.outputs):
        if lay.out_nit <= j < lay.out_untraced and j - lay.out_nit in dead_nit:
            continue
        result[old] = next(it)
    return result


def _last_row_readers(fgraph, var):
    """The ``var[-1]`` variables reading ``var`` (also through ``var[start:]`` slices), or None
    if some client reads more than the last row."""
    from lucent.tensor.subtensor import Subtensor

    readers = []
    for client, _ in fgraph.clients.get(var, []):
        if client == "output" or not isinstance(getattr(client, "op", None), Subtensor):
            return None
        idx = tuple(client.op.idx_list)
        index_inputs = client.inputs[1:]
        if not all(isinstance(i, Constant) for i in index_inputs):
            return None
        values = [np.asarray(i.data).item() for i in index_inputs]
        if idx == ("i",) and values == [-1]:
            readers.append(client.outputs[0])
        elif idx and idx[0] == (True, None, None) and all(e == (None, None, None) for e in idx[1:]):
            if values[0] < 0:
                return None
            more = _last_row_readers(fgraph, client.outputs[0])
            if more is None:
                return None
            readers += more
        else:
            return None
    return readers


@node_rewriter([Scan])
def scan_save_mem(fgraph, node):
    """Keep only the last rows of outputs of which only the last step is read."""
    from lucent.tensor.basic import constant
    from lucent.tensor.subtensor import IncSubtensor

    op = node.op
    info, lay = op.info, op.layout
    if info.as_while or fgraph is None:
        return False
    inputs = list(node.inputs)
    replace = {}
    shrunk = []
    for j in range(lay.out_untraced):
        out = node.outputs[j]
        readers = _last_row_readers(fgraph, out)
        if not readers:
            continue
        if j < lay.n_states:
            init = lay.init_lens[j]
            buf = inputs[lay.o_states + j]
            if buf.owner is not None and isinstance(buf.owner.op, IncSubtensor) and buf.owner.op.set_instead_of_inc:
                small = buf.owner.inputs[1]
                if small.type.ndim != buf.type.ndim:
                    small = buf[:init]
            else:
                small = buf[:init]
            if buf.type.shape[0] is not None and buf.type.shape[0] <= init:
                continue
            inputs[lay.o_states + j] = small
        else:
            size = inputs[lay.o_nit + j - lay.out_nit]
            if isinstance(size, Constant) and np.asarray(size.data).item() <= 1:
                continue
            inputs[lay.o_nit + j - lay.out_nit] = constant(np.asarray(1, dtype=size.type.dtype))
        shrunk.append((j, readers))
    if not shrunk:
        return False
    new_outs = op(*inputs, return_list=True)
    for j, readers in shrunk:
        last = new_outs[j][-1]
        for r in readers:
            replace[r] = last
    for j, old in enumerate(node.outputs):
        if j not in dict(shrunk):
            replace[old] = new_outs[j]
    return replace


optdb.register(
    "scan_push_out_non_seq",
    in2out(scan_push_out_non_seq, name="scan_push_out_non_seq"),
    "fast_run", "scan", "scan_pushout", "scan_pushout_nonseqs_ops",
    position=1.1,
)
optdb.register(
    "scan_push_out_seq",
    in2out(scan_push_out_seq, name="scan_push_out_seq"),
    "fast_run", "scan", "scan_pushout", "scan_pushout_seqs_ops",
    position=1.11,
)
optdb.register(
    "scan_remove_unused",
    in2out(scan_remove_unused, name="scan_remove_unused"),
    "fast_run", "scan",
    position=1.12,
)
optdb.register(
    "scan_save_mem",
    in2out(scan_save_mem, name="scan_save_mem"),
    "fast_run", "scan", "scan_save_mem",
    position=1.61,
)


__all__ = ["scan_push_out_non_seq", "scan_push_out_seq", "scan_remove_unused", "scan_save_mem"]
