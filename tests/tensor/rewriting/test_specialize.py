"""Specialisation rewrites: pow to cheaper ops, sums of products to dot, dot to BLAS ops."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.graph.rewriting.utils import rewrite_graph
from lucent.graph.traversal import graph_inputs, io_toposort
from lucent.scalar import basic as ps
from lucent.tensor.blas import Dot22, Gemm, Gemv, Ger
from lucent.tensor.elemwise import Elemwise
from lucent.tensor.math import Dot
from lucent.tensor.reduction import Sum

NO_REWRITE = lucent.Mode(optimizer=None)
rng = np.random.default_rng(7)


def nodes_of(outputs):
    outputs = outputs if isinstance(outputs, list) else [outputs]
    return io_toposort(list(graph_inputs(outputs)), outputs)


def specialized(expr):
    out = rewrite_graph(expr, include=("canonicalize", "stabilize", "specialize"))
    if isinstance(expr, list):
        assert [o.type for o in out] == [e.type for e in expr]
    else:
        assert out.type == expr.type
    return out


def scalar_ops(outputs):
    found = set()
    pending = [n.op.scalar_op for n in nodes_of(outputs) if isinstance(n.op, Elemwise)]
    while pending:
        op = pending.pop()
        found.add(type(op))
        pending.extend(n.op for n in getattr(op, "nodes", []))
    return found


def op_types(outputs):
    return {type(n.op) for n in nodes_of(outputs)}


def check_values(inputs, expr, values, rtol=1e-10):
    f = lucent.function(inputs, expr)
    naive = lucent.function(inputs, expr, mode=NO_REWRITE)
    a, b = f(*values), naive(*values)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-12)
    assert np.asarray(a).dtype == np.asarray(b).dtype
    return f


# --- pow -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "exponent, op",
    [(2, ps.Sqr), (2.0, ps.Sqr), (0.5, ps.Sqrt), (-1, ps.Reciprocal), (-1.0, ps.Reciprocal),
     (-2, ps.Reciprocal), (-0.5, ps.Sqrt)],
)
def test_pow_specialize(exponent, op):
    x = lt.dvector("x")
    expr = x**exponent
    out = specialized(expr)
    assert op in scalar_ops(out) and ps.Pow not in scalar_ops(out)
    check_values([x], expr, [np.array([0.5, 2.0, 3.0])])


def test_pow_with_repeated_array_exponent():
    x = lt.dmatrix("x")
    expr = x ** np.full((1, 3), 2.0)
    out = specialized(expr)
    assert ps.Sqr in scalar_ops(out) and ps.Pow not in scalar_ops(out)
    check_values([x], expr, [rng.normal(size=(2, 3))])


def test_pow_array_exponent_that_widens_the_shape():
    x = lt.dvector("x")
    expr = x ** np.full((2, 3), 0.5)
    out = specialized(expr)
    assert ps.Pow not in scalar_ops(out)
    check_values([x], expr, [np.array([1.0, 4.0, 9.0])])


def test_pow_not_specialized_for_other_exponents():
    x = lt.dvector("x")
    assert ps.Pow in scalar_ops(specialized(x**3.5))
    assert ps.Pow in scalar_ops(specialized(x ** np.array([2.0, 3.0])))


def test_pow_int_base_float_result_squares_in_float():
    x = lt.bvector("x")  # int8: x*x would overflow before the cast
    expr = x**2.0
    check_values([x], expr, [np.array([100, -120], dtype="int8")])


def test_pow_integer_negative_exponent_left_alone():
    x = lt.lvector("x")
    out = specialized(x ** np.int64(-1))
    assert ps.Pow in scalar_ops(out)


def test_pow_float32():
    x = lt.fvector("x")
    expr = x**0.5
    f = check_values([x], expr, [np.array([4.0, 9.0], dtype="float32")])
    assert f.maker.fgraph.outputs[0].type == expr.type


# --- sum of products -> dot -------------------------------------------------------------
def test_sum_of_vector_product_is_dot():
    x, y = lt.dvectors("x", "y")
    expr = (x * y).sum()
    out = specialized(expr)
    assert Dot in op_types(out) and Sum not in op_types(out)
    check_values([x, y], expr, [rng.normal(size=5), rng.normal(size=5)])


def test_sum_matrix_times_row_is_gemv():
    A, v = lt.dmatrix("A"), lt.dvector("v")
    expr = (A * v).sum(axis=1)  # v broadcast as a row
    out = specialized(expr)
    assert Gemv in op_types(out) and Sum not in op_types(out)
    check_values([A, v], expr, [rng.normal(size=(4, 3)), rng.normal(size=3)])


def test_sum_matrix_times_column_over_rows_is_gemv():
    A, v = lt.dmatrix("A"), lt.dvector("v")
    expr = (lt.expand_dims(v, 1) * A).sum(axis=0)
    out = specialized(expr)
    assert Gemv in op_types(out) and Sum not in op_types(out)
    check_values([A, v], expr, [rng.normal(size=(4, 3)), rng.normal(size=4)])


def test_sum_of_product_that_is_not_a_dot_is_kept():
    A, v = lt.dmatrix("A"), lt.dvector("v")
    out = specialized((A * v).sum(axis=0))  # sum_i A[i, j] v[j]: not a dot
    assert Sum in op_types(out)
    x, y = lt.dvectors("x", "y")
    p = x * y
    out = specialized([p.sum(), p])  # the product is needed anyway
    assert Sum in op_types(out)


# --- dot -> BLAS ops --------------------------------------------------------------------
def test_dot_matrix_matrix_is_dot22():
    A, B = lt.dmatrices("A", "B")
    expr = lt.dot(A, B)
    out = specialized(expr)
    assert Dot22 in op_types(out) and Dot not in op_types(out)
    check_values([A, B], expr, [rng.normal(size=(3, 4)), rng.normal(size=(4, 2))])


def test_dot_matrix_vector_and_vector_matrix_are_gemv():
    A, x = lt.dmatrix("A"), lt.dvector("x")
    for expr, vals in ((lt.dot(A, x), [rng.normal(size=(3, 4)), rng.normal(size=4)]),
                       (lt.dot(x, A), [rng.normal(size=(4, 3)), rng.normal(size=4)])):
        out = specialized(expr)
        assert Gemv in op_types(out) and Dot not in op_types(out)
        check_values([A, x], expr, vals)


def test_dot_mixed_dtypes_is_cast():
    A, B = lt.fmatrix("A"), lt.dmatrix("B")
    expr = lt.dot(A, B)
    out = specialized(expr)
    assert Dot22 in op_types(out)
    check_values([A, B], expr, [rng.normal(size=(2, 3)).astype("float32"), rng.normal(size=(3, 2))], rtol=1e-6)


def test_dot_static_shapes_kept():
    A = lt.tensor(dtype="float64", shape=(3, 4), name="A")
    x = lt.tensor(dtype="float64", shape=(4,), name="x")
    expr = lt.dot(A, x)
    out = specialized(expr)
    assert out.type == expr.type


def test_vector_vector_dot_stays_dot():
    x, y = lt.dvectors("x", "y")
    assert Dot in op_types(specialized(lt.dot(x, y)))


# --- folding the accumulation -------------------------------------------------------------
def _mats():
    return [rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=(3, 2))]


@pytest.mark.parametrize(
    "build",
    [
        lambda X, Y, Z, a, b: b * Z + a * lt.dot(X, Y),
        lambda X, Y, Z, a, b: lt.dot(X, Y) * a + Z * b,
        lambda X, Y, Z, a, b: Z + lt.dot(X, Y),
        lambda X, Y, Z, a, b: Z - lt.dot(X, Y),
        lambda X, Y, Z, a, b: Z - 2 * lt.dot(X, Y) + 0.5 * Z * 0 + X[:, :2],
    ],
)
def test_gemm_fold(build):
    X, Y, Z = lt.dmatrices("X", "Y", "Z")
    a, b = lt.dscalars("a", "b")
    expr = build(X, Y, Z, a, b)
    out = specialized(expr)
    assert Gemm in op_types(out)
    inputs = [v for v in (X, Y, Z, a, b) if v in set(graph_inputs([expr]))]
    vals = dict(zip((X, Y, Z, a, b), _mats() + [np.array(1.5), np.array(-0.25)]))
    check_values(inputs, expr, [vals[i] for i in inputs])


def test_gemm_not_folded_for_broadcast_accumulator():
    X, Y = lt.dmatrices("X", "Y")
    z = lt.dvector("z")
    expr = z + lt.dot(X, Y)  # z is a broadcast row
    out = specialized(expr)
    assert Gemm not in op_types(out)
    check_values([X, Y, z], expr, [rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=2)])


def test_gemm_not_folded_when_product_is_reused():
    X, Y, Z = lt.dmatrices("X", "Y", "Z")
    d = lt.dot(X, Y)
    out = specialized([Z + d, d])
    assert Gemm not in op_types(out)


def test_gemv_fold():
    A = lt.dmatrix("A")
    x, y = lt.dvectors("x", "y")
    a, b = lt.dscalars("a", "b")
    expr = b * y + a * lt.dot(A, x)
    out = specialized(expr)
    gemvs = [n for n in nodes_of(out) if isinstance(n.op, Gemv)]
    assert len(gemvs) == 1 and gemvs[0].inputs[0] is y
    check_values([A, x, y, a, b], expr, [rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=3),
                                         np.array(2.0), np.array(0.5)])


def test_ger_fold():
    A = lt.dmatrix("A")
    x, y = lt.dvectors("x", "y")
    a = lt.dscalar("a")
    expr = A + a * lt.outer(x, y)
    out = specialized(expr)
    assert Ger in op_types(out)
    check_values([A, x, y, a], expr, [rng.normal(size=(3, 2)), rng.normal(size=3), rng.normal(size=2), np.array(-1.5)])


def test_fold_float32_and_in_place_result_is_correct_over_calls():
    X, Y = lt.fmatrices("X", "Y")
    b = lt.fscalar("b")
    Z = lt.exp(lt.fmatrix("W"))  # an intermediate accumulator may be overwritten
    W = list(graph_inputs([Z]))[0]
    expr = b * Z + lt.dot(X, Y)
    f = lucent.function([X, Y, W, b], expr)
    assert any(isinstance(n.op, Gemm) for n in f.maker.fgraph.toposort())
    for _ in range(2):
        vals = [rng.normal(size=(3, 4)).astype("float32"), rng.normal(size=(4, 2)).astype("float32"),
                rng.normal(size=(3, 2)).astype("float32"), np.float32(0.5)]
        expected = vals[3] * np.exp(vals[2]) + vals[0] @ vals[1]
        np.testing.assert_allclose(f(*vals), expected, rtol=1e-5)


def test_mlp_graph_uses_blas_and_matches():
    from tests.models import mlp_training_step

    inputs, cost, updates, params = mlp_training_step(sizes=(4, 5, 3), seed=0)
    grads = lucent.grad(cost, params)
    f = lucent.function(inputs, [cost] + grads)
    naive = lucent.function(inputs, [cost] + grads, mode=NO_REWRITE)
    ops = {type(n.op) for n in f.maker.fgraph.toposort()}
    assert ops & {Dot22, Gemm}
    X = rng.normal(size=(6, 4))
    Y = np.eye(3)[rng.integers(0, 3, size=6)]
    for a, b in zip(f(X, Y), naive(X, Y)):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-12)
