"""Which rows of a loop's output its readers use.

The memory rewrites (``trace``) need to know, for every output of a
``Scan``, which of its rows the rest of the graph reads. A reader is a basic
``Subtensor`` whose first index is an integer or a slice, possibly behind
the ``raw[init:]`` slice that ``scan`` puts in front of a recurrent output
(so ``xs[-1]`` reads ``raw[init:][-1]``). Anything else (the whole output
used by another op, an advanced index) means "every row".

A ``Read`` keeps what is needed to ask for the same rows of a shorter
output: the reader's variable, the chain's offset ``a`` (the rows before it
are the initial states), its first index entry and values, and the other
index entries, which are kept as they are.
"""

from __future__ import annotations

import dataclasses

from lucent.graph.basic import Constant, Variable


@dataclasses.dataclass
class Read:
    """One reader of a loop output: ``raw[a:][first, *rest]`` (see the module docstring)."""

    var: Variable
    a: int
    entry: object  # "i" or a (start, stop, step) slice entry of an idx_list
    parts: object  # the index input (an "i" entry) or the slice's (start, stop, step) inputs
    rest_entries: tuple
    rest_inputs: tuple

    def constant_rows(self, length):
        """The raw rows read (a ``range``) when the output has ``length`` rows, or None
        when an index is not a constant or is out of range."""
        rows = range(length)[self.a :]
        if self.entry == "i":
            i = _int(self.parts)
            if i is None or not -len(rows) <= i < len(rows):
                return None
            return range(rows[i], rows[i] + 1)
        bounds = [None if p is None else _int(p) for p in self.parts]
        if any(b is None and p is not None for b, p in zip(bounds, self.parts)):
            return None
        if bounds[2] not in (None, 1):
            return None
        return rows[bounds[0] : bounds[1]]

    def trailing(self):
        """How many last rows this read needs whatever the length (``x[-3]``, ``x[-4:-1]``),
        or None if it reads from the start or an index is not a constant."""
        if self.entry == "i":
            i = _int(self.parts)
            return -i if i is not None and i < 0 else None
        start, stop, step = self.parts
        s = None if start is None else _int(start)
        e = None if stop is None else _int(stop)
        if (step is not None and _int(step) != 1) or s is None or s >= 0:
            return None
        if stop is not None and (e is None or e >= 0):
            return None
        return -s

    def rebuild(self, out, first):
        """The same read on ``out`` with the first index (or slice bounds) ``first``."""
        from lucent.tensor.subtensor import Subtensor

        if self.entry == "i":
            entry, inputs = "i", [first]
        else:
            entry = tuple(True if b is not None else None for b in first)
            inputs = [b for b in first if b is not None]
        op = Subtensor((entry, *self.rest_entries))
        return op(out, *inputs, *self.rest_inputs)


def _int(v):
    if isinstance(v, Constant):
        try:
            return int(v.data)
        except (TypeError, ValueError):
            return None
    return None


def collect_reads(fgraph, var, a=0):
    """Every ``Read`` of ``var`` (following ``var[a:]`` slices), or None if a client reads
    the output some other way (which needs every row)."""
    from lucent.tensor.subtensor import Subtensor, _is_slice, _n_inputs

    reads = []
    for client, _ in fgraph.clients.get(var, []):
        if client == "output" or type(getattr(client, "op", None)) is not Subtensor:
            return None
        idx = client.op.idx_list
        entry = idx[0]
        n_first = _n_inputs(entry)
        first_inputs = client.inputs[1 : 1 + n_first]
        rest_entries = tuple(idx[1:])
        rest_inputs = tuple(client.inputs[1 + n_first :])
        if _is_slice(entry):
            it = iter(first_inputs)
            parts = tuple(next(it) if p else None for p in entry)
        elif entry == "i":
            parts = first_inputs[0]
        else:
            return None
        full_rest = all(e == (None, None, None) for e in rest_entries)
        if _is_slice(entry) and full_rest and parts[1] is None and parts[2] is None:
            start = 0 if parts[0] is None else _int(parts[0])
            if start is not None and start >= 0:
                more = collect_reads(fgraph, client.outputs[0], a + start)
                if more is None:
                    return None
                reads += more
                continue
        reads.append(Read(client.outputs[0], a, entry, parts, rest_entries, rest_inputs))
    return reads


def index_constant(value, dtype="int64"):
    """An integer scalar constant (an index, a number of steps or rows)."""
    import numpy as np

    from lucent.tensor.basic import constant

    return constant(np.asarray(value, dtype=dtype))


__all__ = ["Read", "collect_reads", "index_constant"]
