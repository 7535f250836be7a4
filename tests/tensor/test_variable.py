"""TensorVariable's array methods (compositions of existing ops), both paths."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.tensor.basic import NotScalarConstantError
from tests.helpers import run

V = np.arange(1.0, 7.0).reshape(2, 3)


@pytest.mark.parametrize(
    "method, expected",
    [
        (lambda x: x.ravel(), V.ravel()),
        (lambda x: x.swapaxes(0, 1), V.swapaxes(0, 1)),
        (lambda x: x.mT, V.T),
        (lambda x: x.norm(2), np.sqrt((V ** 2).sum())),
        (lambda x: x.norm(1, axis=0), np.abs(V).sum(0)),
        (lambda x: x.ptp(axis=1), np.ptp(V, axis=1)),
        (lambda x: x.take([2, 0], axis=1), V.take([2, 0], axis=1)),
        (lambda x: x.take([4]), V.take([4])),
        (lambda x: x[0].inc(10.0), V + [[10.0], [0.0]]),
        (lambda x: x[:, 1].set(0.0), V * [1, 0, 1]),
        (lambda x: x.fill(3.0), np.full_like(V, 3.0)),
        (lambda x: (x / 4).round(mode="half_to_even"), np.array([[0.0, 0, 1], [1, 1, 2]])),
        (lambda x: x.var(axis=0, ddof=1), V.var(axis=0, ddof=1)),
        (lambda x: x.std(), V.std()),
        (lambda x: x.floor() + x.ceil(), np.floor(V) + np.ceil(V)),
        (lambda x: x.sin() + x.cos() + x.tan() + x.tanh() + x.arctan(),
         np.sin(V) + np.cos(V) + np.tan(V) + np.tanh(V) + np.arctan(V)),
        (lambda x: x.exp2() + x.expm1() + x.log2() + x.log10() + x.log1p(),
         np.exp2(V) + np.expm1(V) + np.log2(V) + np.log10(V) + np.log1p(V)),
    ],
)
def test_methods_match_numpy(method, expected):
    x = lt.dmatrix("x")
    np.testing.assert_allclose(run(method(x), {x: V}), expected, rtol=1e-12)


def test_method_errors():
    x = lt.dvector("x")
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        x.mT
    with pytest.raises(NotImplementedError, match="L=0"):
        x.norm(0)
    with pytest.raises(NotImplementedError, match="infinite"):
        x.norm(np.inf)
    with pytest.raises(ValueError, match="mode must be"):
        x.take([0], mode="nearest")


def test_get_underlying_scalar_constant():
    assert lt.constant(3.0).get_underlying_scalar_constant() == 3.0
    with pytest.raises(NotScalarConstantError):
        lt.dscalar("s").get_underlying_scalar_constant()
