"""vectorize_graph on the tensor ops: each result equals a Python loop over the batch."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.graph.replace import vectorize_graph
from lucent.tensor.subtensor import inc_subtensor, set_subtensor
from tests.helpers import evaluate_with_perform, run

rng = np.random.default_rng(8)


def check(out, replace, values, batched_values):
    """vectorize_graph(out) on batched values == stacking out over the batch (the first axis)."""
    new = vectorize_graph(out, replace)
    got = run(new, batched_values)
    batched = [k for k in replace]
    n = batched_values[replace[batched[0]]].shape[0]
    expected = []
    for b in range(n):
        given = dict(values)
        for old, new_var in replace.items():
            v = batched_values[new_var]
            given[old] = v[b] if v.ndim > old.type.ndim else v
        expected.append(evaluate_with_perform(out, given))
    np.testing.assert_allclose(got, np.stack(expected), rtol=1e-12)
    return new


x, y = lt.dvector("x"), lt.dvector("y")
m = lt.dmatrix("m")
X, Y = lt.dmatrix("X"), lt.dmatrix("Y")
M = lt.dtensor3("M")
XV, YV, MV = rng.random((4, 3)), rng.random((4, 3)), rng.random((4, 3, 3))
mv = rng.random((3, 3))


@pytest.mark.parametrize(
    "build",
    [
        lambda: lt.exp(x) * y + 1,
        lambda: x.dimshuffle("x", 0, "x").sum(axis=(0, 2)),
        lambda: lt.sum(x) + lt.max(x) * lt.prod(x),
        lambda: lt.cast(lt.argmax(x), "float64") + x,
        lambda: lt.mean(x) * x,
        lambda: lt.special.softmax(x),
        lambda: x[1:] * x[0],
        lambda: lt.reshape(x, (3, 1)).sum(axis=1),
        lambda: lt.alloc(x, 2, 3).sum(axis=0),
        lambda: lt.alloc(lt.sum(x), 3),
        lambda: lt.concatenate([x, y]),
        lambda: set_subtensor(x[:2], y[1:]),
        lambda: inc_subtensor(x[1], lt.sum(y)),
        lambda: lt.specify_shape(x, (3,)) * 2,
        lambda: x * lt.cast(x.shape[0], "float64"),
    ],
    ids=["elemwise", "dimshuffle", "careduce", "argmax", "mean", "softmax", "subtensor", "reshape",
         "alloc", "alloc_scalar", "join", "set_subtensor", "inc_subtensor", "specify_shape", "shape"],
)
def test_vectorize_matches_a_loop(build):
    out = build()
    check(out, {x: X, y: Y}, {}, {X: XV, Y: YV})
    # Only one input batched: the other one is shared by every batch entry.
    inputs = set(lt_inputs(out))
    if y in inputs:
        check(out, {x: X}, {y: YV[0]}, {X: XV, y: YV[0]})
        check(out, {y: Y}, {x: XV[0]}, {Y: YV, x: XV[0]})


def lt_inputs(out):
    from lucent.graph.traversal import graph_inputs

    return [v for v in graph_inputs([out]) if v.owner is None and not hasattr(v, "data")]


@pytest.mark.parametrize(
    "build",
    [lambda: lt.dot(m, x), lambda: lt.dot(x, m), lambda: lt.dot(x, y), lambda: lt.matmul(m, m),
     lambda: lt.dot(m, m)],
    ids=["mat_vec", "vec_mat", "vec_vec", "matmul", "mat_mat"],
)
def test_vectorize_products(build):
    out = build()
    inputs = set(lt_inputs(out))
    for batched in ([x], [m], [x, m], [x, y]):
        if not set(batched) <= inputs:
            continue
        replace = {v: {x: X, y: Y, m: M}[v] for v in batched}
        values = {v: {x: XV[0], y: YV[0], m: mv}[v] for v in inputs if v not in batched}
        batched_values = {replace[v]: {x: XV, y: YV, m: MV}[v] for v in batched}
        check(out, replace, values, {**values, **batched_values})


def test_two_batch_dimensions_broadcast():
    X3 = lt.dtensor3("X3")
    out = lt.exp(x) * lt.sum(y)
    new = vectorize_graph(out, {x: X3, y: Y})  # batch (2, 4) and (4,)
    x3v = rng.random((2, 4, 3))
    got = run(new, {X3: x3v, Y: YV})
    np.testing.assert_allclose(got, np.exp(x3v) * YV.sum(axis=1)[None, :, None])


def test_batched_index_maps_with_blockwise():
    # One index per batch entry: no single Subtensor does it, Blockwise loops it.
    from lucent.tensor.blockwise import Blockwise

    i, I = lt.lscalar("i"), lt.lvector("I")
    new = vectorize_graph(x[i], {i: I})
    assert isinstance(new.owner.op, Blockwise)
    xv = rng.random(5)
    got = run(new, {x: xv, I: np.array([3, 0, 4])})
    np.testing.assert_allclose(got, xv[[3, 0, 4]])


def test_reshape_with_batched_or_longer_target_shapes():
    from lucent.tensor.blockwise import Blockwise

    v, s = lt.dvector("v"), lt.lvector("s")
    out = lt.reshape(v, s, ndim=2)
    S = lt.lmatrix("S")
    batched = vectorize_graph(out, {s: S})  # one target shape per batch entry: Blockwise
    assert isinstance(batched.owner.op, Blockwise)
    value = run(batched, {v: np.arange(6.0), S: np.array([[2, 3], [-1, 3]])})
    np.testing.assert_array_equal(value, np.broadcast_to(np.arange(6.0).reshape(2, 3), (2, 2, 3)))
    m, k = lt.dmatrix("m"), lt.lscalar("k")
    target = lt.as_tensor([k, 3])
    out = lt.reshape(v, target, ndim=2)
    longer = vectorize_graph(out, {v: m, target: lt.as_tensor([4, k, 3])})  # batch length included
    value = run(longer, {m: np.zeros((4, 6)), k: 2})
    assert value.shape == (4, 2, 3)
    with pytest.raises(ValueError, match="Invalid shape length"):
        vectorize_graph(out, {v: m, target: lt.as_tensor([1, 4, k, 3])})


def test_join_make_vector_and_extract_diag_rules():
    from lucent.tensor import basic as B
    from lucent.tensor.blockwise import Blockwise
    from lucent.tensor.diagonal import ExtractDiag

    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    bx, by = lt.dtensor3("bx"), lt.dtensor3("by")
    out = vectorize_graph(B.join(1, x, y), {x: bx, y: by})
    assert isinstance(out.owner.op, B.Join) and out.owner.op.axis == 2
    # Pieces with different batch dimensions are broadcast against each other by Blockwise.
    assert isinstance(vectorize_graph(B.join(1, x, y), {x: bx}).owner.op, Blockwise)
    a, b = lt.dscalar("a"), lt.dscalar("b")
    va, vb = lt.dvector("va"), lt.dmatrix("vb")
    stacked = vectorize_graph(B.make_vector(a, b), {a: va, b: vb})
    assert not isinstance(stacked.owner.op, Blockwise) and stacked.type.ndim == 3
    t = lt.dtensor3("t")
    diag = vectorize_graph(B.diagonal(t, offset=1, axis1=0, axis2=2), {t: lt.dtensor4("t4")})
    assert isinstance(diag.owner.op, ExtractDiag) and (diag.owner.op.axis1, diag.owner.op.axis2) == (1, 3)
    va_val, vb_val = np.arange(2.0), np.arange(6.0).reshape(3, 2)
    value = run(stacked, {va: va_val, vb: vb_val})
    np.testing.assert_array_equal(value, np.stack(np.broadcast_arrays(va_val, vb_val), axis=-1))


def test_alloc_with_batched_lengths_maps_with_blockwise():
    """Lengths computed per batch entry (from a batched shape): Blockwise allocates each
    entry, and the entries must agree; a loop whose initial state gains a batch
    dimension is mapped this way (its buffer's length reads the state's shape)."""
    from lucent.scan import scan
    from lucent.tensor.blockwise import Blockwise

    n, N = lt.lscalar("n"), lt.lvector("N")
    new = vectorize_graph(lt.alloc(1.5, n, 2), {n: N})
    assert isinstance(new.owner.op, Blockwise)
    np.testing.assert_array_equal(run(new, {N: np.array([3, 3])}), np.full((2, 3, 2), 1.5))
    with pytest.raises(ValueError, match="[Bb]lock|shape"):
        run(new, {N: np.array([3, 4])})

    s, batch = lt.dscalar("s"), lt.dvector("batch")
    ys = scan(lambda h: h * 0.5 + 1.0, outputs_info=[s], n_steps=5, return_updates=False)
    got = run(vectorize_graph(ys, {s: batch}), {batch: np.array([0.0, 2.0, -4.0])})
    h, want = np.array([0.0, 2.0, -4.0]), []
    for _ in range(5):
        h = h * 0.5 + 1.0
        want.append(h)
    np.testing.assert_allclose(got, np.array(want).T)
