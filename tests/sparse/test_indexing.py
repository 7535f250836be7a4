"""Indexing sparse matrices (lucent.sparse.indexing) on both paths, against scipy.sparse."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import lucent.tensor as lt
from lucent.gradient import grad
from lucent.link.numba.linker import NumbaLinkerWarning
from lucent.sparse import basic as sb
from tests.helpers import run
from tests.sparse.test_basic import FORMATS, assert_sparse_equal, sample


@pytest.fixture(autouse=True)
def _quiet_fallback():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaLinkerWarning)
        yield


@pytest.mark.parametrize("format", list(FORMATS))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_slices_scalars_and_lists(format, dtype):
    x = sb.matrix(format, "x", dtype=dtype)
    i = lt.iscalar("i")
    m = sample(format, dtype, shape=(4, 5), kind="nan")
    outs = [x[1:3, ::2], x[2:], x[i, 3], x[[0, 2]], x[[0, 3], [0, 1]]]
    assert isinstance(outs[0].owner.op, sb.GetItem2d)
    assert isinstance(outs[2].owner.op, sb.GetItemScalar)
    assert isinstance(outs[3].owner.op, sb.GetItemList)
    assert isinstance(outs[4].owner.op, sb.GetItem2Lists)
    r = run(outs, {x: m, i: 1})
    assert_sparse_equal(r[0], m[1:3, ::2], format)
    assert_sparse_equal(r[1], m[2:], format)
    assert r[2].shape == () and r[2] == m[1, 3]
    assert_sparse_equal(r[3], m[[0, 2]], format)
    np.testing.assert_array_equal(r[4], np.asarray(m[[0, 3], [0, 1]]).ravel())


def test_static_shapes_follow_the_index():
    x = sb.as_sparse_variable(sp.csr_matrix(np.eye(5, 4)))
    assert x.type.shape == (5, 4)
    assert x[0:2, :].type.shape == (2, 4)
    assert x[1:5:2, 0:3].type.shape == (2, 3)
    assert sb.get_item_list(x, lt.lvector()).type.shape == (None, 4)


def test_refused_indices():
    x = sb.csr_matrix("x")
    with pytest.raises(NotImplementedError, match="no sparse vector"):
        x[1:3, 0]
    with pytest.raises(ValueError, match="Advanced indexing"):
        x[1:3, lt.ivector()]
    with pytest.raises(TypeError, match="vector of integers"):
        sb.get_item_list(x, lt.dvector())


@pytest.mark.parametrize("format", list(FORMATS))
def test_gradients_of_row_and_entry_selection(format):
    xd = lt.dmatrix("xd")
    x = sb.csr_from_dense(xd) if format == "csr" else sb.csc_from_dense(xd)
    a = sample(format, shape=(4, 3)).toarray() + 1.0
    g_rows = run(grad(sb.dense_from_sparse(x[[0, 2]]).sum(), xd), {xd: a})
    expected = np.zeros_like(a)
    expected[[0, 2]] = 1
    np.testing.assert_allclose(g_rows, expected)
    g_entries = run(grad(x[[0, 3], [1, 2]].sum(), xd), {xd: a})
    expected = np.zeros_like(a)
    expected[0, 1] = expected[3, 2] = 1
    np.testing.assert_allclose(g_entries, expected)


def test_construct_sparse_from_list():
    x = lt.dmatrix("x")
    values = lt.dmatrix("values")
    ilist = lt.lvector("ilist")
    out = sb.construct_sparse_from_list(x, values, ilist)
    v = np.arange(6.0).reshape(2, 3)
    got = run(out, {x: np.zeros((4, 3)), values: v, ilist: np.array([3, 1])})
    expected = np.zeros((4, 3))
    expected[[3, 1]] = v
    assert got.format == "csc"
    np.testing.assert_array_equal(got.toarray(), expected)
    w = np.arange(12.0).reshape(4, 3)
    g = run(grad((sb.dense_from_sparse(out) * w).sum(), values), {x: np.zeros((4, 3)), values: v, ilist: np.array([3, 1])})
    np.testing.assert_array_equal(g, w[[3, 1]])
