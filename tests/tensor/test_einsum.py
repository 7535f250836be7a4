"""``tensordot`` and ``einsum`` against NumPy, on both paths, with gradients.

Each numeric test compiles one function holding many contractions, so the
Numba variant compiles once.
"""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.gradient import grad, verify_grad
from lucent.tensor.blockwise import Blockwise
from lucent.tensor.einsum import Einsum, einsum, tensordot
from lucent.tensor.einsum_path import contraction_path, parse_subscripts
from tests.helpers import run

RNG = np.random.default_rng(41)

# Letter -> length; each case is (subscripts, operand index strings used for the shapes).
LENGTHS = dict(zip("ijklmnopb", [2, 3, 4, 5, 3, 2, 3, 4, 3]))

SIGNATURES = [
    "ij", "ji", "ii->i", "ii", "ij->j", "ij,ji->ij", "ij,jk", "kj,ji", "ij,kj->ik", "ik,kj->ikj",
    "ij,kl->ijkl", "kl,ij,jk->il", "ijk,jkl->il", "oij,imj,mjkn,lnk,plk->op", "bij,bjk->bik", "iij->ji",
    "i,i->", "j,ij->i", "bij,bj->bi", "iji->j", "ij,ij,ij->i",
]


def _shapes(signature):
    return [tuple(LENGTHS[c] for c in term) for term in signature.split("->")[0].split(",")]


@pytest.mark.parametrize("static", [True, False], ids=["static", "unknown"])
def test_einsum_signatures_match_numpy(static):
    """Every signature on operands with static or unknown lengths, against ``numpy.einsum``."""
    givens, outs, refs = {}, [], []
    for sig in SIGNATURES:
        shapes = _shapes(sig)
        values = [RNG.normal(size=s) for s in shapes]
        syms = [lt.tensor(f"x{len(givens) + k}", shape=s if static else (None,) * len(s)) for k, s in enumerate(shapes)]
        givens.update(zip(syms, values))
        out = einsum(sig, *syms)
        assert isinstance(out.owner.op, Einsum)
        assert out.owner.op.optimized == (static or len(syms) <= 2), sig
        outs.append(out)
        refs.append(np.einsum(sig, *values))
    got = run(outs, givens)
    for sig, g, r in zip(SIGNATURES, got, refs, strict=True):
        np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12, err_msg=sig)
        assert g.shape == r.shape, sig


def test_einsum_ellipsis_broadcasting_and_scalars():
    """``...`` in any position, length-1 broadcasting, 0-d operands, implicit outputs."""
    a = lt.tensor("a", shape=(3, 1, 4, 5))
    b = lt.tensor("b", shape=(2, 5, 6))
    c = lt.tensor("c", shape=(None, None, None))
    s = lt.scalar("s", dtype="float64")
    v = lt.vector("v", dtype="float64")
    r = lt.tensor("r", shape=(1, 5))
    vals = {a: RNG.normal(size=(3, 1, 4, 5)), b: RNG.normal(size=(2, 5, 6)), c: RNG.normal(size=(2, 4, 3)),
            s: np.asarray(1.5), v: RNG.normal(size=5), r: RNG.normal(size=(1, 5))}
    av, bv, cv, sv, vv, rv = (vals[k] for k in (a, b, c, s, v, r))
    cases = [
        ("...ij,...jk->...ik", (a, b), (av, bv)),  # batch (3, 1) against (2,): broadcast
        ("...ij,...jk", (a, b), (av, bv)),
        ("i...j,j...k->...ik", (c, c.dimshuffle(2, 1, 0)), (cv, cv.transpose(2, 1, 0))),
        ("m...p,p...n->mn", (c, c.dimshuffle(2, 1, 0)), (cv, cv.transpose(2, 1, 0))),  # sums the ellipsis
        ("...,...,...->...", (v, v, v), (vv, vv, vv)),
        ("i...,i...->...", (c, c), (cv, cv)),
        (",i->i", (s, v), (sv, vv)),
        ("i,->", (v, s), (vv, sv)),
        ("", (s,), (sv,)),
        (",", (s, s), (sv, sv)),
        ("ij,j->i", (r, v), (rv, vv)),  # i of length 1
        ("ij,kj->ik", (r, b[0].T), (rv, bv[0].T)),
        ("ba", (b[0],), (bv[0],)),
        ("...", (a,), (av,)),
    ]
    with pytest.warns(UserWarning, match="an ellipsis dimension"):  # (3, 1) against (2,)
        outs = [einsum(sig, *ops) for sig, ops, _ in cases]
    got = run(outs, vals)
    for (sig, _, values), g in zip(cases, got, strict=True):
        if sig == "m...p,p...n->mn":  # NumPy itself only sums ellipsis axes when they are named
            ref = np.einsum("m...p,p...n->m...n", *values).sum(1)
        else:
            ref = np.einsum(sig, *values)
        np.testing.assert_allclose(g, ref, rtol=1e-10, err_msg=sig)
        assert g.shape == ref.shape, sig


def test_einsum_dtypes_and_empty_dimensions():
    """float32 stays float32, integers are exact, zero-length dimensions give empty or zero results."""
    f32 = [lt.tensor(n, dtype="float32", shape=(None, None)) for n in "ab"]
    ints = [lt.tensor(n, dtype="int32", shape=s) for n, s in (("c", (3, 4)), ("d", (4, 2)))]
    empty = [lt.tensor("e", shape=(3, 0)), lt.tensor("f", shape=(0, 2)), lt.tensor("g", shape=(None, None))]
    vals = {
        f32[0]: RNG.normal(size=(3, 4)).astype("float32"), f32[1]: RNG.normal(size=(4, 2)).astype("float32"),
        ints[0]: RNG.integers(-5, 5, size=(3, 4)).astype("int32"),
        ints[1]: RNG.integers(-5, 5, size=(4, 2)).astype("int32"),
        empty[0]: np.zeros((3, 0)), empty[1]: np.zeros((0, 2)), empty[2]: np.zeros((0, 4)),
    }
    outs = [
        einsum("ij,jk->ik", *f32), einsum("ij,jk->ik", *ints), einsum("ij->j", ints[0]),
        einsum("ij,jk->ik", *empty[:2]), einsum("ij,jk->ki", empty[2], ints[0].T.astype("float64")),
        einsum("ij->", empty[2]),
    ]
    assert outs[0].dtype == "float32"
    assert outs[1].dtype in ("int32", "int64")
    got = run(outs, vals)
    np.testing.assert_allclose(got[0], vals[f32[0]] @ vals[f32[1]], rtol=1e-5)
    assert got[0].dtype == np.float32
    np.testing.assert_array_equal(got[1], vals[ints[0]] @ vals[ints[1]])
    np.testing.assert_array_equal(got[2], vals[ints[0]].sum(0))
    np.testing.assert_array_equal(got[3], np.zeros((3, 2)))
    assert got[4].shape == (3, 0)
    assert got[5] == 0


def test_einsum_node_path_and_identity():
    """The ``Einsum`` node: attributes, printing, equality, and the path rules."""
    x = lt.tensor("x", shape=(3, 4))
    y = lt.tensor("y", shape=(4, 5))
    m = lt.matrix("m")
    out = einsum("ij,jk->ik", x, y)
    op = out.owner.op
    assert (op.subscripts, op.path, op.optimized) == ("ij,jk->ik", ((1, 0),), True)
    assert str(op) == "Einsum{subscripts='ij,jk->ik', path=((1, 0),), optimized=True}"
    assert out.type.shape == (3, 5)
    again = einsum("ij,jk->ik", x, y)
    assert again.owner.op == op and hash(again.owner.op) == hash(op)
    assert einsum("ij,jk->ki", x, y).owner.op != op
    assert einsum("ii->i", m).owner.op.path == ((0,),)
    assert einsum("ij,jk,kl->il", m, m, m).owner.op.path == ((2, 1), (1, 0))
    assert not einsum("ij,jk,kl->il", m, m, m).owner.op.optimized
    # Static shapes: NumPy's optimal order, small operands first.
    a, b, c = (lt.tensor(n, shape=s) for n, s in (("a", (50, 2)), ("b", (2, 50)), ("c", (50, 3))))
    assert einsum("ij,jk,kl->il", a, b, c).owner.op.path == ((2, 1), (1, 0))
    assert einsum("ij,jk,kl->il", a, b, c, optimize="greedy").owner.op.optimized
    # Nothing to gain from reordering: pairwise right to left.
    v = lt.tensor("v", shape=(3,))
    assert einsum("i,i,i->i", v, v, v).owner.op.path == ((2, 1), (1, 0))
    text = lucent.printing.debugprint(out, file="str")
    assert "Einsum{subscripts='ij,jk->ik'" in text
    # Two identical einsums merge into one node.
    f = lucent.function([x, y], [out, again], mode="FAST_COMPILE")
    outs = f.maker.fgraph.outputs
    assert outs[0].owner is outs[1].owner


def test_einsum_errors_and_warnings():
    a, c = lt.tensor("a", shape=(50, 2)), lt.tensor("c", shape=(50, 3))
    with pytest.raises(ValueError, match="operand subscripts"):
        einsum("ij,jk->ik", a)
    with pytest.raises(ValueError, match="name 3 axes, but it has 2 dimensions"):
        einsum("ijk->i", a)
    with pytest.raises(ValueError, match="appears in no operand"):
        einsum("ij->z", a)
    with pytest.raises(ValueError, match="repeat an index"):
        einsum("ij->ii", a)
    with pytest.raises(ValueError, match="invalid character"):
        einsum("i1->i", a)
    with pytest.raises(ValueError, match="index 'j'.*length 2 in operand 0 and 3 in operand 1"):
        einsum("ij,ij->i", a, c)
    with pytest.raises(ValueError, match="at least one operand"):
        einsum("i")
    with pytest.raises(NotImplementedError, match="optimize=False"):
        einsum("ij->i", a, optimize=False)
    with pytest.raises(ValueError, match="inconsistent type shape"):
        tensordot(a, c, axes=([1], [1]))
    # A length-1 dimension sharing a subscript with a longer one: correct, but warns about the path.
    big, row = lt.tensor("big", shape=(8, 5)), lt.tensor("row", shape=(1, 5))
    with pytest.warns(UserWarning, match="This can result in a suboptimal contraction path"):
        einsum("bj,bj->j", big, row)


def test_parse_and_path_helpers():
    terms, out = parse_subscripts("ij,jk", [(2, 3), (3, 4)])
    assert (terms, out) == (["ij", "jk"], "ik")
    terms, out = parse_subscripts("...i,i...->...", [(5, 2, 3), (3, 2)])
    assert len(terms[0]) == 3 and len(terms[1]) == 2 and out == terms[0][:2]
    assert terms[1][1:] == terms[0][1:2]  # right-aligned ellipsis axes
    assert contraction_path(["ij"], "i", [(None, 3)]) == (((0,),), True)
    assert contraction_path(["ij", "jk", "kl", "lm"], "im", [(None, 2)] * 4) == (((3, 2), (2, 1), (1, 0)), False)


def test_einsum_compiles_to_matrix_products(lucent_mode):
    """No (i, j, k) temporary: 'ij,jk->ik' is one matrix product, batches one matmul, no Blockwise."""
    from lucent.graph.op import HasInnerGraph
    from lucent.tensor.blas import BatchedDot
    from lucent.tensor.math import Dot, MatMul

    x, y = lt.matrix("x"), lt.matrix("y")
    s, t = lt.tensor("s", shape=(None, None, None)), lt.tensor("t", shape=(None, None, None))
    outs = [einsum("ij,jk->ik", x, y), einsum("bij,bjk->bik", s, t), einsum("bij,bjk->bki", s, t)]
    fg = lucent.function([x, y, s, t], outs, mode=lucent_mode).maker.fgraph
    ops = [node.op for node in fg.apply_nodes]
    # The Einsum nodes were expanded in place: the rewrites see (and merged) their contents.
    assert not any(isinstance(o, (Einsum, Blockwise, HasInnerGraph)) for o in ops)
    assert all(v.type.ndim <= 3 for node in fg.apply_nodes for v in node.outputs)
    first = fg.outputs[0].owner
    assert isinstance(first.op, Dot) or type(first.op).__name__.startswith("Dot"), first.op
    assert first.inputs == [x, y]
    # One batched matrix product per distinct product (the rewrites may specialise MatMul).
    batched = (MatMul, BatchedDot)
    assert isinstance(fg.outputs[1].owner.op, batched)
    assert fg.outputs[1].owner.inputs == [s, t]
    assert sum(isinstance(o, batched) for o in ops) == 2
    xv, yv = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 2))
    sv, tv = RNG.normal(size=(2, 3, 4)), RNG.normal(size=(2, 4, 5))
    got = lucent.function([x, y, s, t], outs, mode=lucent_mode)(xv, yv, sv, tv)
    np.testing.assert_allclose(got[0], xv @ yv, rtol=1e-12)
    np.testing.assert_allclose(got[2], (sv @ tv).transpose(0, 2, 1), rtol=1e-12)


def test_einsum_gradients():
    rng = np.random.default_rng(12)
    for sig, shapes in [
        ("ij,jk->ik", [(2, 3), (3, 2)]),
        ("ii->i", [(3, 3)]),
        ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
        ("ijk,jkl,lm->im", [(2, 3, 2), (3, 2, 2), (2, 3)]),
        ("i...,...->i...", [(2, 3), (3,)]),
        (",ij->", [(), (2, 2)]),
        ("ij,j->i", [(1, 3), (3,)]),
    ]:
        verify_grad(lambda *xs, sig=sig: einsum(sig, *xs), [rng.normal(size=s) for s in shapes], rng=rng,
                    mode="FAST_COMPILE")


def test_einsum_gradient_values():
    """The gradient of a contraction, compiled: d/dA sum(W * (A @ B)) = W @ B.T, d/dB = A.T @ W."""
    a, b, w = lt.matrix("a"), lt.matrix("b"), lt.matrix("w")
    cost = (einsum("ij,jk->ik", a, b) * w).sum()
    ga, gb = grad(cost, [a, b])
    av, bv, wv = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 2)), RNG.normal(size=(3, 2))
    got_a, got_b = run([ga, gb], {a: av, b: bv, w: wv})
    np.testing.assert_allclose(got_a, wv @ bv.T, rtol=1e-10)
    np.testing.assert_allclose(got_b, av.T @ wv, rtol=1e-10)


def test_einsum_repeated_inputs():
    x = lt.matrix("x")
    out = einsum("ij,ij->i", x, x)
    assert out.owner.inputs == [x, x]
    xv = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(run(out, {x: xv}), (xv * xv).sum(1))


def test_tensordot_matches_numpy():
    A = lt.tensor("A", shape=(None, None, None))
    B = lt.tensor("B", shape=(None, None, None))
    C = lt.matrix("C")
    v = lt.vector("v")
    vals = {A: RNG.normal(size=(3, 4, 5)), B: RNG.normal(size=(4, 5, 6)), C: RNG.normal(size=(6, 6)),
            v: RNG.normal(size=6)}
    cases = [
        (A, B, 2), (A, B, ([1], [0])), (C, C, 0), (A, A, 3), (C, v, 1), (v, C, ([0], [1])), (v, v, 1),
        (A, B, ([1, 2], [0, 1])), (B, A, ([0, 1], [1, 2])),
    ]
    outs = [tensordot(x, y, axes=ax) for x, y, ax in cases]
    got = run(outs, vals)
    for (x, y, ax), g in zip(cases, got, strict=True):
        np.testing.assert_allclose(g, np.tensordot(vals[x], vals[y], axes=ax), rtol=1e-10, err_msg=str(ax))


def test_tensordot_checks_folded_lengths():
    """Two contracted axes of unknown length are checked at run time (their products could agree)."""
    x = lt.tensor("x", shape=(7, 3, None))
    y = lt.tensor("y", shape=(None, None, 3))
    z = tensordot(x, y, axes=[[1, 2], [1, 2]])
    f = lucent.function([x, y], z, mode="FAST_COMPILE")
    with pytest.raises(AssertionError, match="reduced axes of tensordot are not equal"):
        f(np.ones((7, 3, 2)), np.ones((7, 2, 3)))


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


def test_einsum_planned_again_when_lengths_become_known():
    """An einsum built on unknown lengths, compiled with static ones, gets the optimal order."""
    from lucent.graph.fg import FunctionGraph
    from lucent.graph.replace import clone_replace
    from lucent.tensor.einsum import optimize_einsum_inner_graph

    m1, m2, m3 = lt.matrix("m1"), lt.matrix("m2"), lt.matrix("m3")
    out = einsum("ij,jk,kl->il", m1, m2, m3)
    assert out.owner.op.path == ((2, 1), (1, 0)) and not out.owner.op.optimized
    a, b, c = (lt.tensor(n, shape=s) for n, s in (("a", (2, 50)), ("b", (50, 2)), ("c", (2, 50))))
    static = clone_replace(out, {m1: a, m2: b, m3: c})
    fg = FunctionGraph([a, b, c], [static], clone=False)
    (new,) = optimize_einsum_inner_graph.transform(fg, static.owner)
    assert new.owner.op.optimized and new.owner.op.path == ((1, 0), (1, 0))
    assert optimize_einsum_inner_graph.transform(fg, new.owner) is False
