"""The Numba linker: one compiled function per graph, fallback, user kernels, call path."""

import warnings

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent  # noqa: E402
import lucent.tensor as lt  # noqa: E402
from lucent.compile.io import In, Out  # noqa: E402
from lucent.compile.mode import Mode, get_mode  # noqa: E402
from lucent.graph.basic import Apply  # noqa: E402
from lucent.graph.op import Op  # noqa: E402
from lucent.link.numba.dispatch import NumbaFallbackWarning, numba_funcify, numba_njit  # noqa: E402
from lucent.link.numba.linker import NumbaLinker  # noqa: E402
from lucent.link.python import PythonLinker  # noqa: E402
from tests.link.numba.user_ops import Add2, Double  # noqa: E402

# Only the user ops' kernels: the graph is exactly what the test builds.
NUMBA = Mode(linker=NumbaLinker(), optimizer=None)


def compile_fn(inputs, outputs, **kwargs):
    kwargs.setdefault("mode", NUMBA)
    return lucent.function(inputs, outputs, **kwargs)


# --- modes ------------------------------------------------------------------
def test_fast_run_and_numba_use_numba_linker_fast_compile_python():
    for name in ("FAST_RUN", "NUMBA"):
        mode = get_mode(name)
        assert isinstance(mode.linker, NumbaLinker)
        assert "Numba linker" in repr(mode)
    assert isinstance(get_mode("FAST_COMPILE").linker, PythonLinker)


def test_without_numba_fast_run_says_python_linker():
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['numba'] = None\n"
        "import lucent\n"
        "m = lucent.get_mode('FAST_RUN')\n"
        "print(type(m.linker).__name__, '|', repr(m))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("PythonLinker |")
    assert "numba is not installed" in out.stdout


# --- the generated graph function ------------------------------------------------
def test_one_graph_function_calls_every_kernel():
    x = lt.dvector("x")
    f = compile_fn([x], Add2()(Double()(x), x))
    program = f.maker.linker.program
    assert "def graph_fn(i0)" in program.source
    assert program.source.count("= k") == 2
    np.testing.assert_allclose(f(np.arange(3.0)), 3 * np.arange(3.0))
    assert f.maker.linker.fallback_ops == []


def test_one_expression_kernels_are_written_into_the_graph_function():
    """Views and shapes (DimShuffle, Shape_i) cost no compile of their own: their expression
    is in the graph function's text, not a call; DebugMode still runs their kernels alone."""
    from lucent.debugmode import DebugMode

    x, b = lt.dmatrix("x"), lt.dvector("b")
    out = (x + b[None, :]) * x.shape[0] + x.T.sum(axis=1)
    # the statements (``numba__graph_program`` emits the same lines as IR; test_graph_program.py)
    with lucent.config.change_flags(numba__graph_program=False):
        f = lucent.function([x, b], out, mode="FAST_RUN")
    source = f.maker.linker.program.source
    assert "kept_order_view(" in source and "zero_d(" in source
    import re

    calls = [line for line in source.splitlines() if re.search(r"= k\d+\(", line)]
    assert calls and not [line for line in calls if "DimShuffle" in line or "Shape_i" in line], source
    xv, bv = np.arange(6.0).reshape(2, 3), np.array([1.0, -1.0, 0.5])
    want = (xv + bv) * 2 + xv.T.sum(axis=1)
    np.testing.assert_allclose(f(xv, bv), want)
    np.testing.assert_allclose(lucent.function([x, b], out, mode=DebugMode())(xv, bv), want)


def test_multiple_outputs_inputs_and_constants_as_outputs():
    x = lt.dvector("x")
    c = lt.constant(np.array([1.0, 2.0]))
    f = compile_fn([x], [Double()(x), x, c, Double()(x)])
    a = np.array([1.0, 3.0])
    d1, same, const, d2 = f(a)
    np.testing.assert_allclose(d1, 2 * a)
    np.testing.assert_allclose(d2, 2 * a)
    assert d1 is not d2 and not np.shares_memory(d1, d2)
    assert same is not a and not np.shares_memory(same, a)
    np.testing.assert_allclose(same, a)
    const[0] = 99.0  # the caller's copy, not the graph's constant
    np.testing.assert_allclose(f(a)[2], [1.0, 2.0])


@pytest.mark.parametrize(
    "dtype, value",
    [
        ("float64", np.asarray(1.5)),
        ("float32", np.array([1.5, -2.0], dtype="float32")),
        ("int64", np.array([[1, 2], [3, 4]])),
        ("int32", np.zeros((0, 3), dtype="int32")),
    ],
)
def test_dtypes_zero_d_and_empty(dtype, value):
    x = lt.tensor(dtype=dtype, shape=(None,) * value.ndim, name="x")
    f = compile_fn([x], Double()(x))
    out = f(value)
    assert isinstance(out, np.ndarray) and out.dtype == dtype and out.shape == value.shape
    np.testing.assert_array_equal(out, value * 2)


def test_array_constants_are_arguments():
    x = lt.dvector("x")
    small = lt.constant(np.arange(3.0))
    f = compile_fn([x], Add2()(x, small))
    assert len(f.maker.linker.program.extra_args) == 1
    assert "graph_fn(i0, a0)" in f.maker.linker.program.source
    np.testing.assert_allclose(f(np.ones(3)), 1 + np.arange(3.0))
    big = np.arange(5000.0)
    g = compile_fn([x], Add2()(x, lt.constant(big)))
    assert len(g.maker.linker.program.extra_args) == 1
    np.testing.assert_allclose(g(np.ones(5000)), 1 + big)


@pytest.mark.parametrize("n_nodes", [1, 8])
def test_variants_with_other_constants_share_one_graph_function(n_nodes):
    """Constants are arguments, so the same graph with other numbers compiles nothing."""
    x = lt.dvector("x")

    def chain(c):
        out = x
        for k in range(n_nodes):
            out = Add2()(Double()(out), lt.constant(np.full(3, c + k)))
        return out

    def reference(value, c):
        for k in range(n_nodes):
            value = 2 * value + (c + k)
        return value

    f, g = compile_fn([x], chain(1.0)), compile_fn([x], chain(-3.5))
    pf, pg = f.maker.linker.program, g.maker.linker.program
    assert len(pf.extra_args) == n_nodes
    assert pf.fn is pg.fn and pf.cache_key == pg.cache_key
    v = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(f(v), reference(v, 1.0))
    np.testing.assert_allclose(g(v), reference(v, -3.5))


def test_one_constant_used_twice_and_two_constants_are_different_graph_functions():
    """The key says which argument each constant is: sharing one is not the same graph as two."""
    x = lt.dvector("x")
    one = lt.constant(np.ones(3))
    shared = compile_fn([x], Add2()(Add2()(x, one), one))
    separate = compile_fn([x], Add2()(Add2()(x, lt.constant(np.full(3, 2.0))), lt.constant(np.full(3, 5.0))))
    ps, pd = shared.maker.linker.program, separate.maker.linker.program
    assert (len(ps.extra_args), len(pd.extra_args)) == (1, 2)
    assert ps.cache_key != pd.cache_key
    np.testing.assert_allclose(shared(np.zeros(3)), np.full(3, 2.0))
    np.testing.assert_allclose(separate(np.zeros(3)), np.full(3, 7.0))


# --- views and in-place kernels -----------------------------------------------------
class Reverse(Op):
    __props__ = ()
    view_map = {0: [0]}

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0][::-1]


class DoubleInplace(Op):
    __props__ = ()
    destroy_map = {0: [0]}

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        inputs[0] *= 2
        out[0][0] = inputs[0]


@numba_njit
def _reverse(x):
    return x[::-1]


@numba_njit
def _double_inplace(x):
    x *= 2
    return x


numba_funcify.register(Reverse)(lambda op, node=None, **kw: _reverse)
numba_funcify.register(DoubleInplace)(lambda op, node=None, **kw: _double_inplace)


def test_view_output_is_copied_unless_borrowed():
    x = lt.dvector("x")
    a = np.arange(4.0)
    f = compile_fn([x], Reverse()(x))
    out = f(a)
    np.testing.assert_allclose(out, a[::-1])
    assert not np.shares_memory(out, a)
    # A borrowed output may be a view of a borrowed input; of an unborrowed
    # input (the caller still owns it) it is still copied.
    g = compile_fn([In(x, borrow=True)], Out(Reverse()(x), borrow=True))
    assert np.shares_memory(g(a), a)
    h = compile_fn([x], Out(Reverse()(x), borrow=True))
    assert not np.shares_memory(h(a), a)


def test_inplace_kernel_updates_shared_buffer():
    W = lucent.shared(np.arange(3.0), name="W")
    buffer = W.get_value(borrow=True)
    f = compile_fn([], [], updates=[(W, DoubleInplace()(W))], accept_inplace=True)
    f()
    np.testing.assert_allclose(W.get_value(), [0.0, 2.0, 4.0])
    assert W.get_value(borrow=True) is buffer


# --- fallback ------------------------------------------------------------------------------
class Triple(Op):
    """No Numba implementation: runs perform in object mode."""

    __props__ = ()

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] * 3


def test_op_without_kernel_falls_back_and_warns_once():
    x = lt.dvector("x")
    with pytest.warns(NumbaFallbackWarning, match="Triple") as record:
        f = compile_fn([x], Add2()(Triple()(x), x))
    assert len([w for w in record if "Triple" in str(w.message)]) == 1
    np.testing.assert_allclose(f(np.arange(3.0)), 4 * np.arange(3.0))
    assert [type(op) for op in f.maker.linker.fallback_ops] == [Triple]
    assert "Triple" in f.maker.linker.uncacheable_reason
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second function: no second warning
        g = compile_fn([x], Triple()(x))
    np.testing.assert_allclose(g(np.ones(2)), [3.0, 3.0])


class FailingNumbaKernel(Op):
    __props__ = ()

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] + 1


@numba_funcify.register(FailingNumbaKernel)
def _broken(op, node=None, **kwargs):
    @numba_njit
    def broken(x):
        return x + "not a number"

    return broken


def test_kernel_that_does_not_compile_falls_back_with_warning():
    x = lt.dvector("x")
    with pytest.warns(NumbaFallbackWarning, match="FailingNumbaKernel"):
        f = compile_fn([x], Double()(FailingNumbaKernel()(x)))
    np.testing.assert_allclose(f(np.zeros(2)), [2.0, 2.0])


# --- user registration on FAST_RUN ---------------------------------------------------------
class PerformMustNotRun(Op):
    __props__ = ()

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):  # pragma: no cover - the kernel runs instead
        raise AssertionError("perform ran on FAST_RUN")


@numba_funcify.register(PerformMustNotRun)
def _funcify_pmnr(op, node=None, **kwargs):
    return _plus_one


@numba_njit
def _plus_one(x):
    return x + 1


def test_registered_user_kernel_runs_on_fast_run():
    x = lt.dvector("x")
    f = lucent.function([x], PerformMustNotRun()(x), mode="FAST_RUN")
    assert isinstance(f.maker.linker, NumbaLinker)
    np.testing.assert_allclose(f(np.zeros(3)), np.ones(3))
    assert f.maker.linker.fallback_ops == []


# --- the call path ----------------------------------------------------------------------------
def test_fast_call_filters_inputs_and_trust_input_skips_it():
    x = lt.dvector("x")
    f = compile_fn([x], Double()(x))
    assert "_graph(" in f._fast_call_source
    np.testing.assert_allclose(f([1, 2]), [2.0, 4.0])  # list, int: filtered
    with pytest.raises(TypeError, match="Wrong number of dimensions"):
        f(np.ones((2, 2)))
    f.trust_input = True
    np.testing.assert_allclose(f(np.array([1.0, 2.0])), [2.0, 4.0])


def test_fast_call_keeps_defaults_kwargs_updates_and_failure_semantics():
    x = lt.dvector("x")
    y = lt.dvector("y")
    s = lucent.shared(np.zeros(2), name="s")
    f = compile_fn(
        [x, In(y, value=np.ones(2), name="y")], Add2()(x, y), updates=[(s, Add2()(s, x))]
    )
    np.testing.assert_allclose(f(np.ones(2)), [2.0, 2.0])  # default (general path)
    np.testing.assert_allclose(f(np.ones(2), y=np.zeros(2)), [1.0, 1.0])  # keyword
    np.testing.assert_allclose(f(np.ones(2), np.full(2, 5.0)), [6.0, 6.0])  # fast path
    np.testing.assert_allclose(s.get_value(), [3.0, 3.0])
    with pytest.raises(Exception):
        f(np.ones(3), np.ones(2))  # shape mismatch inside the graph
    np.testing.assert_allclose(s.get_value(), [3.0, 3.0])


def test_update_aliasing_an_output_is_copied():
    x = lt.dvector("x")
    s = lucent.shared(np.zeros(2), name="s")
    d = Double()(x)
    f = compile_fn([x], d, updates=[(s, d)])
    out = f(np.ones(2))
    assert not np.shares_memory(out, s.get_value(borrow=True))
    out[0] = 100.0
    np.testing.assert_allclose(s.get_value(), [2.0, 2.0])
