"""Numba kernels of :mod:`lucent.tensor.extra_ops`.

Ops working along one axis (``CumOp``, ``Repeat``) see their input as a
C-contiguous matrix of *rows* along that axis (:func:`to_rows`): the axis is
moved last by a transpose with literal axes, so one generated loop serves
every rank and axis, and the result is moved back (:func:`from_rows`). The
kernels are source text with the node's dtypes and ranks as literals
(see :mod:`lucent.link.numba.dispatch.shape`), so they are cached on disk,
and they raise the same exception classes as ``perform``.
"""

from __future__ import annotations

from lucent.link.numba.dispatch.basic import numba_funcify
from lucent.link.numba.dispatch.shape import INT, ITEM, dtype_text, fail, loops, make_kernel, py_tuple
from lucent.tensor.extra_ops import (
    Bartlett,
    CpuContiguous,
    CumOp,
    FillDiagonal,
    FillDiagonalOffset,
    RavelMultiIndex,
    Repeat,
    SearchsortedOp,
    Unique,
    UnravelIndex,
)


# --------------------------------------------------------------------------- #
# Rows along an axis
# --------------------------------------------------------------------------- #
def to_rows(src, ndim, axis, name):
    """Lines making ``name`` (shape ``(m, n)``): ``src`` with ``axis`` moved last, C-contiguous.

    Also defines ``{name}_m``, ``{name}_n`` and ``{name}_lead`` (the other
    lengths, in order, as a tuple text for :func:`from_rows`).
    """
    others = [d for d in range(ndim) if d != axis]
    perm = (*others, axis)
    moved = f"{src}.transpose({py_tuple([str(p) for p in perm])})" if perm != tuple(range(ndim)) else src
    m = " * ".join(f"{src}.shape[{d}]" for d in others) or "1"
    return [
        f"{name}_n = {src}.shape[{axis}]",
        f"{name}_m = {m}",
        f"{name} = np.ascontiguousarray({moved}).reshape(({name}_m, {name}_n))",
    ]


def from_rows(rows, src, ndim, axis, last):
    """Text of the array of rank ``ndim`` whose rows along ``axis`` are those of ``rows``.

    ``last`` is the text of the new length of ``axis``; the other lengths
    are those of ``src``.
    """
    others = [d for d in range(ndim) if d != axis]
    shape = py_tuple([f"{src}.shape[{d}]" for d in others] + [last])
    perm = (*others, axis)
    inverse = [perm.index(d) for d in range(ndim)]
    text = f"{rows}.reshape({shape})"
    if inverse != list(range(ndim)):
        text = f"np.ascontiguousarray({text}.transpose({py_tuple([str(i) for i in inverse])}))"
    return text


# --------------------------------------------------------------------------- #
# Cumulative ops, contiguity, searching
# --------------------------------------------------------------------------- #
@numba_funcify.register(CumOp, version=2)
def numba_funcify_CumOp(op, node, **kwargs):
    """Running sum/product along the axis, accumulated in the output dtype (as ``perform``).

    The input is read in memory order, without moving the axis: as a
    C-contiguous ``(outer, n, inner)`` block, each step along the axis adds
    a whole contiguous slice of ``inner`` entries to the previous output
    slice (a vectorisable loop over memory that is already in cache); along
    the last axis (``inner == 1``) each row carries one scalar. The order of
    the operations is NumPy's, so the results agree bit for bit.
    """
    ndim = node.inputs[0].type.ndim
    axis = op.axis
    dt = dtype_text(node.outputs[0].type.dtype)
    sym = "+" if op.mode == "add" else "*"
    outer = " * ".join(f"x.shape[{d}]" for d in range(axis)) or "1"
    inner = " * ".join(f"x.shape[{d}]" for d in range(axis + 1, ndim)) or "1"
    lines = [
        f"n = x.shape[{axis}]",
        f"outer = {outer}",
        f"inner = {inner}",
        "c = np.ascontiguousarray(x)",
        f"out = empty_output(x.shape, {dt})",
        "if out.size == 0:",
        "    return out",
    ]
    if axis == ndim - 1:
        lines += [
            "r = c.reshape((outer, n))",
            "o = out.reshape((outer, n))",
            # Four rows at a time: their carries are independent, so the
            # processor overlaps four chains of dependent additions.
            "for i in range(0, outer - 3, 4):",
            f"    a0 = {dt}(r[i, 0])",
            f"    a1 = {dt}(r[i + 1, 0])",
            f"    a2 = {dt}(r[i + 2, 0])",
            f"    a3 = {dt}(r[i + 3, 0])",
            "    o[i, 0] = a0",
            "    o[i + 1, 0] = a1",
            "    o[i + 2, 0] = a2",
            "    o[i + 3, 0] = a3",
            "    for k in range(1, n):",
            f"        a0 = {dt}(a0 {sym} r[i, k])",
            f"        a1 = {dt}(a1 {sym} r[i + 1, k])",
            f"        a2 = {dt}(a2 {sym} r[i + 2, k])",
            f"        a3 = {dt}(a3 {sym} r[i + 3, k])",
            "        o[i, k] = a0",
            "        o[i + 1, k] = a1",
            "        o[i + 2, k] = a2",
            "        o[i + 3, k] = a3",
            "for i in range(outer - outer % 4, outer):",
            f"    acc = {dt}(r[i, 0])",
            "    o[i, 0] = acc",
            "    for k in range(1, n):",
            f"        acc = {dt}(acc {sym} r[i, k])",
            "        o[i, k] = acc",
        ]
    else:
        lines += [
            "r = c.reshape((outer, n, inner))",
            "o = out.reshape((outer, n, inner))",
            "for i in range(outer):",
            "    for j in range(inner):",
            f"        o[i, 0, j] = {dt}(r[i, 0, j])",
            "    for k in range(1, n):",
            "        prev = o[i, k - 1]",
            "        cur = o[i, k]",
            "        src = r[i, k]",
            "        for j in range(inner):",
            f"            cur[j] = {dt}(prev[j] {sym} src[j])",
        ]
    lines.append("return out")
    return make_kernel(f"cum_{op.mode}", ["x"], lines)


@numba_funcify.register(CpuContiguous, version=1)
def numba_funcify_CpuContiguous(op, node, **kwargs):
    """``np.ascontiguousarray``: the input itself when it is C-contiguous."""
    return make_kernel("cpu_contiguous", ["x"], ["return np.ascontiguousarray(x)"])


def _search_import():
    """The import of the search loops, marked with a digest of their module.

    Numba's disk cache of a kernel knows only the kernel's own text, not the
    code of the functions it calls; the digest in the text makes any change
    to ``search.py`` a new kernel rather than a stale cached one.
    """
    import hashlib

    from lucent.link.numba.dispatch import search

    with open(search.__file__, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    return f"# search loops {digest}\nfrom lucent.link.numba.dispatch.search import search_sorted"


_SEARCH_IMPORT = _search_import()


@numba_funcify.register(SearchsortedOp, version=3)
def numba_funcify_SearchsortedOp(op, node, **kwargs):
    """Binary search of every entry of ``v`` in ``x`` (``x[sorter]`` when a sorter is given).

    Real dtypes go through ``search_sorted`` (several keys in lock-step, see
    ``lucent.link.numba.dispatch.search``); complex ones through Numba's ``np.searchsorted``.
    """
    has_sorter = len(node.inputs) == 3
    params = ["x", "v"] + (["sorter"] if has_sorter else [])
    lines = []
    if has_sorter:
        lines += [
            "if sorter.shape[0] != x.shape[0]:",
            "    " + fail("Value", "searchsorted: sorter.size ({}) must equal a.size ({})", "sorter.shape[0]", "x.shape[0]"),
            "xs = np.empty(x.shape[0], x.dtype)",
            "for k in range(x.shape[0]):",
            "    j = sorter[k]",
            "    if j < 0 or j >= x.shape[0]:",
            "        " + fail("Value", "searchsorted: sorter index out of range"),
            "    xs[k] = x[j]",
        ]
    else:
        lines.append("xs = x")
    v_ndim = node.inputs[1].type.ndim
    flat = "np.asarray(v).reshape((1,))" if v_ndim == 0 else "np.ascontiguousarray(v).reshape((v.size,))"
    lines.append(f"flat = {flat}")
    helpers = []
    if any(i.type.dtype.startswith("complex") for i in node.inputs[:2]):
        lines.append(f"res = np.searchsorted(xs, flat, side={op.side!r}).astype(np.int64)")
    else:
        helpers.append(_SEARCH_IMPORT)
        lines += [
            "res = np.empty(flat.shape[0], np.int64)",
            f"search_sorted(np.ascontiguousarray(xs), flat, res, {op.side == 'right'})",
        ]
    lines.append(f"return res.reshape({'()' if v_ndim == 0 else 'v.shape'})")
    return make_kernel(f"searchsorted_{op.side}", params, lines, helpers=helpers)


# --------------------------------------------------------------------------- #
# Repeat
# --------------------------------------------------------------------------- #
@numba_funcify.register(Repeat, version=1)
def numba_funcify_Repeat(op, node, **kwargs):
    """Each row entry copied ``repeats[k]`` times (one count for all when ``repeats`` has one entry)."""
    ndim = node.inputs[0].type.ndim
    dt = dtype_text(node.outputs[0].type.dtype)
    lines = to_rows("x", ndim, op.axis, "r")
    lines += [
        "nrep = reps.shape[0]",
        "if nrep != 1 and nrep != r_n:",
        "    " + fail("Value", "Repeat: operands could not be broadcast: {} repeats for an axis of length {}",
                     "nrep", "r_n"),
        "total = 0",
        "for k in range(r_n):",
        "    c = np.int64(reps[0] if nrep == 1 else reps[k])",
        "    if c < 0:",
        "        " + fail("Value", "Repeat: repeats may not contain negative values, got {}", "c"),
        "    total += c",
        "if r_n == 0:",
        "    for k in range(nrep):",
        "        if reps[k] < 0:",
        "            " + fail("Value", "Repeat: repeats may not contain negative values, got {}", "np.int64(reps[k])"),
        f"out = np.empty((r_m, total), {dt})",
        "for i in range(r_m):",
        "    pos = 0",
        "    for k in range(r_n):",
        "        c = np.int64(reps[0] if nrep == 1 else reps[k])",
        "        val = r[i, k]",
        "        for t in range(c):",
        "            out[i, pos] = val",
        "            pos += 1",
        f"return {from_rows('out', 'x', ndim, op.axis, 'total')}",
    ]
    return make_kernel("repeat", ["x", "reps"], lines)


# --------------------------------------------------------------------------- #
# Windows and diagonals
# --------------------------------------------------------------------------- #
@numba_funcify.register(Bartlett, version=1)
def numba_funcify_Bartlett(op, node, **kwargs):
    """``numpy.bartlett`` with NumPy's formula, so the values agree bit for bit."""
    dt = dtype_text(node.outputs[0].type.dtype)
    lines = [
        f"M = {INT('m_')}",
        "if M < 1:",
        f"    return np.empty(0, {dt})",
        "if M == 1:",
        f"    return np.ones(1, {dt})",
        f"out = np.empty(M, {dt})",
        "for k in range(M):",
        "    n = np.float64(1 - M + 2 * k)",
        "    if n <= 0:",
        f"        out[k] = {dt}(1.0 + n / (M - 1))",
        "    else:",
        f"        out[k] = {dt}(1.0 - n / (M - 1))",
        "return out",
    ]
    return make_kernel("bartlett", ["m_"], lines)


@numba_funcify.register(FillDiagonal, version=1)
def numba_funcify_FillDiagonal(op, node, **kwargs):
    """A copy with ``a[i, i, ...] = val`` for ``i < min(shape)``."""
    ndim = node.inputs[0].type.ndim
    lines = ["out = a.copy()", "n = a.shape[0]"]
    for d in range(1, ndim):
        lines.append(f"n = min(n, a.shape[{d}])")
    if ndim > 2:
        cond = " or ".join(f"a.shape[{d}] != a.shape[0]" for d in range(1, ndim))
        lines += [f"if {cond}:",
                  "    " + fail("Value", "FillDiagonal: all dimensions of input must be of equal length, got {}",
                               "a.shape")]
    lines += [f"v = {ITEM('val')}", "for i in range(n):", f"    out[{', '.join(['i'] * ndim)}] = v", "return out"]
    return make_kernel("fill_diagonal", ["a", "val"], lines)


@numba_funcify.register(FillDiagonalOffset, version=1)
def numba_funcify_FillDiagonalOffset(op, node, **kwargs):
    """A copy with ``a[i, i + offset] = val`` wherever that is inside the matrix."""
    lines = [
        "out = a.copy()",
        f"k = {INT('offset')}",
        f"v = {ITEM('val')}",
        "h = a.shape[0]",
        "w = a.shape[1]",
        "for i in range(max(0, -k), min(h, w - k)):",
        "    out[i, i + k] = v",
        "return out",
    ]
    return make_kernel("fill_diagonal_offset", ["a", "val", "offset"], lines)


# --------------------------------------------------------------------------- #
# Unique values
# --------------------------------------------------------------------------- #
@numba_funcify.register(Unique, version=1)
def numba_funcify_Unique(op, node, **kwargs):
    """Sorted unique values (or rows along ``axis``), from a stable sort like NumPy's.

    A stable (merge) sort makes the first index of each value its first
    occurrence, which is what ``return_index`` gives in NumPy.
    """
    ndim = node.inputs[0].type.ndim
    dt = dtype_text(node.outputs[0].type.dtype)
    if op.axis is None:
        flat = "np.asarray(x).reshape((1,))" if ndim == 0 else "np.ascontiguousarray(x).reshape((x.size,))"
        lines = [
            f"flat = {flat}",
            "n = flat.shape[0]",
            "order = np.argsort(flat, kind='mergesort')",
            "starts = np.empty(n, np.int64)",
            "nu = 0",
            "for j in range(n):",
            "    if j == 0 or flat[order[j]] != flat[order[j - 1]]:",
            "        starts[nu] = j",
            "        nu += 1",
            f"vals = np.empty(nu, {dt})",
            "for u in range(nu):",
            "    vals[u] = flat[order[starts[u]]]",
        ]
    else:
        lines = to_rows("x", ndim, op.axis, "r") if ndim > 1 else [
            "r_n = x.shape[0]", "r_m = 1", "r = np.ascontiguousarray(x).reshape((1, r_n))"]
        # Items are the columns of r (one per position along axis).
        lines += [
            "n = r_n",
            "order = np.arange(n)",
            "for c in range(r_m - 1, -1, -1):",
            "    key = np.empty(n, r.dtype)",
            "    for j in range(n):",
            "        key[j] = r[c, order[j]]",
            "    order = order[np.argsort(key, kind='mergesort')]",
            "starts = np.empty(n, np.int64)",
            "nu = 0",
            "for j in range(n):",
            "    new = j == 0",
            "    if not new:",
            "        for c in range(r_m):",
            "            if r[c, order[j]] != r[c, order[j - 1]]:",
            "                new = True",
            "                break",
            "    if new:",
            "        starts[nu] = j",
            "        nu += 1",
            f"vals2 = np.empty((r_m, nu), {dt})",
            "for u in range(nu):",
            "    for c in range(r_m):",
            "        vals2[c, u] = r[c, order[starts[u]]]",
            f"vals = {from_rows('vals2', 'x', ndim, op.axis, 'nu') if ndim > 1 else 'vals2.reshape((nu,))'}",
        ]
    outs = ["vals"]
    if op.return_index:
        lines += ["first = np.empty(nu, np.int64)", "for u in range(nu):", "    first[u] = order[starts[u]]"]
        outs.append("first")
    if op.return_inverse:
        lines += [
            "inv = np.empty(n, np.int64)",
            "u = -1",
            "for j in range(n):",
            "    if u + 1 < nu and starts[u + 1] == j:",
            "        u += 1",
            "    inv[order[j]] = u",
        ]
        outs.append("inv")
    if op.return_counts:
        lines += [
            "counts = np.empty(nu, np.int64)",
            "for u in range(nu):",
            "    end = starts[u + 1] if u + 1 < nu else n",
            "    counts[u] = end - starts[u]",
        ]
        outs.append("counts")
    lines.append(f"return {outs[0]}" if len(outs) == 1 else f"return {', '.join(outs)}")
    return make_kernel("unique", ["x"], lines)


# --------------------------------------------------------------------------- #
# Flat indices <-> multi-indices
# --------------------------------------------------------------------------- #
@numba_funcify.register(UnravelIndex, version=1)
def numba_funcify_UnravelIndex(op, node, **kwargs):
    """Coordinates of each flat index by repeated division (last axis first for C order)."""
    n = len(node.outputs)
    i_ndim = node.inputs[0].type.ndim
    flat = "np.asarray(indices).reshape((1,))" if i_ndim == 0 else "np.ascontiguousarray(indices).reshape((indices.size,))"
    shape = "()" if i_ndim == 0 else "indices.shape"
    dims_order = list(range(n - 1, -1, -1)) if op.order == "C" else list(range(n))
    lines = [
        f"if dims.shape[0] != {n}:",
        "    " + fail("Value", f"UnravelIndex: expected {n} dimensions, got {{}}", "dims.shape[0]"),
        f"flat = {flat}",
        "size = np.int64(1)",
        f"for d in range({n}):",
        "    size *= np.int64(dims[d])",
    ]
    lines += [f"c{d} = np.empty(flat.shape[0], np.int64)" for d in range(n)]
    lines += [
        "for j in range(flat.shape[0]):",
        "    idx = np.int64(flat[j])",
        "    if idx < 0 or idx >= size:",
        "        " + fail("Value", "UnravelIndex: index {} is out of bounds for array with size {}", "idx", "size"),
    ]
    for d in dims_order:
        lines += [f"    c{d}[j] = idx % np.int64(dims[{d}])", f"    idx = idx // np.int64(dims[{d}])"]
    outs = [f"c{d}.reshape({shape})" for d in range(n)]
    lines.append("return " + (", ".join(outs) if n > 1 else outs[0]))
    return make_kernel("unravel_index", ["indices", "dims"], lines)


@numba_funcify.register(RavelMultiIndex, version=1)
def numba_funcify_RavelMultiIndex(op, node, **kwargs):
    """Flat index of each coordinate tuple; out-of-range coordinates raise, wrap or clip.

    The coordinate arrays must have the same shape here (``perform`` also
    broadcasts them, as NumPy does).
    """
    k = len(node.inputs) - 1
    params = [f"i{d}" for d in range(k)] + ["dims"]
    i_ndim = node.inputs[0].type.ndim
    lines = [
        f"if dims.shape[0] != {k}:",
        "    " + fail("Value", f"RavelMultiIndex: parameter multi_index must be a sequence of length {{}}, got {k}",
                     "dims.shape[0]"),
    ]
    for d in range(k):
        flat = f"np.asarray(i{d}).reshape((1,))" if i_ndim == 0 else f"np.ascontiguousarray(i{d}).reshape((i{d}.size,))"
        lines.append(f"f{d} = {flat}")
        if d:
            lines += [f"if f{d}.shape[0] != f0.shape[0]:",
                      "    " + fail("Value", "RavelMultiIndex: the index arrays must have the same shape")]
    lines.append("out = np.empty(f0.shape[0], np.int64)")
    order = list(range(k)) if op.order == "C" else list(range(k - 1, -1, -1))
    body = ["flat = np.int64(0)"]
    for d in order:
        body += [f"n = np.int64(dims[{d}])", f"c = np.int64(f{d}[j])"]
        if op.mode == "raise":
            body += ["if c < 0 or c >= n:",
                     "    " + fail("Value", "RavelMultiIndex: invalid entry in coordinates array")]
        elif op.mode == "wrap":
            body += ["c = c % n"]
        else:
            body += ["c = min(max(c, 0), n - 1)"]
        body.append("flat = flat * n + c")
    body.append("out[j] = flat")
    lines += loops([("j", "f0.shape[0]")], body)
    lines.append(f"return out.reshape({'()' if i_ndim == 0 else 'i0.shape'})")
    return make_kernel("ravel_multi_index", params, lines)


__all__ = [
    "from_rows",
    "numba_funcify_Bartlett",
    "numba_funcify_CpuContiguous",
    "numba_funcify_CumOp",
    "numba_funcify_FillDiagonal",
    "numba_funcify_FillDiagonalOffset",
    "numba_funcify_RavelMultiIndex",
    "numba_funcify_Repeat",
    "numba_funcify_SearchsortedOp",
    "numba_funcify_Unique",
    "numba_funcify_UnravelIndex",
    "to_rows",
]
