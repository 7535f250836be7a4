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
    with pytest.raises(ValueError, match="3-d input"):
        det(lt.tensor3("x"))
    with pytest.raises(ValueError, match="Determinant not defined"):
        det(lt.tensor(dtype="float64", shape=(2, 3), name="x"))


def test_det_of_non_square_value_raises():
    x = lt.dmatrix("x")
    with pytest.raises(ValueError, match="square"):
        run(det(x), {x: np.ones((2, 3))})


def test_det_gradient():
    verify_grad(det, [RNG.normal(size=(3, 3)) + 3 * np.eye(3)], rng=np.random.default_rng(2))
