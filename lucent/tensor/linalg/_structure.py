"""Triangles and diagonals of a matrix, built from existing element-wise ops.

The gradients of the factorisations and the structured ``solve`` variants
need ``tril`` / ``triu`` / the diagonal, of the last two axes (so they also
serve stacks of matrices). Expressed as a ``switch`` on an
index comparison (and a masked sum for the diagonal), they need no op of
their own, and their gradients come for free.
"""

from __future__ import annotations


def _index_grid(x):
    from lucent.tensor.creation import arange

    # The last two axes: the grid broadcasts over any leading (batch) axes.
    rows = arange(x.shape[-2]).dimshuffle(0, "x")
    cols = arange(x.shape[-1]).dimshuffle("x", 0)
    return rows, cols


def lower_triangle(x):
    """``numpy.tril(x)`` of a matrix variable (entries above the diagonal zeroed)."""
    from lucent.tensor.math import ge, switch

    rows, cols = _index_grid(x)
    return switch(ge(rows, cols), x, 0)


def upper_triangle(x):
    """``numpy.triu(x)`` of a matrix variable (entries below the diagonal zeroed)."""
    from lucent.tensor.math import le, switch

    rows, cols = _index_grid(x)
    return switch(le(rows, cols), x, 0)


def diagonal_part(x):
    """The matrix with only the diagonal of ``x`` kept (``diag(diagonal(x))``)."""
    from lucent.tensor.math import eq, switch

    rows, cols = _index_grid(x)
    return switch(eq(rows, cols), x, 0)


def diagonal_vector(x):
    """``numpy.diagonal(x, axis1=-2, axis2=-1)`` of square matrices, as vectors."""
    return diagonal_part(x).sum(axis=-1)
