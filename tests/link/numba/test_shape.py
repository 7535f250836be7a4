"""Numba kernels of the shape ops agree with ``perform`` (values, dtypes, views, errors).

``check`` is the harness the other structural-kernel tests share: build the
node, run ``perform`` and the kernel on copies of the same inputs, compare.
"""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.graph.basic import Constant
from lucent.link.numba.dispatch import numba_funcify
from lucent.link.numba.dispatch import shape  # noqa: F401 (registers the kernels)
from lucent.tensor.shape import Reshape, Shape, Shape_i, reshape, specify_shape


def perform(node, values):
    storage = [[None] for _ in node.outputs]
    node.op.perform(node, list(values), storage)
    return [s[0] for s in storage]


def input_values(node, given):
    """Values of the node's inputs: ``given`` for the distinct variables (in order), data for constants."""
    it = iter(given)
    seen = {}
    values = []
    for var in node.inputs:
        if isinstance(var, Constant):
            values.append(var.data)
        elif var in seen:
            values.append(seen[var])
        else:
            seen[var] = next(it)
            values.append(seen[var])
    rest = list(it)
    assert not rest, f"{len(rest)} values left over"
    return values


def _copy(v):
    """A copy with the same kind of layout (C, Fortran or strided), so views can be checked."""
    if not isinstance(v, np.ndarray):
        return v
    if v.flags.c_contiguous:
        return v.copy()
    if v.flags.f_contiguous:
        return v.copy(order="F")
    out = np.empty(v.shape + (2,), dtype=v.dtype)[..., 0]
    out[...] = v
    return out


def check(out_var, *given, view=None, inplace=False):
    """Run the kernel of ``out_var.owner`` and its ``perform``; assert they agree.

    ``view``: True when the result must share memory with input 0, False when
    it must not. ``inplace``: the kernel must overwrite input 0 like perform.
    Returns the kernel's result.
    """
    node = out_var.owner
    values = input_values(node, given)
    expected = perform(node, [_copy(v) for v in values])
    kernel = numba_funcify(node.op, node)
    kv = [_copy(v) for v in values] if not inplace else [values[0].copy()] + values[1:]
    got = kernel(*kv)
    got_list = list(got) if isinstance(got, tuple) else [got]
    assert len(got_list) == len(expected)
    for g, e in zip(got_list, expected):
        if isinstance(e, np.ndarray):
            assert isinstance(g, np.ndarray), (type(g), g)
            assert g.dtype == e.dtype, (g.dtype, e.dtype)
            assert g.shape == e.shape, (g.shape, e.shape)
            if e.dtype.kind in "fc":
                # float32 values near a cancellation differ by float32 rounding of the
                # terms (BLAS and a kernel may sum in another order or precision)
                wide = np.finfo(e.dtype).bits >= 64
                np.testing.assert_allclose(g, e, rtol=1e-10 if wide else 1e-5, atol=1e-12 if wide else 1e-6)
            else:
                np.testing.assert_array_equal(g, e)
        else:
            assert g == e and type(np.asarray(g).item()) is type(np.asarray(e).item()), (g, e)
    if view is not None:
        assert np.shares_memory(got_list[0], kv[0]) == view
    if inplace:
        assert got_list[0] is kv[0] or np.shares_memory(got_list[0], kv[0])
    return got


def check_raises(out_var, *given, match=None):
    """Both ``perform`` and the kernel raise the same exception class (with ``match``)."""
    node = out_var.owner
    values = input_values(node, given)
    with pytest.raises(Exception) as ref:
        perform(node, [_copy(v) for v in values])
    kernel = numba_funcify(node.op, node)
    with pytest.raises(ref.type, match=match):
        kernel(*[_copy(v) for v in values])


x2 = lt.tensor(dtype="float64", shape=(None, None))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "bool"])
@pytest.mark.parametrize("shp", [(), (0,), (3,), (2, 0, 3), (2, 3, 4)])
def test_shape(dtype, shp):
    x = lt.tensor(dtype=dtype, shape=(None,) * len(shp))
    check(Shape()(x), np.zeros(shp, dtype=dtype))
    for i in range(len(shp)):
        check(Shape_i(i)(x), np.zeros(shp, dtype=dtype))


def test_specify_shape_view_and_none_entries():
    i = lt.scalar("i", dtype="int32")
    out = specify_shape(x2, (i, None))
    check(out, np.ones((2, 3)), np.asarray(2, dtype="int32"), view=True)
    check(specify_shape(x2, (2, 3)), np.ones((2, 3))[:, ::-1], view=True)
    v = lt.tensor(dtype="int64", shape=(None,))
    check(specify_shape(v, (0,)), np.zeros(0, dtype="int64"))


def test_specify_shape_mismatch_raises_like_perform():
    check_raises(specify_shape(x2, (2, None)), np.ones((3, 3)), match="dim 0 of input has length 3, expected 2")
    check_raises(specify_shape(x2, (None, 4)), np.ones((3, 3)), match=r"input shape \(3, 3\), specified \(\?, 4\)")


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool"])
@pytest.mark.parametrize(
    "src_shape, new",
    [((2, 3), (6,)), ((2, 3), (3, -1)), ((2, 3), (-1, 2, 1)), ((0, 3), (3, 0)), ((1,), ()), ((), (1, 1)),
     ((4, 0), (2, 2, 0))],
)
def test_reshape_values_and_views(dtype, src_shape, new):
    x = lt.tensor(dtype=dtype, shape=(None,) * len(src_shape))
    value = (np.arange(int(np.prod(src_shape))) % 3).astype(dtype).reshape(src_shape)
    check(reshape(x, new), value, view=bool(value.size))


def test_reshape_of_strided_input_copies():
    value = np.arange(12.0).reshape(3, 4)[:, ::2]
    out = check(reshape(x2, (-1,)), value, view=False)
    np.testing.assert_array_equal(out, value.reshape(-1))
    check(reshape(x2, (2, 3)), np.arange(6.0).reshape(3, 2).T, view=False)


def test_reshape_symbolic_shape_and_errors():
    s = lt.tensor(dtype="int64", shape=(2,))
    out = Reshape(2)(x2, s)
    check(out, np.arange(6.0).reshape(2, 3), np.array([3, 2]))
    check(out, np.arange(6.0).reshape(2, 3), np.array([-1, 1]))
    check_raises(out, np.arange(6.0).reshape(2, 3), np.array([4, -1]), match="Cannot reshape input of shape")
    check_raises(out, np.arange(6.0).reshape(2, 3), np.array([4, 2]), match=r"\(size 6\) to shape \(4, 2\)")
    check_raises(out, np.arange(6.0).reshape(2, 3), np.array([-1, -1]), match="only one entry may be -1")
    check_raises(out, np.zeros((0, 3)), np.array([0, -1]))
    s32 = lt.tensor(dtype="int32", shape=(None,))
    check(Reshape(1)(x2, s32), np.arange(6.0).reshape(2, 3), np.array([6], dtype="int32"))


def test_first_unequal_lengths_numbers_the_first_pair_that_differs():
    import numba

    from lucent.link.numba.dispatch.shape import first_unequal_lengths

    @numba.njit
    def check(a, b, c):
        return first_unequal_lengths((a.shape, b.shape, c.shape), "0.1,1.0|0.0,2.0|1.1,2.1")

    a, b, c = np.zeros((2, 3)), np.zeros((3, 4)), np.zeros((2, 4, 5))
    assert check(a, b, c) == 0
    assert check(np.zeros((2, 5)), b, c) == 1  # a.shape[1] != b.shape[0]
    assert check(a, b, np.zeros((7, 4, 5))) == 2
    assert check(a, np.zeros((3, 9)), c) == 3
    assert check(np.zeros((9, 9)), np.zeros((3, 9)), c) == 1  # several differ: the first decides
    assert check(np.zeros((2, 3))[:, ::-1], np.zeros((3, 4)).T.copy().T, c) == 0  # any layout

    @numba.njit
    def out_of_range(a):
        return first_unequal_lengths((a.shape,), "0.2,0.0")

    with pytest.raises(numba.core.errors.TypingError):
        out_of_range(a)

    @numba.njit
    def arrays_not_shapes(a):
        return first_unequal_lengths((a,), "0.0,0.0")

    with pytest.raises(numba.core.errors.TypingError):
        arrays_not_shapes(a)
