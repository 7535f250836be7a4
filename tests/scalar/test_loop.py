"""ScalarLoop: construction checks, both paths, Elemwise over arrays, nesting."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.scalar import Composite, ScalarLoop, cos, exp, float32, float64, identity, int64, sin
from lucent.scalar.series_grad import _make_scalar_loop
from lucent.tensor.elemwise import Elemwise
from tests.helpers import run


def _loops():
    n = int64("n")
    x0, c = float64("x0"), float64("c")
    plain = ScalarLoop(init=[x0], constant=[c], update=[x0 + c])
    x = x0 + 1
    until = ScalarLoop(init=[x0], update=[x], until=x >= 10)
    a, b = float64("a"), float64("b")
    lags = ScalarLoop(init=[a, b], update=[identity(b), a + b])
    inner = ScalarLoop(init=[a], update=[a + 1])
    nested = ScalarLoop(init=[x0], update=[inner(n, x0)], constant=[n])
    one = Composite([x0], [cos(exp(x0)) ** 2 + sin(exp(x0)) ** 2])(x0)
    with_composite = ScalarLoop(init=[x0], update=[one + x0])
    return plain, until, lags, nested, with_composite


def test_scalar_graphs_both_paths():
    plain, until, lags, nested, with_composite = _loops()
    n, x0, x1, c = int64("n"), float64("x0"), float64("x1"), float64("c")
    outs = [
        plain(n, x0, c),
        *until(n, x0),
        lags(n, x0, x1)[1],
        nested(n, x0, n),
        with_composite(n, x0),
    ]
    res = run(outs, {n: 5, x0: 1.0, x1: 2.0, c: 0.5})
    # until: 1 -> 6 after 5 steps, not reaching 10.
    np.testing.assert_allclose(res[0], 3.5)
    assert res[1] == 6.0 and not res[2]
    # Fibonacci-like: (1, 2) -> (2, 3) -> (3, 5) -> (5, 8) -> (8, 13) -> (13, 21)
    assert res[3] == 21.0
    assert res[4] == 1.0 + 25
    np.testing.assert_allclose(res[5], 6.0)


def test_until_stops_and_zero_steps():
    _, until, *_ = _loops()
    n, x0 = int64("n"), float64("x0")
    res = run(list(until(n, x0)), {n: 20, x0: 0.0})
    assert res[0] == 10.0 and res[1]
    res = run(list(until(n, x0)), {n: 0, x0: 3.0})
    assert res[0] == 3.0 and not res[1]


def test_elemwise_per_element_steps():
    """Each element has its own n_steps and stops on its own until condition."""
    _, until, *_ = _loops()
    n, x = lt.lvector("n"), lt.dvector("x")
    y, done = Elemwise(until)(n, x)
    res = run([y, done], {n: np.array([0, 3, 20, 20]), x: np.array([1.0, 1.0, 1.0, 12.0])})
    np.testing.assert_array_equal(res[0], [1.0, 4.0, 10.0, 13.0])
    np.testing.assert_array_equal(res[1], [False, False, True, True])


def test_negative_steps_without_until_raises():
    plain, *_ = _loops()
    n, x0, c = int64("n"), float64("x0"), float64("c")
    f = lucent.function([n, x0, c], plain(n, x0, c), mode="FAST_COMPILE")
    with pytest.raises(ValueError, match="termination condition"):
        f(-1, 0.0, 1.0)


def test_construction_errors():
    x0, c = float64("x0"), float64("c")
    with pytest.raises(ValueError, match="An update must be given"):
        ScalarLoop(init=[x0], constant=[c], update=[])
    y = float32("y")
    with pytest.raises(TypeError, match="Init and update types must be the same"):
        ScalarLoop(init=[y], constant=[c], update=[y + c])
    with pytest.raises(ValueError, match="same variable"):
        ScalarLoop(init=[x0, c], update=[c, x0 + c])
    with pytest.raises(TypeError, match="must be boolean"):
        ScalarLoop(init=[x0], update=[x0 + 1], until=x0 + 1)
    with pytest.raises(TypeError, match="exclusively composed of scalar operations"):
        ScalarLoop(init=[x0], update=[lucent.scalar.as_scalar(lt.exp(x0))])
    op = ScalarLoop(init=[x0], constant=[c], update=[x0 + c])
    with pytest.raises(TypeError, match="must be of integer type"):
        op(float64("n"), x0, c)


def test_equality_and_retyping():
    x0, c = float64("x0"), float64("c")
    op1 = ScalarLoop(init=[x0], constant=[c], update=[x0 + c])
    assert op1 == ScalarLoop(init=[x0], constant=[c], update=[x0 + c])
    assert hash(op1) == hash(ScalarLoop(init=[x0], constant=[c], update=[x0 + c]))
    y = op1(int64(), float32(), float32())
    assert y.type.dtype == "float32"
    with pytest.raises(TypeError, match="Init and update types must be the same"):
        op1(int64(), float32(), c)


def test_make_scalar_loop_casts_updates():
    n = int64("n")
    out = _make_scalar_loop(n, [np.array(0, dtype="int32")], [], lambda k: ([k + 1], None), name="count")
    assert out.type.dtype == "int32"
    assert run(out, {n: 5}) == 5
