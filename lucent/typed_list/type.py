"""``TypedListType``: the type of Python lists whose elements all have one lucent Type.

A graph sometimes needs a variable number of arrays of one kind (the rows
a loop collected, matrices of different lengths) that cannot be stacked
into one tensor. A typed list holds them: its run-time value is a plain
Python ``list``, and every element is a valid value of ``ttype``. Lists
nest: ``TypedListType(ttype, depth=1)`` is a list of lists of ``ttype``.

The Type contract follows the elements: two list types are equal when
their element types are, values are (approximately) equal element by
element, and two lists may share memory when any of their elements may.
"""

from __future__ import annotations

from lucent.graph.type import Type


class TypedListType(Type):
    """A list of values of ``ttype`` (a list of such lists when ``depth > 0``)."""

    #: Read by the Numba linker: a graph holding a typed list runs on the Python linker.
    numba_unsupported = (
        "lucent has no Numba representation of typed lists (Python lists of arrays, possibly "
        "nested or empty)"
    )

    def __init__(self, ttype, depth=0):
        if not isinstance(depth, int) or depth < 0:
            raise ValueError(f"TypedListType: depth must be an int >= 0, got {depth!r}")
        if not isinstance(ttype, Type):
            raise TypeError(f"TypedListType expects a lucent Type for its elements, got {ttype!r}")
        self.ttype = ttype if depth == 0 else TypedListType(ttype, depth - 1)

    #: The element type (PyTensor calls it ``dtype`` too).
    dtype = property(lambda self: self.ttype)

    def get_depth(self):
        """How many list levels are below this one (0 for a list of non-lists)."""
        if isinstance(self.ttype, TypedListType):
            return self.ttype.get_depth() + 1
        return 0

    # --- run-time values ---------------------------------------------------
    def filter(self, x, strict=False, allow_downcast=None):
        """``x`` as a list of valid ``ttype`` values.

        ``strict`` accepts only a Python ``list`` whose elements are already
        valid values; otherwise any iterable is taken and each element is
        filtered (converted) by ``ttype``.
        """
        if strict:
            if not isinstance(x, list):
                raise TypeError(f"{self} expected a Python list, got {type(x).__name__}")
            for k, item in enumerate(x):
                if not self.ttype.is_valid_value(item, strict=True):
                    raise TypeError(f"{self}: element {k} is not a valid {self.ttype} value: {item!r}")
            return x
        try:
            items = list(x)
        except TypeError:
            raise TypeError(f"{self} expected a list, got {type(x).__name__} {x!r}") from None
        out = []
        for k, item in enumerate(items):
            try:
                out.append(self.ttype.filter(item, strict=False, allow_downcast=allow_downcast))
            except (TypeError, ValueError) as e:
                raise TypeError(f"{self}: element {k} is not a valid {self.ttype} value ({e})") from e
        return out

    def values_eq(self, a, b):
        return len(a) == len(b) and all(self.ttype.values_eq(x, y) for x, y in zip(a, b))

    def values_eq_approx(self, a, b):
        return len(a) == len(b) and all(self.ttype.values_eq_approx(x, y) for x, y in zip(a, b))

    def may_share_memory(self, a, b):
        """True when the lists are one object or an element of one may share memory with the other.

        Either argument may also be a single element (a value of ``ttype``).
        """
        if a is b:
            return True
        a = a if isinstance(a, list) else [a]
        b = b if isinstance(b, list) else [b]
        return any(self.ttype.may_share_memory(x, y) for x in a for y in b)

    def get_shape_info(self, obj):
        return [self.ttype.get_shape_info(item) for item in obj]

    def get_size(self, shape_info):
        return sum(self.ttype.get_size(info) for info in shape_info)

    # --- types -------------------------------------------------------------
    def __eq__(self, other):
        return type(self) is type(other) and self.ttype == other.ttype

    def __hash__(self):
        return hash((type(self), self.ttype))

    def __str__(self):
        return f"TypedList <{self.ttype}>"

    def __repr__(self):
        return f"TypedListType({self.ttype!r})"

    def clone(self, ttype=None, depth=0):
        return type(self)(self.ttype if ttype is None else ttype, depth)


__all__ = ["TypedListType"]
