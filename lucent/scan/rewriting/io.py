"""Cleaning a loop's inputs and outputs.

* ``scan_remove_unused``: outputs nobody reads are removed, with the
  recurrent states only they need, and so are the sequences and
  non-sequences the rest of the body does not read.
* ``scan_inline_invariant_constants``: a non-sequence that is a constant
  outside is put into the body as that constant (so constant folding and
  the other rewrites see its value) and stops being an input.
* ``scan_merge_duplicate_inputs``: a value given twice as a sequence (or
  twice as a non-sequence: the same variable or the same computation)
  enters the body once.
"""

from __future__ import annotations

import dataclasses

from lucent.graph.basic import Constant
from lucent.graph.equality import equal_computations
from lucent.graph.replace import clone_replace
from lucent.graph.rewriting.basic import node_rewriter
from lucent.scan.op import Scan
from lucent.scan.rewriting.utils import rebuild as _rebuild


@node_rewriter([Scan])
def scan_remove_unused(fgraph, node):
    """Drop the outputs nobody reads (with the states only they need) and the
    sequences and non-sequences the rest of the body never reads."""
    from lucent.graph.traversal import graph_inputs

    op = node.op
    info, lay = op.info, op.layout
    inner_in, inner_out = list(op.fgraph.inputs), list(op.fgraph.outputs)
    if fgraph is None:
        return None
    clients = fgraph.clients
    n_out = lay.n_outputs
    # the inner inputs each output feeds back into (a state's taps)
    feeds = {k: lay.state_inner_inputs(k) for k in range(lay.n_states)}
    for u in range(info.n_untraced_sit_sot):
        feeds[lay.out_untraced + u] = [lay.i_untraced + u]
    for k in range(info.n_nit_sot):
        feeds[lay.out_nit + k] = []
    dead = {j for j in range(n_out) if not clients.get(node.outputs[j])}
    # an unread output is still computed if a kept output's step reads its state
    while True:
        kept = [inner_out[j] for j in range(n_out) if j not in dead] + inner_out[n_out:]
        read = set(graph_inputs(kept))
        revived = {j for j in dead if any(inner_in[i] in read for i in feeds[j])}
        if not revived:
            break
        dead -= revived
    if len(dead) == n_out:
        return None  # a loop with no output left: leave it to the dead-code removal
    dead_states = sorted(j for j in dead if j < lay.n_states)
    dead_nit = sorted(j - lay.out_nit for j in dead if lay.out_nit <= j < lay.out_untraced)
    dead_untraced = sorted(j - lay.out_untraced for j in dead if j >= lay.out_untraced)
    dead_seq = [i for i in range(info.n_seqs) if inner_in[i] not in read]
    dead_non = [i for i in range(info.n_non_seqs) if inner_in[lay.i_non_seqs + i] not in read]
    if not (dead or dead_seq or dead_non):
        return None  # nothing to remove (PyTensor's rewriters say so with None too)
    dead_state_in = {i for j in dead_states for i in feeds[j]}
    new_in = [v for i, v in enumerate(inner_in[: info.n_seqs]) if i not in dead_seq]
    new_in += [v for i, v in enumerate(inner_in[lay.i_states : lay.i_untraced], lay.i_states)
               if i not in dead_state_in]
    new_in += [v for u, v in enumerate(inner_in[lay.i_untraced : lay.i_non_seqs]) if u not in dead_untraced]
    new_in += [v for i, v in enumerate(inner_in[lay.i_non_seqs :]) if i not in dead_non]
    kept_out = [o for j, o in enumerate(inner_out[:n_out]) if j not in dead] + inner_out[n_out:]
    n_mit = info.n_mit_sot
    new_info = dataclasses.replace(
        info,
        n_seqs=info.n_seqs - len(dead_seq),
        mit_sot_in_slices=tuple(t for k, t in enumerate(info.mit_sot_in_slices) if k not in dead_states),
        sit_sot_in_slices=tuple(
            t for k, t in enumerate(info.sit_sot_in_slices) if k + n_mit not in dead_states
        ),
        n_nit_sot=info.n_nit_sot - len(dead_nit),
        n_untraced_sit_sot=info.n_untraced_sit_sot - len(dead_untraced),
        n_non_seqs=info.n_non_seqs - len(dead_non),
    )
    new_op = _rebuild(op, new_in, kept_out, new_info)
    ins = node.inputs
    outer = [ins[0]]
    outer += [v for i, v in enumerate(ins[lay.o_seqs : lay.o_states]) if i not in dead_seq]
    outer += [v for k, v in enumerate(ins[lay.o_states : lay.o_untraced]) if k not in dead_states]
    outer += [v for u, v in enumerate(ins[lay.o_untraced : lay.o_nit]) if u not in dead_untraced]
    outer += [v for k, v in enumerate(ins[lay.o_nit : lay.o_non_seqs]) if k not in dead_nit]
    outer += [v for i, v in enumerate(ins[lay.o_non_seqs :]) if i not in dead_non]
    new_outs = iter(new_op(*outer, return_list=True))
    return {old: next(new_outs) for j, old in enumerate(node.outputs) if j not in dead}


def _drop_inputs(node, inner_replace, dead_seq, dead_non):
    """``node`` rebuilt without the given sequences / non-sequences, the inner
    variables of ``inner_replace`` standing for what replaces them."""
    op = node.op
    info, lay = op.info, op.layout
    inner_in, inner_out = list(op.fgraph.inputs), list(op.fgraph.outputs)
    if inner_replace:
        new_out = clone_replace(inner_out, replace=inner_replace)
        inner_out = [inner_replace.get(o, n) for o, n in zip(inner_out, new_out)]
    new_in = [v for i, v in enumerate(inner_in[: info.n_seqs]) if i not in dead_seq]
    new_in += inner_in[info.n_seqs : lay.i_non_seqs]
    new_in += [v for i, v in enumerate(inner_in[lay.i_non_seqs :]) if i not in dead_non]
    new_info = dataclasses.replace(
        info, n_seqs=info.n_seqs - len(dead_seq), n_non_seqs=info.n_non_seqs - len(dead_non)
    )
    new_op = _rebuild(op, new_in, inner_out, new_info)
    ins = node.inputs
    outer = [ins[0]]
    outer += [v for i, v in enumerate(ins[lay.o_seqs : lay.o_states]) if i not in dead_seq]
    outer += ins[lay.o_states : lay.o_non_seqs]
    outer += [v for i, v in enumerate(ins[lay.o_non_seqs :]) if i not in dead_non]
    return new_op(*outer, return_list=True)


@node_rewriter([Scan])
def scan_inline_invariant_constants(fgraph, node):
    """Put the constant non-sequences into the body as constants."""
    from lucent.tensor.type import TensorType

    op = node.op
    lay = op.layout
    inner_non = op.fgraph.inputs[lay.i_non_seqs :]
    replace, dead = {}, []
    for i, (inner, outer) in enumerate(zip(inner_non, node.inputs[lay.o_non_seqs :])):
        if not isinstance(outer, Constant) or not isinstance(outer.type, TensorType):
            continue
        const = outer if outer.type == inner.type else None
        if const is None:
            try:
                const = inner.type.filter_variable(outer)
            except TypeError:
                continue
            if not isinstance(const, Constant):
                continue
        replace[inner] = const
        dead.append(i)
    if not dead:
        return None
    return _drop_inputs(node, replace, [], dead)


@node_rewriter([Scan])
def scan_merge_duplicate_inputs(fgraph, node):
    """Read a sequence (or non-sequence) given several times through one inner input."""
    op = node.op
    info, lay = op.info, op.layout
    inner_in = op.fgraph.inputs
    replace, dead_seq, dead_non = {}, [], []
    for group, first_inner, first_outer, dead in (
        (info.n_seqs, 0, lay.o_seqs, dead_seq),
        (info.n_non_seqs, lay.i_non_seqs, lay.o_non_seqs, dead_non),
    ):
        seen = []  # (outer, inner) of the inputs kept so far
        for i in range(group):
            outer = node.inputs[first_outer + i]
            inner = inner_in[first_inner + i]
            prev = next(
                (
                    p_in
                    for p_out, p_in in seen
                    if p_in.type == inner.type
                    and (p_out is outer or equal_computations([p_out], [outer]))
                ),
                None,
            )
            if prev is not None:
                replace[inner] = prev
                dead.append(i)
            else:
                seen.append((outer, inner))
    if not replace:
        return None
    return _drop_inputs(node, replace, dead_seq, dead_non)


__all__ = ["scan_inline_invariant_constants", "scan_merge_duplicate_inputs", "scan_remove_unused"]
