"""The ops on typed lists: build, read, grow, shrink, search.

Each op mirrors a method of Python's ``list`` (``append``, ``extend``,
``insert``, ``remove``, ``reverse``, ``index``, ``count``, ``len``,
indexing) on a ``TypedListType`` variable, so a graph can keep a variable
number of arrays. A list variable has the methods too (``l.append(x)``,
``l[0]``, ``l.length()``; ``l.ind(x)`` for ``index``, whose name
``Variable`` already uses).

Values are Python lists. The ops that build a new list (``append`` and the
others with ``inplace=False``) return a new list object holding the input
list's elements, so the output is declared a view of the input list
(``view_map``); the elements they add are copied, so the list never aliases
an input array it did not get from the input list. The in-place variants
(``inplace=True``, put in by the ``typed_list_inplace_rewrite`` rewrite)
change the input list itself (``destroy_map``).

Elements are compared with the element type's ``values_eq`` (so arrays are
compared by value, which ``list.index`` / ``list.remove`` cannot do).
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply, Constant, Variable
from lucent.graph.op import Op
from lucent.tensor.basic import as_tensor_variable, constant
from lucent.tensor.type import lscalar
from lucent.tensor.type_other import SliceType, as_symbolic_slice
from lucent.tensor.variable import TensorVariable
from lucent.typed_list.type import TypedListType


class _typed_list_py_operators:
    """The ``list``-like methods of typed list variables."""

    def __len__(self):
        raise TypeError(
            "Cannot call len() on a symbolic TypedList. Use `.length()` method instead for the symbolic equivalent."
        )

    def __getitem__(self, index):
        return getitem(self, index)

    def append(self, toAppend):
        return append(self, toAppend)

    def extend(self, toAppend):
        return extend(self, toAppend)

    def insert(self, index, toInsert):
        return insert(self, index, toInsert)

    def remove(self, toRemove):
        return remove(self, toRemove)

    def reverse(self):
        return reverse(self)

    def count(self, elem):
        return count(self, elem)

    def ind(self, elem):
        """The position of the first element equal to ``elem`` (``list.index``)."""
        return index_(self, elem)

    def length(self):
        return length(self)

    ttype = property(lambda self: self.type.ttype)


class TypedListVariable(_typed_list_py_operators, Variable):
    """A symbolic typed list (see ``_typed_list_py_operators`` for its methods)."""


class TypedListConstant(_typed_list_py_operators, Constant):
    """A constant typed list."""


TypedListType.variable_type = TypedListVariable
TypedListType.constant_type = TypedListConstant


def _copy(value):
    """A copy of a list element, so a list built by an op owns what it adds."""
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.copy()
    copy = getattr(value, "copy", None)
    return copy() if callable(copy) else value


def _check_list(op, x):
    if not isinstance(getattr(x, "type", None), TypedListType):
        raise TypeError(f"{op} expects a TypedList variable as its first input, got {x!r}")


def _as_element(op, x, elem, what="element"):
    """``elem`` as a variable of ``x``'s element type (Python values become constants)."""
    if not isinstance(elem, Variable):
        try:
            elem = x.ttype.filter_variable(elem)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{op}: cannot use {elem!r} as an {what} of {x.type} ({e})") from e
    if elem.type != x.ttype:
        raise TypeError(f"{op}: the {what} has type {elem.type}, but the list holds {x.ttype}")
    return elem


def _as_index(op, index):
    """A 0-d int64 tensor (an int or an integer scalar variable)."""
    if not isinstance(index, Variable):
        if not isinstance(index, (int, np.integer)) or isinstance(index, bool):
            raise TypeError(f"{op}: the index must be an int or a 0-d int64 tensor, got {index!r}")
        return constant(index, ndim=0, dtype="int64")
    if not (isinstance(index, TensorVariable) and index.type.ndim == 0 and index.type.dtype in ("int64", "int32", "int16", "int8")):
        raise TypeError(f"{op}: the index must be a 0-d integer tensor, got {index} of type {index.type}")
    if index.type.dtype != "int64":
        from lucent.tensor.basic import cast

        index = cast(index, "int64")
    return index


class _ListOp(Op):
    __props__ = ()

    def __str__(self):
        return type(self).__name__


class _ModifyingOp(_ListOp):
    """An op returning a changed copy of its input list, or (``inplace``) the changed list itself."""

    __props__ = ("inplace",)

    def __init__(self, inplace=False):
        self.inplace = bool(inplace)
        if self.inplace:
            self.destroy_map = {0: [0]}
        else:
            self.view_map = {0: [0]}

    def _start(self, x):
        return x if self.inplace else list(x)


class GetItem(_ListOp):
    """``x[index]``: one element (an integer index) or a sub-list (a slice, constant or
    a ``SliceType`` variable)."""

    view_map = {0: [0]}

    def make_node(self, x, index):
        _check_list(self, x)
        if isinstance(index, slice):
            index = as_symbolic_slice(index)
        if isinstance(index, Variable) and isinstance(index.type, SliceType):
            return Apply(self, [x, index], [x.type()])
        index = _as_index(self, index)
        return Apply(self, [x, index], [x.ttype()])

    def perform(self, node, inputs, outputs):
        x, index = inputs
        if not isinstance(index, slice):
            index = int(index)
            if not -len(x) <= index < len(x):
                raise IndexError(f"GetItem: index {index} is out of range for a list of length {len(x)}")
        outputs[0][0] = x[index]


getitem = GetItem()


class Append(_ModifyingOp):
    """``x`` with ``toAppend`` added at the end."""

    def make_node(self, x, toAppend):
        _check_list(self, x)
        toAppend = _as_element(self, x, toAppend)
        return Apply(self, [x, toAppend], [x.type()])

    def perform(self, node, inputs, outputs):
        x, toAppend = inputs
        out = self._start(x)
        out.append(_copy(toAppend))
        outputs[0][0] = out


append = Append()


class Extend(_ModifyingOp):
    """``x`` followed by the elements of the list ``toAppend``."""

    def make_node(self, x, toAppend):
        _check_list(self, x)
        if not isinstance(toAppend, Variable):
            toAppend = x.type.filter_variable(toAppend)
        if not x.type.is_super(toAppend.type):
            raise TypeError(f"Extend: cannot extend a {x.type} with a {toAppend.type}")
        return Apply(self, [x, toAppend], [x.type()])

    def perform(self, node, inputs, outputs):
        x, toAppend = inputs
        added = [_copy(v) for v in toAppend]  # before x changes: toAppend may be x itself
        out = self._start(x)
        out.extend(added)
        outputs[0][0] = out


extend = Extend()


class Insert(_ModifyingOp):
    """``x`` with ``toInsert`` inserted before position ``index`` (``list.insert``)."""

    def make_node(self, x, index, toInsert):
        _check_list(self, x)
        index = _as_index(self, index)
        toInsert = _as_element(self, x, toInsert)
        return Apply(self, [x, index, toInsert], [x.type()])

    def perform(self, node, inputs, outputs):
        x, index, toInsert = inputs
        out = self._start(x)
        out.insert(int(index), _copy(toInsert))
        outputs[0][0] = out


insert = Insert()


class Remove(_ModifyingOp):
    """``x`` without its first element equal to ``toRemove``; ``ValueError`` if there is none."""

    def make_node(self, x, toRemove):
        _check_list(self, x)
        toRemove = _as_element(self, x, toRemove)
        return Apply(self, [x, toRemove], [x.type()])

    def perform(self, node, inputs, outputs):
        x, toRemove = inputs
        equal = node.inputs[0].type.ttype.values_eq
        position = next((k for k, v in enumerate(x) if equal(v, toRemove)), None)
        if position is None:
            raise ValueError("Remove: the element to remove is not in the list")
        out = self._start(x)
        del out[position]
        outputs[0][0] = out


remove = Remove()


class Reverse(_ModifyingOp):
    """``x`` in reverse order."""

    def make_node(self, x):
        _check_list(self, x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, outputs):
        out = self._start(inputs[0])
        out.reverse()
        outputs[0][0] = out


reverse = Reverse()


class Index(_ListOp):
    """The position (int64) of the first element of ``x`` equal to ``elem``; ``ValueError`` if none."""

    def make_node(self, x, elem):
        _check_list(self, x)
        elem = _as_element(self, x, elem)
        return Apply(self, [x, elem], [lscalar()])

    def perform(self, node, inputs, outputs):
        x, elem = inputs
        equal = node.inputs[0].type.ttype.values_eq
        position = next((k for k, v in enumerate(x) if equal(v, elem)), None)
        if position is None:
            raise ValueError("Index: the element is not in the list")
        outputs[0][0] = np.asarray(position, dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]


index_ = Index()


class Count(_ListOp):
    """How many elements of ``x`` equal ``elem`` (int64)."""

    def make_node(self, x, elem):
        _check_list(self, x)
        elem = _as_element(self, x, elem)
        return Apply(self, [x, elem], [lscalar()])

    def perform(self, node, inputs, outputs):
        x, elem = inputs
        equal = node.inputs[0].type.ttype.values_eq
        outputs[0][0] = np.asarray(sum(1 for v in x if equal(v, elem)), dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]


count = Count()


class Length(_ListOp):
    """The number of elements of ``x`` (int64)."""

    def make_node(self, x):
        _check_list(self, x)
        return Apply(self, [x], [lscalar()])

    def perform(self, node, inputs, outputs):
        outputs[0][0] = np.asarray(len(inputs[0]), dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]


length = Length()


class MakeList(_ListOp):
    """A typed list of the given variables (all of one type; values are copied)."""

    def make_node(self, a):
        if not isinstance(a, (list, tuple)):
            raise TypeError(f"MakeList expects a list or tuple of variables, got {type(a).__name__}")
        if not a:
            raise ValueError("MakeList needs at least one element to know the list's element type")
        elems = [e if isinstance(e, Variable) else as_tensor_variable(e) for e in a]
        first = elems[0].type
        for k, e in enumerate(elems):
            if not first.is_super(e.type):
                raise TypeError(
                    f"MakeList needs all elements to have the same type: element 0 is {first}, "
                    f"element {k} is {e.type}"
                )
        return Apply(self, elems, [TypedListType(first)()])

    def perform(self, node, inputs, outputs):
        outputs[0][0] = [_copy(v) for v in inputs]


make_list = MakeList()


__all__ = [
    "TypedListVariable", "TypedListConstant", "GetItem", "getitem", "Append", "append",
    "Extend", "extend", "Insert", "insert", "Remove", "remove", "Reverse", "reverse",
    "Index", "index_", "Count", "count", "Length", "length", "MakeList", "make_list",
]
