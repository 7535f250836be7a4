"""Tests of lucent/tensor/rewriting/basic.py: constant folding and useless structural ops.

Each rewrite is shown to apply (the op is gone) and to preserve values: the
rewritten graph and the original one are both compiled without rewrites and
run on the same inputs, including 0-d, empty, broadcasting, integer,
float32 and NaN values.
"""

import warnings

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile.mode import Mode
from lucent.graph.basic import Apply, Constant
from lucent.graph.op import Op
from lucent.graph.rewriting.db import canonicalize_db
from lucent.graph.rewriting.utils import rewrite_graph
from lucent.graph.traversal import io_toposort
from lucent.scalar import basic as ps
from lucent.tensor.basic import Alloc, TensorCopy, alloc, tensor_copy
from lucent.tensor.elemwise import DimShuffle, Elemwise
from lucent.tensor.math import cast
from lucent.tensor.shape import SpecifyShape, specify_shape
from lucent.tensor.type import TensorType

NO_REWRITES = Mode(optimizer=None)


# --------------------------------------------------------------------------- #
# Helpers (also used by test_math.py and test_shape.py)
# --------------------------------------------------------------------------- #
def canonicalize(outputs, include=("canonicalize",)):
    """Rewrite ``outputs`` (a variable or a list) with the canonicalize stage, raising on rewrite errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return rewrite_graph(outputs, include=include, clone=True)


def nodes(outputs):
    """The Apply nodes computing ``outputs``."""
    outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    return io_toposort([], list(outputs))


def ops_of(outputs, kind):
    """Nodes whose op is an instance of ``kind`` (or, for a ScalarOp class, Elemwise of it)."""
    found = []
    for node in nodes(outputs):
        op = node.op
        if isinstance(kind, type) and issubclass(kind, ps.ScalarOp):
            if isinstance(op, Elemwise) and isinstance(op.scalar_op, kind):
                found.append(node)
        elif isinstance(op, kind):
            found.append(node)
    return found


def assert_same_values(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(a, b, rtol=1e-6 if a.dtype == np.float32 else 1e-12, equal_nan=True)
    else:
        np.testing.assert_array_equal(a, b)


def check_values(inputs, outputs, rewritten, *arg_sets):
    """Compile original and rewritten graphs without rewrites, and under FAST_RUN; compare."""
    single = not isinstance(outputs, (list, tuple))
    outs = [outputs] if single else list(outputs)
    new = [rewritten] if single else list(rewritten)
    f_ref = lucent.function(inputs, outs, mode=NO_REWRITES, on_unused_input="ignore")
    f_new = compile_rewritten(inputs, new)
    f_run = lucent.function(inputs, outs, mode="FAST_RUN", on_unused_input="ignore")
    for args in arg_sets:
        ref = f_ref(*args)
        for got in (f_new(*args), f_run(*args)):
            for r, g in zip(ref, got):
                assert_same_values(r, g)


def compile_rewritten(inputs, rewritten):
    """Compile a graph returned by ``canonicalize`` without further rewrites.

    The graph was cloned, so its inputs are new variables; they are matched
    to ``inputs`` by name.
    """
    from lucent.graph.basic import graph_inputs

    outs = rewritten if isinstance(rewritten, (list, tuple)) else [rewritten]
    by_name = {v.name: v for v in graph_inputs(list(outs)) if not isinstance(v, Constant)}
    new_inputs = [by_name.get(i.name, i.type(name=i.name)) for i in inputs]
    return lucent.function(new_inputs, rewritten, mode=NO_REWRITES, on_unused_input="ignore")


def rng():
    return np.random.default_rng(42)


# --------------------------------------------------------------------------- #
# Constant folding
# --------------------------------------------------------------------------- #
def test_constant_folding_replaces_constant_subgraph():
    x = lt.dvector("x")
    c = lt.exp(lt.constant(np.array([0.0, 1.0]))) * 2 + lt.constant(1.0)
    out = x + c
    new = canonicalize(out)
    for node in nodes(new):
        assert not all(isinstance(i, Constant) for i in node.inputs), node
    assert len(nodes(new)) == 1
    check_values([x], out, new, [np.array([1.0, -2.0])])


def test_constant_folding_keeps_integer_wraparound_and_nan():
    a = lt.constant(np.int8(100))
    out = a + a
    new = canonicalize(out)
    assert isinstance(new, Constant)
    assert new.data.dtype == np.int8 and int(new.data) == -56
    nan = lt.log(lt.constant(-1.0))
    new_nan = canonicalize(nan)
    assert isinstance(new_nan, Constant) and np.isnan(new_nan.data)


def test_constant_folding_small_alloc_folds_big_alloc_stays():
    # An alloc feeding an op that cannot absorb a broadcast (here a matrix
    # product) folds when small and stays a run-time allocation when big.
    small = lt.zeros((3, 4))
    big = lt.zeros((1000, 1000))
    new_small, new_big = canonicalize([lt.dot(small, lt.ones((4, 2))), lt.dot(big, big)])
    assert not ops_of(new_small, Alloc), "a small alloc feeding a dot folds into a constant"
    assert ops_of(new_big, Alloc), "a big alloc must stay a run-time allocation"
    # An alloc that is itself a graph output stays (a constant output would be
    # copied on every call).
    assert ops_of(canonicalize(lt.zeros((3, 4))), Alloc)
    arange_big = canonicalize(lt.arange(100000))
    assert not isinstance(arange_big, Constant)
    eye_small = canonicalize(lt.eye(3))
    assert isinstance(eye_small, Constant)
    np.testing.assert_array_equal(eye_small.data, np.eye(3))


class _NoFold(Op):
    __props__ = ()

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] + 1

    def do_constant_folding(self, fgraph, node):
        return False


def test_constant_folding_respects_do_constant_folding():
    out = _NoFold()(lt.constant(np.array([1.0, 2.0])))
    new = canonicalize(out)
    assert ops_of(new, _NoFold)


def test_constant_folding_runs_in_fast_compile():
    assert "fast_compile" in canonicalize_db.tags_of("constant_folding")
    x = lt.dvector("x")
    f = lucent.function([x], x * lt.exp(lt.constant(0.0)), mode="FAST_COMPILE")
    assert not any(isinstance(n.op, Elemwise) and isinstance(n.op.scalar_op, type(ps.exp))
                   for n in f.maker.fgraph.apply_nodes)
    np.testing.assert_allclose(f(np.array([2.0])), [2.0])


# --------------------------------------------------------------------------- #
# DimShuffle
# --------------------------------------------------------------------------- #
def test_identity_dimshuffle_removed():
    x = lt.dmatrix("x")
    out = DimShuffle(2, (0, 1))(x)
    new = canonicalize(out)
    assert not ops_of(new, DimShuffle)
    check_values([x], out, new, [np.ones((2, 3))], [np.zeros((0, 3))])


def test_transpose_of_transpose_and_squeeze_of_expand_dims():
    x = lt.dmatrix("x")
    outs = [x.T.T, lt.squeeze(lt.expand_dims(x, 0), 0), lt.squeeze(lt.expand_dims(x, (0, 2)), (0, 2))]
    new = canonicalize(outs)
    for o in new:
        assert not ops_of(o, DimShuffle)
    check_values([x], outs, new, [rng().normal(size=(2, 3))], [np.zeros((0, 2))])


def test_expand_dims_of_squeeze_same_axis_is_input():
    x = lt.tensor(dtype="float32", shape=(1, None), name="x")
    out = lt.expand_dims(lt.squeeze(x, 0), 0)
    new = canonicalize(out)
    assert not ops_of(new, DimShuffle)
    check_values([x], out, new, [np.array([[1.0, np.nan]], dtype="float32")])


def test_dimshuffle_of_dimshuffle_becomes_one():
    x = lt.tensor(dtype="float64", shape=(None, 1, None), name="x")
    out = lt.expand_dims(lt.squeeze(x, 1).T, 0)
    new = canonicalize(out)
    assert len(ops_of(new, DimShuffle)) == 1
    check_values([x], out, new, [rng().normal(size=(2, 1, 3))], [np.zeros((0, 1, 4))])


def test_dimshuffle_lift_exposes_constants():
    x = lt.dvector("x")
    out = lt.expand_dims(x + 2, 0)
    new = canonicalize(out)
    (add,) = ops_of(new, ps.Add)
    assert isinstance(add.inputs[1], Constant)
    assert add.outputs[0] is new
    check_values([x], out, new, [np.array([1.0, np.nan])], [np.zeros(0)])


def test_dimshuffle_not_lifted_past_shared_elemwise():
    x = lt.dvector("x")
    y = lt.exp(x)
    outs = [y, lt.expand_dims(y, 0)]
    new = canonicalize(outs)
    assert len(ops_of(new, type(ps.exp))) == 1


# --------------------------------------------------------------------------- #
# SpecifyShape
# --------------------------------------------------------------------------- #
def test_specify_shape_already_in_type_removed():
    x = lt.tensor(dtype="float64", shape=(3, None), name="x")
    out = SpecifyShape()(x, 3, None) * 2
    new = canonicalize(out)
    assert not ops_of(new, SpecifyShape)
    check_values([x], out, new, [np.ones((3, 2))], [np.ones((3, 0))])


def test_specify_shape_that_checks_something_stays():
    x = lt.dmatrix("x")
    out = specify_shape(x, (3, None))
    new = canonicalize(out)
    assert ops_of(new, SpecifyShape)
    f = compile_rewritten([x], new)
    with pytest.raises(AssertionError):
        f(np.ones((2, 2)))


def test_specify_shape_of_specify_shape_merged():
    x = lt.dmatrix("x")
    out = specify_shape(specify_shape(x, (None, 4)), (3, None))
    new = canonicalize(out)
    (node,) = ops_of(new, SpecifyShape)
    assert node.inputs[0].name == "x"
    assert new.type.shape == (3, 4)
    check_values([x], out, new, [np.ones((3, 4))])
    f = compile_rewritten([x], new)
    with pytest.raises(AssertionError):
        f(np.ones((3, 5)))


# --------------------------------------------------------------------------- #
# Casts
# --------------------------------------------------------------------------- #
def test_cast_to_same_dtype_removed():
    x = lt.fvector("x")
    out = Elemwise(ps.Cast(ps.get_scalar_type("float32")))(x)
    new = canonicalize(out)
    assert not ops_of(new, ps.Cast)
    check_values([x], out, new, [np.array([1.5, np.nan], dtype="float32")])


@pytest.mark.parametrize(
    "src, mid, dst, merged",
    [
        ("int32", "float64", "float32", True),  # lossless inner: one cast
        ("int8", "int16", "int8", True),  # back to the source dtype: no cast at all
        ("float32", "float64", "int32", True),
        ("float64", "float32", "float64", False),  # lossy inner: both casts stay
        ("float64", "int32", "float64", False),
    ],
)
def test_cast_of_cast(src, mid, dst, merged):
    x = lt.tensor(dtype=src, shape=(None,), name="x")
    out = cast(cast(x, mid), dst)
    new = canonicalize(out)
    n_casts = len(ops_of(new, ps.Cast))
    if merged:
        assert n_casts == (0 if src == dst else 1)
    else:
        assert n_casts == 2
    values = np.array([0, 1, -3, 100, 127], dtype=src)
    if np.dtype(src).kind == "f":
        # In range of every destination: a float outside an integer type's
        # range has no defined cast (NumPy itself answers differently
        # depending on the array's length).
        values = np.array([0.5, -2.75, 1e5 + 0.25, 3.0000001, -0.0], dtype=src)
    check_values([x], out, new, [values], [np.zeros(0, dtype=src)])


# --------------------------------------------------------------------------- #
# Alloc and fill
# --------------------------------------------------------------------------- #
def test_alloc_of_own_shape_removed():
    x = lt.dmatrix("x")
    out = alloc(x, x.shape[0], x.shape[1])
    v = lt.tensor(dtype="float64", shape=(3,), name="v")
    out2 = alloc(v, 3)
    new, new2 = canonicalize([out, out2])
    assert not ops_of(new, Alloc) and not ops_of(new2, Alloc)
    check_values([x, v], [out, out2], [new, new2], [np.array([[np.nan, 1.0]]), np.arange(3.0)])


def test_alloc_that_broadcasts_stays():
    v = lt.tensor(dtype="float64", shape=(1, None), name="v")
    n = lt.lscalar("n")
    out = alloc(v, n, v.shape[1])
    new = canonicalize(out)
    assert ops_of(new, Alloc)
    check_values([v, n], out, new, [np.ones((1, 3)), 4], [np.ones((1, 0)), 0])


def test_alloc_with_unknown_length_keeps_the_check():
    x = lt.dvector("x")
    n = lt.lscalar("n")
    out = alloc(x, n)
    new = canonicalize(out)
    assert not ops_of(new, Alloc)
    assert ops_of(new, SpecifyShape)
    f = compile_rewritten([x, n], new)
    np.testing.assert_array_equal(f(np.ones(2), 2), np.ones(2))
    with pytest.raises(AssertionError):
        f(np.ones(2), 3)


def test_useless_fill_removed():
    x = lt.dmatrix("x")
    y = lt.dmatrix("y")
    out = lt.fill(x, y)
    new = canonicalize(out)
    assert not ops_of(new, ps.Second)
    check_values([x, y], out, new, [np.ones((2, 3)), np.full((2, 3), np.nan)])


def test_fill_sinks_and_disappears_in_gradient():
    x = lt.dmatrix("x")
    y = lt.dmatrix("y")
    g = lucent.grad(lt.sum(x * y), x)
    new = canonicalize(g)
    assert new.name == "y" or (new.owner is None and new.type == y.type)
    check_values([x, y], g, new, [np.ones((2, 3)), rng().normal(size=(2, 3))])


def test_fill_of_fill_and_sink_keep_broadcast_shape():
    x = lt.dmatrix("x")
    v = lt.dvector("v")
    s = lt.dscalar("s")
    out = lt.fill(x, lt.fill(v, s)) * 3.0
    new = canonicalize(out)
    assert new.type.broadcastable == out.type.broadcastable
    assert len(ops_of(new, ps.Second)) == 1
    check_values([x, v, s], out, new, [np.ones((2, 3)), np.ones(3), 2.5], [np.ones((0, 2)), np.ones(2), np.nan])


# --------------------------------------------------------------------------- #
# Copies
# --------------------------------------------------------------------------- #
def test_tensor_copy_inside_graph_removed_output_copy_kept():
    x = lt.dvector("x")
    inner = tensor_copy(x) + 1
    new_inner = canonicalize(inner)
    assert not ops_of(new_inner, TensorCopy)
    new_out = canonicalize(tensor_copy(x))
    assert ops_of(new_out, TensorCopy)
    check_values([x], inner, new_inner, [np.array([1.0, np.nan])])


# --------------------------------------------------------------------------- #
# Registration and mixed dtypes
# --------------------------------------------------------------------------- #
def test_structural_rewrites_tagged_for_fast_compile():
    for name in ("local_useless_dimshuffle", "local_dimshuffle_dimshuffle", "local_useless_specify_shape",
                 "local_useless_cast", "local_cast_cast", "local_useless_alloc", "local_useless_fill",
                 "local_useless_tensor_copy"):
        tags = canonicalize_db.tags_of(name)
        assert {"fast_run", "fast_compile", "canonicalize"} <= tags, name


def test_rewrites_recorded_in_history():
    x = lt.dvector("x")
    out = lt.squeeze(lt.expand_dims(x, 0), 0) * 1
    _, fgraph = rewrite_graph(out, include=("canonicalize",), clone=True, return_fgraph=True)
    names = set(fgraph.rewrite_history.counts())
    assert "local_dimshuffle_dimshuffle" in names


def test_zero_d_and_float32_through_structural_rewrites():
    s = lt.fscalar("s")
    out = lt.squeeze(lt.expand_dims(cast(s, "float32"), (0, 1)), (0, 1)) + lt.constant(np.float32(0))
    new = canonicalize(out)
    assert new.type == TensorType("float32", ())
    assert new.owner is None
    check_values([s], out, new, [np.float32(1.5)], [np.float32(np.nan)])


def test_fill_sinks_through_dimshuffle_when_not_needed():
    x = lt.dmatrix("x")
    v = lt.dvector("v")
    s = lt.dscalar("s")
    filled = lt.fill(v, s * 2)  # shape of v, value s * 2
    out = x * lt.expand_dims(filled, 1)  # x already gives the full shape
    new = canonicalize(out)
    assert not ops_of(new, ps.Second)
    assert new.type.broadcastable == out.type.broadcastable
    check_values([x, v, s], out, new, [np.ones((3, 2)), np.ones(3), 1.5], [np.ones((0, 2)), np.ones(0), np.nan])


def test_fill_through_dimshuffle_kept_when_it_gives_the_shape():
    v = lt.dvector("v")
    s = lt.dscalar("s")
    out = lt.expand_dims(lt.fill(v, s), 1) * 2.0
    new = canonicalize(out)
    assert new.type.broadcastable == out.type.broadcastable
    check_values([v, s], out, new, [np.ones(3), 1.5], [np.ones(0), np.nan])


def test_constant_folding_and_dimshuffle_merge_also_in_later_stages():
    from lucent.graph.rewriting.db import specialize_db, stabilize_db

    for db in (stabilize_db, specialize_db):
        assert "constant_folding" in db.names()
        assert "local_dimshuffle_dimshuffle" in db.names()
    x = lt.dvector("x")
    out = x * lt.squeeze(lt.constant(np.array([[2.0]])), (0, 1))
    new = rewrite_graph(out, include=("specialize",), clone=True)
    assert not ops_of(new, DimShuffle)
