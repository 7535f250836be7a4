"""Reading einsum subscripts and choosing the order of the contraction.

Kept apart from the graph building in ``lucent.tensor.einsum``: this part
only looks at index strings and static shapes, never at variables.

* ``parse_subscripts`` checks the subscripts against the operands' ranks
  and static lengths and returns explicit index strings: ``...`` becomes
  fresh letters (right-aligned, so operands with fewer leading axes
  broadcast as in NumPy), and an implicit output (no ``->``) becomes the
  ellipsis indices followed by the indices used once, in alphabetical
  order.
* ``contraction_path`` picks the order in which operands are contracted,
  as a tuple of position tuples in ``numpy.einsum_path``'s convention
  (positions in the list of pending operands; each step's result is
  appended at the end). With every length statically known, NumPy's
  search decides (``"optimal"`` by default); otherwise the operands are
  contracted right to left, since most programs put the smallest operand
  last. Each step lists its positions from the highest down.
"""

from __future__ import annotations

import string

import numpy as np

_ELLIPSIS = "..."


def parse_subscripts(subscripts, shapes):
    """Explicit operand index strings and output index string for ``subscripts``.

    ``shapes`` are the operands' static shapes (``None`` for an unknown
    length). Raises ``ValueError`` naming the problem for a malformed
    string, a rank that does not match its subscripts, or an index given
    two different static lengths (other than 1, which broadcasts).
    """
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: subscripts must be a str, got {type(subscripts).__name__}")
    text = subscripts.replace(" ", "")
    for c in text:
        if not (c in string.ascii_letters or c in ",.->"):
            raise ValueError(f"einsum: invalid character {c!r} in subscripts {subscripts!r}")
    if text.count("->") > 1 or text.replace("->", "").count("-") or text.replace("->", "").count(">"):
        raise ValueError(f"einsum: subscripts {subscripts!r} must contain at most one '->'")
    lhs, arrow, out = text.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(
            f"einsum: {len(terms)} operand subscripts in {subscripts!r} for {len(shapes)} operands"
        )
    for term in terms + ([out] if arrow else []):
        if term.replace(_ELLIPSIS, "", 1).count("."):
            raise ValueError(f"einsum: '.' may only appear as one '...' per term, got {term!r} in {subscripts!r}")
    used = set(c for c in text if c in string.ascii_letters)
    fresh = [c for c in string.ascii_letters if c not in used]
    ell_ndim = 0
    for term, shape in zip(terms, shapes):
        named = len(term.replace(_ELLIPSIS, ""))
        if _ELLIPSIS in term:
            if len(shape) < named:
                raise ValueError(
                    f"einsum: subscripts {term!r} name {named} axes of an operand with {len(shape)} dimensions"
                )
            ell_ndim = max(ell_ndim, len(shape) - named)
    if ell_ndim > len(fresh):
        raise ValueError(f"einsum: too many ellipsis dimensions ({ell_ndim}) in {subscripts!r}")
    ell = "".join(fresh[:ell_ndim])
    expanded = []
    for k, (term, shape) in enumerate(zip(terms, shapes)):
        if _ELLIPSIS in term:
            n = len(shape) - len(term.replace(_ELLIPSIS, ""))
            term = term.replace(_ELLIPSIS, ell[ell_ndim - n :] if n else "")
        if len(term) != len(shape):
            raise ValueError(
                f"einsum: subscripts {terms[k]!r} of operand {k} name {len(term)} axes, but it has "
                f"{len(shape)} dimensions"
            )
        expanded.append(term)
    if arrow:
        if _ELLIPSIS in out:
            out = out.replace(_ELLIPSIS, ell)
        present = set("".join(expanded))
        for c in out:
            if c not in present:
                raise ValueError(f"einsum: output index {c!r} in {subscripts!r} appears in no operand")
        if len(set(out)) != len(out):
            raise ValueError(f"einsum: output subscripts {out!r} repeat an index")
    else:
        counts = {}
        for term in expanded:
            for c in term:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    _check_lengths(expanded, shapes, subscripts)
    return expanded, out


def _check_lengths(terms, shapes, subscripts):
    seen = {}
    for k, (term, shape) in enumerate(zip(terms, shapes)):
        for c, s in zip(term, shape):
            if s is None or s == 1:
                continue
            if c in seen and seen[c][0] != s:
                raise ValueError(
                    f"einsum: index {c!r} of {subscripts!r} has length {seen[c][0]} in operand {seen[c][1]} "
                    f"and {s} in operand {k}"
                )
            seen.setdefault(c, (s, k))


def right_to_left_path(n):
    """``((n-1, n-2), (n-2, n-3), ..., (1, 0))``: each result meets the operand to its left."""
    return tuple((k, k - 1) for k in range(n - 1, 0, -1))


def contraction_path(terms, out, shapes, strategy="optimal"):
    """``(path, optimized)`` for contracting operands with indices ``terms`` into ``out``.

    One operand: ``((0,),)``. Some length unknown: right to left,
    ``optimized`` only for two operands or fewer. All lengths known:
    ``numpy.einsum_path`` with ``strategy`` (``"optimal"`` or ``"greedy"``),
    ``optimized=True``; when NumPy finds nothing to gain and proposes one
    step over all operands, right to left pairwise instead (every step here
    takes one or two operands).
    """
    n = len(terms)
    if any(s is None for shape in shapes for s in shape):
        path = ((0,),) if n == 1 else right_to_left_path(n)
        return path, n <= 2
    # Only the shapes matter: zero-stride views cost no memory whatever the lengths.
    dummies = [np.broadcast_to(np.empty((), dtype="int8"), shape) for shape in shapes]
    found, _ = np.einsum_path(",".join(terms) + "->" + out, *dummies, optimize=strategy)
    # Each step lists its positions from the highest down, the order they are taken out in.
    path = tuple(tuple(sorted((int(i) for i in step), reverse=True)) for step in found[1:])
    if len(path) == 1 and len(path[0]) > 2:
        path = right_to_left_path(n)
    return path, True


__all__ = ["contraction_path", "parse_subscripts", "right_to_left_path"]
