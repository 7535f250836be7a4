"""The sparse ops that move stored entries around, on both paths, against SciPy.

Indexing, storage clean-up, diagonals, comparisons, scattering rows and
block diagonals have native kernels (``dispatch/sparse_structure.py``): a
FAST_RUN graph of them runs without the object-mode fallback. One compiled
function per dtype checks every op on three kinds of matrix: an ordinary
one with an explicit zero, an empty one, and one with unsorted indices and
an entry stored twice. That sweep compiles some thirty kernels per dtype,
so it is marked slow; the default run checks the common ops (CSR) in one
smaller function.
"""

import numpy as np
import pytest
import scipy.sparse as sp

import lucent
import lucent.tensor as lt
from lucent.sparse import basic as sb
from lucent.sparse import math as sm
from lucent.sparse.indexing import construct_sparse_from_list, get_item_2lists_grad, get_item_list_grad
from lucent.sparse.linalg import block_diag
from lucent.sparse.structure import EnsureSortedIndices, Remove0

ROWS = np.array([0, 4, -1, 0], np.int32)
COLS = np.array([1, 3, 0, -4], np.int64)


def _values(dtype, seed, shape=(5, 4)):
    a = sp.random(*shape, density=0.5, format="csr", random_state=seed)
    a.data = np.round(a.data * 10) - 4  # small integers, some of them 0 (explicit zeros)
    return a.astype(dtype)


def _unsorted(a):
    """``a`` with the indices of each row / column reversed and its first entry stored twice."""
    a = a.copy()
    for i in range(len(a.indptr) - 1):
        s, e = a.indptr[i], a.indptr[i + 1]
        a.indices[s:e] = a.indices[s:e][::-1].copy()
        a.data[s:e] = a.data[s:e][::-1].copy()
    if a.nnz:
        fmt = type(a)
        a = fmt(
            (np.r_[a.data[:1], a.data], np.r_[a.indices[:1], a.indices], np.r_[0, a.indptr[1:] + 1]),
            shape=a.shape,
        )
    a.has_sorted_indices = False
    return a


def _cases(dtype):
    r = np.random.default_rng(0)
    dense = (r.normal(size=(5, 4)) * 3).round().astype(dtype)
    return {
        "plain": (_values(dtype, 0), _values(dtype, 1).tocsc(), dense),
        "empty": (sp.csr_matrix((5, 4), dtype=dtype), sp.csc_matrix((5, 4), dtype=dtype), np.zeros((5, 4), dtype)),
        "unsorted": (_unsorted(_values(dtype, 3)), _unsorted(_values(dtype, 4).tocsc()), dense),
    }


def _last_wins_rows(shape, rows, gz):
    out = np.zeros(shape, gz.dtype)
    for k, r in enumerate(rows):
        out[r] = gz[k]
    return out


def _expected(x, y, d, gz, v):
    """The outputs of the graph of ``test_structure_ops_match_scipy``, by SciPy / NumPy."""
    xd, yd = x.toarray(), y.toarray()
    cmp = lambda a, b, f: f(a, b).astype(np.uint8)  # noqa: E731
    grad2 = np.zeros(x.shape, v.dtype)
    for r, c, g in zip(ROWS, COLS, v):
        grad2[r, c] = g
    scatter = np.zeros(d.shape, d.dtype)
    for k, r in enumerate(ROWS):
        scatter[r] += d[k]
    return [
        xd, yd, xd,  # remove0, ensure_sorted_indices (copy and in place)
        np.diag(xd[:4, :4]), xd[1:4], yd[::-1, 1:3], yd[::-2, -3:],
        xd[2, -1], yd[-1, 0],
        x[ROWS].toarray(), y[ROWS].toarray(),
        np.asarray(x[ROWS, COLS]).ravel(), np.asarray(y[ROWS, COLS]).ravel(),
        _last_wins_rows(x.shape, ROWS, gz.toarray()), _last_wins_rows(y.shape, ROWS, gz.toarray()),
        grad2, grad2,
        scatter,
        cmp(xd, yd, np.equal), cmp(xd, yd, np.not_equal), cmp(xd, yd, np.less), cmp(xd, yd, np.greater_equal),
        cmp(xd, d, np.greater), cmp(xd, d, np.less_equal), cmp(d, yd, np.less),
        sp.block_diag([x, y, d], format="csr").toarray(), sp.block_diag([y, x], format="csc").toarray(),
    ]


def _check(got, want, outs, name):
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        if sp.issparse(g):
            assert g.format == outs[k].type.format and g.dtype == outs[k].type.dtype, (name, k)
            g = g.toarray()
        np.testing.assert_allclose(g, w, rtol=1e-6, err_msg=f"{name} case, output {k}")


def test_common_structure_ops_match_scipy(lucent_mode):
    x, y, d = sb.csr_matrix("x"), sb.csr_matrix("y"), lt.dmatrix("d")
    rows, cols = lt.constant(ROWS), lt.constant(COLS)
    outs = [
        sb.get_item_list(x, rows), sb.get_item_2lists(x, rows, cols), x[::-2, 1:], sb.get_item_scalar(x, (2, -1)),
        sb.remove0(x), sb.diag(x[:4]), sm.lt(x, y), sm.gt(x, d),
    ]
    f = lucent.function([x, y, d], outs, mode=lucent_mode)
    if lucent_mode == "FAST_RUN":
        assert not f.maker.linker.fallback_ops
    for name, (xv, yv, dv) in _cases("float64").items():
        yv = yv.tocsr()
        xd, yd = xv.toarray(), yv.toarray()
        want = [
            xv[ROWS].toarray(), np.asarray(xv[ROWS, COLS]).ravel(), xd[::-2, 1:], xd[2, -1],
            xd, np.diag(xd[:4]), (xd < yd).astype(np.uint8), (xd > dv).astype(np.uint8),
        ]
        _check(f(xv.copy(), yv, dv), want, outs, name)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_structure_ops_match_scipy(dtype, lucent_mode):
    x, y = sb.csr_matrix("x", dtype=dtype), sb.csc_matrix("y", dtype=dtype)
    gz, yr = sb.csr_matrix("gz", dtype=dtype), sb.csr_matrix("yr", dtype=dtype)
    d, v = lt.matrix("d", dtype=dtype), lt.vector("v", dtype=dtype)
    rows, cols = lt.constant(ROWS), lt.constant(COLS)
    i, j = lt.iscalar("i"), lt.lscalar("j")
    outs = [
        sb.remove0(x), sb.ensure_sorted_indices(y), EnsureSortedIndices(True)(x * 1),
        sb.diag(x[:4, :4]), x[1:4], y[::-1, 1:3], y[::-2, -3:],
        sb.get_item_scalar(x, (i, j)), sb.get_item_scalar(y, (-1, 0)),
        sb.get_item_list(x, rows), sb.get_item_list(y, rows), sb.get_item_2lists(x, rows, cols), sb.get_item_2lists(y, rows, cols),
        get_item_list_grad(x, rows, gz), get_item_list_grad(y, rows, gz),
        get_item_2lists_grad(x, rows, cols, v), get_item_2lists_grad(y, rows, cols, v),
        construct_sparse_from_list(d, d[:4], rows),
        sm.eq(x, yr), sm.neq(x, yr), sm.lt(x, yr), sm.ge(x, yr),
        sm.gt(x, d), sm.le(x, d), sm.lt(d, y),
        block_diag(x, y, d, format="csr"), block_diag(y, x, format="csc"),
    ]
    f = lucent.function([x, y, yr, gz, d, v, i, j], outs, mode=lucent_mode, on_unused_input="ignore")
    if lucent_mode == "FAST_RUN":
        assert not f.maker.linker.fallback_ops
    for name, (xv, yv, dv) in _cases(dtype).items():
        gv = _values(dtype, 7, (4, 4))
        vv = np.arange(1, 5).astype(dtype)
        got = f(xv.copy(), yv.copy(), yv.tocsr(), gv, dv, vv, np.int32(2), np.int64(-1))
        _check(got, _expected(xv, yv, dv, gv, vv), outs, name)
        # Remove0 stores no zero; EnsureSortedIndices sorts each row / column.
        assert np.count_nonzero(got[0].data) == got[0].nnz
        for m in got[1:3]:
            assert all(np.all(np.diff(m.indices[m.indptr[k]:m.indptr[k + 1]]) >= 0) for k in range(len(m.indptr) - 1))


def test_inplace_remove0_and_errors_in_kernels(lucent_mode):
    x = sb.csr_matrix("x")
    f = lucent.function([x], [sb.remove0(x * 2), sb.get_item_scalar(x, (7, 0))], mode=lucent_mode)
    a = _values("float64", 0)
    with pytest.raises(IndexError, match="out of (bounds|range)"):
        f(a)
    g = lucent.function([x], sb.remove0(x * 2), mode=lucent_mode)
    out = g(a)
    np.testing.assert_allclose(out.toarray(), 2 * a.toarray())
    assert np.count_nonzero(out.data) == out.nnz
    sq = lucent.function([x], sb.diag(x), mode=lucent_mode)
    with pytest.raises(ValueError, match="square"):
        sq(a)
    d = lt.dmatrix("d")
    scatter = lucent.function([d], construct_sparse_from_list(d, d[:2], lt.constant(np.array([0, 9]))),
                              mode=lucent_mode)
    with pytest.raises(IndexError, match="out of bounds"):
        scatter(np.ones((5, 4)))


def test_conjugate_of_complex_values(lucent_mode):
    x = sb.csc_matrix("x", dtype="complex128")
    f = lucent.function([x], sm.conjugate(x), mode=lucent_mode)
    a = (_values("float64", 2) + 1j * _values("float64", 2)).tocsc()
    out = f(a)
    assert out.format == "csc"
    np.testing.assert_allclose(out.toarray(), a.toarray().conj())
