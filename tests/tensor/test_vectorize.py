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


def test_batched_index_is_refused():
    i = lt.lscalar("i")
    out = x[i]
    with pytest.raises(NotImplementedError, match="batched index"):
        vectorize_graph(out, {i: lt.lvector("I")})
    s = lt.lvector("s")
    with pytest.raises(NotImplementedError, match="target shape"):
        vectorize_graph(lt.reshape(x, s, ndim=1), {x: X, s: lt.lmatrix()})
