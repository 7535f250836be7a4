"""Parameter gradients of betainc and hyp2f1 (ScalarLoop series) against finite differences of SciPy."""

import numpy as np
import pytest
import scipy.special as sp

import lucent
import lucent.tensor as lt
from lucent.graph.traversal import ancestors
from lucent.scalar import ScalarLoop
from tests.helpers import run


def _central(f, args, k, h=1e-6):
    up = [a + h * (i == k) for i, a in enumerate(args)]
    down = [a - h * (i == k) for i, a in enumerate(args)]
    return (f(*up) - f(*down)) / (2 * h)


@pytest.mark.slow  # the reference path steps thousands of times near x = a/(a+b)
def test_betainc_grad_ab():
    # Direct series (x < a/(a+b)), flipped series (x > a/(a+b)), x near 1
    # with a large, and the ends x = 0 and x = 1.
    A = np.array([0.5, 2.0, 10.0, 100.0, 1.5, 3.0, 200.0, 1.0, 2.0])
    B = np.array([0.7, 3.0, 10.0, 1.0, 20.0, 0.2, 2.0, 1.0, 3.0])
    X = np.array([0.3, 0.9, 0.5, 0.99, 0.01, 0.999, 0.97, 1.0, 0.0])
    a, b, x = lt.dvectors("a", "b", "x")
    ga, gb = lucent.grad(lt.betainc(a, b, x).sum(), [a, b])
    ra, rb = run([ga, gb], {a: A, b: B, x: X})
    np.testing.assert_allclose(ra, _central(sp.betainc, (A, B, X), 0), rtol=2e-6, atol=1e-9)
    np.testing.assert_allclose(rb, _central(sp.betainc, (A, B, X), 1), rtol=2e-6, atol=1e-9)
    assert any(isinstance(v.owner.op.scalar_op, ScalarLoop) for v in ancestors([ga]) if v.owner
               and hasattr(v.owner.op, "scalar_op"))


def test_betainc_grad_invalid_is_nan():
    from lucent.scalar import float64
    from lucent.scalar.math import betainc_grad

    a, b, x = float64("a"), float64("b"), float64("x")
    out = betainc_grad(a, b, x, True)
    f = lucent.function([a, b, x], out, mode="FAST_COMPILE")
    assert not np.isnan(f(1.0, 1.0, 1.0))
    for args in [(1.0, 1.0, -1.0), (1.0, 1.0, 2.0), (1.0, -1.0, 0.5), (-1.0, 1.0, 0.5)]:
        assert np.isnan(f(*args))


def test_hyp2f1_grad_abc():
    # Inside the unit disc (a polynomial case a = -3 included), z = 0, and
    # outside the disc or on the circle with c <= a + b, where the series
    # diverges (NaN).
    A = np.array([0.5, 2.0, -3.0, 1.5, 0.3, 1.0, 1.0])
    B = np.array([0.7, 3.0, 1.2, 2.0, 0.4, 1.0, 1.0])
    C = np.array([1.5, 4.0, 2.5, 5.0, 3.0, 2.0, 1.5])
    Z = np.array([0.3, -0.9, 0.5, 0.0, 0.95, 1.5, 1.0])
    a, b, c, z = lt.dvectors("a", "b", "c", "z")
    grads = lucent.grad(lt.hyp2f1(a, b, c, z).sum(), [a, b, c])
    res = run(grads, {a: A, b: B, c: C, z: Z})
    for k in range(3):
        np.testing.assert_allclose(res[k][:5], _central(sp.hyp2f1, (A[:5], B[:5], C[:5], Z[:5]), k), rtol=1e-5, atol=1e-8)
        assert np.isnan(res[k][5:]).all()


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_mixed_dtypes_build(dtype):
    from lucent.scalar import float32, float64, int32

    types = {"float32": float32, "int32": int32}
    other = types[dtype]()
    p = float64("p")
    for out in [lucent.scalar.math.betainc(p, other, float64()), lucent.scalar.math.hyp2f1(p, other, float64(), float64())]:
        g = lucent.grad(out, p)
        assert any(v.owner is not None and isinstance(v.owner.op, ScalarLoop) for v in ancestors([g]))
