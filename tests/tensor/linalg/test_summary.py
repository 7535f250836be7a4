"""``Det`` / ``det`` against ``numpy.linalg.det``, on both paths."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.tensor.linalg import Det, det
from tests.helpers import run

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_det_matches_numpy(dtype):
    x = lt.matrix("x", dtype=dtype)
    a = RNG.normal(size=(4, 4)).astype(dtype)
    out = run(det(x), {x: a})
    assert out.shape == () and out.dtype == dtype
    np.testing.assert_allclose(out, np.linalg.det(a), rtol=1e-4 if dtype == "float32" else 1e-10)


def test_det_special_values():
    x = lt.dmatrix("x")
    assert run(det(x), {x: np.zeros((0, 0))}) == 1.0
    assert run(det(x), {x: np.ones((3, 3))}) == pytest.approx(0.0, abs=1e-12)
    assert np.isnan(run(det(x), {x: np.array([[np.nan, 1.0], [2.0, 3.0]])}))
    view = np.arange(16.0).reshape(4, 4)[::2, ::-2] + np.eye(2)
    np.testing.assert_allclose(run(det(x), {x: view}), np.linalg.det(view))


def test_det_type_checks():
    assert isinstance(det, Det) and str(det) == "Det"
    assert det(lt.imatrix("i")).type.dtype == "float64"
    with pytest.raises(ValueError, match="1-d input"):
        det(lt.dvector("x"))
    with pytest.raises(ValueError, match="Determinant not defined"):
        det(lt.tensor(dtype="float64", shape=(2, 3), name="x"))


def test_det_of_non_square_value_raises():
    x = lt.dmatrix("x")
    with pytest.raises(ValueError, match="square"):
        run(det(x), {x: np.ones((2, 3))})


def test_det_gradient():
    verify_grad(det, [RNG.normal(size=(3, 3)) + 3 * np.eye(3)], rng=np.random.default_rng(2))


def test_slogdet_trace_norm_match_numpy():
    from lucent.tensor.linalg import SLogDet, norm, slogdet, trace

    x, v, t = lt.dmatrix("x"), lt.dvector("v"), lt.dtensor3("t")
    a, w, b = RNG.normal(size=(4, 3)), RNG.normal(size=5), RNG.normal(size=(2, 3, 3))
    sq = a[:3]
    matrix_ords = [None, "fro", "nuc", np.inf, -np.inf, 1, -1, 2, -2]
    vector_ords = [None, np.inf, -np.inf, 0, 1, 2, 3]
    with pytest.warns(FutureWarning, match="lucent.tensor.trace"):
        traces = [trace(x[:3]), trace(t)]
    outs = run(
        [*SLogDet()(x[:3]), *slogdet(t), *traces]
        + [norm(x, ord=o) for o in matrix_ords]
        + [norm(v, ord=o) for o in vector_ords]
        + [norm(t, axis=(1, 2), keepdims=True), norm(t, ord=1, axis=-1), norm(t)],
        {x: a, v: w, t: b},
    )
    refs = [*np.linalg.slogdet(sq), *np.linalg.slogdet(b), np.trace(sq), np.trace(b, axis1=-2, axis2=-1)]
    refs += [np.linalg.norm(a, ord=o) for o in matrix_ords] + [np.linalg.norm(w, ord=o) for o in vector_ords]
    # With no axis, a stack of matrices gives one norm per matrix (PyTensor's rule).
    refs += [np.linalg.norm(b, axis=(1, 2), keepdims=True), np.linalg.norm(b, ord=1, axis=-1),
             np.linalg.norm(b, axis=(1, 2))]
    for got, ref in zip(outs, refs, strict=True):
        np.testing.assert_allclose(got, ref, rtol=1e-10)


def test_summary_errors_and_gradients():
    from lucent.tensor.linalg import SLogDet, norm, trace

    with pytest.raises(ValueError, match="Invalid norm order"):
        norm(lt.dvector(), ord="fro2")
    with pytest.raises(ValueError, match="trace"), pytest.warns(FutureWarning):
        trace(lt.dvector())
    with pytest.raises(ValueError, match="axis"):
        norm(lt.dmatrix(), axis=(0, 0))
    a = RNG.normal(size=(3, 3)) + 3 * np.eye(3)
    rng = np.random.default_rng(11)
    verify_grad(lambda x: SLogDet()(x)[1], [a], rng=rng, mode="FAST_COMPILE")
    verify_grad(lambda x: norm(x, "nuc"), [RNG.normal(size=(3, 2))], rng=rng, mode="FAST_COMPILE")


@pytest.mark.parametrize("keepdims", [False, True])
def test_norm_of_a_stack_of_matrices(keepdims):
    """``axis=None`` on more than two dimensions: every ``ord`` per matrix of the stack."""
    from lucent.tensor.linalg import norm

    t = lt.tensor3("t", dtype="complex128")
    b = RNG.normal(size=(2, 4, 3)) + 1j * RNG.normal(size=(2, 4, 3))
    ords = [None, "fro", "nuc", np.inf, -np.inf, 1, -1, 2]
    outs = run([norm(t, ord=o, keepdims=keepdims) for o in ords], {t: b})
    for o, got in zip(ords, outs):
        ref = np.stack([np.linalg.norm(m, ord=o, keepdims=keepdims) for m in b])
        assert got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=1e-10)


def test_norm_argument_errors():
    from lucent.tensor.linalg import norm

    with pytest.raises(ValueError, match="Invalid norm order 'fro' for vectors"):
        norm([2.0, 1.0], "fro")
    with pytest.raises(ValueError, match="Invalid norm order for matrices: 0"):
        norm([[2.0, 1.0], [3.0, 4.0]], 0)
    with pytest.raises(ValueError, match="core_dims = 0"):
        norm(3.0, ord=2)
    with pytest.raises(TypeError, match="'axis' must be None, an integer, or a tuple of integers"):
        norm([[1.0, 2.0], [3.0, 4.0]], axis=lt.iscalar("i"))
