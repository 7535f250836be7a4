"""einsum and tensor contractions (PyTensor's pytensor.tensor.einsum, tensordot)."""

import warnings

import numpy as np

import pytensor
import pytensor.tensor as pt
from pytensor import function
from pytensor.compile.builders import OpFromGraph
from pytensor.gradient import grad, verify_grad
from pytensor.tensor.blockwise import Blockwise
from pytensor.tensor.einsum import Einsum, _delta, _general_dot, _iota, einsum
from pytensor.tensor.math import tensordot

rng = np.random.default_rng(7)
assert pt.einsum is einsum

# --- the Einsum node: an OpFromGraph that remembers its subscripts and path --------
x = pt.tensor("x", shape=(3, 4))
y = pt.tensor("y", shape=(4, 5))
out = einsum("ij,jk->ik", x, y)
op = out.owner.op
assert isinstance(op, Einsum) and isinstance(op, OpFromGraph)
assert op.subscripts == "ij,jk->ik"
assert op.path == ((1, 0),) and op.optimized is True
assert "Einsum" in str(op) and "ij,jk->ik" in str(op)
assert out.type.shape == (3, 5)

# Unknown lengths: right-to-left pairs, "optimized" only when there is no choice.
m = pt.matrix("m")
two = einsum("ij,jk->ik", m, m)
three = einsum("ij,jk,kl->il", m, m, m)
assert two.owner.op.path == ((1, 0),) and two.owner.op.optimized
assert three.owner.op.path == ((2, 1), (1, 0)) and not three.owner.op.optimized
assert einsum("ii->i", m).owner.op.path == ((0,),)
# Static lengths: numpy.einsum_path(optimize="optimal") decides.
a, b, c = (pt.tensor(n, shape=s) for n, s in (("a", (50, 2)), ("b", (2, 50)), ("c", (50, 3))))
chain = einsum("ij,jk,kl->il", a, b, c)
assert chain.owner.op.path == ((2, 1), (1, 0)) and chain.owner.op.optimized

# --- values against numpy.einsum, both paths ----------------------------------------
xv, yv = rng.normal(size=(3, 4)), rng.normal(size=(4, 5))
s3, t3 = pt.tensor3("s3"), pt.tensor3("t3")
sv, tv = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 4, 5))
v = pt.vector("v")
vv = rng.normal(size=4)
s0 = pt.scalar("s0")
cases = [
    ("ij,jk->ik", (x, y), (xv, yv)),
    ("ij,jk", (x, y), (xv, yv)),  # implicit output
    ("ji", (x,), (xv,)),
    ("ij->", (x,), (xv,)),
    ("ij,i->j", (x, y[:3, 0]), (xv, yv[:3, 0])),
    ("bij,bjk->bik", (s3, t3), (sv, tv)),
    ("bij,bjk->kib", (s3, t3), (sv, tv)),
    ("...ij,...jk->...ik", (s3, t3), (sv, tv)),  # ellipsis first
    ("i...j,j...k->...ik", (s3.dimshuffle(1, 0, 2), t3.dimshuffle(1, 0, 2)),
     (sv.transpose(1, 0, 2), tv.transpose(1, 0, 2))),  # ellipsis in the middle
    ("i,j->ij", (v, v), (vv, vv)),
    ("i,i->", (v, v), (vv, vv)),
    (",i->i", (s0, v), (np.asarray(2.5), vv)),  # a 0-d operand
    ("ij,jk,kl->il", (x, y, y.T), (xv, yv, yv.T)),
]
for mode in ("FAST_COMPILE", "FAST_RUN"):
    outs = [einsum(sig, *ops) for sig, ops, _ in cases]
    inputs = [x, y, s3, t3, v, s0]
    f = function(inputs, outs, mode=mode, on_unused_input="ignore")
    got = f(xv, yv, sv, tv, vv, 2.5)
    for (sig, _, vals), g in zip(cases, got):
        np.testing.assert_allclose(g, np.einsum(sig, *vals), rtol=1e-10, err_msg=f"{sig} {mode}")

# float32 stays float32; integers are exact; empty dimensions work.
f32 = pt.matrix("f32", dtype="float32")
i32 = pt.matrix("i32", dtype="int32")
e = pt.tensor("e", shape=(None, None))
o32, oint, oempty = einsum("ij,jk->ik", f32, f32.T), einsum("ij,kj->ik", i32, i32), einsum("ij,jk->ik", e, e.T)
assert o32.dtype == "float32"
ff = function([f32, i32, e], [o32, oint, oempty])
fv, iv = rng.normal(size=(3, 2)).astype("float32"), rng.integers(-4, 4, size=(3, 2)).astype("int32")
r32, rint, rempty = ff(fv, iv, np.zeros((0, 3)))
assert r32.dtype == np.float32
np.testing.assert_allclose(r32, fv @ fv.T, rtol=1e-5)
np.testing.assert_array_equal(rint, iv @ iv.T)
assert rempty.shape == (0, 0)

# --- compiled: a matrix product, no Blockwise and no Einsum node left ---------------
fg = function([x, y], out, mode="FAST_RUN").maker.fgraph
assert not any(isinstance(n.op, (Blockwise, Einsum)) for n in fg.apply_nodes)
assert all(v.type.ndim <= 2 for n in fg.apply_nodes for v in n.outputs)  # no (i, j, k) temporary

# --- the same variable twice ----------------------------------------------------------
rep = einsum("ij,ij->i", m, m)
mv = np.array([[1.0, 2.0], [3.0, 4.0]])
np.testing.assert_allclose(rep.eval({m: mv}), (mv * mv).sum(1))

# --- length-1 dimensions sharing a subscript with longer ones ------------------------
big = pt.tensor("big", shape=(32, 32, 32))
tall = pt.tensor("tall", shape=(100, 32))
row = pt.tensor("row", shape=(1, 32))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    suboptimal = einsum("ijk,bj,bk->i", big, tall, row)
assert any(issubclass(w.category, UserWarning) and "suboptimal contraction path" in str(w.message) for w in caught)
optimal = einsum("ijk,bj,ck->i", big, tall, row)
assert [set(p) for p in optimal.owner.op.path] == [{0, 2}, {0, 1}]
bigv, tallv, rowv = rng.normal(size=(32, 32, 32)), rng.normal(size=(100, 32)), rng.normal(size=(1, 32))
np.testing.assert_allclose(
    suboptimal.eval({big: bigv, tall: tallv, row: rowv}), np.einsum("ijk,bj,bk->i", bigv, tallv, rowv), rtol=1e-8
)

# --- gradients ----------------------------------------------------------------------
for sig, shapes in [("ij,jk->ik", [(2, 3), (3, 2)]), ("ii->i", [(3, 3)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
                    ("i...,...->i", [(2, 3), (3,)])]:
    verify_grad(lambda *ops, sig=sig: einsum(sig, *ops), [rng.normal(size=s) for s in shapes], rng=rng)
ga = grad(einsum("ij,jk->ik", x, y).sum(), x)
np.testing.assert_allclose(ga.eval({x: xv, y: yv}), np.ones((3, 5)) @ yv.T, rtol=1e-10)

# --- errors -----------------------------------------------------------------------------
x4, y4 = pt.tensor("x4", shape=(3, 5, 7, 11)), pt.tensor("y4", shape=(3, 5, 11, 13))
for bad in [("mp,pn->mn", (x4, y4)), ("ij,jk->ik", (x,))]:
    try:
        einsum(bad[0], *bad[1])
    except ValueError:
        pass
    else:
        raise AssertionError(f"einsum{bad[0]!r} should raise ValueError")

# --- building blocks: tensordot, _general_dot, _iota, _delta ---------------------------
A = pt.tensor("A", shape=(None, None, None))
B = pt.tensor("B", shape=(None, None, None))
Av, Bv = rng.normal(size=(3, 4, 5)), rng.normal(size=(4, 5, 6))
np.testing.assert_allclose(tensordot(A, B).eval({A: Av, B: Bv}), np.tensordot(Av, Bv), rtol=1e-10)
np.testing.assert_allclose(
    tensordot(A, B, axes=[[1], [0]]).eval({A: Av, B: Bv}), np.tensordot(Av, Bv, axes=[[1], [0]]), rtol=1e-10
)
try:
    tensordot(pt.ones((7, 4)), pt.ones((7, 4)), axes=1)
except ValueError as err:
    assert "inconsistent type shape" in str(err)
else:
    raise AssertionError("tensordot of mismatched static lengths should raise")
gd = _general_dot((s3, t3), axes=[[2], [1]], batch_axes=[[0], [0]])
np.testing.assert_allclose(gd.eval({s3: sv, t3: tv}), sv @ tv, rtol=1e-10)
np.testing.assert_array_equal(_iota((2, 3), 1).eval(), np.broadcast_to(np.arange(3), (2, 3)))
np.testing.assert_array_equal(_delta((2, 2), (0, 1)).eval(), np.eye(2, dtype=bool))
print("einsum compat: ok")
