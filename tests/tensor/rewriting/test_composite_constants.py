"""Float constants of fused element-wise nodes become inputs, so a new constant needs no new kernel."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.graph.basic import Constant
from lucent.scalar.composite import Composite
from lucent.tensor.elemwise import Elemwise


def _fused(fn):
    return [n for n in fn.maker.fgraph.toposort()
            if isinstance(n.op, Elemwise) and isinstance(n.op.scalar_op, Composite)]


def _inner_constants(node):
    return sorted(
        float(v.data) for inner in node.op.scalar_op.nodes for v in inner.inputs if isinstance(v, Constant)
    )


def test_ordinary_constants_are_lifted_and_kept_values_stay_in_the_composite():
    x = lt.dmatrix("x")
    f = lucent.function([x], lt.exp(x) * 0.37 + x * 2.0 - x ** 3.0, mode="FAST_RUN")
    (node,) = _fused(f)
    lifted = [v for v in node.inputs if isinstance(v, Constant)]
    assert [float(np.asarray(v.data).ravel()[0]) for v in lifted] == [0.37]
    assert lifted[0].type.shape == (1, 1)
    # 2.0 is a kept value; 3.0 is an exponent, whose code may depend on it
    assert _inner_constants(node) == [2.0, 3.0]
    a = np.random.default_rng(0).random((3, 4))
    np.testing.assert_allclose(f(a), np.exp(a) * 0.37 + a * 2.0 - a ** 3.0)


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_values_are_unchanged_on_both_paths(mode):
    x = lt.fvector("x")
    w = lucent.shared(np.ones(5, dtype="float32"), "w")
    lr = np.float32(0.05)
    f = lucent.function([x], (x * np.float32(0.3)).sum(), updates=[(w, w - lr * w * x)], mode=mode)
    v = np.linspace(0, 1, 5, dtype="float32")
    out = f(v)
    np.testing.assert_allclose(out, (v * np.float32(0.3)).sum(), rtol=1e-6)
    np.testing.assert_allclose(w.get_value(), 1 - np.float32(0.05) * v, rtol=1e-6)
    assert w.get_value().dtype == np.float32


def test_zero_d_and_integer_graphs_keep_their_values():
    s = lt.dscalar("s")
    i = lt.lvector("i")
    f = lucent.function([s, i], [lt.exp(s) * 0.25 + s, i * 3 + 7], mode="FAST_RUN")
    out_s, out_i = f(0.5, np.arange(4))
    np.testing.assert_allclose(out_s, np.exp(0.5) * 0.25 + 0.5)
    np.testing.assert_array_equal(out_i, np.arange(4) * 3 + 7)
    assert out_i.dtype == np.int64
    int_nodes = [n for n in _fused(f) if n.outputs[0].dtype == "int64"]
    assert int_nodes
    for node in int_nodes:  # 3 and 7 are passed in, with the composite's dtypes
        lifted = [v for v in node.inputs if isinstance(v, Constant)]
        assert sorted(int(np.asarray(v.data).ravel()[0]) for v in lifted) == [3, 7]


def test_another_learning_rate_compiles_no_new_kernel():
    pytest.importorskip("numba")
    from numba.core import event

    def step(lr):
        x = lt.dmatrix("x")
        w = lucent.shared(np.ones((3, 2)), "w")
        loss = lt.sum(lt.tanh(x.dot(w)) ** 2)
        g = lucent.grad(loss, w)
        return lucent.function([x], loss, updates=[(w, w - lr * g)], mode="FAST_RUN")

    a = np.random.default_rng(2).random((4, 3))
    step(0.013)(a)
    with event.install_recorder("numba:compile") as rec:
        step(0.029)(a)
    compiled = {e.data["dispatcher"].py_func.__name__ for _, e in rec.buffer if e.is_start}
    assert compiled <= {"graph_fn"}, compiled
