"""Numba kernels of the products agree with ``perform``: every rank pair, dtypes, layouts, in place."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.link.numba.dispatch import blas  # noqa: F401 (registers the kernels)
from lucent.tensor.blas import Dot22, Gemm, Gemv, Ger
from lucent.tensor.math import Dot, MatMul
from tests.link.numba.test_shape import check, check_raises

rng = np.random.default_rng(0)


def _v(shape, dtype):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("int"):
        return rng.integers(-3, 4, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "float32"), ("float32", "float64"),
                                    ("int64", "int64"), ("int32", "int64"), ("bool", "bool")])
@pytest.mark.parametrize("ranks", [(1, 1), (2, 1), (1, 2), (2, 2)])
def test_dot(dtypes, ranks):
    a = lt.tensor(dtype=dtypes[0], shape=(None,) * ranks[0])
    b = lt.tensor(dtype=dtypes[1], shape=(None,) * ranks[1])
    out = Dot()(a, b)
    shapes = {(1, 1): ((4,), (4,)), (2, 1): ((3, 4), (4,)), (1, 2): ((4,), (4, 5)), (2, 2): ((3, 4), (4, 5))}
    sa, sb = shapes[ranks]
    check(out, _v(sa, dtypes[0]), _v(sb, dtypes[1]))
    # empty inner and outer dimensions
    check(out, _v(tuple(0 if d == sa[-1] else d for d in sa), dtypes[0]),
          _v(tuple(0 if k == 0 else d for k, d in enumerate(sb)), dtypes[1]))
    bad = tuple(d + 1 if k == 0 else d for k, d in enumerate(sb))
    check_raises(out, _v(sa, dtypes[0]), _v(bad, dtypes[1]), match="not aligned")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_dot22_layouts(dtype):
    x, y = lt.tensor(dtype=dtype, shape=(None, None)), lt.tensor(dtype=dtype, shape=(None, None))
    out = Dot22()(x, y)
    X, Y = _v((6, 4), dtype), _v((4, 5), dtype)
    check(out, X, Y, view=False)
    check(out, np.asfortranarray(X), Y)  # Fortran-ordered (a transpose)
    check(out, _v((4, 6), dtype).T, _v((8, 5), dtype)[::2])  # transposed and strided
    check(out, X[:, ::-1], np.asfortranarray(Y)[::-1])
    check(out, _v((0, 4), dtype), Y)
    check_raises(out, X, _v((5, 5), dtype), match=r"X \(6, 4\) and Y \(5, 5\) are not aligned")


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool"])
def test_matmul_batched(dtype):
    a = lt.tensor(dtype=dtype, shape=(None, None, None))
    b = lt.tensor(dtype=dtype, shape=(None, None, None))
    check(MatMul()(a, b), _v((3, 2, 4), dtype), _v((3, 4, 5), dtype))
    check(MatMul()(a, b), _v((3, 4, 2), dtype).transpose(0, 2, 1), _v((3, 4, 5), dtype)[:, :, ::-1])
    a1 = lt.tensor(dtype=dtype, shape=(1, None, None))
    check(MatMul()(a1, b), _v((1, 2, 4), dtype), _v((3, 4, 5), dtype))
    b1 = lt.tensor(dtype=dtype, shape=(None, 1, None, None))
    a4 = lt.tensor(dtype=dtype, shape=(None, None, None, None))
    check(MatMul()(a4, b1), _v((2, 3, 2, 4), dtype), _v((2, 1, 4, 1), dtype))
    check(MatMul()(lt.tensor(dtype=dtype, shape=(None, None)), lt.tensor(dtype=dtype, shape=(None, None))),
          _v((2, 3), dtype), _v((3, 4), dtype))
    check_raises(MatMul()(a, b), _v((3, 2, 4), dtype), _v((2, 4, 5), dtype), match="batch shapes")
    check_raises(MatMul()(a, b), _v((1, 2, 4), dtype), _v((2, 4, 5), dtype), match="batch shapes")
    check_raises(MatMul()(a, b), _v((3, 2, 4), dtype), _v((3, 3, 5), dtype), match="do not match")


def test_matmul_mixed_dtypes():
    a = lt.tensor(dtype="float32", shape=(None, None, None))
    b = lt.tensor(dtype="float64", shape=(None, None, None))
    check(MatMul()(a, b), _v((2, 3, 4), "float32"), _v((2, 4, 2), "float64"))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("alpha, beta", [(1.0, 0.0), (-0.5, 1.0), (2.0, 0.5), (0.0, 1.0)])
def test_gemm(dtype, inplace, alpha, beta):
    z, x, y = (lt.tensor(dtype=dtype, shape=(None, None)) for _ in range(3))
    a, b = lt.tensor(dtype=dtype, shape=()), lt.tensor(dtype=dtype, shape=())
    out = Gemm(inplace)(z, a, x, y, b)
    Z = _v((3, 5), dtype)
    if beta == 0:
        Z[0, 0] = np.nan  # not read when beta == 0
    args = (np.asarray(alpha, dtype), _v((3, 4), dtype), _v((4, 5), dtype), np.asarray(beta, dtype))
    check(out, Z, *args, inplace=inplace, view=None if inplace else False)
    check(out, Z, args[0], _v((4, 3), dtype).T, _v((5, 4), dtype).T, args[3], inplace=inplace)
    check_raises(out, Z, args[0], _v((3, 4), dtype), _v((3, 5), dtype), args[3], match="not aligned")
    check_raises(out, Z[:2], *args, match="accumulator has shape")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gemm_inplace_blends_when_blas_cannot_write_the_accumulator(dtype):
    """Gemm{inplace} writes z itself by BLAS, except when z overlaps an operand, is not stored by
    rows, or alpha is 0: then the product goes to a new array and is blended into z."""
    from lucent.link.numba.dispatch import numba_funcify

    z, x, y = (lt.tensor(dtype=dtype, shape=(None, None)) for _ in range(3))
    a, b = lt.tensor(dtype=dtype, shape=()), lt.tensor(dtype=dtype, shape=())
    node = Gemm(True)(z, a, x, y, b).owner
    kernel = numba_funcify(node.op, node)
    tol = {"rtol": 1e-12} if dtype == "float64" else {"rtol": 1e-5, "atol": 1e-5}
    alpha, beta = np.asarray(-0.5, dtype), np.asarray(2.0, dtype)
    Y = _v((4, 5), dtype)
    # z overlaps x: BLAS would read x while writing z
    Z = _v((3, 5), dtype)
    want = beta * Z + alpha * (Z[:, :4] @ Y)
    got = kernel(Z, alpha, Z[:, :4], Y, beta)
    assert got is Z or np.shares_memory(got, Z)
    np.testing.assert_allclose(Z, want, **tol)
    # z stored by columns, and z reversed: not a BLAS output
    for make in (np.asfortranarray, lambda v: v[::-1]):
        Z = make(_v((3, 5), dtype))
        X = _v((3, 4), dtype)
        want = beta * Z + alpha * (X @ Y)
        got = kernel(Z, alpha, X, Y, beta)
        assert np.shares_memory(got, Z)
        np.testing.assert_allclose(Z, want, **tol)
    # alpha 0: the operands' NaN still reach the result, as in perform
    Z, X = _v((3, 5), dtype), _v((3, 4), dtype)
    X[1, 2] = np.nan
    want = beta * Z + 0.0 * (X @ Y)
    kernel(Z, np.asarray(0.0, dtype), X, Y, beta)
    np.testing.assert_allclose(Z, want, **tol)
    assert np.isnan(Z[1]).all() and np.isfinite(Z[[0, 2]]).all()
    # alpha NaN and numbers given as Python floats
    Z, X = _v((3, 5), dtype), _v((3, 4), dtype)
    kernel(Z, float("nan"), X, Y, 1.0)
    assert np.isnan(Z).all()
    # the errors name both shapes, as perform's do
    with pytest.raises(ValueError, match=r"^Gemm\{inplace\}: X \(3, 4\) and Y \(3, 5\) are not aligned$"):
        kernel(_v((3, 5), dtype), alpha, _v((3, 4), dtype), _v((3, 5), dtype), beta)
    with pytest.raises(
        ValueError, match=r"^Gemm\{inplace\}: the accumulator has shape \(2, 5\) but the product has shape \(3, 5\)$"
    ):
        kernel(_v((2, 5), dtype), alpha, _v((3, 4), dtype), Y, beta)


def test_dot_of_matrices_names_the_lengths_that_differ():
    """Dot of two matrices goes through the Dot22 intrinsic with Dot's own message."""
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    check_raises(Dot()(x, y), _v((3, 4), "float64"), _v((5, 2), "float64"),
                 match=r"^Dot: shapes \(3, 4\) and \(5, 2\) not aligned: 4 != 5$")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("alpha, beta", [(1.0, 0.0), (-0.5, 1.0), (2.0, 0.5)])
def test_gemv(dtype, inplace, alpha, beta):
    yv, A, xv = lt.tensor(dtype=dtype, shape=(None,)), lt.tensor(dtype=dtype, shape=(None, None)), lt.tensor(dtype=dtype, shape=(None,))
    a, b = lt.tensor(dtype=dtype, shape=()), lt.tensor(dtype=dtype, shape=())
    out = Gemv(inplace)(yv, a, A, xv, b)
    Y = _v((3,), dtype)
    args = (np.asarray(alpha, dtype), _v((3, 4), dtype), _v((4,), dtype), np.asarray(beta, dtype))
    check(out, Y, *args, inplace=inplace, view=None if inplace else False)
    check(out, Y, args[0], _v((4, 3), dtype).T, _v((8,), dtype)[::2], args[3], inplace=inplace)
    check_raises(out, Y, args[0], args[1], _v((5,), dtype), args[3], match="not aligned")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("inplace", [False, True])
def test_gemv_edges(dtype, inplace):
    """The cases BLAS itself would get wrong or refuse go through perform's accumulation."""
    from lucent.link.numba.dispatch.basic import numba_funcify

    yv, A, xv = lt.tensor(dtype=dtype, shape=(None,)), lt.tensor(dtype=dtype, shape=(None, None)), lt.tensor(dtype=dtype, shape=(None,))
    a, b = lt.tensor(dtype=dtype, shape=()), lt.tensor(dtype=dtype, shape=())
    out = Gemv(inplace)(yv, a, A, xv, b)
    one, zero = np.asarray(1.0, dtype), np.asarray(0.0, dtype)
    with_nan = _v((3, 4), dtype)
    with_nan[1, 2] = np.nan
    # alpha == 0: NaN in A still reaches the result (BLAS would skip the product)
    check(out, _v((3,), dtype), zero, with_nan, _v((4,), dtype), one, inplace=inplace)
    # beta == 0: the accumulator is not read
    check(out, np.full(3, np.nan, dtype), one, _v((3, 4), dtype), _v((4,), dtype), zero, inplace=inplace)
    # empty inner dimension: beta * y (BLAS would return y unscaled); empty output
    check(out, _v((3,), dtype), one, _v((3, 0), dtype), _v((0,), dtype), np.asarray(2.0, dtype), inplace=inplace)
    check(out, _v((0,), dtype), one, _v((0, 4), dtype), _v((4,), dtype), one, inplace=inplace)
    # one row, one column; Fortran-ordered and row-strided matrices
    check(out, _v((1,), dtype), one, _v((1, 5), dtype), _v((5,), dtype), one, inplace=inplace)
    check(out, _v((5,), dtype), one, _v((5, 1), dtype), _v((1,), dtype), one, inplace=inplace)
    check(out, _v((3,), dtype), one, np.asfortranarray(_v((3, 4), dtype)), _v((4,), dtype), one, inplace=inplace)
    check(out, _v((3,), dtype), one, _v((6, 8), dtype)[::2, ::2], _v((4,), dtype), one, inplace=inplace)
    # negative steps (copied before BLAS reads them), and a strided accumulator written in place
    kernel = numba_funcify(out.owner.op, out.owner)
    M, x, y = _v((4, 3), dtype), _v((3,), dtype), _v((8,), dtype)
    expected = 0.5 * y[::-2] + 2.0 * (M[::-1] @ x[::-1])
    got = kernel(y[::-2].copy(), np.asarray(2.0, dtype), M[::-1], x[::-1], np.asarray(0.5, dtype))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    base = y.copy()
    got = kernel(base[::2], np.asarray(2.0, dtype), M, x, np.asarray(0.5, dtype))
    np.testing.assert_allclose(got, 0.5 * y[::2] + 2.0 * (M @ x), rtol=1e-5, atol=1e-5)
    if inplace:
        assert np.shares_memory(got, base)
        np.testing.assert_array_equal(base[1::2], y[1::2])
    # past SMALL_GEMV elements the product is BLAS's, in both layouts
    big = _v((130, 140), dtype)
    check(out, _v((130,), dtype), np.asarray(0.5, dtype), big, _v((140,), dtype), np.asarray(2.0, dtype), inplace=inplace)
    check(out, _v((140,), dtype), np.asarray(0.5, dtype), big.T, _v((130,), dtype), zero, inplace=inplace)
    # an accumulator that is also the vector: the product reads x before it is written
    v = _v((3,), dtype)
    square = _v((3, 3), dtype)
    expected = 1.0 * v + 1.0 * (square @ v)
    got = kernel(v, one, square, v, one) if inplace else kernel(v.copy(), one, square, v, one)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("beta", [0.0, 0.5])
def test_small_gemv_loops_read_the_padded_view_of_any_layout(dtype, beta):
    """The loops see every matrix as a ``padded_c_view``: C, row-strided and transposed matrices."""
    import numba

    from lucent.link.numba.dispatch.blas_loops import cols_gemv, rows_gemv
    from lucent.link.numba.dispatch.borrowed import padded_c_view
    from lucent.link.numba.dispatch.cblas import blas_matrix

    @numba.njit
    def product(M, x, z, alpha, beta):
        out = np.empty(M.shape[0], M.dtype)
        t, ld = blas_matrix(M)
        if t == 111:
            rows_gemv(padded_c_view(M, M.shape[0], ld), M.shape[1], x, z, out, alpha, beta)
        else:
            cols_gemv(padded_c_view(M, M.shape[1], ld), M.shape[0], x, z, out, alpha, beta)
        return out

    x, z = _v((6,), dtype), _v((5,), dtype)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for M in (_v((5, 6), dtype), _v((10, 9), dtype)[::2, 1:7], _v((6, 5), dtype).T, _v((6, 7), dtype).T[:5]):
        expected = 2.0 * (M.astype("float64") @ x) + beta * z
        np.testing.assert_allclose(product(M, x, z, 2.0, beta), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_small_gemv_loops_strided_vectors_nan_and_aliasing(dtype):
    """The loops' IR reads strided vectors, never reads ``z`` when ``beta == 0``, and may write over ``z``."""
    import numba

    from lucent.link.numba.dispatch.blas_loops import cols_gemv, rows_gemv
    from lucent.link.numba.dispatch.borrowed import padded_c_view

    @numba.njit
    def by_rows(M, x, z, out, alpha, beta):
        rows_gemv(padded_c_view(M, M.shape[0], M.shape[1]), M.shape[1], x, z, out, alpha, beta)

    @numba.njit
    def by_cols(Mt, x, z, out, alpha, beta):
        cols_gemv(padded_c_view(Mt, Mt.shape[0], Mt.shape[1]), Mt.shape[1], x, z, out, alpha, beta)

    tol = 1e-5 if dtype == "float32" else 1e-12
    for m, k in ((7, 5), (4, 4), (1, 3), (0, 2), (3, 0)):
        M = _v((m, k), dtype)
        x = _v((2 * k,), dtype)[::2]  # a strided vector
        z = _v((3 * m,), dtype)[::3]
        expected = 1.5 * (M.astype("float64") @ x) - 0.5 * z
        for fill in (lambda o: by_rows(M, x, z, o, 1.5, -0.5), lambda o: by_cols(np.ascontiguousarray(M.T), x, z, o, 1.5, -0.5)):
            out = np.full(2 * m, np.nan, dtype)[::2]
            fill(out)
            np.testing.assert_allclose(out, expected, rtol=tol, atol=tol)
        # beta == 0 never reads z (NaN there stays out of the result)
        nan_z = np.full(m, np.nan, dtype)
        out = np.empty(m, dtype)
        by_rows(M, x, nan_z, out, 2.0, 0.0)
        np.testing.assert_allclose(out, 2.0 * (M.astype("float64") @ x), rtol=tol, atol=tol)
        # out may be z itself
        zz = z.copy()
        by_cols(np.ascontiguousarray(M.T), x, zz, zz, 1.5, -0.5)
        np.testing.assert_allclose(zz, expected, rtol=tol, atol=tol)
    # NaN in the matrix propagates to its row only
    M = _v((5, 4), dtype)
    M[2, 1] = np.nan
    out = np.empty(5, dtype)
    by_rows(M, _v((4,), dtype), np.zeros(5, dtype), out, 1.0, 0.0)
    assert np.isnan(out[2]) and not np.isnan(np.delete(out, 2)).any()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("destructive", [False, True])
def test_ger(dtype, destructive):
    A, x, y = lt.tensor(dtype=dtype, shape=(None, None)), lt.tensor(dtype=dtype, shape=(None,)), lt.tensor(dtype=dtype, shape=(None,))
    a = lt.tensor(dtype=dtype, shape=())
    out = Ger(destructive)(A, a, x, y)
    args = (np.asarray(0.5, dtype), _v((3,), dtype), _v((4,), dtype))
    check(out, _v((3, 4), dtype), *args, inplace=destructive, view=None if destructive else False)
    check(out, _v((4, 3), dtype).T, *args, inplace=destructive)
    check_raises(out, _v((3, 5), dtype), *args, match="outer")


# --- how BLAS reads an operand, emitted inline -----------------------------------
def _python_blas_matrix(x):
    """(trans, ld) as BLAS may read ``x`` in place, or (0, 0): the rule of ``cblas.blas_matrix``."""
    rows, cols = x.shape
    s0, s1 = x.strides
    item = x.itemsize

    def row_major(r, c, sr, sc):
        ok = (c <= 1 or sc == item) and (r <= 1 or (sr % item == 0 and sr // item >= max(1, c)))
        return ok, (sr // item if r > 1 else max(1, c))

    ok, ld = row_major(rows, cols, s0, s1)
    if ok:
        return 111, ld
    ok, ld = row_major(cols, rows, s1, s0)
    if ok:
        return 112, ld
    return 0, 0


MATRICES = {
    "C": lambda: rng.standard_normal((5, 7)),
    "transposed": lambda: rng.standard_normal((7, 5)).T,
    "row block": lambda: rng.standard_normal((9, 7))[2:7],
    "column block": lambda: rng.standard_normal((5, 11))[:, 2:9],
    "strided columns": lambda: rng.standard_normal((5, 14))[:, ::2],
    "reversed rows": lambda: rng.standard_normal((5, 7))[::-1],
    "reversed columns": lambda: rng.standard_normal((5, 7))[:, ::-1],
    "one row": lambda: rng.standard_normal((1, 7)),
    "one column": lambda: rng.standard_normal((5, 1)),
    "one row of a transposed": lambda: rng.standard_normal((7, 5)).T[:1],
    "empty": lambda: np.empty((0, 4)),
    "empty columns": lambda: np.empty((3, 0)),
}


@pytest.mark.parametrize("name", sorted(MATRICES))
def test_blas_matrix_reads_an_operand_as_the_rule_says(name):
    from numba import njit

    from lucent.link.numba.dispatch.cblas import blas_matrix, blas_rows

    x = MATRICES[name]()
    got = njit(lambda a: blas_matrix(a))(x)
    assert got == _python_blas_matrix(x), name
    usable, ld = njit(lambda a: blas_rows(a))(x)
    want = _python_blas_matrix(x)
    assert usable == (want[0] == 111)
    if usable:
        assert ld == want[1]


@pytest.mark.parametrize("name", sorted(MATRICES))
def test_dot22_of_every_operand_layout(name):
    a = MATRICES[name]()
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    check(Dot22()(x, y), a, rng.standard_normal((a.shape[1], 3)))  # as the left operand
    check(Dot22()(y, x), rng.standard_normal((3, a.shape[0])), a)  # as the right one


def test_products_compile_one_specialisation_for_every_layout():
    """Dot22 reads strides at run time: C and transposed operands share one compiled kernel."""
    import lucent
    from tests.helpers import numba_compiles

    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    first = lucent.function([x, y], lt.dot(x, y))
    second = lucent.function([x, y], lt.dot(x, y.T) * 2.0)
    a = rng.standard_normal((3, 4))
    b = rng.standard_normal((4, 5))
    np.testing.assert_allclose(first(a, b), a @ b)
    with numba_compiles() as compiled:
        np.testing.assert_allclose(second(a, b.T.copy()), 2 * a @ b)
    assert not [name for name in compiled if name.startswith("dot22")], compiled
