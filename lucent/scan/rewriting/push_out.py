"""Moving work out of the loop body.

* ``scan_push_out_non_seq``: a computation in the body that uses only
  non-sequences and constants gives the same value at every step; it is
  computed once, before the loop, and enters as a new non-sequence.
* ``scan_push_out_seq``: an element-wise computation in the body on sequence
  slices (and non-sequences) is done on the whole sequences before the loop,
  and enters as a new sequence (not for a while loop, which may stop early);
  a loop whose outputs all are such computations (or sequence slices) is
  replaced by them.

Both build a new ``Scan`` on a new inner graph; the op's inner graph is
never changed in place.
"""

from __future__ import annotations

import dataclasses

from lucent.graph.basic import Constant
from lucent.graph.replace import clone_replace
from lucent.graph.rewriting.basic import node_rewriter
from lucent.scan.op import Scan
from lucent.scan.rewriting.utils import movable as _movable
from lucent.scan.rewriting.utils import rebuild as _rebuild


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
    if info.as_while:
        # a while loop may stop long before the end of its sequences: work done on
        # whole sequences would be done for steps that never run
        return False
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
    direct = _outputs_taken_from_outside(node, outer_of)
    if direct:
        return direct
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


def _outputs_taken_from_outside(node, outer_of):
    """The replacements of a loop whose outputs are all sequence slices or work pushed
    out of the body (no state): the whole sequence (or the pushed-out result) is each
    output, and the loop is gone. A loop that keeps some work keeps all its outputs,
    as PyTensor's does."""
    from lucent.tensor.basic import _static_int

    op = node.op
    lay = op.layout
    if lay.n_states or op.info.n_untraced_sit_sot:
        return {}
    n_steps = node.inputs[0]
    n_const = _static_int(n_steps)
    direct = {}
    for k in range(op.info.n_nit_sot):
        j = lay.out_nit + k
        value = outer_of.get(op.fgraph.outputs[j])
        size = node.inputs[lay.o_nit + k]
        # only an output that stores every step (not a ring) is the whole value
        if value is None or not (size is n_steps or (n_const is not None and _static_int(size) == n_const)):
            return {}
        out = node.outputs[j]
        if value.type != out.type:
            value = out.type.filter_variable(value)
        direct[out] = value
    return direct


__all__ = ["scan_push_out_non_seq", "scan_push_out_seq"]
