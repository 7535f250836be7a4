"""NanGuardMode: fast path, and the first node producing NaN/Inf named when one appears."""

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent  # noqa: E402
import lucent.tensor as lt  # noqa: E402
from lucent.compile.nanguardmode import NanGuardError, NanGuardMode  # noqa: E402


def _model():
    x = lt.dvector("x")
    W = lucent.shared(np.ones(3), name="W")
    h = lt.tanh(x * W) + 2
    bad = lt.log(x - 1)  # NaN for x < 1
    cost = (h * bad).sum() + (x ** 2).sum()
    return x, W, cost


def test_clean_graph_runs_and_updates():
    x, W, cost = _model()
    f = lucent.function([x], cost, updates=[(W, W - 0.1 * x)], mode="NanGuardMode")
    value = np.array([2.0, 3.0, 4.0])
    expected = ((np.tanh(value) + 2) * np.log(value - 1)).sum() + (value**2).sum()
    assert f(value) == pytest.approx(expected)
    np.testing.assert_allclose(W.get_value(), 1 - 0.1 * value)


def test_names_first_node_producing_nan_and_leaves_shared_unchanged():
    x, W, cost = _model()
    f = lucent.function([x], cost, updates=[(W, W - 0.1 * x * cost)], mode=NanGuardMode())
    f(np.array([2.0, 3.0, 4.0]))
    before = W.get_value().copy()
    buffer = W.get_value(borrow=True)
    with pytest.raises(NanGuardError) as info:
        f(np.array([2.0, 0.5, 4.0]))
    err = info.value
    assert err.what == "NaN" and err.node is not None
    assert "log" in str(err.node.op)
    text = str(err)
    assert "test_nanguard.py" in text and "float64 (3,)" in text and "[id A]" in text
    np.testing.assert_array_equal(W.get_value(), before)
    np.testing.assert_array_equal(buffer, before)
    # The function still works afterwards.
    f(np.array([2.0, 3.0, 4.0]))


def test_inf_and_big_are_configurable():
    x = lt.dvector("x")
    f = lucent.function([x], lt.exp(x), mode=NanGuardMode(inf_is_error=False))
    assert np.isinf(f(np.array([1000.0]))).all()
    g = lucent.function([x], lt.exp(x), mode=NanGuardMode())
    with pytest.raises(NanGuardError, match="Inf"):
        g(np.array([1000.0]))
    h = lucent.function([x], lt.exp(x), mode=NanGuardMode(big_is_error=True))
    with pytest.raises(NanGuardError, match="big"):
        h(np.array([30.0]))


def test_nan_in_input_is_named():
    x = lt.dvector("x")
    f = lucent.function([x], x * 2, mode="NanGuardMode")
    with pytest.raises(NanGuardError, match="graph input x"):
        f(np.array([np.nan]))


def test_pytensor_module_path_and_value_checks():
    import numpy as np

    from lucent.compile.debug.nanguardmode import NanGuardMode as PathNanGuardMode
    from lucent.compile.debug.nanguardmode import contains_inf, contains_nan, flatten
    from lucent.compile.nanguardmode import NanGuardMode as HomeNanGuardMode

    assert PathNanGuardMode is HomeNanGuardMode
    assert contains_nan(np.array([1.0, np.nan])) and not contains_nan(np.array([1.0, np.inf]))
    assert contains_inf(np.array([np.nan, -np.inf])) and not contains_inf(np.array([np.nan, 1.0]))
    with pytest.warns(RuntimeWarning):  # as NumPy (and PyTensor) do for an all-NaN array
        assert not contains_inf(np.array([np.nan, np.nan]))
    assert not contains_nan(np.arange(3)) and not contains_inf(np.arange(3))  # integers never
    assert not contains_nan(np.array([], dtype="float64")) and not contains_inf("text")
    assert contains_nan(np.float32("nan")) and contains_inf(float("inf"))
    assert flatten([1, [2, (3, [4])], 5]) == [1, 2, 3, 4, 5] and flatten(7) == [7]


def test_defaults_come_from_config_as_in_pytensor():
    import numpy as np

    x = lt.dvector("x")
    f = lucent.function([x], lt.exp(x), mode=NanGuardMode())
    with pytest.raises(AssertionError, match="big"):  # NanGuardError is an AssertionError too
        f(np.array([30.0]))
    with lucent.config.change_flags(NanGuardMode__big_is_error=False):
        g = lucent.function([x], lt.exp(x), mode=NanGuardMode())
    assert g(np.array([30.0]))[0] > 1e10
    assert NanGuardMode(big_is_error=False).linker.big_is_error is False
