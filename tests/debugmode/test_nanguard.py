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


def _recurrence(name):
    rng = np.random.default_rng(0)
    W = lucent.shared(rng.standard_normal((4, 4)) * 0.2, name="W")
    seq, h0 = lt.dmatrix("seq"), lt.dvector("h0")

    def step(x_t, h):
        h_new = lt.tanh(lt.dot(W, h) + x_t)
        return h_new, lt.log1p(h_new.sum())  # NaN once the state's sum falls below -1

    (hs, energies), _ = lucent.scan(step, sequences=seq, outputs_info=[h0, None], name=name)
    loss = ((hs[-1] - 0.5) ** 2).sum() + 0.01 * energies.sum()
    xs = 0.3 + 0.1 * rng.standard_normal((20, 4))
    xs[13] = -3.0  # a burst of negative input: the state's sum drops to about -4 at step 13
    return W, seq, h0, loss, xs


def test_a_nan_made_inside_a_loop_names_the_loop_the_step_and_the_inner_node():
    W, seq, h0, loss, xs = _recurrence("rnn")
    g = lucent.grad(loss, W)
    f = lucent.function([seq, h0], loss, updates=[(W, W - 0.1 * g)], mode=NanGuardMode(True, True, False))
    before = W.get_value().copy()
    with pytest.raises(NanGuardError) as info:
        f(xs, np.zeros(4))
    err = info.value
    assert type(err.node.op).__name__ == "Scan"
    assert err.inner_location.startswith('scan "rnn", step 13: Log1p (created at ')
    assert "test_nanguard.py" in err.inner_location and err.inner_location.endswith("output 0")
    assert 'Inside its loop, the first NaN comes from scan "rnn", step 13: Log1p' in str(err)
    assert err.inner_site.node is err.node and err.inner_site.step == 13
    assert "Log1p" in str(err.inner_site.inner_node.op) and err.inner_site.output_index == 0
    np.testing.assert_array_equal(W.get_value(), before)  # the failed call changed nothing
    xs[13] = 0.3
    assert np.isfinite(f(xs, np.zeros(4)))  # the fix: no burst, no NaN


def test_a_nan_made_in_a_loop_inside_a_loop_names_both_steps():
    x = lt.dvector("x")

    def inner_step(v):
        return lt.sqrt(v - 1.0)  # NaN once v drops below 1

    def outer_step(v):
        out = lucent.scan(inner_step, outputs_info=[v], n_steps=2, name="inner", return_updates=False)
        return out[-1] - 0.5

    ys = lucent.scan(outer_step, outputs_info=[x], n_steps=4, name="outer", return_updates=False)
    f = lucent.function([x], ys[-1], mode=NanGuardMode(True, True, False))
    with pytest.raises(NanGuardError) as info:
        f(np.array([100.0, 30.0]))
    location = info.value.inner_location
    assert location.startswith('scan "outer", step ')
    assert '; inside it, scan "inner", step 1: ' in location and "sqrt" in location.lower()
    (outer, _, inner_scan), (inner_loop, inner_step, sqrt_node) = info.value.inner_site.path()
    assert outer is info.value.node and inner_loop is inner_scan and inner_step == 1
    assert "sqrt" in str(sqrt_node.op).lower()


def test_a_nan_that_comes_into_a_loop_names_where_it_was_made():
    seq = lt.dmatrix("seq")
    s = lt.log(seq - 1.0)  # NaN before the loop, for entries below 1
    ys = lucent.scan(lambda r: r * 2.0, sequences=[s], name="double", return_updates=False)
    f = lucent.function([seq], ys.sum(), mode=NanGuardMode(True, True, False))
    with pytest.raises(NanGuardError) as info:
        f(np.array([[2.0, 3.0], [0.5, 4.0]]))
    assert info.value.inner_location is None
    assert "Log" in str(info.value.node.op) or "Composite" in str(info.value.node.op)


def test_a_loop_step_runs_only_its_taken_branch_when_the_nan_is_located():
    """The untaken branch of a step's ifelse makes a NaN (log of a negative number) that
    nothing reads; the first NaN is the square root's, at the step where its input drops
    below zero."""
    from lucent.ifelse import ifelse

    x0 = lt.dscalar("x0")

    def step(h):
        r = ifelse(lt.gt(h, 0.0), h - 1.0, lt.log(-h))  # log(-h) is NaN for h > 0: never taken
        return lt.sqrt(r) + 0.0 * h  # NaN once r < 0

    ys = lucent.scan(step, outputs_info=[x0], n_steps=4, name="roots", return_updates=False)
    f = lucent.function([x0], ys, mode=NanGuardMode(True, True, False))
    # h: 2.5 -> sqrt(1.5) = 1.22 -> sqrt(0.22) = 0.47 -> r = -0.53, still h > 0: NaN at step 2
    with pytest.raises(NanGuardError) as info:
        f(2.5)
    site = info.value.inner_site
    assert site.step == 2 and "sqrt" in str(site.inner_node.op).lower(), info.value.inner_location
