"""``lucent.tensor.reshape``: join_dims / split_dims / pack / unpack on both paths, grads, rewrites."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.tensor.reshape import JoinDims, SplitDims, join_dims, pack, split_dims, unpack
from tests.helpers import run


#: The fast path of the slower (compile-heavy) tests runs in ``make test-all`` only.
PY_THEN_SLOW_NUMBA = pytest.mark.parametrize(
    "lucent_mode", ["FAST_COMPILE", pytest.param("FAST_RUN", marks=pytest.mark.slow)], ids=["py", "numba"], indirect=True
)


def test_join_and_split_dims_fast_path():
    x, y, n = lt.dtensor3("x"), lt.dmatrix("y"), lt.lscalar("n")
    X, Y = np.arange(24.0).reshape(2, 3, 4), np.arange(12.0).reshape(6, 2)
    got = run([join_dims(x, 1), split_dims(y, (n, 3))], {x: X, y: Y, n: 2})
    np.testing.assert_array_equal(got[0], X.reshape(2, 12))
    np.testing.assert_array_equal(got[1], Y.reshape(2, 3, 2))


@PY_THEN_SLOW_NUMBA
def test_join_and_split_dims_values_and_static_shapes():
    x = lt.tensor("x", shape=(2, 3, 4, 5))
    assert join_dims(x).type.shape == (120,)
    assert join_dims(x, start_axis=1).type.shape == (2, 60)
    assert join_dims(x, start_axis=1, n_axes=2).type.shape == (2, 12, 5)
    assert join_dims(x, start_axis=-1, n_axes=0).type.shape == (2, 3, 4, 1, 5)
    y = lt.tensor("y", shape=(6, 4, None))
    assert split_dims(y, shape=(2, 3)).type.shape == (2, 3, 4, None)
    assert split_dims(y, shape=(2, 3), axis=-1).type.shape == (6, 4, 2, 3)
    n = lt.lscalar("n")
    X = np.arange(120.0).reshape(2, 3, 4, 5)
    Y = np.arange(48.0).reshape(6, 4, 2)
    outs = [join_dims(x, 1, 2), join_dims(x.transpose(3, 2, 1, 0), 0, 3), split_dims(y, (n, 3)),
            split_dims(y[:, :1, :], (), axis=1), split_dims(y, 6)]
    got = run(outs, {x: X, y: Y, n: 2})
    np.testing.assert_array_equal(got[0], X.reshape(2, 12, 5))
    np.testing.assert_array_equal(got[1], X.transpose(3, 2, 1, 0).reshape(60, 2))
    np.testing.assert_array_equal(got[2], Y.reshape(2, 3, 4, 2))
    np.testing.assert_array_equal(got[3], Y[:, 0, :])
    np.testing.assert_array_equal(got[4], Y)


def test_reshape_ops_errors():
    with pytest.raises(ValueError, match="non-negative"):
        JoinDims(-1, 2)
    with pytest.raises(ValueError, match="only 2 dimensions"):
        join_dims(lt.dmatrix(), 1, 2)
    with pytest.raises(IndexError, match="out of bounds"):
        join_dims(lt.dmatrix(), 3)
    with pytest.raises(TypeError, match="integer"):
        split_dims(lt.dmatrix(), [2.0, 3.0])
    y = lt.dvector("y")
    f = lucent.function([y], split_dims(y, (2, 3)), mode="FAST_COMPILE")
    with pytest.raises(ValueError, match="SplitDims"):
        f(np.zeros(5))


@PY_THEN_SLOW_NUMBA
def test_gradients_and_pack_roundtrip():
    rng = np.random.default_rng(0)
    verify_grad(lambda a: join_dims(a, 0, 2), [rng.random((2, 3, 2))], rng=rng)
    verify_grad(lambda a: split_dims(a, (2, 3), axis=1), [rng.random((2, 6))], rng=rng)
    x, y, z = lt.dmatrix("x"), lt.dtensor3("y"), lt.dvector("z")
    packed, shapes = pack(x, y, z)
    back = unpack(packed, shapes)
    kp, kshapes = pack(x, y, keep_axes=0)
    kback = unpack(kp, kshapes, keep_axes=0)
    X, Y, Z = rng.random((2, 3)), rng.random((2, 4, 5)), rng.random(7)
    got = run([packed, *back, kp, *kback], {x: X, y: Y, z: Z})
    np.testing.assert_array_equal(got[0], np.concatenate([X.ravel(), Y.ravel(), Z]))
    for g, e in zip(got[1:4], (X, Y, Z)):
        np.testing.assert_array_equal(g, e)
    np.testing.assert_array_equal(got[4], np.concatenate([X, Y.reshape(2, 20)], axis=1))
    np.testing.assert_array_equal(got[5], X)
    np.testing.assert_array_equal(got[6], Y)
    for bad, msg in (([], "ambiguous"), ([1, 2], "first positive axis"), ([-2], "last negative"),
                     ([0, 2], "contiguous"), ([-1, 0], "after positive"), ([0, 0], "duplicates")):
        with pytest.raises(ValueError, match=msg):
            pack(x, keep_axes=bad)
    with pytest.raises(ValueError, match="at least 3"):
        pack(z, keep_axes=(0, 1, -1))
