"""Tensor contractions: ``tensordot`` and ``einsum``.

Both are graphs of existing ops (transposes, reshapes, products,
element-wise multiplication and sums), so their gradients and kernels
are those ops'.

``einsum`` contracts its operands two at a time in the order
``numpy.einsum_path`` finds cheapest for the operands' static shapes
(``optimize=None`` or ``'greedy'`` / ``'optimal'``; an unknown length
counts as 8): each step multiplies the two operands with their indices
aligned by broadcasting and sums out the indices no later operand or the
output needs. Repeated indices within one operand take its diagonal
first; ``...`` stands for the leading dimensions, broadcast like NumPy.
"""

from __future__ import annotations

import string

import numpy as np


def tensordot(a, b, axes=2):
    """``numpy.tensordot``: sum the products over ``axes`` of ``a`` and ``b``.

    ``axes`` is an integer ``N`` (the last ``N`` axes of ``a`` with the
    first ``N`` of ``b``) or a pair of axis sequences. Computed as one
    matrix product of reshaped operands.
    """
    from lucent.tensor.basic import as_tensor_variable
    from lucent.tensor.creation import make_vector
    from lucent.tensor.math import dot, prod
    from lucent.tensor.shape import reshape

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
        axes_a = [int(x) + na if x < 0 else int(x) for x in axes_a]
        axes_b = [int(x) + nb if x < 0 else int(x) for x in axes_b]
    for x, y in zip(axes_a, axes_b):
        sa, sb = a.type.shape[x], b.type.shape[y]
        if sa is not None and sb is not None and sa != sb:
            raise ValueError(f"tensordot: shape mismatch for sum, axis {x} of a has length {sa}, axis {y} of b {sb}")
    free_a = [d for d in range(na) if d not in axes_a]
    free_b = [d for d in range(nb) if d not in axes_b]

    def size(var, dims):
        return prod(make_vector(*[var.shape[d] for d in dims], dtype="int64")) if dims else 1

    a2 = reshape(a.transpose(free_a + axes_a), make_vector(size(a, free_a), size(a, axes_a), dtype="int64"), ndim=2)
    b2 = reshape(b.transpose(axes_b + free_b), make_vector(size(b, axes_b), size(b, free_b), dtype="int64"), ndim=2)
    out_shape = [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b]
    product = dot(a2, b2)
    if not out_shape:
        return reshape(product, (), ndim=0)
    return reshape(product, make_vector(*out_shape, dtype="int64"), ndim=len(out_shape))


def _parse(subscripts, operands):
    """Operand index strings (``...`` expanded to fresh letters) and the output's."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        lhs, out = subscripts.split("->")
    else:
        lhs, out = subscripts, None
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum: {len(terms)} operand subscripts for {len(operands)} operands in {subscripts!r}")
    used = set(c for c in subscripts if c.isalpha())
    for c in subscripts:
        if not (c.isalpha() or c in ",.->"):
            raise ValueError(f"einsum: invalid character {c!r} in subscripts {subscripts!r}")
    fresh = [c for c in string.ascii_letters if c not in used]
    ell_ndim = 0
    for term, op in zip(terms, operands):
        if "..." in term:
            ell_ndim = max(ell_ndim, op.type.ndim - len(term.replace("...", "")))
    ell = "".join(fresh[:ell_ndim])
    expanded = []
    for term, op in zip(terms, operands):
        if "..." in term:
            n = op.type.ndim - len(term.replace("...", ""))
            term = term.replace("...", ell[ell_ndim - n:] if n else "")
        if len(term) != op.type.ndim:
            raise ValueError(f"einsum: subscripts {term!r} do not match an operand with {op.type.ndim} dimensions")
        expanded.append(term)
    if out is None:
        counts = {}
        for term in expanded:
            for c in term:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
        present = set("".join(expanded))
        for c in out:
            if c not in present:
                raise ValueError(f"einsum: output index {c!r} appears in no operand")
    return expanded, out


def _take_diagonals(x, term):
    """Operand ``x`` with each repeated index of ``term`` reduced to its diagonal."""
    from lucent.tensor.diagonal import diagonal

    while len(set(term)) != len(term):
        for i, c in enumerate(term):
            j = term.find(c, i + 1)
            if j >= 0:
                x = diagonal(x, axis1=i, axis2=j)  # the diagonal becomes the last axis
                term = term[:i] + term[i + 1:j] + term[j + 1:] + c
                break
    return x, term


def _align(x, term, target):
    """``x`` (indices ``term``) with its axes in ``target``'s order, length-1 axes for the missing ones."""
    order = [term.index(c) if c in term else "x" for c in target]
    return x.dimshuffle(*order)


def _path(expanded, out, operands, optimize):
    if len(operands) <= 2:
        return [(0, 1)] if len(operands) == 2 else []
    if optimize is False:
        return [(0, 1)] * (len(operands) - 1)
    how = "greedy" if optimize in (None, True) else optimize
    dummies = [np.empty([8 if s is None else s for s in op.type.shape], dtype="int8") for op in operands]
    path, _ = np.einsum_path(",".join(expanded) + "->" + out, *dummies, optimize=how)
    return [tuple(step) for step in path[1:]]


def _iota(shape, axis):
    """An integer tensor of ``shape`` holding each entry's index along ``axis``."""
    from lucent.tensor.basic import arange, as_tensor_variable, get_vector_length
    from lucent.tensor.extra_ops import broadcast_to

    shape = as_tensor_variable(shape)
    n = get_vector_length(shape)
    if not -n <= axis < n:
        raise ValueError(f"_iota: axis {axis} is out of range for a shape of length {n}")
    axis = axis % n
    values = arange(shape[axis])
    values = values.dimshuffle(*(["x"] * axis), 0, *(["x"] * (n - axis - 1)))
    return broadcast_to(values, [shape[k] for k in range(n)])


def _delta(shape, axes):
    """A boolean tensor of ``shape``: True where the indices along all of ``axes`` coincide.

    ``_delta((n, n), (0, 1))`` is the identity pattern; the dimensions not in
    ``axes`` are broadcast.
    """
    from lucent.tensor.basic import as_tensor_variable, get_vector_length, stack
    from lucent.tensor.extra_ops import broadcast_to
    from lucent.tensor.math import and_, eq

    if len(axes) < 2:
        raise ValueError("Need at least two axes to create a delta tensor")
    shape = as_tensor_variable(shape)
    n = get_vector_length(shape)
    axes = [a % n for a in axes]
    base = stack([shape[a] for a in axes])
    iotas = [_iota(base, k) for k in range(len(axes))]
    result = eq(iotas[0], iotas[1])
    for a, b in zip(iotas[1:], iotas[2:]):
        result = and_(result, eq(a, b))
    order = iter(range(len(axes)))
    pattern = [next(order) if d in axes else "x" for d in range(n)]
    if sorted(axes) != list(axes):
        # dimshuffle keeps the given order; put the delta's axes where they belong.
        ranks = {a: k for k, a in enumerate(axes)}
        pattern = [ranks[d] if d in axes else "x" for d in range(n)]
    return broadcast_to(result.dimshuffle(*pattern), [shape[k] for k in range(n)])


def _general_dot(vars, axes, batch_axes):
    """``tensordot`` of two tensors, each with its own batch axes.

    ``axes`` are the contracted axes of each operand and ``batch_axes`` the
    axes that are batch dimensions (positions in the operand; they are
    broadcast against each other like NumPy's leading dimensions). The
    result has the broadcast batch dimensions first, then the free axes of
    the first operand, then those of the second. Computed as one batched
    matrix product: each operand is transposed to ``(batch, free,
    contracted)`` / ``(batch, contracted, free)`` and reshaped to a stack of
    matrices.
    """
    from lucent.tensor.basic import as_tensor_variable, concatenate
    from lucent.tensor.math import matmul, prod
    from lucent.tensor.shape import reshape

    x, y = (as_tensor_variable(v) for v in vars)
    if not batch_axes[0] and not batch_axes[1]:
        return tensordot(x, y, axes=[list(axes[0]), list(axes[1])])

    def norm(ax, nd):
        out = tuple(a + nd if a < 0 else a for a in ax)
        if any(not 0 <= a < nd for a in out):
            raise ValueError(f"_general_dot: axis out of range in {tuple(ax)} for {nd} dimensions")
        return out

    (xa, ya), (xb, yb) = ([norm(a, v.type.ndim) for a, v in zip(pair, (x, y))] for pair in (axes, batch_axes))
    if len(xa) != len(ya):
        raise ValueError(f"_general_dot: {len(xa)} contracted axes for the first operand, {len(ya)} for the second")
    xf = [d for d in range(x.type.ndim) if d not in xa and d not in xb]
    yf = [d for d in range(y.type.ndim) if d not in ya and d not in yb]
    nb = max(len(xb), len(yb))
    xs = [x.shape[d] for d in xf]
    ys = [y.shape[d] for d in yf]
    k = prod([x.shape[d] for d in xa]) if xa else 1
    fx = prod(xs) if xs else 1
    fy = prod(ys) if ys else 1

    def as_stack(v, batch, first, second, rows, cols):
        # Reshape before padding the batch: the padded dimensions keep their static length 1.
        t = v.dimshuffle(*batch, *first, *second)
        m = reshape(t, concatenate([t.shape[: len(batch)], [rows, cols]]), ndim=len(batch) + 2)
        return m.dimshuffle(*(["x"] * (nb - len(batch))), *range(len(batch) + 2))

    out = matmul(as_stack(x, xb, xf, xa, fx, k), as_stack(y, yb, ya, yf, k, fy))
    shape = concatenate([out.shape[:nb], as_tensor_variable([*xs, *ys], ndim=1, dtype="int64")]) if (xs or ys) \
        else out.shape[:nb]
    return reshape(out, shape, ndim=nb + len(xs) + len(ys))


def einsum(subscripts, *operands, optimize=None):
    """``numpy.einsum`` (see the module docstring for how the contraction is computed)."""
    from lucent.tensor.basic import as_tensor_variable

    if not operands:
        raise ValueError("einsum needs at least one operand")
    operands = [as_tensor_variable(o) for o in operands]
    expanded, out = _parse(subscripts, operands)
    items = [_take_diagonals(x, t) for x, t in zip(operands, expanded)]
    for step in _path([t for _, t in items], out, [x for x, _ in items], optimize):
        picked = [items[i] for i in step]
        rest = [it for k, it in enumerate(items) if k not in step]
        needed = set(out).union(*(set(t) for _, t in rest))
        union = "".join(dict.fromkeys("".join(t for _, t in picked)))
        prod = None
        for x, t in picked:
            aligned = _align(x, t, union)
            prod = aligned if prod is None else prod * aligned
        summed = [k for k, c in enumerate(union) if c not in needed]
        term = "".join(c for c in union if c in needed)
        if summed:
            prod = prod.sum(axis=summed)
        items = rest + [(prod, term)]
    (x, term), = items
    summed = [k for k, c in enumerate(term) if c not in out]
    if summed:
        x = x.sum(axis=summed)
        term = "".join(c for c in term if c in out)
    return x.dimshuffle(*[term.index(c) for c in out]) if term != out else x


__all__ = ["einsum", "tensordot"]
