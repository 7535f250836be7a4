"""The BLAS-shaped ops: values, beta == 0 semantics, in-place variants, shapes, gradients."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.tensor.blas import Dot22, Gemm, Gemv, Ger
from tests.helpers import current_mode, run

rng = np.random.default_rng(3)


def test_str():
    assert str(Gemm()) == "Gemm{no_inplace}"
    assert str(Gemm(inplace=True)) == "Gemm{inplace}"
    assert str(Gemv()) == "Gemv{no_inplace}"
    assert str(Gemv(inplace=True)) == "Gemv{inplace}"
    assert str(Ger()) == "Ger{non-destructive}"
    assert str(Ger(destructive=True)) == "Ger{destructive}"
    assert str(Dot22()) == "Dot22"


def test_props_and_destroy_map():
    assert Gemm() == Gemm(inplace=False) and Gemm() != Gemm(inplace=True)
    assert Gemm(inplace=True).destroy_map == {0: [0]} and Gemm().destroy_map == {}
    assert Ger(destructive=True).destroy_map == {0: [0]}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gemm_values(dtype):
    Z, X, Y = (lt.matrix(n, dtype=dtype) for n in "ZXY")
    a, b = lt.scalar("a", dtype=dtype), lt.scalar("b", dtype=dtype)
    out = Gemm()(Z, a, X, Y, b)
    assert out.type.dtype == dtype
    vals = [rng.normal(size=(3, 2)), np.array(1.5), rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), np.array(-0.5)]
    vals = [np.asarray(v, dtype=dtype) for v in vals]
    res = run(out, dict(zip((Z, a, X, Y, b), vals)))
    np.testing.assert_allclose(res, vals[4] * vals[0] + vals[1] * vals[2] @ vals[3], rtol=1e-5)
    f = lucent.function([Z, a, X, Y, b], out, mode=current_mode())
    np.testing.assert_allclose(f(*vals), res)
    np.testing.assert_allclose(f(*vals), res)  # reused output buffer


def test_gemm_beta_zero_does_not_read_accumulator():
    Z, X, Y = lt.dmatrices("Z", "X", "Y")
    out = Gemm()(Z, 2.0, X, Y, 0.0)
    f = lucent.function([Z, X, Y], out, mode=current_mode())
    Xv, Yv = rng.normal(size=(2, 3)), rng.normal(size=(3, 2))
    np.testing.assert_allclose(f(np.full((2, 2), np.nan), Xv, Yv), 2 * Xv @ Yv)


def test_gemm_inplace_overwrites_accumulator():
    Z, X, Y = lt.dmatrices("Z", "X", "Y")
    node = Gemm(inplace=True)(Z, 1.0, X, Y, 2.0).owner
    z = rng.normal(size=(2, 2))
    xv, yv = rng.normal(size=(2, 3)), rng.normal(size=(3, 2))
    expected = 2 * z + xv @ yv
    storage = [[None]]
    node.op.perform(node, [z, np.array(1.0), xv, yv, np.array(2.0)], storage)
    assert storage[0][0] is z
    np.testing.assert_allclose(z, expected)


def test_gemm_make_node_errors():
    Z, X, Y = lt.dmatrices("Z", "X", "Y")
    with pytest.raises(TypeError, match="one dtype"):
        Gemm()(Z, 1.0, lt.fmatrix("F"), Y, 1.0)
    with pytest.raises(TypeError, match="2 dimensions"):
        Gemm()(Z, 1.0, lt.dvector("v"), Y, 1.0)
    with pytest.raises(TypeError, match="float"):
        Gemm()(lt.lmatrix("i"), 1, lt.lmatrix("j"), lt.lmatrix("k"), 1)
    A = lt.tensor(dtype="float64", shape=(2, 3))
    B = lt.tensor(dtype="float64", shape=(4, 2))
    with pytest.raises(ValueError, match="inner dimensions"):
        Gemm()(Z, 1.0, A, B, 1.0)


def test_gemm_runtime_shape_error():
    Z, X, Y = lt.dmatrices("Z", "X", "Y")
    f = lucent.function([Z, X, Y], Gemm()(Z, 1.0, X, Y, 1.0), mode=current_mode())
    with pytest.raises(ValueError, match="accumulator"):
        f(np.zeros((3, 3)), np.zeros((2, 4)), np.zeros((4, 2)))


def test_static_shapes():
    Z = lt.tensor(dtype="float64", shape=(None, 5))
    X = lt.tensor(dtype="float64", shape=(3, None))
    Y = lt.dmatrix("Y")
    assert Gemm()(Z, 1.0, X, Y, 1.0).type.shape == (3, 5)
    A = lt.tensor(dtype="float64", shape=(4, 2))
    assert Gemv()(lt.dvector("y"), 1.0, A, lt.dvector("x"), 0.0).type.shape == (4,)
    assert Ger()(lt.dmatrix("A"), 1.0, lt.tensor(dtype="float64", shape=(6,)), lt.dvector("y")).type.shape == (6, None)
    assert Dot22()(X, lt.tensor(dtype="float64", shape=(None, 7))).type.shape == (3, 7)


def test_gemv_values_and_beta_zero():
    y, x = lt.dvectors("y", "x")
    A = lt.dmatrix("A")
    a, b = lt.dscalars("a", "b")
    f = lucent.function([y, a, A, x, b], Gemv()(y, a, A, x, b), mode=current_mode())
    yv, Av, xv = rng.normal(size=3), rng.normal(size=(3, 4)), rng.normal(size=4)
    np.testing.assert_allclose(f(yv, 2.0, Av, xv, 0.5), 0.5 * yv + 2.0 * Av @ xv)
    np.testing.assert_allclose(f(np.full(3, np.nan), 1.0, Av, xv, 0.0), Av @ xv)
    # A transposed (non-contiguous) operand
    np.testing.assert_allclose(f(yv, 1.0, Av.T.copy().T, xv, 1.0), yv + Av @ xv)


def test_ger_values():
    A = lt.dmatrix("A")
    x, y = lt.dvectors("x", "y")
    a = lt.dscalar("a")
    f = lucent.function([A, a, x, y], Ger()(A, a, x, y), mode=current_mode())
    Av, xv, yv = rng.normal(size=(3, 2)), rng.normal(size=3), rng.normal(size=2)
    before = Av.copy()
    np.testing.assert_allclose(f(Av, -2.0, xv, yv), Av - 2.0 * np.outer(xv, yv))
    np.testing.assert_array_equal(Av, before)  # non-destructive


def test_dot22_values_and_mismatch():
    X, Y = lt.dmatrices("X", "Y")
    f = lucent.function([X, Y], Dot22()(X, Y), mode=current_mode())
    xv, yv = rng.normal(size=(2, 3)), rng.normal(size=(3, 4))
    np.testing.assert_allclose(f(xv, yv), xv @ yv)
    with pytest.raises(ValueError, match="not aligned"):
        f(xv, xv)


def test_infer_shape():
    Z, X, Y = lt.dmatrices("Z", "X", "Y")
    out = Gemm()(Z, 1.0, X, Y, 1.0)
    assert out.owner.op.infer_shape(None, out.owner, [("z0", "z1"), (), ("x0", "x1"), ("y0", "y1"), ()]) == [("z0", "z1")]
    d = Dot22()(X, Y)
    assert d.owner.op.infer_shape(None, d.owner, [("x0", "x1"), ("y0", "y1")]) == [("x0", "y1")]


def test_gradients():
    verify_grad(lambda Z, a, X, Y, b: Gemm()(Z, a, X, Y, b),
                [rng.normal(size=(2, 3)), np.array(1.3), rng.normal(size=(2, 4)), rng.normal(size=(4, 3)), np.array(-0.7)],
                rng=np.random.default_rng(0))
    verify_grad(lambda y, a, A, x, b: Gemv()(y, a, A, x, b),
                [rng.normal(size=3), np.array(0.8), rng.normal(size=(3, 2)), rng.normal(size=2), np.array(1.7)],
                rng=np.random.default_rng(0))
    verify_grad(lambda A, a, x, y: Ger()(A, a, x, y),
                [rng.normal(size=(3, 2)), np.array(0.8), rng.normal(size=3), rng.normal(size=2)],
                rng=np.random.default_rng(0))
    verify_grad(lambda X, Y: Dot22()(X, Y), [rng.normal(size=(2, 3)), rng.normal(size=(3, 2))],
                rng=np.random.default_rng(0))


# --------------------------------------------------------------------------- #
# BatchedDot
# --------------------------------------------------------------------------- #
def test_batched_dot_build_checks():
    from lucent.tensor.blas import BatchedDot, _batched_dot

    assert str(_batched_dot) == "BatchedDot" and BatchedDot() == _batched_dot
    assert BatchedDot.gufunc_signature == "(b,m,k),(b,k,n)->(b,m,n)"
    x = lt.tensor("x", shape=(3, 5, 7))
    out = _batched_dot(x, lt.tensor("y", shape=(None, 7, 2), dtype="int32"))
    assert out.type.shape == (3, 5, 2) and out.type.dtype == "float64"
    with pytest.raises(TypeError, match="Inputs must have 3 ndim"):
        _batched_dot(lt.dmatrix(), lt.dmatrix())
    with pytest.raises(ValueError, match="Static dimensions of BatchedDot don't match"):
        _batched_dot(x, lt.tensor(shape=(1, 7, 2)))  # the batch dimension never broadcasts
    with pytest.raises(ValueError, match="Static dimensions of BatchedDot don't match"):
        _batched_dot(x, lt.tensor(shape=(3, 6, 2)))


def test_batched_dot_values():
    """float64/float32/int, empty batch, transposed and strided (non-contiguous) operands."""
    from lucent.tensor.blas import _batched_dot

    cases = {
        "float64": (rng.normal(size=(4, 3, 5)), rng.normal(size=(4, 5, 2))),
        "float32": (rng.normal(size=(4, 3, 5)).astype("float32"), rng.normal(size=(4, 5, 2)).astype("float32")),
        "int64": (rng.integers(-5, 5, size=(4, 3, 5)), rng.integers(-5, 5, size=(4, 5, 2))),
        # a transposed x and a y with a negative batch step and strided rows
        "strided": (rng.normal(size=(4, 5, 3)).transpose(0, 2, 1), rng.normal(size=(4, 10, 2))[::-1, ::2]),
        "empty": (np.ones((0, 3, 5)), np.ones((0, 5, 2))),
    }
    ins, outs, givens, expected = [], [], {}, []
    for name, (a, b) in cases.items():
        x = lt.tensor(f"x_{name}", shape=(None,) * 3, dtype=a.dtype)
        y = lt.tensor(f"y_{name}", shape=(None,) * 3, dtype=b.dtype)
        outs.append(_batched_dot(x, y))
        givens[x], givens[y] = a, b
        expected.append(np.matmul(a, b))
    got = run(outs, givens)
    for name, g, e in zip(cases, got, expected):
        assert g.dtype == e.dtype, name
        np.testing.assert_allclose(g, e, rtol=1e-5 if g.dtype == np.float32 else 1e-12, err_msg=name)


def test_batched_dot_runtime_errors():
    from lucent.tensor.blas import _batched_dot

    x, y = lt.dtensor3("x"), lt.dtensor3("y")
    f = lucent.function([x, y], _batched_dot(x, y), mode=current_mode())
    with pytest.raises(ValueError, match="same size in axis 0"):
        f(np.ones((2, 3, 4)), np.ones((3, 4, 2)))
    with pytest.raises(ValueError, match="not aligned"):
        f(np.ones((2, 3, 4)), np.ones((2, 5, 2)))


def test_batched_dot_grad_and_shape():
    from lucent.tensor.blas import _batched_dot

    verify_grad(_batched_dot, [rng.normal(size=(3, 2, 4)), rng.normal(size=(3, 4, 5))], rng=rng)
    x, y = lt.dtensor3("x"), lt.dtensor3("y")
    f = lucent.function([x, y], _batched_dot(x, y).shape, mode="FAST_RUN")
    assert not any(n.op == _batched_dot for n in f.maker.fgraph.apply_nodes)
    assert tuple(f(np.ones((3, 2, 4)), np.ones((3, 4, 5)))) == (3, 2, 5)
