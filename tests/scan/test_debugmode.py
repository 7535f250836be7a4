"""DebugMode follows a kernel/perform discrepancy into a scan's body: it names the scan, the step and the inner node."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile.debug.debugmode import DebugMode, DebugModeError
from lucent.graph.basic import Apply
from lucent.graph.op import Op

pytest.importorskip("numba")
from lucent.link.numba.dispatch import numba_funcify, numba_njit  # noqa: E402


class DoubleWrongAboveTen(Op):
    """``2 * x``; its Numba kernel adds 1 when ``x > 10`` (a deliberate kernel bug)."""

    __props__ = ()

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = np.asarray(inputs[0] * 2)

    def infer_shape(self, fgraph, node, shapes):
        return shapes


@numba_njit
def _double_wrong_above_ten(x):
    out = x * 2
    if x > 10:
        out = out + 1.0
    return out


@numba_funcify.register(DoubleWrongAboveTen)
def _(op, node=None, **kwargs):
    return _double_wrong_above_ten


def test_wrong_kernel_inside_scan_step_is_located():
    x0 = lt.dscalar("x0")
    ys = lucent.scan(
        lambda h: DoubleWrongAboveTen()(h) + 0.0,
        outputs_info=[x0],
        n_steps=6,
        name="doubler",
        return_updates=False,
    )
    f = lucent.function([x0], ys, mode=DebugMode())
    with pytest.raises(DebugModeError) as info:
        f(1.0)
    err = info.value
    # 1, 2, 4, 8, 16: the kernel first goes wrong at step 4 (input 16).
    assert err.inner_location.startswith('scan "doubler", step 4: DoubleWrongAboveTen')
    assert "test_debugmode.py" in err.inner_location
    message = str(err)
    assert message.startswith('scan "doubler", step 4: DoubleWrongAboveTen')
    assert "inner problem" in message
    # the same place as objects, for tools that open the loop at that node
    site = err.inner_site
    assert site.node is err.node and site.step == 4 and site.deeper is None
    assert isinstance(site.inner_node.op, DoubleWrongAboveTen)
    assert site.inner_node in err.node.op.fgraph.apply_nodes
    assert site.path() == [(err.node, 4, site.inner_node)]


def test_a_wrong_inner_kernel_whose_difference_the_loop_hides_is_still_found():
    """Every step's inner nodes are checked on both paths, not only when the loop's outputs
    differ: here ``minimum(., 30)`` makes both paths' outputs equal at every step."""
    x0 = lt.dscalar("x0")
    ys = lucent.scan(
        lambda h: lt.minimum(DoubleWrongAboveTen()(h), 30.0), outputs_info=[x0], n_steps=3,
        name="capped", return_updates=False,
    )
    f = lucent.function([x0], ys, mode=DebugMode(on_error="report"))
    np.testing.assert_array_equal(f(20.0), [30.0, 30.0, 30.0])
    assert lucent.function([x0], ys, mode="FAST_RUN")(20.0).tolist() == [30.0, 30.0, 30.0]
    (problem,) = list(f.debug_report)
    assert problem.kind == "BadThunkOutput" and problem.path == "numba"
    assert type(problem.node.op).__name__ == "Scan"
    assert problem.inner_site.step == 0  # 2 * 20 = 40 on the reference path, 41 on the kernel's
    assert isinstance(problem.inner_site.inner_node.op, DoubleWrongAboveTen)
    assert problem.summary.startswith('scan "capped", step 0: DoubleWrongAboveTen')
    # a correct loop has nothing to report
    g = lucent.function([x0], lucent.scan(lambda h: lt.minimum(h * 2.0, 30.0), outputs_info=[x0],
                                           n_steps=3, return_updates=False), mode=DebugMode(on_error="report"))
    g(20.0)
    assert g.debug_report.ok


def test_the_steps_are_checked_lazily_like_the_graph():
    """A step's ``ifelse`` runs only its taken branch under DebugMode's step checks too:
    the other branch would fail its assertion."""
    from lucent.ifelse import ifelse
    from lucent.raise_op import assert_op

    x0 = lt.dscalar("x0")

    def step(h):
        big = lt.gt(h, 0.0)
        # the else branch is taken only for h <= 0, and its assertion fails for any h > 0
        return ifelse(big, h * 2.0, assert_op(h - 1.0, lt.le(h, 0.0)))

    ys = lucent.scan(step, outputs_info=[x0], n_steps=4, name="lazy", return_updates=False)
    f = lucent.function([x0], ys, mode=DebugMode(on_error="report"))
    np.testing.assert_array_equal(f(1.0), [2.0, 4.0, 8.0, 16.0])
    assert f.debug_report.ok


def test_a_nan_made_inside_a_loop_is_located_by_check_nan():
    """``DebugMode(check_nan=True)``: a loop whose output holds a NaN its inputs did not is
    followed inside, to the first step and inner node making one."""
    seq = lt.dvector("seq")
    h0 = lt.dscalar("h0")
    hs = lucent.scan(
        lambda x_t, h: lt.log(h + x_t), sequences=[seq], outputs_info=[h0], name="logs",
        return_updates=False,
    )
    f = lucent.function([seq, h0], hs, mode=DebugMode(on_error="report", check_nan=True))
    xs = np.array([2.0, 1.0, -5.0, 1.0])  # log(3), log(log 3 + 1), then log of a negative number
    with np.errstate(invalid="ignore"):
        out = f(xs, 1.0)
    expected = [np.log(3.0)]
    with np.errstate(invalid="ignore"):
        for x in xs[1:]:
            expected.append(np.log(expected[-1] + x))
    np.testing.assert_allclose(out, expected)
    (problem,) = [p for p in f.debug_report if p.kind == "NonFiniteOutput"]
    assert type(problem.node.op).__name__ == "Scan"
    assert problem.inner_site.step == 2
    assert "log" in str(problem.inner_site.inner_node.op).lower()  # log(h + x_t), fused
    assert problem.inner_location.startswith('scan "logs", step 2: ')
    assert problem.summary.startswith('scan "logs", step 2: ')


@pytest.mark.slow
def test_correct_scan_passes_debugmode():
    x0 = lt.dscalar("x0")
    ys = lucent.scan(lambda h: h * 2.0, outputs_info=[x0], n_steps=5, return_updates=False)
    f = lucent.function([x0], ys, mode=DebugMode())
    np.testing.assert_allclose(f(1.0), [2.0, 4.0, 8.0, 16.0, 32.0])


def test_loops_with_branches_and_gradients_check_clean(caplog):
    """No false report: a loop whose body branches (its output shape is only known by
    running it, so DebugMode's shape check runs it too, in place) and the gradient
    loop of a nested loop (an accumulator carried from step to step) run clean,
    with no warning, and give the reference values."""
    import logging

    from lucent.gradient import grad
    from lucent.ifelse import ifelse
    from lucent.scan import scan

    x, c = lt.dvector("x"), lt.dscalar("c")
    branchy = scan(lambda h, c: ifelse(lt.gt(h.sum(), c), h * 0.5, h + 1.0), outputs_info=[x],
                   non_sequences=[c], n_steps=5, return_updates=False)

    def outer(h):
        return scan(lambda g: lt.sin(g) + h, outputs_info=[h], n_steps=2, return_updates=False)[-1]

    nested = scan(outer, outputs_info=[x], n_steps=2, return_updates=False)
    outs = [branchy, grad(nested[-1].sum(), x)]
    xv = np.array([0.3, -0.7, 1.1])
    want = lucent.function([x, c], outs, mode="FAST_COMPILE")(xv, 0.5)
    with caplog.at_level(logging.WARNING, logger="lucent"):
        got = lucent.function([x, c], outs, mode=DebugMode())(xv, 0.5)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)


def test_a_body_stabilised_by_the_rewrites_checks_clean():
    """The body's rewrites compute the written-out softmax stably; where the body as
    written overflowed, DebugMode's rewrite check accepts the finite value."""
    from lucent.scan import scan

    x = lt.dvector("x")
    ys = scan(lambda h: lt.exp(h * 2.0) / lt.exp(h * 2.0).sum() * 1000.0, outputs_info=[x],
              n_steps=3, return_updates=False)
    v = np.array([400.0, 401.0])
    h, want = v, []
    for _ in range(3):
        z = h * 2.0
        h = np.exp(z - z.max()) / np.exp(z - z.max()).sum() * 1000.0
        want.append(h)
    for mode in ("FAST_RUN", DebugMode()):
        np.testing.assert_allclose(lucent.function([x], ys, mode=mode)(v), np.array(want))
