"""``Solve`` / ``solve`` against ``scipy.linalg.solve``, on both paths."""

import numpy as np
import pytest
import scipy.linalg

import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.tensor.linalg import Solve, solve
from tests.helpers import run

RNG = np.random.default_rng(11)


def _spd(n):
    m = RNG.normal(size=(n, n))
    return m @ m.T + n * np.eye(n)


@pytest.mark.parametrize("b_ndim", [1, 2])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_solve_general_matches_scipy(b_ndim, dtype):
    A = lt.matrix("A", dtype=dtype)
    b = lt.vector("b", dtype=dtype) if b_ndim == 1 else lt.matrix("b", dtype=dtype)
    a = (RNG.normal(size=(4, 4)) + 4 * np.eye(4)).astype(dtype)
    bv = RNG.normal(size=(4,) if b_ndim == 1 else (4, 2)).astype(dtype)
    out = run(solve(A, b), {A: a, b: bv})
    assert out.dtype == dtype and out.shape == bv.shape
    np.testing.assert_allclose(out, np.linalg.solve(a, bv), rtol=1e-3 if dtype == "float32" else 1e-10)


@pytest.mark.parametrize("assume_a", ["sym", "pos", "symmetric", "positive definite", "tridiagonal"])
@pytest.mark.parametrize("lower", [False, True])
def test_solve_structured_reads_like_scipy(assume_a, lower):
    A, b = lt.dmatrix("A"), lt.dvector("b")
    a = _spd(4)
    # Garbage in the triangle that is not read must not matter.
    a_garbage = np.tril(a) + np.triu(RNG.normal(size=(4, 4)), 1) if lower else np.triu(a) + np.tril(
        RNG.normal(size=(4, 4)), -1
    )
    bv = RNG.normal(size=4)
    expected = scipy.linalg.solve(a_garbage, bv, assume_a=assume_a, lower=lower)
    out = run(solve(A, b, assume_a=assume_a, lower=lower), {A: a_garbage, b: bv})
    np.testing.assert_allclose(out, expected, rtol=1e-9)


def test_solve_triangular_diagonal_and_transposed():
    A, b = lt.dmatrix("A"), lt.dvector("b")
    a = RNG.normal(size=(3, 3)) + 3 * np.eye(3)
    bv = RNG.normal(size=3)
    outs = run(
        [
            solve(A, b, assume_a="lower triangular"),
            solve(A, b, assume_a="upper triangular", transposed=True),
            solve(A, b, assume_a="diagonal"),
            solve(A, b, transposed=True),
        ],
        {A: a, b: bv},
    )
    np.testing.assert_allclose(outs[0], scipy.linalg.solve_triangular(a, bv, lower=True))
    np.testing.assert_allclose(outs[1], scipy.linalg.solve_triangular(a, bv, lower=False, trans=1))
    np.testing.assert_allclose(outs[2], bv / np.diag(a))
    np.testing.assert_allclose(outs[3], np.linalg.solve(a.T, bv))


def test_solve_failures_give_nan():
    A, b = lt.dmatrix("A"), lt.dvector("b")
    nan_in = np.array([[1.0, 1.0, 0.0], [2.0, 3.0, 1.0], [0.0, 1.0, np.nan]])
    assert np.isnan(run(solve(A, b), {A: np.ones((2, 2)), b: np.ones(2)})).all()
    assert np.isnan(run(solve(A, b), {A: nan_in, b: np.ones(3)})).all()
    not_pd = np.array([[1.0, 2.0], [2.0, 1.0]])
    assert np.isnan(run(solve(A, b, assume_a="pos"), {A: not_pd, b: np.ones(2)})).all()


def test_solve_empty_and_non_contiguous():
    A, B = lt.dmatrix("A"), lt.dmatrix("B")
    assert run(solve(A, B), {A: np.zeros((0, 0)), B: np.zeros((0, 2))}).shape == (0, 2)
    a = (RNG.normal(size=(6, 6)) + 6 * np.eye(6))[::2, ::2]
    bv = RNG.normal(size=(3, 4))[:, ::2]
    np.testing.assert_allclose(run(solve(A, B), {A: a, B: bv}), np.linalg.solve(a, bv))


@pytest.mark.parametrize("n", [1, 8, 24, 25])
@pytest.mark.parametrize("b_ndim", [1, 2])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_batched_small_systems_match_numpy(n, b_ndim, dtype):
    """A batch of small systems (solved in native loops up to order 24, by LAPACK above),
    with a singular and a NaN block among them, and transposed (non-contiguous) blocks."""
    A = lt.tensor3("A", dtype=dtype)
    b = lt.matrix("b", dtype=dtype) if b_ndim == 1 else lt.tensor3("b", dtype=dtype)
    a = (RNG.normal(size=(6, n, n)) + n * np.eye(n)).astype(dtype)
    bv = RNG.normal(size=(6, n) if b_ndim == 1 else (6, n, 3)).astype(dtype)
    a[2] = 0.0
    a[3, 0, -1] = np.nan
    out = run(solve(A, b, b_ndim=b_ndim), {A: a.transpose(0, 2, 1), b: bv})
    assert out.dtype == dtype and out.shape == bv.shape
    assert np.isnan(out[2]).all() and np.isnan(out[3]).all()
    ok = [0, 1, 4, 5]
    at = a.transpose(0, 2, 1)[ok].astype("float64")
    expected = np.linalg.solve(at, bv[ok][..., None])[..., 0] if b_ndim == 1 else np.linalg.solve(at, bv[ok])
    np.testing.assert_allclose(out[ok], expected, rtol=2e-4 if dtype == "float32" else 1e-10, atol=1e-5 if dtype == "float32" else 0)


def test_small_system_pivots_on_the_largest_entry():
    """Without row exchanges the first pivot (1e-20) would wipe out the answer."""
    A, b = lt.dmatrix("A"), lt.dvector("b")
    a = np.array([[1e-20, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 2.0, 3.0]])
    bv = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(run(solve(A, b), {A: a, b: bv}), np.linalg.solve(a, bv), rtol=1e-12)


def test_solve_checks_its_arguments():
    with pytest.raises(ValueError, match="Invalid assume_a"):
        Solve(assume_a="banana", b_ndim=1)
    with pytest.raises(ValueError, match="b_ndim"):
        Solve(b_ndim=3)
    with pytest.raises(ValueError, match="`b` must have 1 dims"):
        Solve(b_ndim=1).make_node(lt.dmatrix(), lt.dmatrix())
    with pytest.raises(ValueError, match="`A` must be a matrix"):
        solve(lt.dvector("A"), lt.dvector("b"))
    assert Solve(assume_a="symmetric", b_ndim=1) == Solve(assume_a="sym", b_ndim=1)
    A, b = lt.dmatrix("A"), lt.dvector("b")
    with pytest.raises(ValueError, match="incompatible dimensions"):
        run(solve(A, b), {A: np.eye(3), b: np.ones(2)})


def test_solve_infer_shape():
    A, B = lt.dmatrix("A"), lt.dmatrix("B")
    out = solve(A, B)
    import lucent

    f = lucent.function([A, B], out.shape)
    np.testing.assert_array_equal(f(np.eye(3), np.ones((3, 5))), [3, 5])


@pytest.mark.parametrize("b_shape", [(3,), (3, 2)])
def test_solve_gradient(b_shape):
    a = RNG.normal(size=(3, 3)) + 3 * np.eye(3)
    verify_grad(lambda A, b: solve(A, b), [a, RNG.normal(size=b_shape)], rng=np.random.default_rng(5))


def test_solve_pos_gradient():
    # The solver reads one triangle of A: differentiate through the symmetric part.
    verify_grad(lambda A, b: solve((A + A.T) / 2, b, assume_a="pos"), [_spd(3), RNG.normal(size=3)],
                rng=np.random.default_rng(6))


def test_inplace_variants_write_their_result_over_the_destroyed_input():
    """On the fast path, ``overwrite_b`` solves and ``Cholesky{overwrite_a}`` put the result
    in the memory their ``destroy_map`` gives up (the caller's mutable argument)."""
    import lucent
    from lucent import In
    from lucent.tensor.linalg import cho_solve, cholesky, solve_triangular

    A, X = lt.dmatrix("A"), lt.dmatrix("X")
    b1, b2, b3 = lt.dvector("b1"), lt.dvector("b2"), lt.dvector("b3")
    outs = [solve(A, b1, b_ndim=1), solve_triangular(A, b2, lower=True, b_ndim=1),
            cho_solve((A, True), b3, b_ndim=1), cholesky(X)]
    f = lucent.function([A, In(b1, mutable=True), In(b2, mutable=True), In(b3, mutable=True),
                         In(X, mutable=True)], outs, mode="FAST_RUN")
    assert sorted(str(n.op.destroy_map) for n in f.maker.fgraph.apply_nodes if n.op.destroy_map) == [
        "{0: [0]}", "{0: [1]}", "{0: [1]}", "{0: [1]}"]
    a = np.tril(RNG.normal(size=(4, 4))) + 4 * np.eye(4)
    bs = [RNG.normal(size=4) for _ in range(3)]
    x = _spd(4)
    originals = [v.copy() for v in (*bs, x)]
    got = f(a, *bs, x)
    expected = [scipy.linalg.solve(a, originals[0]), scipy.linalg.solve_triangular(a, originals[1], lower=True),
                scipy.linalg.cho_solve((a, True), originals[2]), np.linalg.cholesky(originals[3])]
    for g, e, buf in zip(got, expected, (*bs, x)):
        np.testing.assert_allclose(g, e, rtol=1e-10)
        np.testing.assert_allclose(buf, e, rtol=1e-10)
