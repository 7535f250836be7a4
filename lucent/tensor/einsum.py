"""``einsum``: products and sums of tensors in Einstein summation notation.

``einsum`` returns the output of an ``Einsum`` node: an ``OpFromGraph``
whose inner graph is the contraction, so before compilation the node
prints as one readable step (``Einsum{subscripts='ij,jk->ik', path=((1,
0),), optimized=True}``, its inner graph below it), while compilation
expands it in place (``inline_ofg_expansion``, on every mode) so the outer
rewrites, BLAS calls and fusion see its products and sums. An einsum
planned without static lengths whose inputs have them by compile time is
planned again first (``optimize_einsum_inner_graph``).

How the inner graph is built (the order follows the path, see
``lucent.tensor.einsum_path``):

* the operands are contracted two at a time; each step first takes the
  diagonal of an index repeated within one operand, sums out the indices
  that only one operand has and nothing later needs, then
* multiplies the two operands: with indices to contract, as one (batched)
  matrix product (``_general_dot``: the indices both keep are batch axes,
  the contracted ones are folded into the inner dimension); without, as
  an element-wise product of the operands aligned by broadcasting. No
  temporary holds the product of all the indices of both operands.
* An index of static length 1 in one operand meeting the same index of
  another length in the other is dropped from the first (NumPy broadcasts
  it); that makes the path chosen for the static shapes unreliable, so it
  warns.
"""

from __future__ import annotations

import warnings

from lucent.compile.builders import OpFromGraph
from lucent.graph.rewriting.basic import in2out, node_rewriter
from lucent.graph.rewriting.db import optdb
from lucent.tensor.contraction import _general_dot, _product, _shuffle, tensordot
from lucent.tensor.einsum_path import contraction_path, parse_subscripts


class Einsum(OpFromGraph):
    """The node ``einsum`` returns: an ``OpFromGraph`` remembering how it was planned.

    Attributes
    ----------
    subscripts
        The subscripts as given to ``einsum``.
    path
        The contraction order: a tuple of position tuples (``(0,)`` for a
        single operand, pairs otherwise), indices into the list of pending
        operands, each step appending its result at the end (NumPy's
        ``einsum_path`` convention).
    optimized
        Whether ``path`` was chosen for the operands' shapes (every length
        statically known), or is the fixed right-to-left order used when
        some length is unknown (it counts as optimal for two operands or
        fewer, where there is no choice).

    Unlike a plain ``OpFromGraph``, ``inline`` defaults to True: the node
    exists to show the einsum as one step before compilation; compiled, the
    rest of the graph's rewrites should see its matrix products and sums.
    Two einsums of equal subscripts, path and inner graph are equal, so
    merging deduplicates them.
    """

    def __init__(self, *args, subscripts, path, optimized, **kwargs):
        if not isinstance(subscripts, str):
            raise TypeError(f"Einsum: subscripts must be a str, got {subscripts!r}")
        self.subscripts = subscripts
        self.path = tuple(tuple(int(i) for i in step) for step in path)
        self.optimized = bool(optimized)
        kwargs.setdefault("inline", True)
        kwargs.setdefault("strict", True)
        super().__init__(*args, **kwargs)

    def __str__(self):
        return f"Einsum{{subscripts={self.subscripts!r}, path={self.path!r}, optimized={self.optimized}}}"

    def __eq__(self, other):
        return OpFromGraph.__eq__(self, other) and (self.subscripts, self.path, self.optimized) == (
            other.subscripts,
            other.path,
            other.optimized,
        )

    def __hash__(self):
        return hash((OpFromGraph.__hash__(self), self.subscripts, self.path, self.optimized))


# ---------------------------------------------------------------------------
# Index grids (exposed as PyTensor's einsum module does)
# ---------------------------------------------------------------------------
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
    # dimshuffle keeps the given order; put the delta's axes where they belong.
    ranks = {a: k for k, a in enumerate(axes)}
    pattern = [ranks[d] if d in axes else "x" for d in range(n)]
    return broadcast_to(result.dimshuffle(*pattern), [shape[k] for k in range(n)])


# ---------------------------------------------------------------------------
# One contraction step
# ---------------------------------------------------------------------------
def _take_diagonals(x, names):
    """``x`` with each index repeated in ``names`` reduced to its diagonal (moved last)."""
    from lucent.tensor.diagonal import diagonal

    while len(set(names)) != len(names):
        for i, c in enumerate(names):
            j = names.find(c, i + 1)
            if j >= 0:
                x = diagonal(x, axis1=i, axis2=j)
                names = names[:i] + names[i + 1 : j] + names[j + 1 :] + c
                break
    return x, names


def _sum_out(x, names, keep):
    """``x`` summed over the indices of ``names`` not in ``keep``."""
    axes = [k for k, c in enumerate(names) if c not in keep]
    if not axes:
        return x, names
    return x.sum(axis=axes), "".join(c for c in names if c in keep)


def _drop_broadcast_indices(x, names, other, other_names, user_letters):
    """Squeeze the length-1 axes of ``x`` whose index has another length in ``other``.

    NumPy's einsum broadcasts such an axis; removing it lets the other
    operand's index be a free or summed index of its own.
    """
    drop = []
    for k, c in enumerate(names):
        j = other_names.find(c)
        if x.type.shape[k] == 1 and j >= 0 and other.type.shape[j] != 1:
            drop.append(k)
    if not drop:
        return x, names
    labels = [repr(names[k]) if names[k] in user_letters else "an ellipsis dimension" for k in drop]
    warnings.warn(
        "The same einsum subscript is used for a broadcastable and non-broadcastable dimension "
        f"({', '.join(labels)}: length 1 in one operand, another length in the other). "
        "This can result in a suboptimal contraction path; give the length-1 dimension a subscript of its own.",
        UserWarning,
        stacklevel=5,
    )
    keep = [k for k in range(len(names)) if k not in drop]
    return x.dimshuffle(*keep), "".join(names[k] for k in keep)


def _contract_pair(lhs, lnames, rhs, rnames, needed, target, user_letters):
    """Contract two operands, keeping the indices in ``needed``.

    Returns the product and its index string (``target``'s order when that
    costs no transpose, else batch, left free, right free).
    """
    lhs, lnames = _take_diagonals(lhs, lnames)
    rhs, rnames = _take_diagonals(rhs, rnames)
    lhs, lnames = _drop_broadcast_indices(lhs, lnames, rhs, rnames, user_letters)
    rhs, rnames = _drop_broadcast_indices(rhs, rnames, lhs, lnames, user_letters)
    lhs, lnames = _sum_out(lhs, lnames, set(needed) | set(rnames))
    rhs, rnames = _sum_out(rhs, rnames, set(needed) | set(lnames))
    order = target if target is not None else "".join(dict.fromkeys(lnames + rnames))
    contracted = [c for c in lnames if c in rnames and c not in needed]
    if not contracted:
        # No index to sum: an element-wise product of the aligned operands.
        return _align(lhs, lnames, order) * _align(rhs, rnames, order), order
    batch = [c for c in order if c in lnames and c in rnames and c in needed]
    lfree = "".join(c for c in lnames if c not in batch and c not in contracted)
    rfree = "".join(c for c in rnames if c not in batch and c not in contracted)
    # Put the operand whose free indices come first in the target on the left.
    if "".join(batch) + rfree + lfree == order:
        (lhs, lnames, lfree), (rhs, rnames, rfree) = (rhs, rnames, rfree), (lhs, lnames, lfree)
    out = _product(
        lhs, [lnames.index(c) for c in batch], [lnames.index(c) for c in lfree],
        [lnames.index(c) for c in contracted],
        rhs, [rnames.index(c) for c in batch], [rnames.index(c) for c in contracted],
        [rnames.index(c) for c in rfree],
    )
    return out, "".join(batch) + lfree + rfree


def _align(x, names, target):
    """``x`` (indices ``names``) with its axes in ``target``'s order, length-1 axes for the missing ones."""
    return _shuffle(x, *[names.index(c) if c in names else "x" for c in target])


def _build_contraction(operands, terms, out, path, user_letters=frozenset()):
    """The graph computing ``out`` from ``operands`` (indices ``terms``) along ``path``.

    ``user_letters`` are the indices the user wrote (the others stand for
    ``...``), to name them in warnings.
    """
    items = list(zip(operands, terms))
    for k, step in enumerate(path):
        last = k == len(path) - 1
        positions = sorted(step, reverse=True)
        picked = [items.pop(p) for p in positions]
        needed = set(out).union(*(set(t) for _, t in items))
        target = out if last else None
        if len(picked) == 1:
            ((x, names),) = picked
            x, names = _take_diagonals(x, names)
            x, names = _sum_out(x, names, needed)
        else:
            (x, xn), (y, yn) = picked
            x, names = _contract_pair(x, xn, y, yn, needed, target, user_letters)
        items.append((x, names))
    ((x, names),) = items
    return _shuffle(x, *[names.index(c) for c in out])


def einsum(subscripts, *operands, optimize=None):
    """``numpy.einsum``: products and sums of tensors in Einstein summation notation.

    ``subscripts`` names each operand's axes (``"ij,jk->ik"``); ``...``
    stands for the leading (broadcast) axes; without ``->`` the output holds
    the ellipsis axes and the indices used once, in alphabetical order. The
    result is the output of an ``Einsum`` node (see the module docstring
    for how it is computed).

    The contraction order is ``numpy.einsum_path(..., optimize="optimal")``
    for the operands' static shapes when all are known, else right to
    left. ``optimize`` is None (that rule, as PyTensor), or, as a lucent
    extension, ``"greedy"`` (NumPy's greedy search instead of the
    exhaustive one, for einsums of many operands) or ``"optimal"`` / True
    (the default rule). Other values raise ``NotImplementedError`` as in
    PyTensor, which accepts only None.
    """
    from lucent.tensor.basic import as_tensor_variable

    if optimize is True:
        optimize = "optimal"
    if optimize not in (None, "optimal", "greedy"):
        raise NotImplementedError(
            f"einsum: optimize={optimize!r} is not supported; the contraction order is chosen from the "
            "static shapes (optimize=None, or 'optimal' / 'greedy')."
        )
    if not operands:
        raise ValueError("einsum needs at least one operand")
    operands = [as_tensor_variable(o) for o in operands]
    terms, out = parse_subscripts(subscripts, [o.type.shape for o in operands])
    path, optimized = contraction_path(terms, out, [o.type.shape for o in operands], optimize or "optimal")
    # Fresh inner inputs: the same variable may be passed twice.
    inner = [o.type() for o in operands]
    result = _build_contraction(inner, terms, out, path, frozenset(subscripts))
    op = Einsum(inner, [result], subscripts=subscripts, path=path, optimized=optimized)
    return op(*operands)


# ---------------------------------------------------------------------------
# Compilation: plan again once the lengths are known
# ---------------------------------------------------------------------------
@node_rewriter([Einsum])
def optimize_einsum_inner_graph(fgraph, node):
    """Rebuild an einsum planned without static lengths whose inputs now have them.

    A graph built on variables of unknown shape and later given static ones
    (``clone_replace``, ``givens``) gets the order chosen for those shapes.
    Runs before ``inline_ofg_expansion`` expands the node.
    """
    op = node.op
    if op.optimized or any(s is None for var in node.inputs for s in var.type.shape):
        return False
    with warnings.catch_warnings():
        # einsum() warned about length-1 indices when the graph was built.
        warnings.simplefilter("ignore", UserWarning)
        return [einsum(op.subscripts, *node.inputs)]


optdb.register(
    "optimize_einsum_inner_graph",
    in2out(optimize_einsum_inner_graph, name="optimize_einsum_inner_graph"),
    "fast_run",
    "fast_compile",
    position=0.45,
)


__all__ = ["Einsum", "einsum", "tensordot", "_general_dot"]
