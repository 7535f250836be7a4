"""Storing only the rows of a loop's outputs that are read, and running only the steps read.

* ``scan_reduce_nsteps``: with a known number of steps, when the readers
  (``lucent.scan.rewriting.reads``) of every output need rows up to some
  known step only, the later steps are not run.
* ``scan_reduce_trace_prealloc`` (also known as ``scan_save_mem``): an
  output whose readers need only its last rows (``xs[-1]``, ``xs[-3:]``,
  ``xs[7]`` of a known length) keeps only those rows, and the rows its taps
  need (a ring buffer, see ``lucent.scan.op``), instead of one per step. A
  buffer this rewrite made has a known length or is the same expression
  again, so a second pass changes nothing.
* ``scan_sit_sot_to_untraced``: a state of which only the last value is
  read, or none, carries one value instead of a buffer.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Constant
from lucent.graph.rewriting.basic import node_rewriter
from lucent.scan.op import Scan
from lucent.scan.rewriting.utils import rebuild


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


def _scan_buffer_value(buf, init):
    """The initial rows set into ``buf`` when it is the buffer ``scan`` builds (room for the
    steps after the ``init`` initial rows), else None: any other buffer may already be
    shortened, and shortening it again would be applied forever."""
    from lucent.tensor.subtensor import IncSubtensor

    owner = buf.owner
    if not (
        owner is not None
        and isinstance(owner.op, IncSubtensor)
        and owner.op.set_instead_of_inc
        and len(owner.op.idx_list) == 1
        and owner.op.idx_list[0] == (None, True, None)
    ):
        return None
    value = owner.inputs[1]
    if value.type.ndim != buf.type.ndim or value.type.shape[0] not in (None, init):
        return None
    return value


def _static_length(var):
    from lucent.tensor.basic import _static_int

    if var.type.shape[0] is not None:
        return var.type.shape[0]
    return _static_int(var.shape[0])


def _buffer(value, init, store):
    """A buffer of ``store`` rows (an int or a symbolic length) starting with ``value``."""
    from lucent.tensor.creation import zeros
    from lucent.tensor.subtensor import set_subtensor

    if isinstance(store, int) and store == init:
        return value
    rest = [value.shape[d] for d in range(1, value.type.ndim)]
    return set_subtensor(zeros([store, *rest], dtype=value.type.dtype)[:init], value)


def _plan_constant(reads, length, init):
    """(rows kept, rebuild) for reads of an output of a known ``length``, or None."""
    from lucent.scan.rewriting.reads import index_constant

    rows = [r.constant_rows(length) for r in reads]
    if any(r is None for r in rows):
        return None
    first = min((r.start for r in rows if len(r)), default=length)
    store = max(length - first, init, 1)
    # A ring is returned oldest row first, which costs a copy of what it keeps: not
    # worth it to drop only the initial rows.
    if store >= length - init and (init or store >= length):
        return None
    shift = length - store

    def rebuild(out):
        res = {}
        for read, r in zip(reads, rows):
            if read.entry == "i":
                first_index = index_constant(r.start - shift - store)
            elif len(r):
                first_index = (index_constant(r.start - shift), index_constant(r.stop - shift), None)
            else:
                first_index = (index_constant(0), index_constant(0), None)
            res[read.var] = read.rebuild(out, first_index)
        return res

    return store, rebuild


def _plan_trailing(reads, init):
    """(rows kept, rebuild) for reads that each need only some last rows, or None."""
    needs = [r.trailing() for r in reads]
    if any(m is None for m in needs):
        return None
    # ``raw[init:][-5:]`` is clipped at the initial rows: the same slice of a shorter
    # output is not, so slices behind the ``raw[init:]`` of a state are left alone
    if any(r.entry != "i" and r.a for r in reads):
        return None
    store = max(max(needs), init, 1)

    def rebuild(out):
        return {r.var: r.rebuild(out, r.parts) for r in reads}

    return store, rebuild


@node_rewriter([Scan])
def scan_reduce_trace_prealloc(fgraph, node):
    """Keep only the last rows of an output that its readers need (see the module docstring)."""
    from lucent.graph.equality import equal_computations
    from lucent.scan.rewriting.reads import collect_reads, index_constant
    from lucent.tensor.basic import _static_int, as_tensor_variable
    from lucent.tensor.math import minimum

    op = node.op
    info, lay = op.info, op.layout
    if fgraph is None:
        return False
    n_steps = node.inputs[0]
    n_const = None if info.as_while else _static_int(n_steps)
    inputs = list(node.inputs)
    shrunk = []
    for j in range(lay.out_untraced):
        reads = collect_reads(fgraph, node.outputs[j])
        if not reads:
            continue
        if j < lay.n_states:
            init = lay.init_lens[j]
            pos = lay.o_states + j
            old = inputs[pos]
            value = _scan_buffer_value(old, init)
            length = _static_length(old)
            if length is None and value is not None and n_const is not None:
                length = init + n_const
        else:
            init, pos = 0, lay.o_nit + j - lay.out_nit
            old = inputs[pos]
            value = None
            length = None if info.as_while else _static_int(old)
        plan = _plan_constant(reads, length, init) if length is not None else None
        if plan is None:
            plan = _plan_trailing(reads, init)
            if plan is None:
                continue
            store, rebuild = plan
            # capped at what the loop writes, so a short run is not padded
            size = minimum(as_tensor_variable(store - init), n_steps) if n_const is None else min(
                store - init, n_const
            )
        else:
            store, rebuild = plan
            size = store - init
        if j < lay.n_states:
            if value is None:
                continue
            new = _buffer(value, init, size + init)
        else:
            new = index_constant(size, old.type.dtype) if isinstance(size, int) else size
            if new.type.dtype != old.type.dtype:
                new = new.astype(old.type.dtype)
        if new is old or equal_computations([new], [old]):
            continue
        if isinstance(size, int) and length is not None and size + init >= length:
            continue
        inputs[pos] = new
        shrunk.append((j, rebuild))
    if not shrunk:
        return False
    new_outs = op(*inputs, return_list=True)
    replace = {}
    done = {j for j, _ in shrunk}
    for j, rebuild in shrunk:
        replace.update(rebuild(new_outs[j]))
    for j, old in enumerate(node.outputs):
        if j not in done:
            replace[old] = new_outs[j]
    return replace


@node_rewriter([Scan])
def scan_reduce_nsteps(fgraph, node):
    """Run only the steps that are read.

    When the number of steps is a known constant and every reader of every
    output reads rows up to some known position (``xs[:5]``, ``xs[-3]``),
    the steps after the last row read are not run. The readers read the same
    rows of the shorter outputs.
    """
    from lucent.scan.rewriting.reads import collect_reads, index_constant
    from lucent.tensor.basic import _static_int

    op = node.op
    info, lay = op.info, op.layout
    if fgraph is None or info.as_while or info.n_untraced_sit_sot:
        return False
    if getattr(node.inputs[0].tag, "scan_steps_read", False):
        return False  # already the number of steps its readers need
    n = _static_int(node.inputs[0])
    if n is None:
        return _reduce_nsteps_symbolic(fgraph, node)
    plans, need = [], 0
    for j in range(lay.out_untraced):
        reads = collect_reads(fgraph, node.outputs[j])
        if reads is None:
            return False
        init = lay.init_lens[j] if j < lay.n_states else 0
        if j >= lay.n_states and _static_int(node.inputs[lay.o_nit + j - lay.out_nit]) != n:
            return False
        rows = [r.constant_rows(init + n) for r in reads]
        if any(r is None for r in rows):
            return _reduce_nsteps_symbolic(fgraph, node)
        for r in rows:
            if len(r):
                need = max(need, r.stop - init)
        plans.append((j, reads, rows))
    if need >= n:
        return False
    inputs = list(node.inputs)
    inputs[0] = index_constant(need, node.inputs[0].type.dtype)
    for k in range(lay.n_states):
        init = lay.init_lens[k]
        old = inputs[lay.o_states + k]
        value = _scan_buffer_value(old, init)
        inputs[lay.o_states + k] = _buffer(value, init, init + need) if value is not None else old[: init + need]
    for k in range(info.n_nit_sot):
        inputs[lay.o_nit + k] = index_constant(need, inputs[lay.o_nit + k].type.dtype)
    new_outs = op(*inputs, return_list=True)
    replace = {}
    for j, reads, rows in plans:
        for read, r in zip(reads, rows):
            if read.entry == "i":
                first = index_constant(r.start)
            else:
                first = (index_constant(r.start), index_constant(r.stop), None) if len(r) else (
                    index_constant(0), index_constant(0), None
                )
            replace[read.var] = read.rebuild(new_outs[j], first)
    return replace or False


def _reduce_nsteps_symbolic(fgraph, node):
    """``scan_reduce_nsteps`` when the number of steps or an index read is only known at
    run time: the loop runs ``min(n_steps, last row read + 1)`` steps.

    A reader may take one row at any index (``xs[i]``, ``xs[-j]``) or a slice with
    constant bounds; a slice with a bound only known at run time, or one that reads
    up to the end, keeps every step.
    """
    from lucent.graph.equality import equal_computations
    from lucent.scan.rewriting.reads import collect_reads
    from lucent.tensor.math import maximum, minimum

    op = node.op
    info, lay = op.info, op.layout
    n = node.inputs[0]
    plans, stops = [], []
    for j in range(lay.out_untraced):
        reads = collect_reads(fgraph, node.outputs[j])
        if reads is None:
            return False
        if j < lay.n_states:
            init = lay.init_lens[j]
        else:
            init = 0
            size = node.inputs[lay.o_nit + j - lay.out_nit]
            if not (size is n or equal_computations([size], [n])):
                return False
        length = n + init if init else n
        bounds = []
        for read in reads:
            b = _symbolic_bounds(read, length)
            if b is None:
                return False
            bounds.append(b)
            stops.append(b[-1] - init if init else b[-1])
        plans.append((j, reads, bounds))
    if not stops:
        return False
    need = stops[0]
    for s in stops[1:]:
        need = maximum(need, s)
    steps = minimum(n, maximum(need, 0))
    if steps.type.dtype != n.type.dtype:
        steps = steps.astype(n.type.dtype)
    steps.tag.scan_steps_read = True
    inputs = list(node.inputs)
    inputs[0] = steps
    for k in range(lay.n_states):
        init = lay.init_lens[k]
        old = inputs[lay.o_states + k]
        value = _scan_buffer_value(old, init)
        inputs[lay.o_states + k] = (
            _buffer(value, init, steps + init) if value is not None else old[: steps + init]
        )
    for k in range(info.n_nit_sot):
        size = steps
        if size.type.dtype != inputs[lay.o_nit + k].type.dtype:
            size = size.astype(inputs[lay.o_nit + k].type.dtype)
        inputs[lay.o_nit + k] = size
    new_outs = op(*inputs, return_list=True)
    replace = {}
    for j, reads, bounds in plans:
        for read, b in zip(reads, bounds):
            if read.entry == "i":
                first = _as_index(b[0])
            else:
                first = (_as_index(b[0]), _as_index(b[1]), None)
            replace[read.var] = read.rebuild(new_outs[j], first)
    return replace


def _as_index(v):
    from lucent.scan.rewriting.reads import index_constant

    return index_constant(v) if isinstance(v, int) else v


def _symbolic_bounds(read, length):
    """For a read of an output of ``length`` raw rows: ``(index, stop)`` of a one-row read,
    ``(start, stop)`` of a slice, as raw rows of the output, or None if the read may
    need rows up to the end (a slice to the end, ``xs[-1]``, a slice bound only known
    at run time, a step other than 1)."""
    from lucent.scan.rewriting.reads import _int
    from lucent.tensor.basic import as_tensor_variable, switch
    from lucent.tensor.math import lt, maximum, minimum

    a = read.a
    if read.entry == "i":
        idx = read.parts
        c = _int(idx)
        if c is not None and c >= 0:
            return a + c, a + c + 1
        if c == -1:
            return None
        idx = as_tensor_variable(idx)
        row = switch(lt(idx, 0), length + idx, idx + a if a else idx)
        # an index out of range of the output stays out of range of the shorter one
        safe = switch(lt(row, a), -(length + 1), row)
        return safe, maximum(row + 1, 0)
    start, stop, step = read.parts
    if step is not None and _int(step) != 1:
        return None
    if stop is None or _int(stop) is None or (start is not None and _int(start) is None):
        return None

    def raw(bound, default):
        if bound is None:
            return default
        c = _int(bound)
        return minimum(a + c, length) if c >= 0 else maximum(length + c, a)

    e = raw(stop, length)
    return raw(start, a), e


def _initial_value(buf, init_len):
    """The starting value of a state whose buffer is ``buf`` (taps ``(-1,)``): its row 0.

    The buffer ``scan`` builds (the initial value set into fresh room for the
    steps) gives the value itself, so the room is no longer allocated; a set
    value that would be broadcast into the row is not used alone.
    """
    from lucent.tensor.subtensor import IncSubtensor

    owner = buf.owner
    if (
        owner is not None
        and isinstance(owner.op, IncSubtensor)
        and owner.op.set_instead_of_inc
        and len(owner.op.idx_list) == 1
        and isinstance(owner.op.idx_list[0], slice)
        and owner.op.idx_list[0].start is None
        and owner.op.idx_list[0].step is None
    ):
        value = owner.inputs[1]
        row = value[0] if value.type.ndim == buf.type.ndim else value
        if row.type.ndim == buf.type.ndim - 1 and row.type.broadcastable == buf.type.broadcastable[1:]:
            return row
    return buf[init_len - 1]


@node_rewriter([Scan])
def scan_sit_sot_to_untraced(fgraph, node):
    """Carry a state of which no step but the last is read as an untraced state.

    A ``sit_sot`` whose output is not used, or of which only the last row is
    read, needs no history: as an ``untraced_sit_sot`` the loop keeps one
    value (no buffer of ``n_steps + 1`` rows, no ring) and returns it. Its
    readers (``out[-1]``, ``out[1:][-1]``) read the returned value.
    """
    from lucent.scan.args import ScanArgs
    from lucent.tensor.type import TensorType

    op = node.op
    if fgraph is None or not op.info.n_sit_sot:
        return False
    args = ScanArgs.from_node(node)
    convert = []
    for k, out in enumerate(args.outer_out_sit_sot):
        if not isinstance(args.inner_out_sit_sot[k].type, TensorType):
            continue
        readers = _last_row_readers(fgraph, out)
        if readers is not None:
            convert.append((k, readers))
    if not convert:
        return False
    moved = {k for k, _ in convert}
    new = ScanArgs.from_node(node)
    keep = [k for k in range(op.info.n_sit_sot) if k not in moved]
    for name in ("inner_in_sit_sot", "outer_in_sit_sot", "inner_out_sit_sot", "outer_out_sit_sot"):
        setattr(new, name, [getattr(args, name)[k] for k in keep])
    for k, _ in convert:
        new.inner_in_shared.append(args.inner_in_sit_sot[k])
        new.outer_in_shared.append(_initial_value(args.outer_in_sit_sot[k], 1))
        new.inner_out_shared.append(args.inner_out_sit_sot[k])
    new_op = rebuild(op, new.inner_inputs, new.inner_outputs, new.info)
    new_outs = new_op(*new.outer_inputs, return_list=True)
    lay = new_op.layout
    replace = {}
    kept_outputs = (
        args.outer_out_mit_sot
        + [args.outer_out_sit_sot[k] for k in keep]
        + args.outer_out_nit_sot
        + args.outer_out_shared
    )
    for old, nw in zip(kept_outputs, new_outs):
        replace[old] = nw
    first_new = lay.out_untraced + op.info.n_untraced_sit_sot
    for n, (_, readers) in enumerate(convert):
        value = new_outs[first_new + n]
        for r in readers:
            replace[r] = value
    return replace


#: The name this rewrite had before; tags and old programs still use it.
scan_save_mem = scan_reduce_trace_prealloc

__all__ = [
    "scan_reduce_nsteps",
    "scan_reduce_trace_prealloc",
    "scan_save_mem",
    "scan_sit_sot_to_untraced",
]
