"""ScalarLoop, series gradients of special functions, and tensor.math names (PyTensor 3.3 API)."""

import numpy as np
import scipy.special as sp
from numpy.testing import assert_allclose

import pytensor
import pytensor.scalar as ps
import pytensor.tensor as pt
from pytensor.scalar import ScalarLoop
from pytensor.scalar.loop import ScalarLoop as LoopFromModule
from pytensor.scalar.math import _make_scalar_loop, betainc_grad
from pytensor.tensor.basic import switch
from pytensor.tensor.elemwise import Elemwise
from pytensor.tensor.math import dense_dot, isnan_, matvec, median, vecdot, vecmat

assert ScalarLoop is LoopFromModule

# 1. ScalarLoop: a plain loop, a while loop, lags, on scalars
n = ps.int64("n")
x0, c = ps.float64("x0"), ps.float64("c")
plain = ScalarLoop(init=[x0], constant=[c], update=[x0 + c])
f = pytensor.function([n, x0, c], plain(n, x0, c))
assert_allclose(f(5, 0.0, 2.0), 10.0)
x = x0 + 1
until = ScalarLoop(init=[x0], update=[x], until=x >= 10)
f = pytensor.function([n, x0], until(n, x0))
y, done = f(20, 0.0)
assert y == 10.0 and done
y, done = f(5, 1.0)
assert y == 6.0 and not done
a, b = ps.float64("a"), ps.float64("b")
fib = ScalarLoop(init=[a, b], update=[ps.identity(b), a + b])
f = pytensor.function([n, a, b], fib(n, a, b)[1])
assert f(5, 0.0, 1.0) == 8.0
try:
    ScalarLoop(init=[x0], constant=[c], update=[])
except ValueError as e:
    assert "An update must be given" in str(e)
else:
    raise AssertionError("ScalarLoop accepted a missing update")

# 2. Elemwise of a ScalarLoop: each element its own n_steps
nv, xv = pt.lvector("nv"), pt.dvector("xv")
ys, dones = Elemwise(until)(nv, xv)
f = pytensor.function([nv, xv], [ys, dones])
ys_v, dones_v = f(np.array([0, 3, 20]), np.array([1.0, 1.0, 1.0]))
assert_allclose(ys_v, [1.0, 4.0, 10.0])
assert list(dones_v) == [False, False, True]

# 3. _make_scalar_loop casts updates back to the init dtype
count = _make_scalar_loop(n, [np.array(0, dtype="int32")], [], lambda k: ([k + 1], None), name="count")
assert count.type.dtype == "int32"
assert pytensor.function([n], count)(7) == 7

# 4. gradients of gammainc (shape), betainc (a, b) and hyp2f1 (a, b, c) contain ScalarLoops
k_, x_ = pt.dvectors("k_", "x_")
gk = pytensor.grad(pt.gammainc(k_, x_).sum(), k_)
pa, pb, px = pt.dvectors("pa", "pb", "px")
ga, gb = pytensor.grad(pt.betainc(pa, pb, px).sum(), [pa, pb])
ha, hb, hc, hz = pt.dvectors("ha", "hb", "hc", "hz")
hg = pytensor.grad(pt.hyp2f1(ha, hb, hc, hz).sum(), [ha, hb, hc])
grads = pytensor.function([k_, x_, pa, pb, px, ha, hb, hc, hz], [gk, ga, gb, *hg])
kv, xv_ = np.array([0.5, 3.0, 20.0]), np.array([1.0, 2.0, 100.0])
A, B, X = np.array([0.5, 2.0, 10.0]), np.array([0.7, 3.0, 1.0]), np.array([0.3, 0.9, 0.95])
H = [np.array([0.5, 2.0]), np.array([0.7, 3.0]), np.array([1.5, 4.0]), np.array([0.3, -0.5])]
got = grads(kv, xv_, A, B, X, *H)
h = 1e-6
assert_allclose(got[0], (sp.gammainc(kv + h, xv_) - sp.gammainc(kv - h, xv_)) / (2 * h), rtol=1e-6, atol=1e-12)
assert_allclose(got[1], (sp.betainc(A + h, B, X) - sp.betainc(A - h, B, X)) / (2 * h), rtol=1e-5)
assert_allclose(got[2], (sp.betainc(A, B + h, X) - sp.betainc(A, B - h, X)) / (2 * h), rtol=1e-5)
for i in range(3):
    up = [v + h * (j == i) for j, v in enumerate(H[:3])]
    down = [v - h * (j == i) for j, v in enumerate(H[:3])]
    assert_allclose(got[3 + i], (sp.hyp2f1(*up, H[3]) - sp.hyp2f1(*down, H[3])) / (2 * h), rtol=1e-5)
sa, sb, sx = ps.float64("sa"), ps.float64("sb"), ps.float64("sx")
fb = pytensor.function([sa, sb, sx], betainc_grad(sa, sb, sx, True), mode="FAST_COMPILE")
assert np.isnan(fb(1.0, 1.0, 2.0)) and not np.isnan(fb(1.0, 1.0, 1.0))
from pytensor.graph.traversal import ancestors  # noqa: E402
assert any(v.owner is not None and isinstance(getattr(v.owner.op, "scalar_op", None), ScalarLoop)
           for v in ancestors([gk]))

# 5. tensor.math names: median, vecdot, matvec, vecmat, dense_dot, isnan_, basic.switch
m, v = pt.dmatrix("m"), pt.dvector("v")
mv = np.array([[1.0, 5.0, 2.0], [4.0, 3.0, 0.5], [7.0, 8.0, 9.0], [0.0, -1.0, 2.0]])
vv = np.array([1.0, 2.0, 3.0])
f = pytensor.function([m, v], [median(m), median(m, axis=0), median(m, axis=1), vecdot(m, v), matvec(m, v),
                               vecmat(v, m.T), dense_dot(m, v), isnan_(m), switch(m > 2, m, 0.0)])
o = f(mv, vv)
assert_allclose(o[0], np.median(mv))
assert_allclose(o[1], np.median(mv, axis=0))
assert_allclose(o[2], np.median(mv, axis=1))
assert_allclose(o[3], mv @ vv)
assert_allclose(o[4], mv @ vv)
assert_allclose(o[5], vv @ mv.T)
assert_allclose(o[6], mv @ vv)
assert not o[7].any()
assert_allclose(o[8], np.where(mv > 2, mv, 0.0))
print("scalar_loop ok")
