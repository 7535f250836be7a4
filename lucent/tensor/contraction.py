"""Contractions computed as matrix products: ``tensordot`` and ``_general_dot``.

A contraction of two tensors over some paired axes, batched over others,
is one matrix product once each operand is transposed to ``(batch, free,
contracted)`` / ``(batch, contracted, free)`` and each group of axes is
folded into one (a reshape, needed only for groups of two or more axes).
Without batch axes that product is ``dot`` (a BLAS call on the fast path),
with them ``matmul``; with nothing to contract it is an element-wise outer
product. ``einsum`` (``lucent.tensor.einsum``) builds each of its steps
this way, and ``tensordot`` is PyTensor's ``pytensor.tensor.math.tensordot``.
"""

from __future__ import annotations

import numpy as np


def _length(var, d):
    """Length of axis ``d`` of ``var``: an int where the type knows it, else a symbolic scalar."""
    s = var.type.shape[d]
    return s if s is not None else var.shape[d]


def _size(var, dims):
    """Product of the lengths of ``dims`` (an int when all are static)."""
    known, unknown = 1, None
    for d in dims:
        s = _length(var, d)
        if isinstance(s, int):
            known *= s
        else:
            unknown = s if unknown is None else unknown * s
    if unknown is None:
        return known
    return unknown if known == 1 else unknown * known


def _shuffle(v, *order):
    """``v.dimshuffle(*order)``, or ``v`` itself when that changes nothing."""
    return v if list(order) == list(range(v.type.ndim)) else v.dimshuffle(*order)


def _as_matrix_stack(v, batch, first, second, drop_empty):
    """``v`` transposed to ``(batch, first, second)`` with each group of axes folded into one.

    An empty group becomes a length-1 axis, except where ``drop_empty``
    (one flag per group) says to leave it out: without batch axes, ``dot``
    then computes a matrix-vector or vector-vector product. Only a group of
    two or more axes needs a reshape; otherwise a dimshuffle does.
    """
    from lucent.tensor.shape import reshape

    t = _shuffle(v, *batch, *first, *second)
    groups = list(zip((first, second), drop_empty))
    if len(first) > 1 or len(second) > 1:
        lengths = [_length(v, d) for d in batch] + [_size(v, g) for g, drop in groups if g or not drop]
        return reshape(t, lengths, ndim=len(lengths))
    order = list(range(len(batch)))
    k = len(batch)
    for group, drop in groups:
        if group:
            order.append(k)
            k += 1
        elif not drop:
            order.append("x")
    return _shuffle(t, *order)


def _check_contracted_lengths(x, xc, y, yc):
    """``x``, with a run-time check that paired contracted axes of unknown length agree.

    Folding several contracted axes into one would hide a mismatch whose
    products agree (2x3 against 3x2); the matrix product itself checks the
    folded length, so the check is needed from the second unknown pair on.
    """
    from lucent.raise_op import Assert
    from lucent.tensor.math import eq

    unknown = 0
    for i, j in zip(xc, yc):
        if x.type.shape[i] is None or y.type.shape[j] is None:
            if unknown:
                x = Assert("Input array shape along reduced axes of tensordot are not equal")(
                    x, eq(x.shape[i], y.shape[j])
                )
            unknown += 1
    return x


def _product(x, xb, xf, xc, y, yb, yc, yf):
    """Sum over the paired axes ``xc`` / ``yc`` of ``x * y``, batched over ``xb`` / ``yb``.

    The result has the (broadcast) batch axes, then ``x``'s free axes
    ``xf``, then ``y``'s ``yf``. With contracted axes it is one ``dot``
    (no batch axes) or ``matmul`` (batch axes) of the operands folded into
    matrices; without, an element-wise product.
    """
    from lucent.tensor.math import dot, matmul
    from lucent.tensor.shape import reshape

    nb = max(len(xb), len(yb))
    x = _check_contracted_lengths(x, xc, y, yc)
    if not xc:
        # Nothing to contract: an outer product, batched.
        xs = _shuffle(x, *(["x"] * (nb - len(xb))), *xb, *xf, *(["x"] * len(yf)))
        ys = _shuffle(y, *(["x"] * (nb - len(yb))), *yb, *(["x"] * len(xf)), *yf)
        return xs * ys
    if nb == 0:
        xm = _as_matrix_stack(x, (), xf, xc, (True, False))
        ym = _as_matrix_stack(y, (), yc, yf, (False, True))
        out = dot(xm, ym)
    else:
        xm = _as_matrix_stack(x, xb, xf, xc, (False, False))
        ym = _as_matrix_stack(y, yb, yc, yf, (False, False))
        xm = _shuffle(xm, *(["x"] * (nb - len(xb))), *range(xm.type.ndim))
        ym = _shuffle(ym, *(["x"] * (nb - len(yb))), *range(ym.type.ndim))
        out = matmul(xm, ym)
    if len(xf) > 1 or len(yf) > 1:
        lengths = [_length(out, d) for d in range(nb)] + [_length(x, d) for d in xf] + [_length(y, d) for d in yf]
        return reshape(out, lengths, ndim=len(lengths))
    if nb:
        # Drop the length-1 axes standing for empty free groups.
        keep = list(range(nb)) + ([nb] if xf else []) + ([nb + 1] if yf else [])
        out = _shuffle(out, *keep)
    return out


def _normalize_axes(axes, ndim, what):
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"{what}: axis {a} is out of range for an operand with {ndim} dimensions")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{what}: repeated axis in {tuple(axes)}")
    return out


def tensordot(a, b, axes=2):
    """``numpy.tensordot``: sum the products over ``axes`` of ``a`` and ``b``.

    ``axes`` is an integer ``N`` (the last ``N`` axes of ``a`` with the
    first ``N`` of ``b``) or a pair of axis sequences. Computed as one
    matrix product of the operands transposed and folded into matrices
    (an element-wise outer product when nothing is contracted).
    """
    from lucent.tensor.basic import as_tensor_variable

    a, b = as_tensor_variable(a), as_tensor_variable(b)
    na, nb = a.type.ndim, b.type.ndim
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > na or n > nb:
            raise ValueError(f"tensordot: axes={n} does not fit inputs of {na} and {nb} dimensions")
        axes_a, axes_b = list(range(na - n, na)), list(range(n))
    else:
        try:
            axes_a, axes_b = axes
        except (TypeError, ValueError):
            raise ValueError(f"tensordot: axes must be an integer or a pair of axis lists, got {axes!r}") from None
        axes_a = [axes_a] if isinstance(axes_a, (int, np.integer)) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, (int, np.integer)) else list(axes_b)
        if len(axes_a) != len(axes_b):
            raise ValueError(f"tensordot: the axes lists must have the same length, got {axes_a} and {axes_b}")
        axes_a = _normalize_axes(axes_a, na, "tensordot")
        axes_b = _normalize_axes(axes_b, nb, "tensordot")
    for x, y in zip(axes_a, axes_b):
        sa, sb = a.type.shape[x], b.type.shape[y]
        if sa is not None and sb is not None and sa != sb:
            raise ValueError(
                "Input arrays have inconsistent type shape along the axes that are to be reduced with "
                f"tensordot: axis {x} of a has length {sa}, axis {y} of b has length {sb}"
            )
    free_a = [d for d in range(na) if d not in axes_a]
    free_b = [d for d in range(nb) if d not in axes_b]
    return _product(a, [], free_a, axes_a, b, [], axes_b, free_b)


def _general_dot(vars, axes, batch_axes):
    """``tensordot`` of two tensors, each with its own batch axes.

    ``axes`` are the contracted axes of each operand and ``batch_axes`` the
    axes that are batch dimensions (positions in the operand; they are
    broadcast against each other like NumPy's leading dimensions). The
    result has the broadcast batch dimensions first, then the free axes of
    the first operand, then those of the second. Computed as one batched
    matrix product (``matmul``) of the operands transposed to
    ``(batch, free, contracted)`` / ``(batch, contracted, free)`` and folded
    into stacks of matrices; no ``Blockwise`` is involved.
    """
    from lucent.tensor.basic import as_tensor_variable

    x, y = (as_tensor_variable(v) for v in vars)
    if not batch_axes[0] and not batch_axes[1]:
        return tensordot(x, y, axes=[list(axes[0]), list(axes[1])])
    xa = _normalize_axes(axes[0], x.type.ndim, "_general_dot")
    ya = _normalize_axes(axes[1], y.type.ndim, "_general_dot")
    xb = _normalize_axes(batch_axes[0], x.type.ndim, "_general_dot")
    yb = _normalize_axes(batch_axes[1], y.type.ndim, "_general_dot")
    if len(xa) != len(ya):
        raise ValueError(f"_general_dot: {len(xa)} contracted axes for the first operand, {len(ya)} for the second")
    if set(xa) & set(xb) or set(ya) & set(yb):
        raise ValueError("_general_dot: an axis cannot be both contracted and a batch axis")
    for i, j in zip(xa, ya):
        if x.type.shape[i] is not None and y.type.shape[j] is not None and x.type.shape[i] != y.type.shape[j]:
            raise ValueError(
                f"_general_dot: contracted axis {i} of the first operand has length {x.type.shape[i]}, "
                f"axis {j} of the second {y.type.shape[j]}"
            )
    xf = [d for d in range(x.type.ndim) if d not in xa and d not in xb]
    yf = [d for d in range(y.type.ndim) if d not in ya and d not in yb]
    return _product(x, xb, xf, xa, y, yb, ya, yf)


__all__ = ["tensordot"]
