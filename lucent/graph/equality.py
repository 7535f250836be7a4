"""Do two graphs compute the same thing? ``equal_computations``.

Variables are hashed by identity (a graph is a web of objects), so ``x == y``
cannot say whether two *expressions* are the same. Rewrites and tests need
exactly that: "is ``f(a, b)`` built here the same computation as the one
built there?". Two expressions are equal when they apply equal ops, in the
same order, to inputs that are equal in turn, down to leaves that are the
same variable, equal constants, or pairs declared equivalent by the caller.
"""

from __future__ import annotations


def _array_equal(a, b):
    import numpy as np

    try:
        return bool(np.array_equal(a, b, equal_nan=True))
    except TypeError:  # data numpy cannot compare for NaNs (objects, strings)
        return bool(np.array_equal(a, b))


def equal_computations(xs, ys, in_xs=None, in_ys=None, strict_dtype=True):
    """True if each ``xs[k]`` computes the same as ``ys[k]``.

    ``xs`` and ``ys`` hold Variables, or plain values (numbers, arrays) that
    are equal to a Constant with equal data. ``in_xs[i]`` and ``in_ys[i]``
    are declared equivalent (for comparing graphs over different inputs);
    they must have types of the same class. With ``strict_dtype=False``
    constants with equal values but different dtypes count as equal.

    Raises ``ValueError`` when ``xs`` and ``ys`` differ in length.
    """
    from lucent.graph.basic import Constant, Variable

    xs, ys = list(xs), list(ys)
    if len(xs) != len(ys):
        raise ValueError(
            f"equal_computations needs as many graphs on each side, got {len(xs)} and {len(ys)}"
        )
    in_xs = list(in_xs or ())
    in_ys = list(in_ys or ())
    if len(in_xs) != len(in_ys):
        return False
    for a, b in zip(in_xs, in_ys):
        if not b.type.in_same_class(a.type):
            return False
    common = set(zip(in_xs, in_ys))
    declared = set(in_xs)

    pending = []
    for x, y in zip(xs, ys):
        x_var, y_var = isinstance(x, Variable), isinstance(y, Variable)
        if not x_var and not y_var:
            if not _array_equal(x, y):
                return False
            continue
        if not x_var:
            if not (isinstance(y, Constant) and _array_equal(y.data, x)):
                return False
            continue
        if not y_var:
            if not (isinstance(x, Constant) and _array_equal(x.data, y)):
                return False
            continue
        if x not in declared and not y.type.in_same_class(x.type):
            return False
        pending.append((x, y))

    checked = set()
    while pending:
        pair = pending.pop()
        if pair in checked or pair in common:
            continue
        checked.add(pair)
        dx, dy = pair
        if dx is dy:
            continue
        if (dx.owner is None) != (dy.owner is None):
            return False
        if dx.owner is None:
            if isinstance(dx, Constant) and isinstance(dy, Constant):
                if dx.equals(dy):
                    continue
                if not strict_dtype and _array_equal(dx.data, dy.data):
                    continue
                return False
            if dx != dy:
                return False
            continue
        nx, ny = dx.owner, dy.owner
        if nx.outputs.index(dx) != ny.outputs.index(dy):
            return False
        if nx is ny:
            continue
        if (
            nx.op != ny.op
            or len(nx.inputs) != len(ny.inputs)
            or len(nx.outputs) != len(ny.outputs)
        ):
            return False
        pending.extend(zip(nx.inputs, ny.inputs))
    return True


__all__ = ["equal_computations"]
