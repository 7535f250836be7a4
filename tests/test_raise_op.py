"""``lucent.raise_op``: CheckAndRaise / Assert on both paths, and the rewrites removing proven checks."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile.mode import get_mode
from lucent.raise_op import Assert, CheckAndRaise, assert_op
from tests.helpers import current_mode, run


class TooLong(ValueError):
    pass


def test_check_passes_value_or_raises_its_exception():
    v = lt.dvector("v")
    checked = CheckAndRaise(TooLong, "v is too long")(v, v.shape[0] < 3)
    out = Assert("v has a negative entry")(checked * 2, lt.all(v >= 0), 1)
    np.testing.assert_array_equal(run(out, {v: np.array([1.0, 2.0])}), [2.0, 4.0])
    with pytest.raises(TooLong, match="v is too long"):
        run(out, {v: np.zeros(4)})
    with pytest.raises(AssertionError, match="negative entry"):
        run(out, {v: np.array([-1.0])})


def test_scalar_value_and_non_boolean_conditions():
    s = lt.dscalar("s")
    n = lt.lscalar("n")
    out = Assert("n is zero")(s + 1, n)
    assert run(out, {s: 2.0, n: 3}) == 3.0
    with pytest.raises(AssertionError, match="n is zero"):
        run(out, {s: 2.0, n: 0})


def test_checks_known_true_are_removed_and_false_ones_kept():
    v = lt.dvector("v")
    f = lucent.function([v], assert_op(v, 1, lt.as_tensor(True)) * 2, mode=get_mode("FAST_RUN"))
    assert not any(isinstance(n.op, CheckAndRaise) for n in f.maker.fgraph.apply_nodes)
    g = lucent.function([v], assert_op(v, v.shape[0] > 0, 1) * 2, mode=get_mode("FAST_RUN"))
    kept = [n for n in g.maker.fgraph.apply_nodes if isinstance(n.op, CheckAndRaise)]
    assert len(kept) == 1 and len(kept[0].inputs) == 2
    u = lucent.function([v], assert_op(v, v.shape[0] > 5), mode=get_mode("FAST_RUN").including("unsafe"))
    assert not any(isinstance(n.op, CheckAndRaise) for n in u.maker.fgraph.apply_nodes)


def test_gradient_flows_through_value_only():
    v = lt.dvector("v")
    g = lucent.grad((Assert()(v, v.shape[0] > 0) ** 2).sum(), v)
    np.testing.assert_allclose(run(g, {v: np.array([1.0, -2.0])}), [2.0, -4.0])


def test_construction_and_printing():
    with pytest.raises(ValueError, match="Exception subclass"):
        CheckAndRaise(str)
    assert str(CheckAndRaise(TooLong, "x" * 40)) == "CheckAndRaise{raises=TooLong, msg='" + "x" * 27 + "...'}"
    assert str(Assert("short")) == "Assert{msg='short'}"
    assert Assert("a") == Assert("a") and Assert("a") != Assert("b")
    with pytest.raises(TypeError, match="scalar"):
        assert_op(lt.dvector(), lt.dvector())
    assert current_mode() in ("FAST_COMPILE", "FAST_RUN", "DebugMode")
