"""The arithmetic ops of lucent.sparse.math on both paths, against scipy.sparse."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import lucent
import lucent.graph.traversal
import lucent.tensor as lt
from lucent.gradient import grad
from lucent.link.numba.linker import NumbaLinkerWarning
from lucent.sparse import basic as sb
from lucent.sparse import math as sm
from lucent.sparse.type import SparseTensorType
from tests.helpers import run
from tests.sparse.test_basic import FORMATS, assert_sparse_equal, sample

KINDS = ["random", "empty", "nan"]
DTYPES = ["float64", "float32"]


@pytest.fixture(autouse=True)
def _quiet_fallback():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaLinkerWarning)
        yield


@pytest.mark.parametrize("format", list(FORMATS))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", KINDS)
def test_add_sub_neg_sparse_sparse(format, dtype, kind):
    x = sb.matrix(format, "x", dtype=dtype)
    y = sb.matrix(format, "y", dtype=dtype)
    a, b = sample(format, dtype, kind=kind), sample(format, dtype, kind=kind) * 2
    assert isinstance((x + y).owner.op, sm.AddSparseSparse)
    s, d, n = run([x + y, x - y, -x], {x: a, y: b})
    assert_sparse_equal(s, (a + b).asformat(format), format)
    assert_sparse_equal(d, (a - b).asformat(format), format)
    assert_sparse_equal(n, -a, format)


@pytest.mark.parametrize("kind", KINDS)
def test_add_sparse_dense_is_dense(kind):
    x = sb.csr_matrix("x")
    y = lt.dmatrix("y")
    a = sample("csr", kind=kind)
    b = np.ones(a.shape)
    assert isinstance((x + y).owner.op, sm.AddSparseDense) and isinstance((y + x).owner.op, sm.AddSparseDense)
    r1, r2, r3 = run([x + y, y + x, sm.subtract(y, x)], {x: a, y: b})
    for got, expected in ((r1, a.toarray() + b), (r2, a.toarray() + b), (r3, b - a.toarray())):
        assert isinstance(got, np.ndarray)
        np.testing.assert_array_equal(got, expected)


def test_add_upcasts_and_checks_shapes():
    x = sb.csr_matrix("x", dtype="float32")
    y = sb.csc_matrix("y", dtype="float64")
    out = sm.add(x, y)
    assert out.type == SparseTensorType("csr", "float64")
    got = run(out, {x: sample("csr", "float32"), y: sample("csc")})
    assert got.format == "csr" and got.dtype == np.float64
    with pytest.raises(ValueError, match="shapes differ"):
        run(out, {x: sample("csr", "float32"), y: sample("csc", shape=(2, 2))})
    with pytest.raises(TypeError, match="at least one sparse"):
        sm.add(lt.dmatrix(), lt.dmatrix())


@pytest.mark.parametrize("format", list(FORMATS))
@pytest.mark.parametrize("kind", KINDS)
def test_multiply(format, kind):
    x = sb.matrix(format, "x", dtype="float64")
    y = sb.matrix(format, "y", dtype="float64")
    d = lt.dmatrix("d")
    s = lt.dscalar("s")
    a = sample(format, kind=kind)
    b = sample(format, kind=kind) + FORMATS[format](np.ones(a.shape))
    dense = np.arange(a.shape[0] * a.shape[1], dtype=float).reshape(a.shape) + 1
    ss, sd, ds, sc = run([x * y, x * d, d * x, x * s], {x: a, y: b, d: dense, s: 3.0})
    assert_sparse_equal(ss, a.multiply(b).asformat(format), format)
    for got in (sd, ds):
        assert sp.issparse(got) and got.format == format
        np.testing.assert_array_equal(got.toarray(), a.toarray() * dense)
    np.testing.assert_array_equal(sc.toarray(), a.toarray() * 3)
    with pytest.raises(NotImplementedError, match="dense vector"):
        x * lt.dvector()


@pytest.mark.parametrize("format", list(FORMATS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_structured_dot(format, dtype):
    x = sb.matrix(format, "x", dtype=dtype)
    y = sb.matrix(format, "y", dtype=dtype)
    d = lt.matrix("d", dtype=dtype)
    a = sample(format, dtype)
    dense = np.arange(8, dtype=dtype).reshape(4, 2)
    left = np.arange(6, dtype=dtype).reshape(2, 3)
    sd = run(sm.structured_dot(x, d), {x: a, d: dense})
    assert isinstance(sd, np.ndarray) and sd.dtype == dtype
    np.testing.assert_allclose(sd, a.toarray() @ dense, rtol=1e-5)
    ds = run(sm.structured_dot(d, x), {x: a, d: left})
    np.testing.assert_allclose(ds, left @ a.toarray(), rtol=1e-5)
    ss = run(x.dot(y), {x: a, y: a.T.asformat(format)})
    assert sp.issparse(ss) and ss.format == format
    np.testing.assert_allclose(ss.toarray(), a.toarray() @ a.toarray().T, rtol=1e-5)
    with pytest.raises(ValueError, match="do not align"):
        run(sm.structured_dot(x, d), {x: a, d: left})


@pytest.mark.parametrize("format", list(FORMATS))
def test_structured_dot_gradients(format):
    x = sb.matrix(format, "x", dtype="float64")
    d = lt.dmatrix("d")
    a = sample(format)
    dense = np.arange(8.0).reshape(4, 2)
    cost = (sm.structured_dot(x, d) ** 2).sum()
    gx, gd = grad(cost, [x, d])
    assert gx.type.format == format
    gx_val, gd_val = run([gx, gd], {x: a, d: dense})
    g_out = 2 * (a.toarray() @ dense)
    # structured: the gradient of x lives on x's stored entries only
    np.testing.assert_allclose(gx_val.toarray(), (g_out @ dense.T) * (a.toarray() != 0))
    np.testing.assert_allclose(gd_val, a.toarray().T @ g_out)


def test_gradients_of_add_and_multiply():
    xd = lt.dmatrix("xd")
    yd = lt.dmatrix("yd")
    x, y = sb.csr_from_dense(xd), sb.csr_from_dense(yd)
    cost = (sb.dense_from_sparse(x * y + x) + sm.add(x, yd)).sum()
    gx, gy = grad(cost, [xd, yd])
    a = sample("csr").toarray()
    b = np.full(a.shape, 2.0)
    gx_val, gy_val = run([gx, gy], {xd: a, yd: b})
    nz = (a != 0).astype(float)
    np.testing.assert_allclose(gx_val, (b + 2) * nz)
    np.testing.assert_allclose(gy_val, a * nz + 1)


def test_conjugate():
    x = sb.csr_matrix("x", dtype="complex128")
    m = sp.csr_matrix(np.array([[1 + 2j, 0], [0, 3 - 1j]]))
    got = run(x.conj(), {x: m})
    assert_sparse_equal(got, m.conj(), "csr")
    real = sb.csr_matrix("r")
    assert sm.conjugate(real) is real


@pytest.mark.parametrize("format", list(FORMATS))
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("sparse_grad", [False, True])
def test_sp_sum_and_its_gradients(format, axis, sparse_grad):
    xd = lt.dmatrix("xd")
    x = sb.csr_from_dense(xd) if format == "csr" else sb.csc_from_dense(xd)
    a = sample(format, kind="nan").toarray()
    a[np.isnan(a)] = 5.0
    total = sm.sp_sum(x, axis=axis, sparse_grad=sparse_grad)
    assert isinstance(total.owner.op, sm.SpSum)
    np.testing.assert_allclose(run(total, {xd: a}), a.sum(axis=axis))
    weights = np.arange(1.0, 1.0 + (a.size if axis is None else a.shape[1 - axis]))
    cost = (total * (weights if axis is not None else 2.0)).sum()
    g = run(grad(cost, xd), {xd: a})
    full = np.full(a.shape, 2.0) if axis is None else (weights[None, :] if axis == 0 else weights[:, None]) * np.ones(a.shape)
    np.testing.assert_allclose(g, full * (a != 0) if sparse_grad else full)
    with pytest.raises(ValueError, match="Illegal value"):
        sm.SpSum(axis=2)


@pytest.mark.parametrize("name", ["lt", "gt", "le", "ge", "eq", "neq"])
def test_comparisons(name):
    import operator

    py_op = {"lt": operator.lt, "gt": operator.gt, "le": operator.le, "ge": operator.ge,
             "eq": operator.eq, "neq": operator.ne}[name]
    x, y = sb.csr_matrix("x"), sb.csr_matrix("y")
    d = lt.dmatrix("d")
    a = sp.csr_matrix(np.array([[1.0, 0.0, 2.0], [-1.0, 0.0, 0.0]]))
    b = sp.csr_matrix(np.array([[1.0, 1.0, 2.0], [1.0, 4.0, 0.0]]))
    fn = getattr(sm, name)
    ss, sd, ds = run([fn(x, y), fn(x, d), fn(d, x)], {x: a, y: b, d: b.toarray()})
    assert sp.issparse(ss) and ss.dtype == np.uint8 and ss.format == "csr"
    np.testing.assert_array_equal(ss.toarray(), py_op(a.toarray(), b.toarray()))
    assert isinstance(sd, np.ndarray) and sd.dtype == np.uint8
    np.testing.assert_array_equal(sd, py_op(a.toarray(), b.toarray()))
    np.testing.assert_array_equal(ds, py_op(b.toarray(), a.toarray()))
    if name in ("lt", "gt", "le", "ge"):
        dunder = {"lt": "__lt__", "gt": "__gt__", "le": "__le__", "ge": "__ge__"}[name]
        assert isinstance(getattr(x, dunder)(y).type, SparseTensorType)


@pytest.mark.parametrize("format", list(FORMATS))
def test_dot_is_dense_with_regular_gradients(format):
    x = sb.matrix(format, "x", dtype="float64")
    y = sb.matrix(format, "y", dtype="float64")
    d, v = lt.dmatrix("d"), lt.dvector("v")
    a = sample(format)
    b = np.arange(8.0).reshape(4, 2)
    outs = [sm.dot(x, d), sm.dot(d.T, x.T), sm.dot(x, y), sm.dot(x, v), sm.dot(lt.dvector("w"), x)]
    w = np.arange(3.0)
    sd, ds, ss, sv, vs = run(outs, {x: a, d: b, y: a.T.asformat(format), v: np.arange(4.0), outs[-1].owner.inputs[0]: w})
    dense = a.toarray()
    for got, expected in ((sd, dense @ b), (ds, b.T @ dense.T), (ss, dense @ dense.T), (sv, dense @ np.arange(4.0)), (vs, w @ dense)):
        assert isinstance(got, np.ndarray)
        np.testing.assert_allclose(got, expected)
    assert str(outs[0].owner.op) == "SparseDot"
    # regular gradient: every entry of the sparse operand gets one
    xd = lt.dmatrix("xd")
    g = run(grad(sm.dot(sb.csr_from_dense(xd), d).sum(), xd), {xd: dense, d: b})
    np.testing.assert_allclose(g, np.ones((3, 2)) @ b.T)
    gv = run(grad(sm.dot(sb.csc_from_dense(xd), v).sum(), v), {xd: dense, v: np.arange(4.0)})
    np.testing.assert_allclose(gv, dense.sum(axis=0))
    with pytest.raises(TypeError, match="at least one sparse"):
        sm.dot(d, d)


def test_tensor_dot_dispatches_to_the_structured_dot():
    # As PyTensor's SparseVariable.__dot__ / __rdot__: lt.dot of a sparse operand is structured_dot.
    x, y = sb.csr_matrix("x"), sb.csc_matrix("y")
    d = lt.dmatrix("d")
    ops = {type(n.op) for n in lucent.graph.traversal.applys_between([x, y, d], [lt.dot(x, y), lt.dot(d, x)])}
    assert sm.StructuredDot in ops and sm.Dot not in ops
    assert not isinstance(lt.dot(d, d).owner.op, sm.StructuredDot)
    a = sample("csr", shape=(3, 3))
    got, got_dense = run([lt.dot(x, y), lt.dot(d, x)], {x: a, y: a.tocsc(), d: a.toarray()})
    np.testing.assert_allclose(got.toarray(), a.toarray() @ a.toarray())
    np.testing.assert_allclose(got_dense, a.toarray() @ a.toarray())
