"""Tests of lucent/link/numba/graph_program.py: a graph function's lines emitted as IR by one intrinsic.

Every graph here is compiled with the program and with its statements
(``config.numba__graph_program``) and both are compared with NumPy: the
same values, errors, views and freed intermediates.
"""

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent  # noqa: E402
import lucent.tensor as lt  # noqa: E402
from lucent.ifelse import ifelse  # noqa: E402
from lucent.link.numba import graph_program  # noqa: E402

RNG = np.random.default_rng(5)


def _compile(inputs, outputs, program=True, **kwargs):
    with lucent.config.change_flags(numba__graph_program=program):
        return lucent.function(inputs, outputs, mode="FAST_RUN", **kwargs)


def _source(fn):
    return fn.maker.linker.program.source


def _both(inputs, outputs, **kwargs):
    with_program = _compile(inputs, outputs, True, **kwargs)
    with_statements = _compile(inputs, outputs, False, **kwargs)
    assert "return graph_program(" in _source(with_program)
    assert "graph_program" not in _source(with_statements)
    return with_program, with_statements


def test_a_layer_of_kernel_calls_and_views_is_one_intrinsic_call():
    x, W, b = lt.dmatrix("x"), lt.dmatrix("W"), lt.dvector("b")
    h = lt.tanh(lt.dot(x, W) + b)
    outputs = [h.sum(axis=0), (h * 2.0).T]  # a reduction, and a transposed view of a fused kernel
    f, g = _both([x, W, b], outputs)
    xv, Wv, bv = RNG.standard_normal((5, 3)), RNG.standard_normal((3, 4)), RNG.standard_normal(4)
    hv = np.tanh(xv @ Wv + bv)
    for fn in (f, g):
        got = fn(xv, Wv, bv)
        np.testing.assert_allclose(got[0], hv.sum(axis=0), rtol=1e-13)
        np.testing.assert_allclose(got[1], (hv * 2.0).T, rtol=1e-13)
    # non-contiguous inputs take the same program (its views read strides)
    xs = RNG.standard_normal((5, 6))[:, ::2]
    np.testing.assert_allclose(f(xs, Wv, bv)[0], np.tanh(xs @ Wv + bv).sum(axis=0), rtol=1e-13)


def test_outputs_read_again_returned_twice_or_views_of_an_input():
    x = lt.dmatrix("x")
    e = lt.exp(x)
    outputs = [e, e.sum(), x.T, e]  # e is read again, returned twice; x.T is a view of the input
    f, g = _both([x], outputs)
    xv = RNG.standard_normal((3, 4))
    for fn in (f, g):
        got = fn(xv)
        np.testing.assert_allclose(got[0], np.exp(xv), rtol=1e-14)
        np.testing.assert_allclose(got[1], np.exp(xv).sum(), rtol=1e-13)
        np.testing.assert_array_equal(got[2], xv.T)
        np.testing.assert_array_equal(got[3], got[0])


def test_empty_zero_d_nan_and_integer_inputs():
    x = lt.dvector("x")
    n = lt.lscalar("n")
    outputs = [lt.sum(x) / lt.cast(n, "float64"), x.shape[0] * n, lt.exp(x)[None, :]]
    f, g = _both([x, n], outputs)
    for xv in (np.array([]), np.array([1.0, np.nan, -np.inf]), RNG.standard_normal(7)):
        for fn in (f, g):
            got = fn(xv, 4)
            with np.errstate(all="ignore"):
                np.testing.assert_allclose(got[0], xv.sum() / 4.0, equal_nan=True)
                assert got[1] == xv.shape[0] * 4
                np.testing.assert_allclose(got[2], np.exp(xv)[None, :], equal_nan=True)


def test_float32_and_broadcasting():
    x, r = lt.fmatrix("x"), lt.frow("r")
    outputs = [lt.sqr(x - r).sum(axis=1), lt.maximum(x, r)]
    f, g = _both([x, r], outputs)
    xv, rv = RNG.standard_normal((4, 3)).astype("float32"), RNG.standard_normal((1, 3)).astype("float32")
    for fn in (f, g):
        got = fn(xv, rv)
        assert got[0].dtype == np.float32
        np.testing.assert_allclose(got[0], ((xv - rv) ** 2).sum(axis=1), rtol=1e-5)
        np.testing.assert_array_equal(got[1], np.maximum(xv, rv))


@pytest.fixture
def nrt_stats():
    from numba.core.runtime import _nrt_python, rtsys

    was = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()
    yield rtsys.get_allocation_stats
    if not was:
        _nrt_python.memsys_disable_stats()


def test_intermediates_are_freed_and_nothing_leaks(nrt_stats):
    x = lt.dmatrix("x")
    h = lt.exp(x) + 1.0
    f = _compile([x], [(h * h).sum(axis=1), lt.log(h).T, h])
    assert "graph_program(" in _source(f)
    xv = RNG.standard_normal((50, 40))
    f(xv)  # compiles and warms up
    before = nrt_stats()
    for _ in range(20):
        out = f(xv)
        del out
    after = nrt_stats()
    assert after.alloc - before.alloc > 0  # the outputs and intermediates were allocated ...
    assert after.alloc - before.alloc == after.free - before.free  # ... and every one was freed
    assert after.mi_alloc - before.mi_alloc == after.mi_free - before.mi_free


def test_an_error_in_a_kernel_propagates_with_its_message():
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    f, g = _both([x, y], [lt.dot(x, y).sum(), lt.exp(x)])
    for fn in (f, g):
        with pytest.raises(ValueError, match="not aligned"):
            fn(np.ones((2, 3)), np.ones((4, 2)))
        np.testing.assert_allclose(fn(np.ones((2, 3)), np.ones((3, 2)))[0], 12.0)


def test_the_in_place_updates_shape_check_stops_before_any_update():
    W = lucent.shared(np.ones((3, 3)), name="W")
    b = lucent.shared(np.zeros(3), name="b")
    a, c = lt.dmatrix("a"), lt.dmatrix("c")
    updates = [(W, W - 0.5 * lt.dot(a, c)), (b, b - 0.5 * c.sum(axis=0))]
    f = _compile([a, c], W.sum(), updates=updates)
    assert "graph_program(" in _source(f)
    f(np.ones((3, 2)), np.ones((2, 3)))
    np.testing.assert_allclose(W.get_value(), 0.0)
    np.testing.assert_allclose(b.get_value(), -1.0)
    with pytest.raises(ValueError, match="stopped before changing any"):
        f(np.ones((3, 2)), np.ones((2, 4)))
    np.testing.assert_allclose(W.get_value(), 0.0)  # nothing was changed
    np.testing.assert_allclose(b.get_value(), -1.0)


def test_graphs_with_branches_or_the_flag_off_keep_their_statements():
    x = lt.dvector("x")
    c = lt.bscalar("c")
    branched = _compile([x, c], ifelse(c, lt.exp(x), lt.log(x)))
    off = _compile([x], lt.exp(x), program=False)
    for fn in (branched, off):
        assert "graph_program" not in _source(fn)
    np.testing.assert_allclose(branched(np.array([1.0, 2.0]), 1), np.exp([1.0, 2.0]))
    np.testing.assert_allclose(branched(np.array([1.0, 2.0]), 0), np.log([1.0, 2.0]))


def test_the_expressions_a_program_emits_and_those_it_leaves_to_the_statements():
    parse = graph_program.parse_expression
    for text in (
        "kept_order_view(t1, (1, t1.shape[0], ), (0, t1.strides[0], ))",
        "zero_d(i1.shape[0])",
        "t6[item_of(a0):]",
        "t10[::item_of(a2)]",
        "t3[:item_of(t0), 1:item_of(c0)]",
    ):
        assert parse(text) is not None, text
    assert parse("k3(t1, c0)", kernels=["k3"]) is not None
    for text in (
        "k3(t1)",  # not a kernel of this graph
        "other_view(t1)",
        "kept_order_view(t1, (t1.shape[0] + 1,), (8,))",  # arithmetic
        "t1.T",
        "t1[t2 > 0]",
        "t1[1.5]",
    ):
        assert parse(text) is None, text


def test_slicing_views_of_a_loop_s_outputs_are_emitted_too():
    """The lines a loop's gradient graph writes (``t6[item_of(a0):]``, ``t10[::item_of(a2)]``)."""
    x = lt.dvector("x")
    y = lt.exp(x)
    outputs = [y[1:], y[::-1][:2], y[::2].sum(), lt.log(y[1:-1])]
    f, g = _both([x], outputs)
    for xv in (RNG.standard_normal(7), np.array([0.5]), np.array([])):
        e = np.exp(xv)
        for fn in (f, g):
            got = fn(xv)
            np.testing.assert_allclose(got[0], e[1:])
            np.testing.assert_allclose(got[1], e[::-1][:2])
            np.testing.assert_allclose(got[2], e[::2].sum())
            np.testing.assert_allclose(got[3], np.log(e[1:-1]))
