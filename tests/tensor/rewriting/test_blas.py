"""specialize_matmul_to_batched_dot: which matmuls become BatchedDot, and the values they give."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile.mode import get_mode
from lucent.graph.traversal import ancestors
from lucent.tensor.blas import BatchedDot
from lucent.tensor.math import MatMul
from lucent.tensor.rewriting.blas import specialize_matmul_to_batched_dot

rng = np.random.default_rng(11)


def _ops(fn, cls):
    return [v.owner for v in ancestors(fn.maker.fgraph.outputs) if v.owner and isinstance(v.owner.op, cls)]


def test_rewrite_name_and_reexports():
    from lucent.tensor.rewriting import blas, specialize

    assert specialize_matmul_to_batched_dot.__name__ == "specialize_matmul_to_batched_dot"
    assert blas.local_dot_to_blas is specialize.local_dot_to_blas
    assert blas.local_gemm_fold is specialize.local_gemm_fold


@pytest.mark.parametrize("aligned", [True, False])
def test_matmul_with_batch_dims_becomes_batched_dot(aligned):
    x = lt.tensor("x", shape=(7, 5, 3, 4))
    y = lt.tensor("y", shape=(7, 5, 4, 2) if aligned else (5, 4, 2))
    out = x @ y
    f = lucent.function([x, y], out, mode="FAST_RUN")
    assert len(_ops(f, BatchedDot)) == (1 if aligned else 0)
    assert len(_ops(f, MatMul)) == (0 if aligned else 1)
    assert f.maker.fgraph.outputs[0].type.shape == (7, 5, 3, 2)
    xv, yv = rng.normal(size=x.type.shape), rng.normal(size=y.type.shape)
    np.testing.assert_allclose(f(xv, yv), np.matmul(xv, yv), rtol=1e-12)


def test_unknown_lengths_and_exclusion():
    x, y = lt.dtensor3("x"), lt.dtensor3("y")
    f = lucent.function([x, y], x @ y, mode="FAST_RUN")
    assert [n.op for n in f.maker.fgraph.toposort()] == [BatchedDot()]
    excluded = get_mode("FAST_RUN").excluding(specialize_matmul_to_batched_dot.__name__)
    g = lucent.function([x, y], x @ y, mode=excluded)
    assert _ops(g, MatMul) and not _ops(g, BatchedDot)
    xv, yv = rng.normal(size=(6, 2, 3)), rng.normal(size=(6, 3, 4))
    np.testing.assert_allclose(f(xv, yv), xv @ yv, rtol=1e-12)
    np.testing.assert_allclose(g(xv, yv), xv @ yv, rtol=1e-12)
    # A 4-d matmul with unknown lengths: the batch dims are folded and unfolded around BatchedDot.
    x4, y4 = lt.tensor("x4", shape=(None,) * 4), lt.tensor("y4", shape=(None,) * 4)
    h = lucent.function([x4, y4], x4 @ y4, mode="FAST_RUN")
    assert _ops(h, BatchedDot)
    a, b = rng.normal(size=(2, 3, 4, 5)), rng.normal(size=(2, 3, 5, 1))
    np.testing.assert_allclose(h(a, b), a @ b, rtol=1e-12)


def test_matrix_and_broadcast_batch_are_left_alone():
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    fg_nodes = lucent.function([x, y], x @ y, mode="FAST_RUN").maker.fgraph.apply_nodes
    assert not any(isinstance(n.op, BatchedDot) for n in fg_nodes)
    a = lt.tensor("a", shape=(1, 3, 4))
    b = lt.tensor("b", shape=(5, 4, 2))
    f = lucent.function([a, b], a @ b, mode="FAST_RUN")
    assert not _ops(f, BatchedDot)
    av, bv = rng.normal(size=(1, 3, 4)), rng.normal(size=(5, 4, 2))
    np.testing.assert_allclose(f(av, bv), av @ bv, rtol=1e-12)
