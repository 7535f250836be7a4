"""The ops of lucent.sparse.basic on both paths, against scipy.sparse."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import lucent
import lucent.tensor as lt
from lucent.gradient import grad, verify_grad
from lucent.link.numba.linker import NumbaLinkerWarning
from lucent.sparse import basic as sb
from lucent.sparse.type import SparseTensorType
from tests.helpers import run

FORMATS = {"csr": sp.csr_matrix, "csc": sp.csc_matrix}


def sample(format, dtype="float64", shape=(3, 4), kind="random"):
    """A sparse value of ``format``: random, empty (no row) or holding a NaN."""
    if kind == "empty":
        return FORMATS[format](np.zeros((0, shape[1]), dtype=dtype))
    rng = np.random.default_rng(42)
    dense = rng.normal(size=shape) * (rng.random(shape) < 0.5)
    if kind == "nan":
        dense[0, 0] = np.nan
    return FORMATS[format](dense.astype(dtype))


CASES = [(f, d, k) for f in FORMATS for d in ("float64", "float32") for k in ("random", "empty", "nan")]
CASE_IDS = [f"{f}-{d}-{k}" for f, d, k in CASES]


def assert_sparse_equal(got, expected, format):
    assert sp.issparse(got) and got.format == format
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got.toarray(), expected.toarray())


def _sparse_matrix(format, dtype):
    return sb.matrix(format, name="x", dtype=dtype)


@pytest.mark.parametrize("format,dtype,kind", CASES, ids=CASE_IDS)
def test_csm_properties_and_csm_round_trip(format, dtype, kind):
    x = _sparse_matrix(format, dtype)
    m = sample(format, dtype, kind=kind)
    data, indices, indptr, shape = sb.csm_properties(x)
    rebuilt = sb.CSM(format)(data, indices, indptr, shape)
    d, i, p, s, r = run([data, indices, indptr, shape, rebuilt], {x: m})
    np.testing.assert_array_equal(d, m.data)
    np.testing.assert_array_equal(i, m.indices)
    np.testing.assert_array_equal(p, m.indptr)
    np.testing.assert_array_equal(s, m.shape)
    assert i.dtype == p.dtype == s.dtype == np.int32 and d.dtype == dtype
    assert_sparse_equal(r, m, format)


def test_csm_builds_from_arrays():
    data = lt.dvector("data")
    out = sb.CSC(data, [0, 1, 1], [0, 1, 2, 3], [2, 3])
    got = run(out, {data: np.array([1.0, 2.0, 3.0])})
    expected = sp.csc_matrix((np.array([1.0, 2.0, 3.0]), [0, 1, 1], [0, 1, 2, 3]), shape=(2, 3))
    assert_sparse_equal(got, expected, "csc")


def test_csm_rejects_bad_inputs():
    with pytest.raises(ValueError, match="'csr' or 'csc'"):
        sb.CSM("bsr")
    with pytest.raises(TypeError, match="data argument must be a vector"):
        sb.CSR(lt.dmatrix(), [0], [0, 1], [1, 1])
    with pytest.raises(TypeError, match="indices must be a vector of integers"):
        sb.CSR(lt.dvector(), lt.dvector(), [0, 1], [1, 1])
    data = lt.dvector()
    f = lucent.function([data], sb.CSR(data, [0], [0, 1], [1, 1]), mode="FAST_COMPILE")
    with pytest.raises(ValueError, match="same number of elements"):
        f(np.array([1.0, 2.0]))


@pytest.mark.parametrize("format,dtype,kind", CASES, ids=CASE_IDS)
def test_dense_from_sparse(format, dtype, kind):
    x = _sparse_matrix(format, dtype)
    m = sample(format, dtype, kind=kind)
    got = run(sb.dense_from_sparse(x), {x: m})
    assert isinstance(got, np.ndarray) and got.dtype == dtype
    np.testing.assert_array_equal(got, m.toarray())
    assert run(x.toarray(), {x: m}).shape == m.shape


@pytest.mark.parametrize("format,dtype,kind", CASES, ids=CASE_IDS)
def test_sparse_from_dense(format, dtype, kind):
    x = lt.matrix("x", dtype=dtype)
    dense = sample(format, dtype, kind=kind).toarray()
    conv = sb.csr_from_dense if format == "csr" else sb.csc_from_dense
    out = conv(x)
    assert out.type == SparseTensorType(format, dtype)
    got = run(out, {x: dense})
    assert_sparse_equal(got, FORMATS[format](dense), format)


def test_sparse_from_dense_vector_is_a_row_and_sparse_passes_through():
    v = lt.dvector("v")
    got = run(sb.csr_from_dense(v), {v: np.array([0.0, 2.0])})
    assert got.shape == (1, 2)
    s = sb.csr_matrix()
    assert sb.csc_from_dense(s) is s
    assert sb.dense_from_sparse(v) is v
    with pytest.raises(TypeError, match="at most 2 dimensions"):
        sb.csr_from_dense(lt.tensor3())


@pytest.mark.parametrize("format,dtype,kind", CASES, ids=CASE_IDS)
def test_transpose(format, dtype, kind):
    x = _sparse_matrix(format, dtype)
    m = sample(format, dtype, kind=kind)
    other = "csc" if format == "csr" else "csr"
    assert x.T.type.format == other
    got = run(sb.transpose(x), {x: m})
    assert_sparse_equal(got, m.T.asformat(other), other)


def test_cast():
    x = sb.csr_matrix("x", dtype="float64")
    got = run(sb.cast(x, "float32"), {x: sample("csr")})
    assert got.dtype == np.float32 and got.format == "csr"
    assert x.astype("int32").type.dtype == "int32"


def test_sp_ones_and_zeros_like():
    x = sb.csc_matrix("x")
    m = sample("csc")
    ones, zeros = run([sb.sp_ones_like(x), sb.sp_zeros_like(x)], {x: m})
    np.testing.assert_array_equal(ones.toarray(), (m.toarray() != 0).astype(float))
    assert zeros.nnz == 0 and zeros.shape == m.shape


def test_infer_shape_avoids_running_the_op():
    x = sb.csr_matrix("x")
    for out in (x.toarray(), x.T, sb.csr_from_dense(lt.dmatrix())):
        node = out.owner
        shapes = node.op.infer_shape(None, node, [(lt.lscalar(), lt.lscalar())])
        assert len(shapes) == 1 and len(shapes[0]) == 2
    m = sample("csr")
    assert tuple(run(x.toarray().shape, {x: m})) == m.shape
    assert tuple(run(x.T.shape, {x: m})) == m.shape[::-1]


def test_fast_run_compiles_csr_csc_natively_and_bsr_on_python():
    x = sb.csr_matrix("x")
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumbaLinkerWarning)
        f = lucent.function([x], x.T, mode="FAST_RUN")
    assert f.maker.linker.python_fallback_reason is None and f.maker.linker.fallback_ops == []
    m = sample("csr")
    out = f(m)
    assert_sparse_equal(out, m.T.tocsc(), "csc")
    # int64 indices (SciPy's choice for large matrices) are converted on the way in
    m64 = sp.csr_matrix((m.data, m.indices.astype("int64"), m.indptr.astype("int64")), shape=m.shape)
    assert_sparse_equal(f(m64), m.T.tocsc(), "csc")
    b = sb.bsr_matrix("b")
    with pytest.warns(NumbaLinkerWarning, match="BSR matrices have no Numba representation"):
        lucent.function([b], sb.dense_from_sparse(b), mode="FAST_RUN")


def _grad_of(cost_builder, x_value):
    x = lt.dmatrix("x")
    cost = cost_builder(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaLinkerWarning)
        return run(grad(cost, x), {x: x_value})


def test_grad_through_sparse_conversions():
    dense = sample("csr").toarray()
    w = np.arange(12.0).reshape(3, 4)
    # regular gradient: every entry
    g = _grad_of(lambda x: (sb.DenseFromSparse(structured=False)(sb.csr_from_dense(x)) * w).sum(), dense)
    np.testing.assert_allclose(g, w)
    # structured gradient: only the stored entries
    g = _grad_of(lambda x: (sb.dense_from_sparse(sb.csc_from_dense(x)) * w).sum(), dense)
    np.testing.assert_allclose(g, w * (dense != 0))
    # through the parts, a transpose and a rebuild
    def parts(x):
        s = sb.csr_from_dense(x)
        d, i, p, shp = sb.csm_properties(s.T)
        return (sb.dense_from_sparse(sb.CSC(d * 2, i, p, shp)) * w.T).sum()

    g = _grad_of(parts, dense)
    np.testing.assert_allclose(g, 2 * w * (dense != 0))


def test_verify_grad_through_sparse():
    rng = np.random.default_rng(0)
    point = rng.normal(size=(3, 4))
    point[point < 0] = 0

    def fn(x):
        s = sb.csc_from_dense(x)
        return sb.dense_from_sparse(sb.transpose(s)) ** 2

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaLinkerWarning)
        verify_grad(fn, [point], rng=rng)


def test_as_sparse_variable():
    m = sp.csr_matrix(np.eye(2))
    c = sb.as_sparse_variable(m)
    assert c.type == SparseTensorType("csr", "float64", shape=(2, 2))
    assert sb.as_sparse_variable(c) is c
    with pytest.raises(TypeError, match="SparseTensorType"):
        sb.as_sparse_variable(lt.dmatrix())
    with pytest.raises(TypeError, match="Cannot convert"):
        sb.as_sparse_variable(np.eye(2))
    assert sb.as_sparse_or_tensor_variable(m).type.format == "csr"
    assert not sb._is_sparse_variable(sb.as_sparse_or_tensor_variable(np.eye(2)))
