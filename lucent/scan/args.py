"""Named views of a ``Scan`` node's inputs and outputs, for code that rewrites loops.

A ``Scan`` node keeps its variables in flat lists whose grouping is given by
its ``ScanInfo`` (see ``lucent.scan.op``). Rewrites (and programs that build
or take apart loops) want them by role instead: "the inner input that is
sequence 1", "the outer output of that state", "everything that depends on
this non-sequence". This module gives both:

``io_mappings(info, n_inner_inputs)``
    For every variable of the four lists (outer inputs, inner inputs, inner
    outputs, outer outputs), the positions of the variables of the other
    three lists that belong to the same loop quantity.
``ScanArgs``
    One list per role and side (``outer_in_seqs``, ``inner_in_sit_sot``,
    ``inner_out_nit_sot``, ``outer_out_shared`` ...), editable, from which a
    new ``ScanInfo`` and the flat lists are rebuilt.

"Shared" in field names is PyTensor's historical name of the untraced
states (``untraced_sit_sot``): values such as random generators that only
keep their last value.
"""

from __future__ import annotations

import copy as _copy
from collections import namedtuple
from itertools import chain

from lucent.graph.basic import Variable
from lucent.graph.traversal import graph_inputs

#: Where a variable sits in a ``ScanArgs``: its field, the aggregate list
#: (``inner_inputs`` ...), its index in the field, its index inside a tap
#: group (nested fields only, else ``None``) and its index in the aggregate.
FieldInfo = namedtuple("FieldInfo", ("name", "agg_name", "index", "inner_index", "agg_index"))

_MAPPING_NAMES = [
    f"{to}_from_{frm}"
    for frm in ("outer_out", "outer_inp", "inner_inp", "inner_out")
    for to in ("outer_inp", "inner_inp", "inner_out", "outer_out")
    if to != frm
]


def io_mappings(info, n_inner_inputs):
    """The twelve position maps between a scan's outer/inner inputs/outputs.

    Keys read ``"<to>_from_<from>"`` with sides ``outer_inp``, ``inner_inp``,
    ``inner_out`` and ``outer_out``. Maps to an outer side give one index
    (``-1``: none); maps to an inner side give a list (a state has one inner
    input per tap). ``n_steps`` (outer input 0) is listed with no partners.
    """
    # One row per loop quantity: (outer input, inner inputs, inner outputs, outer output).
    rows = [(0, [], [], -1)]
    o_in, i_in, i_out, o_out = 1, 0, 0, 0
    for _ in range(info.n_seqs):
        rows.append((o_in, [i_in], [], -1))
        o_in, i_in = o_in + 1, i_in + 1
    n_mit_mot = info.n_mit_mot
    for k, taps in enumerate(chain(info.mit_mot_in_slices, info.mit_sot_in_slices, info.sit_sot_in_slices)):
        n_out_taps = len(info.mit_mot_out_slices[k]) if k < n_mit_mot else 1
        rows.append((o_in, list(range(i_in, i_in + len(taps))), list(range(i_out, i_out + n_out_taps)), o_out))
        o_in, i_in, i_out, o_out = o_in + 1, i_in + len(taps), i_out + n_out_taps, o_out + 1
    # Outer inputs put the untraced states before the nit_sot sizes, the
    # outputs put them after the nit_sots.
    o_nit = o_in + info.n_untraced_sit_sot
    for k in range(info.n_nit_sot):
        rows.append((o_nit + k, [], [i_out], o_out))
        i_out, o_out = i_out + 1, o_out + 1
    for _ in range(info.n_untraced_sit_sot):
        rows.append((o_in, [i_in], [i_out], o_out))
        o_in, i_in, i_out, o_out = o_in + 1, i_in + 1, i_out + 1, o_out + 1
    o_in += info.n_nit_sot
    for _ in range(n_inner_inputs - i_in):
        rows.append((o_in, [i_in], [], -1))
        o_in, i_in = o_in + 1, i_in + 1

    maps = {name: {} for name in _MAPPING_NAMES}
    for oi, iis, ios, oo in rows:
        if oo != -1:
            maps["outer_inp_from_outer_out"][oo] = oi
            maps["inner_inp_from_outer_out"][oo] = iis
            maps["inner_out_from_outer_out"][oo] = ios
        maps["inner_inp_from_outer_inp"][oi] = iis
        maps["inner_out_from_outer_inp"][oi] = ios
        maps["outer_out_from_outer_inp"][oi] = oo
        for i in iis:
            maps["outer_inp_from_inner_inp"][i] = oi
            maps["inner_out_from_inner_inp"][i] = ios
            maps["outer_out_from_inner_inp"][i] = oo
        for i in ios:
            maps["outer_inp_from_inner_out"][i] = oi
            maps["inner_inp_from_inner_out"][i] = iis
            maps["outer_out_from_inner_out"][i] = oo
    return maps


def _is_field(name):
    return name.startswith(("inner_in", "inner_out", "outer_in", "outer_out"))


_SLICE_FIELDS = ("mit_mot_out_slices", "mit_mot_in_slices", "mit_sot_in_slices")


def _take(seq, n):
    """The first ``n`` items of the iterator ``seq`` as a list."""
    return [next(seq) for _ in range(n)]


class ScanArgs:
    """The variables of a ``Scan`` node grouped by role, as editable lists.

    Fields (lists): ``outer_in_seqs``, ``outer_in_mit_mot``,
    ``outer_in_mit_sot``, ``outer_in_sit_sot``, ``outer_in_shared``,
    ``outer_in_nit_sot``, ``outer_in_non_seqs``; ``inner_in_seqs``,
    ``inner_in_mit_mot`` / ``inner_in_mit_sot`` (one list of tap inputs per
    state), ``inner_in_sit_sot``, ``inner_in_shared``, ``inner_in_non_seqs``;
    ``inner_out_mit_mot`` (one list per state), ``inner_out_mit_sot``,
    ``inner_out_sit_sot``, ``inner_out_nit_sot``, ``inner_out_shared``,
    ``cond`` (empty or the stopping condition); ``outer_out_*`` likewise;
    ``n_steps``; and the tap lists ``mit_mot_in_slices``,
    ``mit_mot_out_slices``, ``mit_sot_in_slices``. ``info`` and the
    aggregate lists (``outer_inputs`` ...) are recomputed from the fields,
    so editing the fields describes a new loop.
    """

    nested_list_fields = ("inner_in_mit_mot", "inner_in_mit_sot", "inner_out_mit_mot")

    @staticmethod
    def default_filter(name):
        return name.startswith(("inner_", "outer_"))

    def __init__(self, outer_inputs, outer_outputs, _inner_inputs, _inner_outputs, info):
        self.n_steps = outer_inputs[0]
        self.as_while = info.as_while
        inner_outputs = list(_inner_outputs)
        self.cond = [inner_outputs.pop()] if info.as_while else []

        ins = iter(_inner_inputs)
        self.inner_in_seqs = _take(ins, info.n_seqs)
        self.inner_in_mit_mot = [_take(ins, len(t)) for t in info.mit_mot_in_slices]
        self.inner_in_mit_sot = [_take(ins, len(t)) for t in info.mit_sot_in_slices]
        self.inner_in_sit_sot = _take(ins, info.n_sit_sot)
        self.inner_in_shared = _take(ins, info.n_untraced_sit_sot)
        self.inner_in_non_seqs = list(ins)
        if len(self.inner_in_non_seqs) != info.n_non_seqs:
            raise ValueError(
                f"ScanArgs: {info} describes {info.n_inner_inputs} inner inputs, got "
                f"{len(_inner_inputs)}"
            )

        outs = iter(outer_inputs[1:])
        self.outer_in_seqs = _take(outs, info.n_seqs)
        self.outer_in_mit_mot = _take(outs, info.n_mit_mot)
        self.outer_in_mit_sot = _take(outs, info.n_mit_sot)
        self.outer_in_sit_sot = _take(outs, info.n_sit_sot)
        self.outer_in_shared = _take(outs, info.n_untraced_sit_sot)
        self.outer_in_nit_sot = _take(outs, info.n_nit_sot)
        self.outer_in_non_seqs = list(outs)

        iouts = iter(inner_outputs)
        self.inner_out_mit_mot = [_take(iouts, len(t)) for t in info.mit_mot_out_slices]
        self.inner_out_mit_sot = _take(iouts, info.n_mit_sot)
        self.inner_out_sit_sot = _take(iouts, info.n_sit_sot)
        self.inner_out_nit_sot = _take(iouts, info.n_nit_sot)
        self.inner_out_shared = _take(iouts, info.n_untraced_sit_sot)

        oouts = iter(outer_outputs)
        self.outer_out_mit_mot = _take(oouts, info.n_mit_mot)
        self.outer_out_mit_sot = _take(oouts, info.n_mit_sot)
        self.outer_out_sit_sot = _take(oouts, info.n_sit_sot)
        self.outer_out_nit_sot = _take(oouts, info.n_nit_sot)
        self.outer_out_shared = _take(oouts, info.n_untraced_sit_sot)

        self.mit_mot_in_slices = [tuple(t) for t in info.mit_mot_in_slices]
        self.mit_mot_out_slices = [tuple(t) for t in info.mit_mot_out_slices]
        self.mit_sot_in_slices = [tuple(t) for t in info.mit_sot_in_slices]

    @staticmethod
    def from_node(node, clone=False):
        """The ``ScanArgs`` of a ``Scan`` node (of a copy of its inner graph with ``clone=True``)."""
        from lucent.scan.op import Scan

        if not isinstance(getattr(node, "op", None), Scan):
            raise TypeError(f"ScanArgs.from_node expects the node of a Scan, got {node}")
        if clone:
            fg = node.op.fgraph.clone()
            inner_in, inner_out = list(fg.inputs), list(fg.outputs)
        else:
            inner_in, inner_out = node.op.inner_inputs, node.op.inner_outputs
        return ScanArgs(node.inputs, node.outputs, inner_in, inner_out, node.op.info)

    @classmethod
    def create_empty(cls):
        """A ``ScanArgs`` with every field empty and a placeholder ``n_steps``."""
        from lucent.scan.op import ScanInfo
        from lucent.tensor.type import iscalar

        info = ScanInfo(
            n_seqs=0, mit_mot_in_slices=(), mit_mot_out_slices=(), mit_sot_in_slices=(),
            sit_sot_in_slices=(), n_nit_sot=0, n_untraced_sit_sot=0, n_non_seqs=0, as_while=False,
        )
        return cls([iscalar("n_steps")], [], [], [], info)

    # --- the layout recomputed from the fields ------------------------------
    @property
    def info(self):
        from lucent.scan.op import ScanInfo

        return ScanInfo(
            n_seqs=len(self.outer_in_seqs),
            mit_mot_in_slices=tuple(tuple(t) for t in self.mit_mot_in_slices),
            mit_mot_out_slices=tuple(tuple(t) for t in self.mit_mot_out_slices),
            mit_sot_in_slices=tuple(tuple(t) for t in self.mit_sot_in_slices),
            sit_sot_in_slices=((-1,),) * len(self.inner_in_sit_sot),
            n_nit_sot=len(self.outer_in_nit_sot),
            n_untraced_sit_sot=len(self.outer_in_shared),
            n_non_seqs=len(self.inner_in_non_seqs),
            as_while=self.as_while,
        )

    @property
    def n_nit_sot(self):
        return len(self.outer_in_nit_sot)

    @property
    def n_mit_mot(self):
        return len(self.outer_in_mit_mot)

    @property
    def inputs(self):
        """The inner inputs (the name ``Scan`` gives them)."""
        return self.inner_inputs

    @property
    def inner_inputs(self):
        return (
            self.inner_in_seqs
            + list(chain.from_iterable(self.inner_in_mit_mot))
            + list(chain.from_iterable(self.inner_in_mit_sot))
            + self.inner_in_sit_sot
            + self.inner_in_shared
            + self.inner_in_non_seqs
        )

    @property
    def outer_inputs(self):
        return [
            self.n_steps,
            *self.outer_in_seqs,
            *self.outer_in_mit_mot,
            *self.outer_in_mit_sot,
            *self.outer_in_sit_sot,
            *self.outer_in_shared,
            *self.outer_in_nit_sot,
            *self.outer_in_non_seqs,
        ]

    @property
    def inner_outputs(self):
        return (
            list(chain.from_iterable(self.inner_out_mit_mot))
            + self.inner_out_mit_sot
            + self.inner_out_sit_sot
            + self.inner_out_nit_sot
            + self.inner_out_shared
            + self.cond
        )

    @property
    def outer_outputs(self):
        return (
            self.outer_out_mit_mot
            + self.outer_out_mit_sot
            + self.outer_out_sit_sot
            + self.outer_out_nit_sot
            + self.outer_out_shared
        )

    @property
    def var_mappings(self):
        """``io_mappings`` of the current fields."""
        return io_mappings(self.info, len(self.inner_inputs))

    @property
    def field_names(self):
        names = list(_SLICE_FIELDS)
        names += [a for a in self.__dict__ if _is_field(a) or a == "n_steps"]
        return names

    # --- finding variables -------------------------------------------------
    def find_among_fields(self, i, field_filter=None):
        """The ``FieldInfo`` of variable ``i`` in the fields (``None`` if it is in none)."""
        field_filter = field_filter or self.default_filter
        for name in filter(field_filter, self.field_names):
            value = getattr(self, name)
            if not isinstance(value, list):
                continue
            agg_name = _aggregate_name(name)
            agg = getattr(self, agg_name, None) if agg_name else None
            if name in self.nested_list_fields:
                for n, group in enumerate(value):
                    if i in group:
                        k = group.index(i)
                        return FieldInfo(name, agg_name, n, k, _index(agg, i))
            elif i in value:
                return FieldInfo(name, agg_name, value.index(i), None, _index(agg, i))
        return None

    def get_alt_field(self, var_info, alt_prefix):
        """The variable playing ``var_info``'s role on another side.

        ``alt_prefix`` is ``"inner_in"``, ``"inner_out"``, ``"outer_in"`` or
        ``"outer_out"``; e.g. the ``inner_out`` of an ``outer_out_sit_sot``
        entry is the step's result for that state.
        """
        if alt_prefix not in ("inner_in", "inner_out", "outer_in", "outer_out"):
            raise ValueError(
                f"get_alt_field: alt_prefix must be inner_in, inner_out, outer_in or outer_out, "
                f"got {alt_prefix!r}"
            )
        info = var_info if isinstance(var_info, FieldInfo) else self.find_among_fields(var_info)
        if info is None:
            raise ValueError(f"get_alt_field: {var_info} is not among the fields of this ScanArgs")
        kind = info.name[info.name.index("_", info.name.index("_") + 1) + 1 :]
        return getattr(self, f"{alt_prefix}_{kind}")[info.index]

    def get_dependent_nodes(self, i, seen=None):
        """Every field variable that belongs to ``i``'s loop quantity or is computed from it."""
        seen = {i} if seen is None else seen | {i}
        info = self.find_among_fields(i)
        if info is None:
            raise ValueError(f"{i} is not among the fields of this ScanArgs")
        side = {"inner_inputs": "inner_inp", "inner_outputs": "inner_out",
                "outer_inputs": "outer_inp", "outer_outputs": "outer_out"}[info.agg_name]
        aggregates = {"inner_inp": self.inner_inputs, "inner_out": self.inner_outputs,
                      "outer_inp": self.outer_inputs, "outer_out": self.outer_outputs}
        found = set()
        for key, mapping in self.var_mappings.items():
            to, frm = key.split("_from_")
            if frm != side or info.agg_index not in mapping:
                continue
            idx = mapping[info.agg_index]
            for j in idx if isinstance(idx, list) else [idx]:
                if j >= 0 and aggregates[to][j] not in seen:
                    found.add(aggregates[to][j])
        if side == "inner_inp":
            for out in self.inner_outputs:
                if out not in seen and i in graph_inputs([out]):
                    found.add(out)
        for v in list(found):
            if v not in seen:
                more = self.get_dependent_nodes(v, seen)
                found |= more
                seen |= more | {v}
        return found

    # --- editing -----------------------------------------------------------
    def _remove_from_fields(self, i, field_filter=None):
        info = self.find_among_fields(i, field_filter)
        if info is None:
            return None
        field = getattr(self, info.name)
        if info.inner_index is None:
            del field[info.index]
        else:
            del field[info.index][info.inner_index]
            if not field[info.index]:
                del field[info.index]
        return info

    def remove_from_fields(self, i, rm_dependents=True):
        """Remove ``i`` (and with ``rm_dependents`` everything that depends on it).

        Returns ``[(variable, FieldInfo-or-None), ...]`` for what was removed.
        """
        todo = (self.get_dependent_nodes(i) | {i}) if rm_dependents else {i}
        return [(v, self._remove_from_fields(v)) for v in todo]

    def __copy__(self):
        res = object.__new__(type(self))
        res.__dict__.update(self.__dict__)
        for name, value in self.__dict__.items():
            if _is_field(name) or name in _SLICE_FIELDS:
                if name in self.nested_list_fields:
                    setattr(res, name, [list(g) for g in value])
                else:
                    setattr(res, name, _copy.copy(value))
        return res

    def merge(self, other):
        """A ``ScanArgs`` with ``other``'s variables appended to each of this one's fields."""
        res = _copy.copy(self)
        for name in self.__dict__:
            if _is_field(name) or name in _SLICE_FIELDS:
                getattr(res, name).extend(getattr(other, name))
        return res

    def __eq__(self, other):
        if not isinstance(other, ScanArgs):
            return False
        return all(getattr(self, n) == getattr(other, n, None) for n in self.field_names)

    __hash__ = None

    def __str__(self):
        lines = [f"{type(self).__name__}("]
        for name in self.field_names:
            lines.append(f"  {name}={_fmt(getattr(self, name))}")
        lines.append(")")
        return "\n".join(lines)

    def __repr__(self):
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.field_names)
        return f"{type(self).__name__}({fields})"


def _aggregate_name(field):
    for prefix, agg in (("inner_in", "inner_inputs"), ("inner_out", "inner_outputs"),
                        ("outer_in", "outer_inputs"), ("outer_out", "outer_outputs")):
        if field.startswith(prefix):
            return agg
    if field == "cond":
        return "inner_outputs"
    return None


def _index(lst, x):
    if lst is None:
        return None
    try:
        return lst.index(x)
    except ValueError:
        return None


def _fmt(value):
    if isinstance(value, Variable):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    return repr(value)


__all__ = ["FieldInfo", "ScanArgs", "io_mappings"]
