"""Tests of ``lucent.tensor.subtensor``: basic and advanced indexing, set/inc."""

import itertools

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
import lucent.tensor.subtensor as ST
from lucent.gradient import verify_grad
from tests.helpers import evaluate_with_perform, run
from tests.tensor.test_shape import check_infer_shape

DATA = np.arange(60.0).reshape(3, 4, 5)


def _inputs(dtype, layout):
    base = DATA.astype(dtype)
    if layout == "transposed":
        return np.ascontiguousarray(base.transpose(2, 1, 0)).transpose(2, 1, 0)
    if layout == "strided":
        big = np.zeros((6, 4, 10), dtype=dtype)
        big[::2, :, ::2] = base
        return big[::2, :, ::2]
    return base


BASIC_INDICES = [
    1, -1, (0, 2), (-3, -1, -5), slice(1, None), slice(None, None, -1), slice(-1, 0, -2),
    (slice(None), 1), (Ellipsis, 2), (1, Ellipsis), (None, 1), (1, None, slice(None, None, 2)),
    (slice(0, 0),), (slice(5, 1),), (slice(-100, 100), slice(None, -2)), (Ellipsis,),
    (slice(None), slice(None), slice(None, None, -3)), (2, 3, 4), (None, Ellipsis, None),
]


@pytest.mark.parametrize("index", BASIC_INDICES, ids=repr)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
def test_basic_indexing_matches_numpy_and_is_a_view(index, dtype, layout):
    x = lt.tensor(dtype=dtype, shape=(None, None, None))
    data = _inputs(dtype, layout)
    expected = data[index]
    out_var = x[index]
    out = run(out_var, {x: data})
    np.testing.assert_array_equal(out, expected)
    assert out.dtype == data.dtype and out_var.type.ndim == np.ndim(expected)
    if out_var.owner is not None and isinstance(out_var.owner.op, ST.Subtensor):
        assert ST.Subtensor.view_map == {0: [0]}
        check_infer_shape(out_var, {x: data})
    if np.size(expected):
        # Views are a property of perform: a compiled function copies outputs that alias its inputs.
        assert np.may_share_memory(evaluate_with_perform(out_var, {x: data}), data)


@pytest.mark.parametrize("index", BASIC_INDICES, ids=repr)
def test_basic_indexing_static_shape(index):
    x = lt.tensor3("x", shape=(3, 4, 5))
    assert x[index].type.shape == np.shape(DATA[index])


def test_static_shape_with_unknown_lengths():
    x = lt.matrix("x", shape=(None, 5))
    assert x[1:].type.shape == (None, 5)
    assert x[:, 1:3].type.shape == (None, 2)
    assert x[::-1, ::2].type.shape == (None, 3)
    assert x[3:1].type.shape == (0, 5)
    assert x[0].type.shape == (5,)


def test_op_names():
    v = lt.vector("v")
    m = lt.matrix("m")
    i = lt.iscalar("i")
    assert str(v[1:3].owner.op) == "Subtensor{start:stop}"
    assert str(v[::-1].owner.op) == "Subtensor{::step}"
    assert str(v[1].owner.op) == "Subtensor{i}"
    assert str(m[1:, ::2].owner.op) == "Subtensor{start:, ::step}"
    assert str(m[:, i].owner.op) == "Subtensor{:, i}"
    assert str(v[:i:2].owner.op) == "Subtensor{:stop:step}"
    assert str(lt.set_subtensor(v[i:], 1.0).owner.op) == "SetSubtensor{start:}"
    assert str(lt.inc_subtensor(v[i], 1.0).owner.op) == "IncSubtensor{i}"
    assert str(v[[1, 2]].owner.op) == "AdvancedSubtensor{idx}"
    assert str(lt.set_subtensor(v[[1, 2]], 1.0).owner.op) == "AdvancedSetSubtensor{idx}"
    assert str(ST.advanced_subtensor1(v, [1, 2]).owner.op) == "AdvancedSubtensor1"
    assert str(ST.advanced_set_subtensor1(v, 1.0, [1, 2]).owner.op) == "AdvancedSetSubtensor1"
    assert v[1:3].owner.op == ST.Subtensor(((True, True, None),))
    assert v[1:3].owner.op == v[i:i].owner.op


@pytest.mark.parametrize("start,stop,step", list(itertools.product([None, -7, -2, 0, 1, 3, 9], [None, -6, -1, 0, 2, 5], [None, 1, 2, -1, -3])))
def test_symbolic_slice_bounds(start, stop, step):
    v = lt.vector("v")
    syms = {}
    parts = []
    for name, val in (("start", start), ("stop", stop), ("step", step)):
        if val is None:
            parts.append(None)
        else:
            syms[name] = lt.lscalar(name)
            parts.append(syms[name])
    out_var = v[slice(*parts)]
    data = np.arange(6.0)
    givens = {v: data, **{syms[k]: np.int64(val) for k, val in (("start", start), ("stop", stop), ("step", step)) if k in syms}}
    out = check_infer_shape(out_var, givens)
    np.testing.assert_array_equal(out, data[start:stop:step])


def test_index_errors():
    v = lt.vector("v")
    i = lt.lscalar("i")
    with pytest.raises(IndexError, match=r"index 5 is out of bounds for axis 0 with length 3"):
        run(v[i], {v: np.zeros(3), i: np.int64(5)})
    with pytest.raises(IndexError, match=r"index -4 is out of bounds for axis 0 with length 3"):
        run(v[i], {v: np.zeros(3), i: np.int64(-4)})
    with pytest.raises(IndexError, match="out of bounds"):
        lt.vector(shape=(3,))[3]
    with pytest.raises(IndexError, match="too many indices"):
        v[1, 2]
    with pytest.raises(IndexError, match="single ellipsis"):
        v[..., ...]
    with pytest.raises(ValueError, match="step cannot be zero"):
        v[::0]
    with pytest.raises(ValueError, match="step cannot be zero"):
        run(v[::i], {v: np.zeros(3), i: np.int64(0)})
    with pytest.raises(TypeError, match="integers"):
        v[lt.dscalar()]
    with pytest.raises(TypeError, match="integers"):
        v[1.5]
    with pytest.raises(TypeError, match="bool"):
        v[True]


def test_zero_d_and_empty():
    s = lt.dscalar("s")
    assert s[...] is s
    out = run(s[None], {s: np.array(2.0)})
    assert out.shape == (1,)
    v = lt.vector("v")
    out = run(v[1:], {v: np.zeros(0)})
    assert out.shape == (0,)
    out = run(v[[]], {v: np.zeros(3)})
    assert out.shape == (0,)


def test_scalar_variable_index():
    from lucent.scalar.basic import ScalarType

    v = lt.vector("v")
    k = ScalarType("int32")("k")
    assert run(v[k], {v: np.arange(4.0), k: np.int32(2)}) == 2.0


def test_gradients_of_basic_indexing():
    rng = np.random.default_rng(5)
    data = rng.normal(size=(3, 4))
    for fn in [lambda a: a[1], lambda a: a[-1, ::-2], lambda a: a[1:, None, 2], lambda a: a[..., 1:3],
               lambda a: a[0, 0]]:
        verify_grad(fn, [data], rng=rng)
    verify_grad(lambda a: a[::-1][1:], [data.astype("float32")], rng=rng)


def test_gradient_of_integer_input_is_float_zeros():
    x = lt.ivector("x")
    w = lt.dscalar("w")
    g = lucent.grad((lt.cast(x[1:], "float64") * w).sum(), w)
    assert run(g, {x: np.array([1, 2, 3], "int32"), w: np.array(1.0)}) == 5.0


# --------------------------------------------------------------------------- #
# set_subtensor / inc_subtensor (basic)
# --------------------------------------------------------------------------- #
SET_CASES = [
    (1, 7.0), ((slice(1, None), 0), np.arange(10.0).reshape(2, 5)), ((Ellipsis, -1), np.arange(12.0).reshape(3, 4)),
    ((slice(None, None, -2),), np.ones((4, 5))), ((None, 0), np.arange(5.0)), ((2, 3, 4), -1.0),
    ((slice(None), slice(1, 3)), np.ones((1, 1, 5))),
]


@pytest.mark.parametrize("index,y", SET_CASES, ids=lambda v: repr(v)[:30])
@pytest.mark.parametrize("mode", ["set", "inc"])
def test_set_and_inc_subtensor_match_numpy(index, y, mode):
    x = lt.tensor3("x")
    yv = lt.tensor(dtype="float64", shape=tuple(1 if s == 1 else None for s in np.shape(y)))
    fn = lt.set_subtensor if mode == "set" else lt.inc_subtensor
    out_var = fn(x[index], yv)
    assert out_var.type == x.type
    data = _inputs("float64", "transposed")
    keep = data.copy()
    out = check_infer_shape(out_var, {x: data, yv: np.asarray(y)})
    expected = data.copy()
    if mode == "set":
        expected[index] = y
    else:
        expected[index] += y
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(data, keep)  # the input is not overwritten
    assert not np.may_share_memory(out, data)
    assert out_var.owner.op.destroy_map == {}


def test_inplace_inc_subtensor_overwrites_its_input():
    x = lt.vector("x")
    op = lt.inc_subtensor(x[1:], 1.0).owner.op.inplace_on_inputs([0])
    assert op.destroy_map == {0: [0]} and "inplace" in str(op)
    data = np.zeros(3)
    # An in-place op built by hand: evaluated node by node to see it overwrite its input
    # (lucent.function would refuse a graph that already destroys an input).
    out = evaluate_with_perform(op(x, lt.constant(1.0), lt.constant(1, dtype="int64")), {x: data})
    assert out is data and data.tolist() == [0.0, 1.0, 1.0]


def test_set_subtensor_errors():
    x = lt.matrix("x")
    with pytest.raises(TypeError, match="result of indexing"):
        lt.set_subtensor(x, 1.0)
    with pytest.raises(TypeError, match="result of indexing"):
        lt.inc_subtensor(x + 1, 1.0)
    with pytest.raises(TypeError, match="without loss"):
        lt.set_subtensor(lt.imatrix()[0], 1.5)
    with pytest.raises(TypeError, match="more than"):
        lt.set_subtensor(x[0], lt.matrix())
    with pytest.raises(ValueError, match="cannot be broadcast"):
        lt.set_subtensor(lt.matrix(shape=(3, 4))[0], lt.vector(shape=(3,)))
    y = lt.vector("y")
    with pytest.raises(ValueError, match=r"shape \(2,\) into the indexed region of shape \(4,\)"):
        run(lt.set_subtensor(x[0], y), {x: np.zeros((3, 4)), y: np.zeros(2)})
    with pytest.raises(ValueError, match="specify_broadcastable"):
        run(lt.set_subtensor(x[0], y), {x: np.zeros((3, 4)), y: np.zeros(1)})


def test_set_inc_gradients():
    rng = np.random.default_rng(6)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(2,))
    verify_grad(lambda x, y: lt.set_subtensor(x[1:, 2], y), [a, b], rng=rng)
    verify_grad(lambda x, y: lt.inc_subtensor(x[1:, 2], y * y), [a, b], rng=rng)
    verify_grad(lambda x, y: lt.inc_subtensor(x[:, ::-2], y[0]), [a, b], rng=rng)
    verify_grad(lambda x, y: lt.set_subtensor(x[None, 0], y[None, None, 0]), [a, b], rng=rng)


def test_take_and_compiled_function():
    x = lt.matrix("x")
    i = lt.lvector("i")
    f = lucent.function([x, i], [lt.take(x, i, axis=1), lt.take(x, i), x[i, ::-1]], mode="FAST_COMPILE")
    data = np.arange(12.0).reshape(3, 4)
    idx = np.array([2, 0])
    a, b, c = f(data, idx)
    np.testing.assert_array_equal(a, np.take(data, idx, axis=1))
    np.testing.assert_array_equal(b, np.take(data, idx))
    np.testing.assert_array_equal(c, data[idx, ::-1])


def test_iteration_over_static_length():
    v = lt.vector("v", shape=(3,))
    parts = list(v)
    assert len(parts) == 3
    assert [float(run(p, {v: np.arange(3.0)})) for p in parts] == [0.0, 1.0, 2.0]


def test_index_beyond_int64_is_refused():
    x = lt.dmatrix()
    with pytest.raises(IndexError, match="int64"):
        x[: 2**63]
    with pytest.raises(IndexError, match="int64"):
        x[-(2**63) - 1]
