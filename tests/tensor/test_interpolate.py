"""``lucent.tensor.interpolate``: interp against np.interp and the interpolate1d methods, both paths."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.tensor.interpolate import interp, interpolate1d, valid_methods
from tests.helpers import run


#: The fast path of the slower (compile-heavy) tests runs in ``make test-all`` only.
PY_THEN_SLOW_NUMBA = pytest.mark.parametrize(
    "lucent_mode", ["FAST_COMPILE", pytest.param("FAST_RUN", marks=pytest.mark.slow)], ids=["py", "numba"], indirect=True
)


def test_interp_kernel():
    q = lt.dvector("q")
    xp, fp = np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 0.0])
    Q = np.array([0, 1, 1.5, 2.72, 3.14])
    np.testing.assert_allclose(run(interp(q, xp, fp), {q: Q}), np.interp(Q, xp, fp))


@PY_THEN_SLOW_NUMBA
def test_interp_matches_numpy_with_pads_and_unsorted_data():
    q = lt.dvector("q")
    m = lt.dmatrix("m")
    xp, fp = np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 0.0])
    Q = np.array([0, 1, 1.5, 2.72, 3.14])
    M = np.array([[-1.0, 2.5], [10.0, 1.2]])
    outs = [interp(q, xp, fp), interp(q, xp, fp, left=1000.0, right=-99.0), interp(m, xp, fp),
            interpolate1d(xp[::-1], fp[::-1])(q)]
    got = run(outs, {q: Q, m: M})
    np.testing.assert_allclose(got[0], np.interp(Q, xp, fp))
    # a query equal to xp[0] counts as left of the data for the pad (searchsorted side="left")
    np.testing.assert_allclose(got[1], [1000.0, 1000.0, *np.interp(Q[2:], xp, fp, right=-99.0)])
    np.testing.assert_allclose(got[2], np.interp(M, xp, fp))
    # extrapolate=True (the default): the end intervals' lines continue outside the data
    i = np.clip(np.searchsorted(xp, Q), 1, 2)
    extrapolated = fp[i - 1] + (Q - xp[i - 1]) * (fp[i] - fp[i - 1]) / (xp[i] - xp[i - 1])
    np.testing.assert_allclose(got[3], extrapolated)


@PY_THEN_SLOW_NUMBA
@pytest.mark.parametrize("method", valid_methods)
def test_interpolate1d_methods(method):
    x = np.linspace(-2, 6, 10)
    y = np.sin(x)
    q = lt.dvector("q")
    Q = np.array([x[3], x[3] + 0.1, -10.0, 100.0])
    got = run([interpolate1d(x, y, method)(q), interpolate1d(x, y, method, -100, 100, extrapolate=False)(q)], {q: Q})
    inner = {"linear": y[3] + 0.1 * (y[4] - y[3]) / (x[4] - x[3]), "nearest": y[3], "first": y[3],
             "last": y[4], "mean": (y[3] + y[4]) / 2}[method]
    at_point = {"first": y[2], "mean": (y[2] + y[3]) / 2}.get(method, y[3])
    np.testing.assert_allclose(got[0][:2], [at_point, inner])
    np.testing.assert_allclose(got[1][2:], [-100, 100])


def test_interpolate1d_errors():
    with pytest.raises(NotImplementedError, match="Did you mean"):
        interpolate1d([1.0, 2.0], [1.0, 2.0], method="linearr")
    with pytest.raises(ValueError, match="1d"):
        interpolate1d(np.ones((2, 2)), np.ones((2, 2)))
    with pytest.raises(NotImplementedError, match="period"):
        interp(1.0, [0.0, 1.0], [0.0, 1.0], period=2.0)
