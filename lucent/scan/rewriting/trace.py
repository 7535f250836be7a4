"""Storing only the rows of a loop's outputs that are read.

``scan_reduce_trace_prealloc`` (also known as ``scan_save_mem``): an output
of which only the last step is read keeps only the rows its taps need (a
ring buffer, see ``lucent.scan.op``) instead of one row per step.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Constant
from lucent.graph.rewriting.basic import node_rewriter
from lucent.scan.op import Scan


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
def scan_reduce_trace_prealloc(fgraph, node):
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
            if buf.type.shape[0] is not None and buf.type.shape[0] <= init:
                continue
            # Only the buffer ``scan`` builds (initial rows set into room for the steps)
            # is shrunk; any other buffer may already be the initial rows alone, and
            # slicing it again would be applied forever.
            if not (
                buf.owner is not None
                and isinstance(buf.owner.op, IncSubtensor)
                and buf.owner.op.set_instead_of_inc
            ):
                continue
            small = buf.owner.inputs[1]
            if small.type.ndim != buf.type.ndim:
                small = buf[:init]
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



#: The name this rewrite had before; tags and old programs still use it.
scan_save_mem = scan_reduce_trace_prealloc

__all__ = ["scan_reduce_trace_prealloc", "scan_save_mem"]
