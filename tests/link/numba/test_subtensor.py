"""Numba kernels of indexing agree with ``perform``: views, copies, bounds errors, np.add.at."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.link.numba.dispatch import subtensor  # noqa: F401 (registers the kernels)
from lucent.tensor.advanced_subtensor import (
    AdvancedIncSubtensor,
    AdvancedIncSubtensor1,
    AdvancedSubtensor,
    AdvancedSubtensor1,
    advanced_subtensor1,
)
from lucent.tensor.subtensor import IncSubtensor, SliceLength, Subtensor, inc_subtensor, set_subtensor
from tests.link.numba.test_shape import check, check_raises

i = lt.scalar("i", dtype="int64")
j = lt.scalar("j", dtype="int32")
k = lt.scalar("k", dtype="int64")


def _i(v, dtype="int64"):
    return np.asarray(v, dtype=dtype)


def _values(dtype, shape):
    v = np.arange(int(np.prod(shape))).reshape(shape)
    return np.asarray(v % 2 == 0) if dtype == "bool" else v.astype(dtype)


DTYPES = ["float64", "float32", "int64", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_subtensor_constant_and_symbolic_indices(dtype):
    x = lt.tensor(dtype=dtype, shape=(None, None, None))
    v = _values(dtype, (3, 4, 5))
    for expr in [x[1], x[-1, 1:], x[:, ::-1], x[::-2, 1:3, -1], x[1:1], x[5:], x[-10:2:1]]:
        assert isinstance(expr.owner.op, Subtensor)
        check(expr, v, view=bool(expr.owner.op.idx_list and v[tuple()].size and _size(expr, v)))
    check(x[1, 2, 3], v)  # 0-d result
    check(x[i, j:k], v, _i(-2), _i(1, "int32"), _i(-1))
    check(x[i:, :, j:k:i], v, _i(1), _i(0, "int32"), _i(5), view=True)
    check(x[:, i:j:-1], v, _i(3), _i(0, "int32"), view=True)


def _size(expr, v):
    from tests.link.numba.test_shape import perform, input_values

    return perform(expr.owner, input_values(expr.owner, [v]))[0].size


def test_subtensor_strided_0d_and_empty():
    x = lt.tensor(dtype="float64", shape=(None, None))
    strided = np.arange(30.0).reshape(5, 6)[::2, 1::2]
    check(x[1:, ::-1], strided, view=True)
    check(x[i, i], strided, _i(-1))
    check(x[:, i], np.zeros((0, 3)), _i(2))
    v = lt.tensor(dtype="int32", shape=(None,))
    check(v[i], np.arange(4, dtype="int32"), _i(3))


def test_subtensor_bounds_and_step_errors():
    x = lt.tensor(dtype="float64", shape=(None, None))
    check_raises(x[i], np.zeros((3, 2)), _i(3), match="index 3 is out of bounds for axis 0 with length 3")
    check_raises(x[:, i], np.zeros((3, 2)), _i(-3), match="index -3 is out of bounds for axis 1 with length 2")
    check_raises(x[::i], np.zeros((3, 2)), _i(0), match="slice step cannot be zero")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("set_", [False, True])
def test_inc_subtensor(dtype, inplace, set_):
    x = lt.tensor(dtype=dtype, shape=(None, None))
    xv = _values(dtype, (4, 5))
    cases = [
        (x[1:3], lt.tensor(dtype=dtype, shape=(None, None)), _values(dtype, (2, 5))),
        (x[i, ::-2], lt.tensor(dtype=dtype, shape=(None,)), _values(dtype, (3,))),
        (x[1, i], lt.tensor(dtype=dtype, shape=()), _values(dtype, ())),
        (x[:, 1:], lt.tensor(dtype=dtype, shape=(1, None)), _values(dtype, (1, 4))),  # broadcast row
        (x[:, i], lt.tensor(dtype=dtype, shape=()), _values(dtype, ())),
    ]
    for indexed, y, yv in cases:
        base = inc_subtensor(indexed, y) if not set_ else set_subtensor(indexed, y)
        node = base.owner
        op = IncSubtensor(node.op.idx_list, inplace=inplace, set_instead_of_inc=set_)
        out = op(*node.inputs)
        from lucent.graph.basic import Constant

        idx = [_i(-1)] * len({v for v in node.inputs[2:] if not isinstance(v, Constant)})
        check(out, xv, yv, *idx, inplace=inplace, view=None if inplace else False)


def test_inc_subtensor_refuses_undeclared_broadcast_and_overlap_in_place():
    x = lt.tensor(dtype="float64", shape=(None, None))
    y = lt.tensor(dtype="float64", shape=(None, None))
    out = inc_subtensor(x[1:], y)
    check_raises(out, np.zeros((3, 4)), np.ones((1, 4)), match="cannot broadcast a value of shape")
    # In place with y a view of x: NumPy buffers the overlap, so must the kernel.
    from lucent.link.numba.dispatch import numba_funcify

    v = lt.tensor(dtype="float64", shape=(None,))
    w = lt.tensor(dtype="float64", shape=(None,))
    node = IncSubtensor(((True, None, None),), inplace=True)(v, w, lt.constant(1)).owner
    a = np.arange(6.0)
    numba_funcify(node.op, node)(a, a[:-1], np.asarray(1))
    b = np.arange(6.0)
    b[1:] += b[:-1].copy()
    np.testing.assert_array_equal(a, b)


def test_slice_length():
    n = lt.scalar("n", dtype="int64")
    for pattern, bounds in [((True, True, True), (1, -1, 2)), ((False, True, False), (3,)),
                            ((True, None, True), (-1, -1)), ((None, None, True), (-3,))]:
        vars_ = [lt.scalar(dtype="int64") for _ in bounds]
        out = SliceLength(pattern)(n, *vars_)
        for size in (0, 1, 7):
            check(out, _i(size), *[_i(b) for b in bounds])
    out = SliceLength((None, None, True))(n, k)
    check_raises(out, _i(4), _i(0), match="slice step cannot be zero")


@pytest.mark.parametrize("dtype", DTYPES)
def test_advanced_subtensor1(dtype):
    x = lt.tensor(dtype=dtype, shape=(None, None))
    idx = lt.tensor(dtype="int64", shape=(None,))
    out = advanced_subtensor1(x, idx)
    assert isinstance(out.owner.op, AdvancedSubtensor1)
    xv = _values(dtype, (4, 3))
    check(out, xv, np.array([0, -1, 2, 2]), view=False)
    check(out, xv, np.array([], dtype="int64"))
    check(out, xv[::2, ::-1], np.array([1, 0, -2]))
    v = lt.tensor(dtype=dtype, shape=(None,))
    check(v[idx], _values(dtype, (5,)), np.array([4, -5, 0]))
    idx32 = lt.tensor(dtype="int32", shape=(None,))
    check(x[idx32], xv, np.array([3, 1], dtype="int32"))
    check_raises(out, xv, np.array([1, 4]), match="index 4 is out of bounds for axis 0 with length 4")
    check_raises(out, xv, np.array([-5]), match="index -5 is out of bounds")


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "bool"])
@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("set_", [False, True])
def test_advanced_inc_subtensor1_accumulates_like_add_at(dtype, inplace, set_):
    x = lt.tensor(dtype=dtype, shape=(None, None))
    idx = lt.tensor(dtype="int64", shape=(None,))
    xv = _values(dtype, (4, 3))
    op = AdvancedIncSubtensor1(inplace=inplace, set_instead_of_inc=set_)
    for y, yv in [
        (lt.tensor(dtype=dtype, shape=(None, None)), _values(dtype, (5, 3))),
        (lt.tensor(dtype=dtype, shape=()), _values(dtype, ())),
        (lt.tensor(dtype=dtype, shape=(None,)), _values(dtype, (3,))),
        (lt.tensor(dtype=dtype, shape=(1, None)), _values(dtype, (1, 3))),
    ]:
        out = op(x, y, idx)
        check(out, xv, yv, np.array([1, -1, 1, 0, 1]), inplace=inplace)
    v = lt.tensor(dtype=dtype, shape=(None,))
    check(op(v, lt.tensor(dtype=dtype, shape=(None,)), idx), _values(dtype, (3,)), _values(dtype, (4,)),
          np.array([2, 2, -1, 0]), inplace=inplace)
    out = op(x, lt.tensor(dtype=dtype, shape=(None, None)), idx)
    check_raises(out, xv, _values(dtype, (2, 3)), np.array([0, 7]), match="index 7 is out of bounds")
    check_raises(out, xv, _values(dtype, (1, 3)), np.array([0, 1]), match="cannot broadcast")


def _adv_cases():
    x = lt.tensor(dtype="float64", shape=(None, None, None))
    a = lt.tensor(dtype="int64", shape=(None,))
    a1 = lt.tensor(dtype="int64", shape=(1,))
    a2 = lt.tensor(dtype="int64", shape=(None,))
    b = lt.tensor(dtype="int64", shape=(None, None))
    m = lt.tensor(dtype="bool", shape=(None, None))
    m1 = lt.tensor(dtype="bool", shape=(None,))
    av, bv = np.array([0, -1, 2, 0]), np.array([[1, 0], [2, -3]])
    mv = np.array([[True, False, True, False], [False, False, True, True], [True, True, False, False]])
    return [
        (x[:, a], [av]),
        (x[a2, 1:, a2], [av[:2]]),
        (x[1:, b], [bv]),
        (x[a, 2], [av]),  # array and int: adjacent
        (x[a, :, 1], [av]),  # separated: advanced dims first
        (x[::-1, :, a], [av]),
        (x[m], [mv]),
        (x[:, m1], [np.array([True, False, True, True])]),
        (x[1, m1, ::2], [np.array([False, True, True, True])]),
        (x[b, ::2, a2], [bv, av[:2]]),
        (x[b, a1], [bv, av[:1]]),
    ]


def test_advanced_subtensor_layouts():
    xv = np.arange(60.0).reshape(3, 4, 5)
    for out, given in _adv_cases():
        check(out, xv, *given)
    x = lt.tensor(dtype="float64", shape=(None, None, None))
    check(x[np.array([True, False, True])], xv)


@pytest.mark.parametrize("dtype", DTYPES)
def test_advanced_subtensor_dtypes_and_strided(dtype):
    x = lt.tensor(dtype=dtype, shape=(None, None))
    a = lt.tensor(dtype="int32", shape=(None,))
    out = x[a, a]
    assert isinstance(out.owner.op, AdvancedSubtensor)
    xv = _values(dtype, (5, 6))[::-1, ::2]
    check(out, xv, np.array([0, -1, 2], dtype="int32"))
    check(x[1:, a], xv, np.array([], dtype="int32"))
    check_raises(out, xv, np.array([0, 5], dtype="int32"), match="index 5 is out of bounds for axis 0")
    a2 = lt.tensor(dtype="int32", shape=(None,))
    check_raises(x[a, a2], xv, np.array([0, 1], dtype="int32"), np.array([0, 1, 2], dtype="int32"),
                 match="shape mismatch")
    m = lt.tensor(dtype="bool", shape=(None, None))
    check_raises(x[m], xv, np.ones((5, 2), dtype=bool), match="boolean index")


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("mode", ["inc", "set", "ignore_duplicates"])
def test_advanced_inc_subtensor(inplace, mode):
    xv = np.arange(60.0).reshape(3, 4, 5)
    from tests.link.numba.test_shape import input_values, perform

    for indexed, given in _adv_cases():
        node = indexed.owner
        region = perform(node, input_values(node, [xv, *given]))[0]
        op = AdvancedIncSubtensor(node.op.idx_list, inplace, mode == "set", mode == "ignore_duplicates")
        y = lt.tensor(dtype="float64", shape=(None,) * region.ndim)
        out = op(node.inputs[0], y, *node.inputs[1:])
        yv = np.arange(region.size, dtype="float64").reshape(region.shape) + 0.5
        check(out, xv, yv, *given, inplace=inplace)
        # A broadcast scalar value, repeated indices accumulate.
        out = op(node.inputs[0], lt.tensor(dtype="float64", shape=()), *node.inputs[1:])
        check(out, xv, np.asarray(2.0), *given, inplace=inplace)
    x = lt.tensor(dtype="int64", shape=(None, None))
    a = lt.tensor(dtype="int64", shape=(None,))
    op = AdvancedIncSubtensor((("a"), ("a")), inplace, mode == "set", mode == "ignore_duplicates")
    out = op(x, lt.tensor(dtype="int64", shape=(1,)), a, a)
    check(out, np.zeros((3, 3), dtype="int64"), np.array([5]), np.array([0, 1, 0, 0]), inplace=inplace)
    check_raises(out, np.zeros((3, 3), dtype="int64"), np.array([5]), np.array([0, 3]), match="out of bounds")


def test_range_len_is_len_of_range():
    from numba import njit

    from lucent.link.numba.dispatch.subtensor import range_len

    count = njit(lambda a, b, c: range_len(a, b, c))
    for start in range(-4, 5):
        for stop in range(-4, 5):
            for step in (-3, -2, -1, 1, 2, 5):
                assert count(start, stop, step) == len(range(start, stop, step)), (start, stop, step)
    assert count(np.int32(0), np.int64(10), np.int8(3)) == 4


def test_slice_views_are_written_into_the_graph_function():
    """A view made of slices with constant steps is an expression of the graph function;
    an int index (bounds checked) and a symbolic step (checked for 0) stay kernel calls."""
    import re

    import lucent

    x, n, s = lt.dmatrix("x"), lt.lscalar("n"), lt.lscalar("s")
    out = x[1:n, ::-1].sum() + x[0].sum() + x[::s].sum()
    # the statements (with ``numba__graph_program`` the same lines are emitted as IR)
    with lucent.config.change_flags(numba__graph_program=False):
        f = lucent.function([x, n, s], out, mode="FAST_RUN")
    source = f.maker.linker.program.source
    subtensor_lines = [line for line in source.splitlines() if "Subtensor" in line]
    inline = [line for line in subtensor_lines if not re.search(r"= k\d+\(", line)]
    assert len(inline) == 1 and "item_of(" in inline[0], source
    g = lucent.function([x, n, s], out, mode="FAST_RUN")
    assert "return graph_program(" in g.maker.linker.program.source
    value = np.arange(20.0).reshape(4, 5)
    want = value[1:3, ::-1].sum() + value[0].sum() + value[::2].sum()
    for fn in (f, g):
        np.testing.assert_allclose(fn(value, 3, 2), want)
        with pytest.raises(ValueError, match="slice step cannot be zero"):
            fn(value, 3, 0)


@pytest.mark.parametrize("set_", [False, True])
@pytest.mark.parametrize("y_shape", [(2, 1), (2, 3), (1, 4), (5, 4), (1, 1), (5, 1)])
def test_a_value_that_does_not_fit_gets_perform_s_message_for_its_first_bad_dimension(set_, y_shape):
    """One ``raise`` serves every checked dimension: the first that does not fit picks the
    message, with the hint when the value has length 1 there, exactly as ``perform``."""
    from lucent.link.numba.dispatch import numba_funcify
    from lucent.link.numba.dispatch.shape import KernelChoiceError
    from tests.link.numba.test_shape import input_values, perform

    x = lt.tensor(dtype="float64", shape=(None, None))
    y = lt.tensor(dtype="float64", shape=(None, None))
    out = set_subtensor(x[1:], y) if set_ else inc_subtensor(x[1:], y)
    node = out.owner
    values = input_values(node, [np.zeros((3, 4)), np.ones(y_shape)])
    with pytest.raises(ValueError) as ref:
        perform(node, [np.array(v, copy=True) for v in values])
    with pytest.raises(KernelChoiceError) as got:
        numba_funcify(node.op, node)(*[np.array(v, copy=True) for v in values])
    assert str(got.value) == str(ref.value)
    assert ("specify_broadcastable" in str(got.value)) == (y_shape[0] == 1 or (y_shape[0] == 2 and y_shape[1] == 1))
