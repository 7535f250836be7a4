"""Moving axes around and assembling arrays from pieces, by composition.

Nothing here is a new Op: swapping or moving axes is a ``DimShuffle``,
``stacklists`` is nested ``stack`` calls, and ``mgrid`` / ``ogrid`` are
``arange``s reshaped (and broadcast against each other for ``mgrid``). So
each of them has a gradient, a shape and a Numba kernel through the ops it
is made of.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lucent.tensor.basic import as_tensor_variable, stack
from lucent.tensor.creation import arange


def _normalize_axes(axes, ndim, argname):
    """``axes`` (an int or a sequence of ints) as a tuple of non-negative axes."""
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool):
        axes = (axes,)
    elif not isinstance(axes, Sequence) or isinstance(axes, str):
        raise TypeError(f"{argname} must be an int or a sequence of ints, got {axes!r}")
    out = []
    for axis in axes:
        if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
            raise TypeError(f"{argname} must contain ints, got {axis!r}")
        if not -ndim <= axis < ndim:
            raise np.exceptions.AxisError(
                f"{argname}: axis {axis} is out of bounds for a tensor of dimension {ndim}"
            )
        out.append(int(axis) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in `{argname}` argument: {tuple(axes)!r}")
    return tuple(out)


def swapaxes(y, axis1, axis2):
    """``y`` with axes ``axis1`` and ``axis2`` exchanged (``numpy.swapaxes``)."""
    y = as_tensor_variable(y)
    (a,) = _normalize_axes(axis1, y.type.ndim, "axis1")
    (b,) = _normalize_axes(axis2, y.type.ndim, "axis2")
    order = list(range(y.type.ndim))
    order[a], order[b] = order[b], order[a]
    return y.dimshuffle(order)


def moveaxis(a, source, destination):
    """``a`` with the axes ``source`` moved to positions ``destination`` (``numpy.moveaxis``)."""
    a = as_tensor_variable(a)
    ndim = a.type.ndim
    source = _normalize_axes(source, ndim, "source")
    destination = _normalize_axes(destination, ndim, "destination")
    if len(source) != len(destination):
        raise ValueError(
            "`source` and `destination` arguments must have the same number of elements, got "
            f"{len(source)} and {len(destination)}"
        )
    if source == destination:
        return a
    order = [d for d in range(ndim) if d not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return a.dimshuffle(order)


def stacklists(arg):
    """Nested lists of tensors (or numbers) stacked into one tensor of the same nesting.

    ``stacklists([[a, b], [c, d]])`` of scalars is a 2x2 matrix; of matrices,
    a ``(2, 2, m, n)`` tensor.
    """
    if isinstance(arg, (tuple, list)):
        return stack([stacklists(item) for item in arg])
    return arg


class _nd_grid:
    """``mgrid[0:5, 0:3]`` / ``ogrid[...]``: index grids like NumPy's, symbolic.

    ``mgrid`` gives dense grids (every output has the full shape); ``ogrid``
    gives open grids (each output varies along its own axis only and has
    length 1 elsewhere, to be broadcast). A single slice gives one ``arange``.
    Bounds may be symbolic scalars.
    """

    def __init__(self, sparse=False):
        self.sparse = sparse

    def __getitem__(self, key):
        if isinstance(key, slice):
            return self._range(key)
        if not isinstance(key, tuple) or not all(isinstance(k, slice) for k in key):
            raise TypeError(
                f"{'ogrid' if self.sparse else 'mgrid'}[...] takes slices such as [0:5, 0:3], got {key!r}"
            )
        ndim = len(key)
        ranges = []
        for j, sl in enumerate(key):
            r = self._range(sl)
            pattern = ["x"] * ndim
            pattern[j] = 0
            ranges.append(r.dimshuffle(pattern))
        if self.sparse:
            return ranges
        grids = []
        for i in range(ndim):
            grid = ranges[i]
            for j in range(ndim):
                if j != i:
                    grid = grid * ranges[j].ones_like()
            grids.append(grid)
        return grids

    @staticmethod
    def _range(sl):
        if isinstance(sl.step, complex) or isinstance(sl.start, complex) or isinstance(sl.stop, complex):
            raise NotImplementedError(
                "mgrid/ogrid: a complex step (a number of points, as in NumPy) is not supported; "
                "give a real step, e.g. [0:1:0.25]"
            )
        if sl.stop is None:
            raise ValueError("mgrid/ogrid: every slice needs a stop, as in [0:5]")
        return arange(
            sl.start if sl.start is not None else 0,
            sl.stop,
            sl.step if sl.step is not None else 1,
        )


mgrid = _nd_grid()
ogrid = _nd_grid(sparse=True)


__all__ = ["mgrid", "moveaxis", "ogrid", "stacklists", "swapaxes"]
