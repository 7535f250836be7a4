"""Storage ops (lucent.sparse.structure) on both paths, against scipy.sparse."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.link.numba.linker import NumbaLinkerWarning
from lucent.sparse import basic as sb
from tests.helpers import run
from tests.sparse.test_basic import FORMATS, assert_sparse_equal, sample


@pytest.fixture(autouse=True)
def _quiet_fallback():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaLinkerWarning)
        yield


def _messy(format):
    """A matrix with an explicit zero and unsorted indices."""
    cls = FORMATS[format]
    shape = (2, 3) if format == "csr" else (3, 2)
    return cls((np.array([0.0, 2.0, 1.0]), np.array([2, 1, 0]), np.array([0, 3, 3])), shape=shape)


@pytest.mark.parametrize("format", list(FORMATS))
def test_remove0_sorted_indices_and_clean(format):
    x = sb.matrix(format, "x", dtype="float64")
    m = _messy(format)
    r0, rs, rc = run([sb.remove0(x), sb.ensure_sorted_indices(x), sb.clean(x)], {x: m})
    assert r0.nnz == 2 and m.nnz == 3  # the input is not changed
    assert rs.has_sorted_indices and rs.nnz == 3
    assert rc.nnz == 2 and rc.has_sorted_indices
    for r in (r0, rs, rc):
        np.testing.assert_array_equal(r.toarray(), m.toarray())


@pytest.mark.parametrize("format", list(FORMATS))
def test_diag_and_square_diagonal(format):
    x = sb.matrix(format, "x", dtype="float64")
    v = lt.dvector("v")
    m = sample(format, shape=(4, 4), kind="nan")
    d, sq = run([sb.diag(x), sb.square_diagonal(v)], {x: m, v: np.array([1.0, 0.0, 3.0])})
    np.testing.assert_array_equal(d, m.diagonal())
    assert sq.format == "csc"
    np.testing.assert_array_equal(sq.toarray(), np.diag([1.0, 0.0, 3.0]))
    with pytest.raises(ValueError, match="square"):
        run(sb.diag(x), {x: sample(format, shape=(2, 3))})
    with pytest.raises(TypeError, match="data argument must be a vector"):
        sb.square_diagonal(lt.dmatrix())


@pytest.mark.parametrize("out_format", list(FORMATS))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_hstack_vstack(out_format, dtype):
    x, y = sb.csr_matrix("x"), sb.csc_matrix("y")
    a, b = sample("csr"), sample("csc", kind="nan")
    h, v = run([sb.hstack([x, y], format=out_format, dtype=dtype), sb.vstack([x, y], format=out_format, dtype=dtype)], {x: a, y: b})
    assert_sparse_equal(h, sp.hstack([a, b], format=out_format, dtype=dtype), out_format)
    assert_sparse_equal(v, sp.vstack([a, b], format=out_format, dtype=dtype), out_format)
    assert sb.hstack([x, y]).type.dtype == "float64" and sb.hstack([x, y]).type.format == "csc"
    with pytest.raises(ValueError, match="same number of rows"):
        sb.hstack([sb.csr_matrix(shape=(2, None)), sb.csr_matrix(shape=(3, None))])
    with pytest.raises(ValueError, match="dtype must be specified"):
        sb.HStack(format="csr")


@pytest.mark.parametrize("op", ["hstack", "vstack", "diag"])
def test_gradients(op):
    rng = np.random.default_rng(1)
    point = [rng.random((3, 3)), rng.random((3, 3))]

    def fn(a, b):
        sa, sb_ = sb.csr_from_dense(a), sb.csc_from_dense(b)
        if op == "diag":
            return sb.diag(sa) * sb.diag(sb_)
        out = getattr(sb, op)([sa, sb_], format="csr", dtype="float32")
        return sb.DenseFromSparse(structured=False)(out)

    verify_grad(fn, point, rng=rng, eps=1e-2 if op != "diag" else None)


@pytest.mark.parametrize("format", list(FORMATS))
def test_col_and_row_scale(format):
    x = sb.matrix(format, "x", dtype="float64")
    c, r = lt.dvector("c"), lt.dvector("r")
    m = sample(format, shape=(3, 4))
    cs, rs = run([sb.col_scale(x, c), sb.row_scale(x, r)], {x: m, c: np.arange(4.0), r: np.arange(3.0)})
    assert cs.format == rs.format == format
    np.testing.assert_allclose(cs.toarray(), m.toarray() * np.arange(4.0))
    np.testing.assert_allclose(rs.toarray(), m.toarray() * np.arange(3.0)[:, None])
    with pytest.raises(ValueError, match="scale"):
        run(sb.col_scale(x, c), {x: m, c: np.arange(3.0)})


@pytest.mark.parametrize("scale", ["col_scale", "row_scale"])
def test_scale_gradients(scale):
    rng = np.random.default_rng(2)
    point = [rng.random((3, 4)), rng.random(4 if scale == "col_scale" else 3)]

    def fn(a, s):
        return sb.DenseFromSparse(structured=False)(getattr(sb, scale)(sb.csc_from_dense(a), s))

    verify_grad(fn, point, rng=rng)
