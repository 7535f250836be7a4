"""``tensordot`` and ``einsum`` against NumPy, on both paths, with gradients."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.tensor.einsum import einsum, tensordot
from tests.helpers import run

RNG = np.random.default_rng(41)

CASES = [
    ("ijk,jkl->il", ("A", "B")),
    ("ijk,jkl,lm->im", ("A", "B", "C")),
    ("ii->i", ("C",)),
    ("ii", ("C",)),
    ("ij->ji", ("C",)),
    ("...k,kl->...l", ("A", "D")),
    ("ijk->", ("A",)),
    ("ij,ij->ij", ("C", "C")),
    ("i...,i...->...", ("C", "C")),
    ("bij,bjk->bik", ("A", "E")),
]


def test_einsum_and_tensordot_match_numpy():
    vals = {
        "A": RNG.normal(size=(3, 4, 5)), "B": RNG.normal(size=(4, 5, 6)), "C": RNG.normal(size=(6, 6)),
        "D": RNG.normal(size=(5, 6)), "E": RNG.normal(size=(3, 5, 2)),
    }
    syms = {k: lt.tensor(k, dtype="float64", shape=(None,) * v.ndim) for k, v in vals.items()}
    outs = [einsum(s, *(syms[n] for n in names)) for s, names in CASES]
    outs += [tensordot(syms["A"], syms["B"]), tensordot(syms["A"], syms["B"], axes=([1], [0])),
             tensordot(syms["C"], syms["C"], axes=0), tensordot(syms["A"], syms["A"], axes=3)]
    got = run(outs, {syms[k]: v for k, v in vals.items()})
    refs = [np.einsum(s, *(vals[n] for n in names)) for s, names in CASES]
    refs += [np.tensordot(vals["A"], vals["B"]), np.tensordot(vals["A"], vals["B"], axes=([1], [0])),
             np.tensordot(vals["C"], vals["C"], axes=0), np.tensordot(vals["A"], vals["A"], axes=3)]
    for (g, r), label in zip(zip(got, refs, strict=True), [c[0] for c in CASES] + ["tensordot"] * 4):
        np.testing.assert_allclose(g, r, rtol=1e-10, err_msg=label)


def test_einsum_path_order_and_errors():
    # The optimal order contracts the two small operands first: no (n, n, n) intermediate.
    a, b, c = (lt.tensor(n, dtype="float64", shape=s) for n, s in (("a", (50, 2)), ("b", (2, 50)), ("c", (50, 3))))
    out = einsum("ij,jk,kl->il", a, b, c, optimize="optimal")
    assert out.type.shape == (50, 3)
    with pytest.raises(ValueError, match="operand"):
        einsum("ij,jk->ik", a)
    with pytest.raises(ValueError, match="do not match"):
        einsum("ijk->i", a)
    with pytest.raises(ValueError, match="appears in no operand"):
        einsum("ij->z", a)
    with pytest.raises(ValueError, match="shape mismatch"):
        tensordot(a, c, axes=([1], [1]))


def test_einsum_gradient():
    rng = np.random.default_rng(12)
    verify_grad(lambda x, y: einsum("ij,jk->ik", x, y), [RNG.normal(size=(2, 3)), RNG.normal(size=(3, 2))],
                rng=rng, mode="FAST_COMPILE")
    verify_grad(lambda x: einsum("ii->i", x), [RNG.normal(size=(3, 3))], rng=rng, mode="FAST_COMPILE")


def test_iota_delta_and_general_dot():
    """The building blocks PyTensor's einsum module exposes: index grids, delta tensors, batched tensordot."""
    from functools import partial

    from lucent.tensor.einsum import _delta, _general_dot, _iota

    x = lt.tensor("x", shape=(5, 4, 2, 11, 13, 3))
    y = lt.tensor("y", shape=(4, 13, 5, 7, 11))
    axes = [(-3, -2), (-1, -4)]
    xv, yv = RNG.normal(size=x.type.shape), RNG.normal(size=y.type.shape)
    iota0, iota1, d2, d3, gd = run(
        [_iota((4, 8), 0), _iota((4, 8), 1), _delta((2, 2), (0, 1)), _delta((3, 2, 3), (2, 0)),
         _general_dot((x, y), axes, [(0, 1), (0,)])],
        {x: xv, y: yv},
    )
    np.testing.assert_array_equal(iota0, np.broadcast_to(np.arange(4)[:, None], (4, 8)))
    np.testing.assert_array_equal(iota1, np.broadcast_to(np.arange(8), (4, 8)))
    np.testing.assert_array_equal(d2, np.eye(2, dtype=bool))
    np.testing.assert_array_equal(d3, np.broadcast_to((np.arange(3)[:, None] == np.arange(3))[:, None, :], (3, 2, 3)))
    ref = np.vectorize(partial(np.tensordot, axes=axes), signature="(a,b,c,d),(c,e,f,b)->(a,d,e,f)")(xv, yv)
    np.testing.assert_allclose(gd, ref, rtol=1e-10)
    with pytest.raises(ValueError, match="two axes"):
        _delta((2, 2), (0,))
