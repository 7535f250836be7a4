"""Moving work out of the loop body.

* ``scan_push_out_non_seq``: a computation in the body that uses only
  non-sequences and constants gives the same value at every step; it is
  computed once, before the loop, and enters as a new non-sequence.
* ``scan_push_out_seq``: an element-wise computation in the body on sequence
  slices (and non-sequences) is done on the whole sequences before the loop,
  and enters as a new sequence (not for a while loop, which may stop early);
  a loop whose outputs all are such computations (or sequence slices, or
  values that are the same at every step) is replaced by them.
* ``scan_push_out_add``: a state that only accumulates products of matrix
  slices of two sequences (``acc + dot(a_t, b_t)``) and of which only the last
  value is read is one large product of the reshaped sequences.

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
    direct = _outputs_taken_from_outside(node, outer_of, non_seq_outer)
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


@node_rewriter([Scan])
def scan_push_out_add(fgraph, node):
    """``acc_T = acc_0 + sum_t a_t @ b_t`` as one product, when only ``acc_T`` is read.

    For a state whose step is ``acc + dot(a_t, b_t)`` with ``a_t`` and ``b_t``
    matrix slices of sequences, the last value is ``acc_0 + A' @ B'`` where
    ``A'`` puts the steps of ``A`` side by side (``(m, T * k)``) and ``B'`` stacks
    them (``(T * k, n)``): one large product instead of ``T`` small ones. The
    readers of the last value read it; the loop stays for its other outputs
    (or is removed when nothing else reads it).
    """
    from lucent.scalar.arith import Add
    from lucent.scan.rewriting.trace import _last_row_readers
    from lucent.tensor.elemwise import Elemwise
    from lucent.tensor.math import Dot, dot

    op = node.op
    info, lay = op.info, op.layout
    if fgraph is None or info.as_while or not info.n_sit_sot:
        return False
    inner_in, inner_out = op.fgraph.inputs, op.fgraph.outputs
    clients = op.fgraph.clients
    n_steps = node.inputs[0]
    seq_inner = list(inner_in[: info.n_seqs])
    for k in range(info.n_mit_sot, lay.n_states):
        out = inner_out[k]
        state = inner_in[lay.state_inner_inputs(k)[0]]
        add = out.owner
        if not (
            add is not None
            and isinstance(add.op, Elemwise)
            and isinstance(add.op.scalar_op, Add)
            and len(add.inputs) == 2
            and state in add.inputs
        ):
            continue
        prod = add.inputs[1] if add.inputs[0] is state else add.inputs[0]
        if prod is state or prod.owner is None or not isinstance(prod.owner.op, Dot):
            continue
        if len(clients.get(prod, ())) != 1:
            continue
        a, b = prod.owner.inputs
        if a.type.ndim != 2 or b.type.ndim != 2 or a not in seq_inner or b not in seq_inner:
            continue
        readers = _last_row_readers(fgraph, node.outputs[k])
        if not readers:
            continue
        A = node.inputs[lay.o_seqs + seq_inner.index(a)][:n_steps]
        B = node.inputs[lay.o_seqs + seq_inner.index(b)][:n_steps]
        wide = A.dimshuffle(1, 0, 2).reshape((A.shape[1], A.shape[0] * A.shape[2]))
        tall = B.reshape((B.shape[0] * B.shape[1], B.shape[2]))
        last = node.inputs[lay.o_states + k][lay.init_lens[k] - 1] + dot(wide, tall)
        replace = {}
        for r in readers:
            value = last if last.type == r.type else r.type.filter_variable(last)
            replace[r] = value
        return replace
    return False


def _outputs_taken_from_outside(node, outer_of, non_seq_outer):
    """The replacements of a loop whose outputs are all sequence slices, work pushed
    out of the body, or values that are the same at every step (a non-sequence or a
    constant, as ``scan_push_out_non_seq`` leaves them), with no state: each output
    is built outside and the loop is gone. A loop that keeps some work keeps all its
    outputs, as PyTensor's does."""
    from lucent.tensor.creation import alloc

    op = node.op
    lay = op.layout
    if lay.n_states or op.info.n_untraced_sit_sot or not op.info.n_nit_sot:
        return {}
    n_steps = node.inputs[0]
    direct = {}
    for k in range(op.info.n_nit_sot):
        j = lay.out_nit + k
        inner = op.fgraph.outputs[j]
        value = outer_of.get(inner)
        if value is None:
            same = non_seq_outer.get(inner, inner if isinstance(inner, Constant) else None)
            if same is None:
                return {}
            value = alloc(same, n_steps, *[same.shape[d] for d in range(same.type.ndim)])
        out = node.outputs[j]
        value = _stored_rows(value, n_steps, node.inputs[lay.o_nit + k])
        if value.type != out.type:
            value = out.type.filter_variable(value)
        direct[out] = value
    return direct


def _stored_rows(value, n_steps, size):
    """What a nit_sot output storing ``size`` rows holds when its ``n_steps`` values are
    ``value``: all of them when ``size`` is ``n_steps``; the last ``size`` (oldest
    first) when it is a ring; the values then zero rows when it is longer."""
    from lucent.tensor.basic import _static_int
    from lucent.tensor.creation import zeros
    from lucent.tensor.math import minimum
    from lucent.tensor.subtensor import set_subtensor

    if size is n_steps:
        return value
    n_const, s_const = _static_int(n_steps), _static_int(size)
    if n_const is not None and n_const == s_const:
        return value
    kept = minimum(size, n_steps)
    shape = [size, *[value.shape[d] for d in range(1, value.type.ndim)]]
    return set_subtensor(zeros(shape, dtype=value.type.dtype)[:kept], value[n_steps - kept :])


__all__ = ["scan_push_out_add", "scan_push_out_non_seq", "scan_push_out_seq"]
