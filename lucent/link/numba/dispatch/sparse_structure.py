"""Native Numba kernels of the sparse ops on structure: joining, indexing, clean-up, comparisons.

These ops move stored entries around rather than compute with them:
``hstack`` / ``vstack`` and ``block_diag`` join matrices, the ``GetItem*``
ops select rows, slices or single entries, ``Remove0`` /
``EnsureSortedIndices`` normalise the storage, ``Diag`` reads the
diagonal, ``ConstructSparseFromList`` scatters dense rows, and the
comparisons give 0/1 matrices. Each works on the arrays of the
``CSMatrixType`` struct, like the kernels of ``sparse.py`` whose helpers
it uses, and builds its sparse result with ``make_csr`` / ``make_csc``.
"""

from __future__ import annotations

import numpy as np

from numba.core import types
from numba.extending import overload

from lucent.link.numba.dispatch.basic import numba_njit
from lucent.link.numba.dispatch.sparse import (
    _U,
    _arrays_in,
    _builder,
    _compress_dense,
    _fmt,
    _is_sparse,
    _recompress,
    _register,
    _scalar_type,
)
from lucent.link.numba.dispatch.sparse_types import make_csc
from lucent.sparse import indexing as sidx
from lucent.sparse import linalg as slinalg
from lucent.sparse import math as sm
from lucent.sparse import structure as sst


# --------------------------------------------------------------------------- #
# Joining
# --------------------------------------------------------------------------- #
@_register(sst.Stack)
def numba_funcify_Stack(op, node, **kwargs):
    """``hstack`` / ``vstack``: each block's entries, in the output's compression."""
    fmt = op.format
    if fmt not in ("csr", "csc"):
        raise NotImplementedError(f"no Numba kernel for stacking into {fmt} matrices")
    n = len(node.inputs)
    axis = op.axis
    # Joining along the minor axis of the output needs each block's arrays
    # in the output's compression; every block is converted to it.
    converters = [_arrays_in(_fmt(v), fmt) for v in node.inputs]
    out_t = _scalar_type(node.outputs[0].type.dtype)
    build = _builder(fmt)
    is_csr = fmt == "csr"
    names = [f"x{k}" for k in range(n)]
    lines = [f"def stack({', '.join(names)}):"]
    fixed = 1 - axis
    for k in range(1, n):
        lines.append(f"    if x{k}.shape[{fixed}] != x0.shape[{fixed}]:")
        lines.append(f"        raise ValueError('{type(op).__name__}: the blocks do not fit')")
    lines.append(f"    total = " + " + ".join(f"x{k}.shape[{axis}]" for k in range(n)))
    lines.append(f"    shape = (x0.shape[0], total) if {axis} == 1 else (total, x0.shape[1])")
    for k in range(n):
        lines.append(f"    d{k}, i{k}, p{k} = conv{k}(x{k})")
    lines.append("    nnz = " + " + ".join(f"p{k}[p{k}.shape[0] - 1]" for k in range(n)))
    lines.append("    n_major = shape[0] if is_csr else shape[1]")
    lines.append("    data = np.empty(nnz, out_t)")
    lines.append("    indices = np.empty(nnz, np.int32)")
    lines.append("    indptr = np.zeros(n_major + 1, np.int32)")
    # along the major axis: blocks follow each other; along the minor axis: rows interleave
    along_major = (axis == 0) == is_csr
    if along_major:
        lines.append("    pos = 0")
        lines.append("    row = 0")
        for k in range(n):
            lines += [
                f"    for i in range(p{k}.shape[0] - 1):",
                f"        for q in range(p{k}[i], p{k}[i + 1]):",
                f"            data[pos] = d{k}[q]",
                f"            indices[pos] = i{k}[q]",
                "            pos += 1",
                "        row += 1",
                "        indptr[row] = pos",
            ]
    else:
        lines.append("    pos = 0")
        lines.append("    for i in range(n_major):")
        lines.append("        offset = 0")
        for k in range(n):
            lines += [
                f"        for q in range(p{k}[i], p{k}[i + 1]):",
                f"            data[pos] = d{k}[q]",
                f"            indices[pos] = i{k}[q] + offset",
                "            pos += 1",
                f"        offset += x{k}.shape[{axis}]",
            ]
        lines.append("        indptr[i + 1] = pos")
    lines.append("    return build(data, indices, indptr, (np.intp(shape[0]), np.intp(shape[1])))")
    namespace = {"np": np, "out_t": out_t, "build": build, "is_csr": is_csr}
    namespace.update({f"conv{k}": c for k, c in enumerate(converters)})
    exec(compile("\n".join(lines) + "\n", f"<lucent sparse {type(op).__name__}>", "exec"), namespace)
    return numba_njit(namespace["stack"])


# --------------------------------------------------------------------------- #
# Storage clean-up: explicit zeros, index order, conjugate
# --------------------------------------------------------------------------- #
@numba_njit
def _drop_zeros(data, indices, indptr, out_data, out_indices, out_indptr):
    """Copy the nonzero entries into the ``out_*`` arrays (which may be the inputs); their count."""
    pos = 0
    start = indptr[0]
    out_indptr[0] = 0
    for i in range(indptr.shape[0] - 1):
        end = indptr[i + 1]
        for p in range(_U(start), _U(end)):
            if data[p] != 0:
                out_data[pos] = data[p]
                out_indices[pos] = indices[p]
                pos += 1
        out_indptr[i + 1] = pos
        start = end
    return pos


@_register(sst.Remove0)
def numba_funcify_Remove0(op, node, **kwargs):
    """The stored entries that are not zero; compacted in the input's own buffers when in place."""
    build = _builder(_fmt(node.outputs[0]))
    inplace = op.inplace

    @numba_njit
    def remove0(x):
        if inplace:
            data, indices, indptr = x.data, x.indices, x.indptr
        else:
            data = np.empty_like(x.data)
            indices = np.empty_like(x.indices)
            indptr = np.empty_like(x.indptr)
        nnz = _drop_zeros(x.data, x.indices, x.indptr, data, indices, indptr)
        if inplace:
            return build(data[:nnz], indices[:nnz], indptr, x.shape)
        return build(data[:nnz].copy(), indices[:nnz].copy(), indptr, x.shape)

    return remove0


@numba_njit
def _sort_segments(data, indices, indptr):
    """Sort the indices of each row (CSR) / column (CSC) in place, carrying the data along."""
    for i in range(indptr.shape[0] - 1):
        a, b = indptr[i], indptr[i + 1]
        ordered = True
        for p in range(a + 1, b):
            if indices[p - 1] > indices[p]:
                ordered = False
                break
        if ordered:
            continue
        order = np.argsort(indices[a:b], kind="mergesort")
        seg_i = indices[a:b].copy()
        seg_d = data[a:b].copy()
        for t in range(b - a):
            indices[a + t] = seg_i[order[t]]
            data[a + t] = seg_d[order[t]]


@_register(sst.EnsureSortedIndices)
def numba_funcify_EnsureSortedIndices(op, node, **kwargs):
    """Indices sorted within each row / column: in the input's arrays (a view) or in copies."""
    build = _builder(_fmt(node.outputs[0]))
    inplace = op.inplace

    @numba_njit
    def ensure_sorted_indices(x):
        if inplace:
            data, indices, indptr = x.data, x.indices, x.indptr
        else:
            data, indices, indptr = x.data.copy(), x.indices.copy(), x.indptr.copy()
        _sort_segments(data, indices, indptr)
        return build(data, indices, indptr, x.shape)

    return ensure_sorted_indices


@_register(sm._Conjugate)
def numba_funcify_Conjugate(op, node, **kwargs):
    """The complex conjugate of the stored values (same pattern)."""
    build = _builder(_fmt(node.outputs[0]))

    @numba_njit
    def conjugate(x):
        return build(np.conj(x.data), x.indices.copy(), x.indptr.copy(), x.shape)

    return conjugate


# --------------------------------------------------------------------------- #
# Diagonals
# --------------------------------------------------------------------------- #
@_register(sst.Diag)
def numba_funcify_Diag(op, node, **kwargs):
    """The diagonal of a square matrix (entries stored twice are summed, as in SciPy)."""
    out_t = _scalar_type(node.outputs[0].type.dtype)

    @numba_njit
    def diag(x):
        if x.shape[0] != x.shape[1]:
            raise ValueError("Diag only applies to square matrices")
        out = np.zeros(x.shape[0], out_t)
        for i in range(x.indptr.shape[0] - 1):
            for p in range(_U(x.indptr[i]), _U(x.indptr[i + 1])):
                if x.indices[p] == i:
                    out[i] += x.data[p]
        return out

    return diag


# --------------------------------------------------------------------------- #
# Indexing
# --------------------------------------------------------------------------- #
def _opt_index(v):
    """A slice bound in compiled code: ``None`` stays ``None``, a 0-d array gives its integer."""
    return v


@overload(_opt_index)
def _overload_opt_index(v):
    if isinstance(v, types.NoneType):
        return lambda v: None
    if isinstance(v, types.Array):
        return lambda v: np.int64(v[()])
    if isinstance(v, types.Integer):
        return lambda v: np.int64(v)
    return None


@numba_njit
def _wrap(i, n, what):
    """``i`` as a position in ``range(n)`` (negative from the end), or ``IndexError``."""
    j = np.int64(i)
    if j < 0:
        j += n
    if j < 0 or j >= n:
        raise IndexError(what)
    return j


@numba_njit
def _range_length(start, stop, step):
    if step > 0:
        return max(0, (stop - start + step - 1) // step)
    return max(0, (start - stop - step - 1) // (-step))


@_register(sidx.GetItem2d)
def numba_funcify_GetItem2d(op, node, **kwargs):
    """``x[a:b:s, c:d:t]``: the rows of one slice, the columns of the other, as a matrix."""
    fmt = _fmt(node.inputs[0])
    is_csr = fmt == "csr"
    build = _builder(fmt)

    @numba_njit
    def get_item_2d(x, a1, b1, s1, a2, b2, s2):
        n_rows, n_cols = x.shape[0], x.shape[1]
        r0, r1, rs = slice(_opt_index(a1), _opt_index(b1), _opt_index(s1)).indices(n_rows)
        c0, c1, cs = slice(_opt_index(a2), _opt_index(b2), _opt_index(s2)).indices(n_cols)
        n_out_rows = _range_length(r0, r1, rs)
        n_out_cols = _range_length(c0, c1, cs)
        if is_csr:
            major0, major_step, n_major = r0, rs, n_out_rows
            minor0, minor_step, n_out_minor, n_minor = c0, cs, n_out_cols, n_cols
        else:
            major0, major_step, n_major = c0, cs, n_out_cols
            minor0, minor_step, n_out_minor, n_minor = r0, rs, n_out_rows, n_rows
        # Where each source minor index lands in the result (-1: not selected).
        where = np.full(n_minor, -1, np.int32)
        for k in range(n_out_minor):
            where[minor0 + k * minor_step] = k
        nnz = 0
        for k in range(n_major):
            i = major0 + k * major_step
            for p in range(_U(x.indptr[i]), _U(x.indptr[i + 1])):
                if where[x.indices[p]] >= 0:
                    nnz += 1
        data = np.empty(nnz, x.data.dtype)
        indices = np.empty(nnz, np.int32)
        indptr = np.zeros(n_major + 1, np.int32)
        pos = 0
        for k in range(n_major):
            i = major0 + k * major_step
            for p in range(_U(x.indptr[i]), _U(x.indptr[i + 1])):
                j = where[x.indices[p]]
                if j >= 0:
                    data[pos] = x.data[p]
                    indices[pos] = j
                    pos += 1
            indptr[k + 1] = pos
        return build(data, indices, indptr, (np.intp(n_out_rows), np.intp(n_out_cols)))

    return get_item_2d


@_register(sidx.GetItemScalar)
def numba_funcify_GetItemScalar(op, node, **kwargs):
    """``x[i, j]`` as a 0-d array (entries stored twice are summed)."""
    is_csr = _fmt(node.inputs[0]) == "csr"
    out_t = _scalar_type(node.outputs[0].type.dtype)

    @numba_njit
    def get_item_scalar(x, i, j):
        r = _wrap(_opt_index(i), x.shape[0], "GetItemScalar: the row index is out of bounds")
        c = _wrap(_opt_index(j), x.shape[1], "GetItemScalar: the column index is out of bounds")
        major, minor = (r, c) if is_csr else (c, r)
        total = out_t(0)
        for p in range(_U(x.indptr[major]), _U(x.indptr[major + 1])):
            if x.indices[p] == minor:
                total += x.data[p]
        out = np.empty((), out_t)
        out[()] = total
        return out

    return get_item_scalar


@numba_njit
def _wrapped_all(index, n, what):
    out = np.empty(index.shape[0], np.int64)
    for k in range(index.shape[0]):
        out[k] = _wrap(index[k], n, what)
    return out


@_register(sidx.GetItemList)
def numba_funcify_GetItemList(op, node, **kwargs):
    """``x[rows]``: the listed rows (repeats allowed), in ``x``'s format."""
    fmt = _fmt(node.inputs[0])
    is_csr = fmt == "csr"
    build = _builder(fmt)

    @numba_njit
    def get_item_list(x, rows):
        n_rows, n_cols = x.shape[0], x.shape[1]
        sel = _wrapped_all(rows, n_rows, "GetItemList: a row index is out of bounds")
        m = sel.shape[0]
        if is_csr:
            nnz = 0
            for k in range(m):
                nnz += x.indptr[sel[k] + 1] - x.indptr[sel[k]]
            data = np.empty(nnz, x.data.dtype)
            indices = np.empty(nnz, np.int32)
            indptr = np.zeros(m + 1, np.int32)
            pos = 0
            for k in range(m):
                for p in range(_U(x.indptr[sel[k]]), _U(x.indptr[sel[k] + 1])):
                    data[pos] = x.data[p]
                    indices[pos] = x.indices[p]
                    pos += 1
                indptr[k + 1] = pos
            return build(data, indices, indptr, (np.intp(m), np.intp(n_cols)))
        # CSC: each stored entry of row r appears once per time r is listed.
        # ``picks[starts[r]:starts[r + 1]]`` are the result rows taking source row r.
        starts = np.zeros(n_rows + 1, np.int64)
        for k in range(m):
            starts[sel[k] + 1] += 1
        for r in range(n_rows):
            starts[r + 1] += starts[r]
        fill = starts[:n_rows].copy()
        picks = np.empty(m, np.int32)
        for k in range(m):
            picks[fill[sel[k]]] = k
            fill[sel[k]] += 1
        nnz = 0
        for p in range(x.indptr[n_cols]):
            r = x.indices[p]
            nnz += starts[r + 1] - starts[r]
        data = np.empty(nnz, x.data.dtype)
        indices = np.empty(nnz, np.int32)
        indptr = np.zeros(n_cols + 1, np.int32)
        pos = 0
        for j in range(n_cols):
            for p in range(_U(x.indptr[j]), _U(x.indptr[j + 1])):
                r = x.indices[p]
                for t in range(starts[r], starts[r + 1]):
                    data[pos] = x.data[p]
                    indices[pos] = picks[t]
                    pos += 1
            indptr[j + 1] = pos
        return build(data, indices, indptr, (np.intp(m), np.intp(n_cols)))

    return get_item_list


@_register(sidx.GetItemListGrad)
def numba_funcify_GetItemListGrad(op, node, **kwargs):
    """A matrix shaped like ``x`` whose row ``rows[k]`` is row ``k`` of ``gz`` (the last one wins)."""
    fmt = _fmt(node.outputs[0])
    gz_csr = _arrays_in(_fmt(node.inputs[2]), "csr")
    out_t = _scalar_type(node.outputs[0].type.dtype)
    build = _builder(fmt)
    to_csc = fmt == "csc"

    @numba_njit
    def get_item_list_grad(x, rows, gz):
        n_rows, n_cols = x.shape[0], x.shape[1]
        if gz.shape[0] != rows.shape[0] or gz.shape[1] != n_cols:
            raise ValueError("GetItemListGrad: gz must have one row per index and x's columns")
        sel = _wrapped_all(rows, n_rows, "GetItemListGrad: a row index is out of bounds")
        gd, gi, gp = gz_csr(gz)
        owner = np.full(n_rows, -1, np.int64)
        for k in range(sel.shape[0]):
            owner[sel[k]] = k
        nnz = 0
        for r in range(n_rows):
            if owner[r] >= 0:
                nnz += gp[owner[r] + 1] - gp[owner[r]]
        data = np.empty(nnz, out_t)
        indices = np.empty(nnz, np.int32)
        indptr = np.zeros(n_rows + 1, np.int32)
        pos = 0
        for r in range(n_rows):
            k = owner[r]
            if k >= 0:
                for p in range(_U(gp[k]), _U(gp[k + 1])):
                    data[pos] = gd[p]
                    indices[pos] = gi[p]
                    pos += 1
            indptr[r + 1] = pos
        if to_csc:
            data, indices, indptr = _recompress(data, indices, indptr, n_cols)
        return build(data, indices, indptr, (n_rows, n_cols))

    return get_item_list_grad


@_register(sidx.GetItem2Lists)
def numba_funcify_GetItem2Lists(op, node, **kwargs):
    """``x[rows, cols]``: the dense vector of the entries ``(rows[k], cols[k])``."""
    is_csr = _fmt(node.inputs[0]) == "csr"
    out_t = _scalar_type(node.outputs[0].type.dtype)

    @numba_njit
    def get_item_2lists(x, rows, cols):
        if rows.shape[0] != cols.shape[0]:
            raise IndexError("GetItem2Lists: the row and column lists differ in length")
        out = np.zeros(rows.shape[0], out_t)
        for k in range(rows.shape[0]):
            r = _wrap(rows[k], x.shape[0], "GetItem2Lists: a row index is out of bounds")
            c = _wrap(cols[k], x.shape[1], "GetItem2Lists: a column index is out of bounds")
            major, minor = (r, c) if is_csr else (c, r)
            for p in range(_U(x.indptr[major]), _U(x.indptr[major + 1])):
                if x.indices[p] == minor:
                    out[k] += x.data[p]
        return out

    return get_item_2lists


@_register(sidx.GetItem2ListsGrad)
def numba_funcify_GetItem2ListsGrad(op, node, **kwargs):
    """A matrix shaped like ``x`` holding ``gz[k]`` at ``(rows[k], cols[k])`` (the last one wins)."""
    fmt = _fmt(node.outputs[0])
    is_csr = fmt == "csr"
    out_t = _scalar_type(node.outputs[0].type.dtype)
    build = _builder(fmt)

    @numba_njit
    def get_item_2lists_grad(x, rows, cols, gz):
        n = rows.shape[0]
        if cols.shape[0] != n or gz.shape[0] != n:
            raise ValueError("GetItem2ListsGrad: rows, cols and gz must have one length")
        n_major, n_minor = (x.shape[0], x.shape[1]) if is_csr else (x.shape[1], x.shape[0])
        keys = np.empty(n, np.int64)
        for k in range(n):
            r = _wrap(rows[k], x.shape[0], "GetItem2ListsGrad: a row index is out of bounds")
            c = _wrap(cols[k], x.shape[1], "GetItem2ListsGrad: a column index is out of bounds")
            keys[k] = r * n_minor + c if is_csr else c * n_minor + r
        order = np.argsort(keys, kind="mergesort")
        # One entry per distinct position: the last write to it.
        kept = 0
        for t in range(n):
            if t + 1 == n or keys[order[t + 1]] != keys[order[t]]:
                kept += 1
        data = np.empty(kept, out_t)
        indices = np.empty(kept, np.int32)
        indptr = np.zeros(n_major + 1, np.int32)
        pos = 0
        for t in range(n):
            if t + 1 == n or keys[order[t + 1]] != keys[order[t]]:
                key = keys[order[t]]
                data[pos] = gz[order[t]]
                indices[pos] = key % n_minor
                indptr[key // n_minor + 1] += 1
                pos += 1
        for i in range(n_major):
            indptr[i + 1] += indptr[i]
        return build(data, indices, indptr, x.shape)

    return get_item_2lists_grad


@_register(sidx.ConstructSparseFromList)
def numba_funcify_ConstructSparseFromList(op, node, **kwargs):
    """A CSC matrix whose row ``ilist[k]`` holds ``values[k]`` (one stored entry per value)."""
    out_t = _scalar_type(node.outputs[0].type.dtype)

    @numba_njit
    def construct_sparse_from_list(shape, values, ilist):
        n_rows, n_cols = np.intp(shape[0]), np.intp(shape[1])
        rows, cols = values.shape[0], values.shape[1]
        if rows != ilist.shape[0]:
            raise ValueError("ConstructSparseFromList: values needs one row per index")
        if cols != n_cols:
            raise ValueError("ConstructSparseFromList: values needs as many columns as x")
        at = _wrapped_all(ilist, n_rows, "ConstructSparseFromList: an index is out of bounds")
        data = np.empty(rows * cols, out_t)
        indices = np.empty(rows * cols, np.int32)
        indptr = np.empty(cols + 1, np.int32)
        for j in range(cols):
            indptr[j] = j * rows
            for k in range(rows):
                data[j * rows + k] = values[k, j]
                indices[j * rows + k] = at[k]
        indptr[cols] = cols * rows
        return make_csc(data, indices, indptr, (n_rows, n_cols))

    return construct_sparse_from_list


# --------------------------------------------------------------------------- #
# Comparisons
# --------------------------------------------------------------------------- #
_COMPARE = {
    "Equal": lambda a, b: a == b,
    "NotEqual": lambda a, b: a != b,
    "LessThan": lambda a, b: a < b,
    "GreaterThan": lambda a, b: a > b,
    "LessEqual": lambda a, b: a <= b,
    "GreaterEqual": lambda a, b: a >= b,
}


def _comparison_function(op):
    name = type(op).__name__.replace("SparseSparse", "").replace("SparseDense", "")
    return name, numba_njit(_COMPARE[name])


def _comparison_sparse_sparse(op, node, **kwargs):
    """``x <op> y`` of two sparse matrices: 1 where it holds, as a uint8 matrix of their format.

    Where neither stores an entry both are 0, so ``==``, ``<=``, ``>=``
    hold there and every such position is stored, as SciPy does.
    """
    name, compare = _comparison_function(op)
    fill = bool(_COMPARE[name](0, 0))
    fmt = _fmt(node.outputs[0])
    is_csr = fmt == "csr"
    build = _builder(fmt)
    acc_t = _scalar_type(np.result_type(node.inputs[0].type.dtype, node.inputs[1].type.dtype))
    what = type(op).__name__

    @numba_njit
    def compare_sparse_sparse(x, y):
        if x.shape[0] != y.shape[0] or x.shape[1] != y.shape[1]:
            raise ValueError(what + ": the operands' shapes differ")
        n_major, n_minor = (x.shape[0], x.shape[1]) if is_csr else (x.shape[1], x.shape[0])
        xs = np.zeros(n_minor, acc_t)
        ys = np.zeros(n_minor, acc_t)
        seen = np.zeros(n_minor, np.bool_)
        touched = np.empty(n_minor, np.int32)
        cap = n_major * n_minor if fill else x.indptr[n_major] + y.indptr[n_major]
        indices = np.empty(cap, np.int32)
        indptr = np.zeros(n_major + 1, np.int32)
        pos = 0
        for i in range(n_major):
            count = 0
            for p in range(_U(x.indptr[i]), _U(x.indptr[i + 1])):
                j = x.indices[p]
                xs[j] += x.data[p]
                if not seen[j]:
                    seen[j] = True
                    touched[count] = j
                    count += 1
            for p in range(_U(y.indptr[i]), _U(y.indptr[i + 1])):
                j = y.indices[p]
                ys[j] += y.data[p]
                if not seen[j]:
                    seen[j] = True
                    touched[count] = j
                    count += 1
            if fill:
                for j in range(n_minor):
                    if compare(xs[j], ys[j]):
                        indices[pos] = j
                        pos += 1
            else:
                row = np.sort(touched[:count])
                for t in range(count):
                    j = row[t]
                    if compare(xs[j], ys[j]):
                        indices[pos] = j
                        pos += 1
            for t in range(count):
                j = touched[t]
                xs[j] = 0
                ys[j] = 0
                seen[j] = False
            indptr[i + 1] = pos
        data = np.ones(pos, np.uint8)
        return build(data, indices[:pos].copy(), indptr, x.shape)

    return compare_sparse_sparse


def _comparison_sparse_dense(op, node, **kwargs):
    """``x <op> y`` of a sparse and a dense matrix: a dense uint8 matrix."""
    _, compare = _comparison_function(op)
    is_csr = _fmt(node.inputs[0]) == "csr"
    acc_t = _scalar_type(np.result_type(node.inputs[0].type.dtype, node.inputs[1].type.dtype))
    what = type(op).__name__

    @numba_njit
    def compare_sparse_dense(x, y):
        if x.shape[0] != y.shape[0] or x.shape[1] != y.shape[1]:
            raise ValueError(what + ": the operands' shapes differ")
        dense = np.zeros((x.shape[0], x.shape[1]), acc_t)
        for i in range(x.indptr.shape[0] - 1):
            for p in range(_U(x.indptr[i]), _U(x.indptr[i + 1])):
                if is_csr:
                    dense[i, x.indices[p]] += x.data[p]
                else:
                    dense[x.indices[p], i] += x.data[p]
        out = np.empty((x.shape[0], x.shape[1]), np.uint8)
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                out[i, j] = 1 if compare(dense[i, j], y[i, j]) else 0
        return out

    return compare_sparse_dense


for _cls in (
    sm.EqualSparseSparse, sm.NotEqualSparseSparse, sm.LessThanSparseSparse,
    sm.GreaterThanSparseSparse, sm.LessEqualSparseSparse, sm.GreaterEqualSparseSparse,
):
    _register(_cls)(_comparison_sparse_sparse)
for _cls in (
    sm.EqualSparseDense, sm.NotEqualSparseDense, sm.LessThanSparseDense,
    sm.GreaterThanSparseDense, sm.LessEqualSparseDense, sm.GreaterEqualSparseDense,
):
    _register(_cls)(_comparison_sparse_dense)


# --------------------------------------------------------------------------- #
# Block diagonal
# --------------------------------------------------------------------------- #
@numba_njit
def _append_block(bd, bi, bp, minor_offset, data, indices, indptr, pos, major):
    """Append a block's compressed rows (columns) after ``major`` rows, shifted by ``minor_offset``."""
    for i in range(bp.shape[0] - 1):
        for p in range(_U(bp[i]), _U(bp[i + 1])):
            data[pos] = bd[p]
            indices[pos] = bi[p] + minor_offset
            pos += 1
        major += 1
        indptr[major] = pos
    return pos, major


@_register(slinalg.SparseBlockDiagonal)
def numba_funcify_SparseBlockDiagonal(op, node, **kwargs):
    """The blocks, sparse or dense (their nonzeros), along the diagonal of a CSR / CSC matrix."""
    fmt = op.format
    is_csr = fmt == "csr"
    out_t = _scalar_type(node.outputs[0].type.dtype)
    n = len(node.inputs)
    converters = []
    for var in node.inputs:
        if _is_sparse(var):
            converters.append(_arrays_in(_fmt(var), fmt))
        else:
            converters.append(_dense_arrays(is_csr))
    names = [f"x{k}" for k in range(n)]
    lines = [f"def block_diag({', '.join(names)}):"]
    for k in range(n):
        lines.append(f"    d{k}, i{k}, p{k} = conv{k}(x{k})")
    lines.append("    n_rows = " + " + ".join(f"x{k}.shape[0]" for k in range(n)))
    lines.append("    n_cols = " + " + ".join(f"x{k}.shape[1]" for k in range(n)))
    lines.append("    nnz = " + " + ".join(f"p{k}[p{k}.shape[0] - 1]" for k in range(n)))
    lines.append("    n_major = n_rows if is_csr else n_cols")
    lines.append("    data = np.empty(nnz, out_t)")
    lines.append("    indices = np.empty(nnz, np.int32)")
    lines.append("    indptr = np.zeros(n_major + 1, np.int32)")
    lines.append("    pos = 0")
    lines.append("    major = 0")
    lines.append("    offset = 0")
    for k in range(n):
        lines.append(f"    pos, major = append(d{k}, i{k}, p{k}, offset, data, indices, indptr, pos, major)")
        lines.append(f"    offset += x{k}.shape[1] if is_csr else x{k}.shape[0]")
    lines.append("    return build(data, indices, indptr, (np.intp(n_rows), np.intp(n_cols)))")
    namespace = {"np": np, "out_t": out_t, "build": _builder(fmt), "is_csr": is_csr, "append": _append_block}
    namespace.update({f"conv{k}": c for k, c in enumerate(converters)})
    exec(compile("\n".join(lines) + "\n", "<lucent sparse block_diag>", "exec"), namespace)
    return numba_njit(namespace["block_diag"])


def _dense_arrays(is_csr):
    @numba_njit
    def arrays(x):
        return _compress_dense(x, is_csr)

    return arrays
