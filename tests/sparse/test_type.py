"""SparseTensorType: construction, filtering, comparisons, memory, conversion."""

import numpy as np
import pytest
import scipy.sparse as sp

import lucent.tensor as lt
from lucent.sparse import basic as sb
from lucent.sparse.type import SparseTensorType, _is_sparse
from lucent.tensor.type import DenseTensorType, TensorType


def test_construction_and_identity():
    t = SparseTensorType("csr", "float64")
    assert t.format == "csr" and t.dtype == "float64" and t.shape == (None, None) and t.ndim == 2
    assert t == SparseTensorType("csr", "float64")
    assert hash(t) == hash(SparseTensorType("csr", "float64"))
    assert t != SparseTensorType("csc", "float64")
    assert t != SparseTensorType("csr", "float32")
    assert t != TensorType("float64", (None, None))
    assert SparseTensorType("bsr", "float32", shape=(None, 1)).shape == (None, 1)
    assert repr(t) == "Sparse(float64, (None, None), csr)"
    assert "format='csr'" in str(t)


def test_bad_arguments():
    with pytest.raises(ValueError, match="unsupported sparse format 'coo'"):
        SparseTensorType("coo", "float64")
    with pytest.raises(ValueError, match="2 dimensions"):
        SparseTensorType("csr", "float64", shape=(None,))


def test_clone_changes_only_what_is_asked():
    t = SparseTensorType("csr", "float64", shape=(3, None))
    assert t.clone() == t
    c = t.clone(format="csc")
    assert (c.format, c.dtype, c.shape) == ("csc", "float64", (3, None))
    c = t.clone(shape=(2, 1))
    assert (c.format, c.shape) == ("csr", (2, 1))


def test_is_a_tensor_type_but_not_dense():
    t = SparseTensorType("csc", "float64")
    assert isinstance(t, TensorType)
    assert not isinstance(t, DenseTensorType)
    assert isinstance(TensorType("float64", (None,)), DenseTensorType)


def test_filter_rules():
    t = SparseTensorType("csc", "float64")
    m = sp.csc_matrix(np.eye(3))
    assert t.filter(m) is m
    # another format is converted unless strict
    r = SparseTensorType("csr", "float64").filter(m)
    assert r.format == "csr" and np.array_equal(r.toarray(), np.eye(3))
    with pytest.raises(TypeError, match="strict mode"):
        SparseTensorType("csr", "float64").filter(m, strict=True)
    # upcast allowed, downcast only with allow_downcast
    assert t.filter(sp.csc_matrix(np.eye(2), dtype="int32")).dtype == "float64"
    f32 = SparseTensorType("csr", "float32")
    with pytest.raises(TypeError, match="dtype but got"):
        f32.filter(m)
    assert f32.filter(m, allow_downcast=True).dtype == "float32"
    # dense values are converted
    assert t.filter(np.eye(2)).format == "csc"
    with pytest.raises(TypeError, match="found a Variable"):
        t.filter(lt.dmatrix())
    with pytest.raises(TypeError, match="not compatible"):
        SparseTensorType("csc", "float64", shape=(2, 2)).filter(m)


def test_values_eq_approx_handles_nan_empty_and_explicit_zeros():
    t = SparseTensorType("csr", "float64")
    a = sp.csr_matrix(np.array([[np.nan, 1.0], [0.0, 2.0]]))
    assert t.values_eq_approx(a, a.copy())
    assert t.values_eq(a, a.copy())
    b = a.copy()
    b.data[1] += 1e-9
    assert t.values_eq_approx(a, b) and not t.values_eq(a, b)
    c = sp.csr_matrix(np.array([[0.0, 1.0], [0.0, 2.0]]))
    assert not t.values_eq_approx(a, c)
    assert not t.values_eq_approx(c, a)
    empty = sp.csr_matrix((0, 3))
    assert t.values_eq_approx(empty, sp.csr_matrix((0, 3)))
    assert not t.values_eq_approx(empty, sp.csr_matrix((3, 0)))
    # a stored zero equals a zero not stored
    z = sp.csr_matrix((np.array([0.0]), np.array([0]), np.array([0, 1, 1])), shape=(2, 2))
    assert t.values_eq(z, sp.csr_matrix((2, 2)))
    assert not t.values_eq_approx(np.eye(2), np.eye(2))


def test_may_share_memory():
    m = sp.csr_matrix(np.eye(3))
    assert SparseTensorType.may_share_memory(m, m)
    assert SparseTensorType.may_share_memory(m, m.data)
    assert SparseTensorType.may_share_memory(m.indices, m)
    assert not SparseTensorType.may_share_memory(m, m.copy())
    assert not SparseTensorType.may_share_memory(m, np.zeros(3))


def test_shape_info_and_size():
    t = SparseTensorType("csr", "float32")
    m = sp.csr_matrix(np.eye(3, dtype="float32"))
    info = t.get_shape_info(m)
    assert info == ((3, 3), 3, 3, 4, 3)
    assert t.get_size(info) == 3 * 4 + (3 + 4) * 4


def test_convert_variable():
    x = lt.dmatrix("x")
    y = sb.matrix("csc", dtype="float64", name="y")
    z = sb.matrix("csr", dtype="float64", name="z")
    assert y.type.convert_variable(z) is None
    assert z.type.convert_variable(y) is None
    res = y.type.convert_variable(x)
    assert res.type == y.type and isinstance(res.owner.op, sb.SparseFromDense)
    assert x.type.convert_variable(y) is y


def test_is_sparse():
    assert _is_sparse(sp.csr_matrix((1, 1)))
    assert not _is_sparse(np.zeros(1))
    with pytest.raises(NotImplementedError):
        _is_sparse(3)
