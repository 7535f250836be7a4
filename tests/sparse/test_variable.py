"""SparseVariable / SparseConstant: printing, operators, dense fallbacks."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import lucent
import lucent.tensor as lt
from lucent.link.numba.linker import NumbaLinkerWarning
from lucent.sparse import basic as sb
from lucent.sparse.type import SparseTensorType
from lucent.sparse.variable import SparseConstant, SparseVariable, constant
from lucent.tensor.type import DenseTensorType
from tests.helpers import run

VALUE = [[1.1, 0.0, 2.0], [-1.0, 0.0, 0.0]]


@pytest.fixture(autouse=True)
def _quiet_fallback():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaLinkerWarning)
        yield


def test_printing():
    x = sb.csr_matrix("x")
    assert isinstance(x, SparseVariable)
    assert str(x) == "SparseVariable{csr,float64}" and x.format == "csr"
    c = constant(sp.csc_matrix(np.eye(3)))
    assert isinstance(c, SparseConstant)
    assert str(c) == "SparseConstant{csc,float64,shape=(3, 3),nnz=3}"


def test_constant_copies_and_merges_by_value():
    m = sp.csr_matrix(np.eye(2))
    c1, c2 = constant(m), constant(m.copy())
    assert c1.data is not m
    assert c1.signature() == c2.signature()
    assert c1.signature() != constant(sp.csr_matrix(2 * np.eye(2))).signature()
    with pytest.raises(TypeError, match="scipy.sparse.spmatrix"):
        constant(np.eye(2))
    x = sb.csr_matrix("x")
    got = run(x + m, {x: m})
    np.testing.assert_array_equal(got.toarray(), 2 * np.eye(2))


def test_a_sparse_constant_is_no_scalar_constant():
    from lucent.tensor.exceptions import NotScalarConstantError

    c = sb.as_sparse_or_tensor_variable(sp.csr_matrix(np.eye(1)))
    assert isinstance(lt.as_tensor_variable(c), SparseConstant)
    for only in (True, False):
        with pytest.raises(NotScalarConstantError):
            lt.get_underlying_scalar_constant_value(c, only_process_constants=only)


def test_structure_properties():
    x = sb.csc_matrix("x")
    m = sp.csc_matrix(np.array(VALUE))
    assert x.ndim == 2 and x.dtype == "float64"
    shape, size = run([x.shape, x.size], {x: m})
    assert tuple(shape) == (2, 3)
    assert size == 3  # stored entries, not rows * columns


@pytest.mark.parametrize("method", ["__neg__", "zeros_like", "ones_like", "T", "astype"])
def test_methods_that_stay_sparse(method):
    x = sb.csr_from_dense(lt.dmatrix("xd"))
    if method == "T":
        z = x.T
    elif method == "astype":
        z = x.astype("float32")
    else:
        z = getattr(x, method)()
    assert isinstance(z.type, SparseTensorType)
    got = run(z, {x.owner.inputs[0]: np.array(VALUE)})
    assert sp.issparse(got)


@pytest.mark.parametrize("method", ["exp", "mean", "max", "__abs__", "flatten", "sqrt", "copy"])
def test_dense_methods_convert_with_a_warning(method):
    xd = lt.dmatrix("xd")
    x = sb.csr_from_dense(xd)
    with pytest.warns(UserWarning, match="converted to dense"):
        z = getattr(x, method)()
    assert getattr(x, method)._is_dense_override
    assert isinstance(z.type, DenseTensorType)
    value = np.abs(np.array(VALUE))
    reference = {"__abs__": np.abs, "flatten": np.ravel, "copy": np.copy}
    expected = (reference[method] if method in reference else getattr(np, method))(value)
    np.testing.assert_allclose(run(z, {xd: value}), expected)


def test_dense_binary_operators_convert_both_operands():
    x = sb.csr_from_dense(lt.dmatrix("x"))
    y = sb.csr_from_dense(lt.dmatrix("y"))
    with pytest.warns(UserWarning, match="converted to dense"):
        z = x / y
    assert isinstance(z.type, DenseTensorType)
    a, b = np.array(VALUE), np.full((2, 3), 2.0)
    np.testing.assert_allclose(run(z, {x.owner.inputs[0]: a, y.owner.inputs[0]: b}), a / b)


def test_sum_is_dense_and_its_gradient_structured_on_request():
    xd = lt.dmatrix("xd")
    x = sb.csr_from_dense(xd)
    assert isinstance(x.sum().type, DenseTensorType)
    value = np.array(VALUE)
    np.testing.assert_allclose(run(x.sum(axis=0), {xd: value}), value.sum(axis=0))
    g_regular = run(lucent.grad(x.sum(), xd), {xd: value})
    g_structured = run(lucent.grad(x.sum(sparse_grad=True), xd), {xd: value})
    np.testing.assert_allclose(g_regular, np.ones_like(value))
    np.testing.assert_allclose(g_structured, (value != 0).astype(float))


def test_unsupported_operations_say_so():
    x = sb.csr_matrix("x")
    with pytest.raises(NotImplementedError, match="no sparse vector"):
        x[0]
    with pytest.raises(NotImplementedError, match="comparing a csr and a csc"):
        x < sb.csc_matrix()
