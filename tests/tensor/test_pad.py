"""``lucent.tensor.pad``: every NumPy mode and option, on both paths."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.tensor.pad import Pad, pad
from tests.helpers import run

CASES = [
    ("constant", {}), ("constant", {"constant_values": ((1, 2), (3, 4))}), ("edge", {}),
    ("linear_ramp", {"end_values": (5, -4)}), ("maximum", {}), ("minimum", {"stat_length": 2}),
    ("mean", {"stat_length": (1, 3)}), ("median", {}), ("reflect", {}), ("symmetric", {"reflect_type": "even"}),
    ("wrap", {}),
]


@pytest.mark.parametrize("dtype", ["float64", pytest.param("int64", marks=pytest.mark.slow)])
def test_every_mode_matches_numpy(dtype):
    x = lt.tensor("x", dtype=dtype, shape=(None, None))
    X = (np.arange(12).reshape(3, 4) * 7 % 11).astype(dtype)
    widths = ((1, 2), (5, 0))
    got = run([pad(x, widths, mode, **kw) for mode, kw in CASES] + [pad(x.T, 4, "reflect"), pad(x, 2, "empty")],
              {x: X})
    for (mode, kw), g in zip(CASES, got):
        np.testing.assert_allclose(g, np.pad(X, widths, mode, **kw), err_msg=mode)
        assert g.dtype == X.dtype
    np.testing.assert_array_equal(got[-2], np.pad(X.T, 4, "reflect"))
    assert got[-1].shape == (7, 8)
    np.testing.assert_array_equal(got[-1][2:5, 2:6], X)


def test_symbolic_pad_width_and_static_shapes():
    x = lt.dmatrix("x")
    w = lt.lvector("w")
    X = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(run(pad(x, w, "wrap"), {x: X, w: np.array([3, 1])}), np.pad(X, (3, 1), "wrap"))
    out = pad(lt.tensor(shape=(2, 3)), ((1, 0), (2, 2)), "edge")
    assert isinstance(out.owner.op, Pad) and out.owner.op.pad_mode == "edge"
    assert out.type.shape == (3, 7)


def test_options_are_checked():
    x = lt.dmatrix("x")
    with pytest.raises(ValueError, match="Invalid mode: unknown"):
        pad(x, 1, "unknown")
    with pytest.raises(ValueError, match="Invalid keyword"):
        pad(x, 1, "edge", constant_values=1)
    with pytest.raises(NotImplementedError, match="odd"):
        pad(x, 1, "reflect", reflect_type="odd")
    with pytest.raises(TypeError, match="integral type"):
        pad(x, 1.5)
    with pytest.raises(ValueError, match="negative"):
        pad(x, -1)


def test_gradient():
    rng = np.random.default_rng(3)
    for mode in ("constant", "edge", "reflect", "mean", "linear_ramp"):
        verify_grad(lambda a, mode=mode: pad(a, ((1, 2), (0, 1)), mode), [rng.normal(size=(3, 2))], rng=rng)
    v, c = lt.dvector("v"), lt.dscalar("c")
    g = lucent.grad(pad(v, (1, 2), constant_values=c).sum(), c)
    assert run(g, {v: np.zeros(3), c: 0.5}) == 3.0
