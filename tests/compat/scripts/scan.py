"""scan: loops as graphs (PyTensor's pytensor.scan)."""

import io
import warnings

import numpy as np
from numpy.testing import assert_allclose

import pytensor
import pytensor.tensor as pt
from pytensor import function, shared
from pytensor.gradient import grad, hessian, jacobian, verify_grad
from pytensor.scan import foldl, foldr, map, reduce, scan, scan_checkpoints, until
from pytensor.scan.op import Scan, ScanInfo
from pytensor.scan.utils import until as until2

assert until is until2
assert pytensor.scan is scan and pytensor.map is map

MODES = ("FAST_COMPILE", "FAST_RUN")
rng = np.random.default_rng(42)
floatX = pytensor.config.floatX

# --- the recurrence h = tanh(W h + x_t) over 1000 steps --------------------------------
X = pt.matrix("X")
h0 = pt.vector("h0")
W = pt.matrix("W")
hs = scan(
    lambda x_t, h, W: pt.tanh(pt.dot(W, h) + x_t),
    sequences=[X],
    outputs_info=[h0],
    non_sequences=[W],
    name="rnn",
    return_updates=False,
)
node = hs.owner.inputs[0].owner
assert isinstance(node.op, Scan)
assert str(node.op) == "Scan{rnn, while_loop=False, inplace=none}"
assert isinstance(node.op.info, ScanInfo)
assert node.op.info.n_seqs == 1 and node.op.info.n_sit_sot == 1 and node.op.info.n_non_seqs == 1
Xv = rng.normal(size=(1000, 3)).astype(floatX)
Wv = (0.3 * rng.normal(size=(3, 3))).astype(floatX)
h0v = np.zeros(3, dtype=floatX)
expected, h = [], h0v
for t in range(1000):
    h = np.tanh(Wv @ h + Xv[t])
    expected.append(h)
for mode in MODES:
    f = function([X, h0, W], hs, mode=mode)
    assert_allclose(f(Xv, h0v, Wv), np.array(expected), rtol=1e-5, atol=1e-6)

# --- return conventions ------------------------------------------------------------
x = pt.vector("x")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out, upd = scan(lambda v: v * 2, sequences=[x])
assert any(issubclass(w.category, DeprecationWarning) for w in caught)
assert upd == {}
lst = scan(lambda v: v * 2, sequences=[x], return_list=True, return_updates=False)
assert isinstance(lst, list) and len(lst) == 1
assert_allclose(function([x], lst[0])(np.arange(3.0).astype(floatX)), [0, 2, 4])
# several outputs, one not fed back (None in outputs_info)
s0 = pt.scalar("s0")
cum, sq = scan(
    lambda v, acc: [acc + v, v**2],
    sequences=[x],
    outputs_info=[s0, None],
    return_updates=False,
)
for mode in MODES:
    c, q = function([x, s0], [cum, sq], mode=mode)(np.arange(1.0, 5.0).astype(floatX), 10.0)
    assert_allclose(c, [11, 13, 16, 20])
    assert_allclose(q, [1, 4, 9, 16])

# --- taps: sequence taps and several negative output taps (Fibonacci-like) -------------
seq = pt.vector("seq")
y0 = pt.vector("y0")
ys = scan(
    lambda s_m2, s_p1, y_m2, y_m1: y_m1 + y_m2 + s_m2 * s_p1,
    sequences=[dict(input=seq, taps=[-2, 1])],
    outputs_info=[dict(initial=y0, taps=[-2, -1])],
    return_updates=False,
)
sv = np.arange(8.0).astype(floatX)
y0v = np.array([1.0, 1.0], dtype=floatX)
ref = [1.0, 1.0]
for t in range(2, 7):
    ref.append(ref[-1] + ref[-2] + sv[t - 2] * sv[t + 1])
for mode in MODES:
    assert_allclose(function([seq, y0], ys, mode=mode)(sv, y0v), ref[2:])

# --- n_steps (constant and symbolic), go_backwards -----------------------------------
k = pt.iscalar("k")
a = pt.scalar("a")
powers = scan(lambda p, a: p * a, outputs_info=[pt.constant(np.asarray(1.0, dtype=floatX))], non_sequences=[a],
              n_steps=k, return_updates=False)
backwards = scan(lambda v: v + 0, sequences=[x], go_backwards=True, return_updates=False)
three = scan(lambda v: v * 3, sequences=[x], n_steps=2, return_updates=False)
for mode in MODES:
    f = function([a, k], powers, mode=mode)
    assert_allclose(f(2.0, 5), [2, 4, 8, 16, 32])
    assert f(2.0, 0).shape == (0,)
    assert_allclose(function([x], backwards, mode=mode)(np.arange(4.0).astype(floatX)), [3, 2, 1, 0])
    assert_allclose(function([x], three, mode=mode)(np.arange(4.0).astype(floatX)), [0, 3])

# --- until: a while loop ------------------------------------------------------------
def halve(v):
    nv = v / 2
    return nv, until(nv < 1)

for mode in MODES:
    w = scan(halve, outputs_info=[a], n_steps=100, return_updates=False)
    assert_allclose(function([a], w, mode=mode)(20.0), [10, 5, 2.5, 1.25, 0.625])

# --- shared variables updated inside fn come back as updates ------------------------------
counter = shared(np.asarray(0.0, dtype=floatX), name="counter")
out, updates = scan(lambda v: (v + counter, {counter: counter + 1}), sequences=[x])
assert list(updates) == [counter]
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    try:
        scan(lambda v: (v + counter, {counter: counter + 1}), sequences=[x], return_updates=False)
    except ValueError as e:
        assert "return_updates=False" in str(e)
    else:
        raise AssertionError("updates with return_updates=False must raise")
f = function([x], out, updates=updates)
assert_allclose(f(np.zeros(3, dtype=floatX)), [0, 1, 2])
assert counter.get_value() == 3
assert_allclose(f(np.zeros(2, dtype=floatX)), [3, 4])
assert counter.get_value() == 5
# a shared variable used without being listed is a non-sequence; strict=True wants it listed
scale = shared(np.asarray(3.0, dtype=floatX), name="scale")
scaled = scan(lambda v: v * scale, sequences=[x], return_updates=False)
assert_allclose(function([x], scaled)(np.ones(2, dtype=floatX)), [3, 3])
try:
    scan(lambda v: v * scale, sequences=[x], strict=True, return_updates=False)
except Exception as e:
    assert "scale" in str(e)
else:
    raise AssertionError("strict=True with an unlisted shared variable must raise")
strict_ok = scan(lambda v, s: v * s, sequences=[x], non_sequences=[scale], strict=True, return_updates=False)
assert_allclose(function([x], strict_ok)(np.ones(2, dtype=floatX)), [3, 3])

# --- bad input --------------------------------------------------------------------
try:
    scan(lambda v: v, outputs_info=[a], return_updates=False)
except ValueError as e:
    assert "n_steps" in str(e)
else:
    raise AssertionError("scan without sequences nor n_steps must raise")
try:
    scan(lambda v: v, sequences=[x], n_steps=pt.scalar("fl"), return_updates=False)
except ValueError as e:
    assert "int" in str(e)
else:
    raise AssertionError("a float n_steps must raise")

# --- views ------------------------------------------------------------------------
xv = np.arange(1.0, 5.0).astype(floatX)
z = pt.constant(np.asarray(0.0, dtype=floatX))
m = map(lambda v: v * 10, sequences=[x], return_updates=False)
r = reduce(lambda v, acc: acc + v, sequences=[x], outputs_info=[z], return_updates=False)
fl = foldl(lambda v, acc: acc * 2 + v, sequences=[x], outputs_info=[z], return_updates=False)
fr = foldr(lambda v, acc: acc * 2 + v, sequences=[x], outputs_info=[z], return_updates=False)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    r2, r2_upd = reduce(lambda v, acc: acc + v, sequences=[x], outputs_info=[z])
for mode in MODES:
    got = function([x], [m, r, fl, fr, r2], mode=mode)(xv)
    assert_allclose(got[0], xv * 10)
    assert_allclose(got[1], 10)
    assert_allclose(got[2], ((1 * 2 + 2) * 2 + 3) * 2 + 4)
    assert_allclose(got[3], ((4 * 2 + 3) * 2 + 2) * 2 + 1)
    assert_allclose(got[4], 10)

# --- gradients ------------------------------------------------------------------------
def rnn_cost(Xs, h_init, Wm):
    hh = scan(lambda x_t, h, Wm: pt.tanh(pt.dot(Wm, h) + x_t), sequences=[Xs], outputs_info=[h_init],
              non_sequences=[Wm], return_updates=False)
    return (hh**2).sum()

for mode in MODES:
    verify_grad(rnn_cost, [rng.normal(size=(6, 3)), rng.normal(size=3), 0.5 * rng.normal(size=(3, 3))],
                rng=rng, mode=mode)

def taps_cost(s, init):
    out = scan(lambda s_m1, s_p1, y2, y1: 0.5 * y1 - 0.25 * y2 * s_p1 + s_m1,
               sequences=[dict(input=s, taps=[-1, 1])], outputs_info=[dict(initial=init, taps=[-2, -1])],
               return_updates=False)
    return (out**2).sum()

verify_grad(taps_cost, [rng.normal(size=7), rng.normal(size=2)], rng=rng)

# truncate_gradient: only the last steps are walked back
h_init = pt.scalar("h_init")
acc = scan(lambda v, h: h * 0.5 + v, sequences=[x], outputs_info=[h_init], truncate_gradient=2,
           return_updates=False)
gx, gh = grad(acc[-1], [x, h_init])
gxv, ghv = function([x, h_init], [gx, gh])(np.ones(5, dtype=floatX), 1.0)
assert_allclose(gxv, [0, 0, 0, 0.5, 1])
assert_allclose(ghv, 0)

# Jacobian / Hessian of an expression whose length is known only at run time
v = pt.vector("v")
J = jacobian(v**2 * v.sum(), v)
H = hessian((v**3).sum(), v)
vv = np.array([1.0, 2.0, 3.0], dtype=floatX)
for mode in MODES:
    Jv, Hv = function([v], [J, H], mode=mode)(vv)
    assert_allclose(Jv, np.diag(2 * vv * vv.sum()) + np.outer(vv**2, np.ones(3)), rtol=1e-5)
    assert_allclose(Hv, np.diag(6 * vv), rtol=1e-5)

# --- scan_checkpoints: same values and gradients as scan --------------------------------
seq_c = pt.vector("seq_c")
c0 = pt.scalar("c0")
decay = pt.scalar("decay")
plain = scan(lambda s, c, d: c * d + s, sequences=[seq_c], outputs_info=[c0], non_sequences=[decay],
             return_updates=False)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    ckpt, _ = scan_checkpoints(lambda s, c, d: c * d + s, sequences=[seq_c], outputs_info=[c0],
                               non_sequences=[decay], save_every_N=3)
g_plain = grad(plain[-1], [seq_c, decay])
g_ckpt = grad(ckpt[-1], [seq_c, decay])
sc = rng.normal(size=10).astype(floatX)
for mode in MODES:
    vals = function([seq_c, c0, decay], [plain[-1], ckpt[-1], *g_plain, *g_ckpt], mode=mode)(sc, 1.0, 0.9)
    assert_allclose(vals[0], vals[1], rtol=1e-5)
    assert_allclose(vals[2], vals[4], rtol=1e-5)
    assert_allclose(vals[3], vals[5], rtol=1e-5)

# --- printing: the loop body is shown under "Inner graphs:" --------------------------------
buf = io.StringIO()
pytensor.dprint(hs, file=buf)
text = buf.getvalue()
assert "Inner graphs:" in text and "Scan{rnn, while_loop=False, inplace=none}" in text
assert "Tanh" in text.split("Inner graphs:")[1]

# --- loop rewrites: ScanMerge and ScanInplaceOptimizer --------------------------------------
from pytensor.compile.mode import get_default_mode  # noqa: E402
from pytensor.graph.basic import equal_computations  # noqa: E402
from pytensor.graph.fg import FunctionGraph  # noqa: E402
from pytensor.scan.rewriting import ScanInplaceOptimizer, ScanMerge  # noqa: E402

mx, my = pt.vector("mx"), pt.vector("my")
s1 = scan(lambda s: s + 1, sequences=[mx], n_steps=4, return_updates=False)
s2 = scan(lambda s: s * 2, sequences=[my], n_steps=4, return_updates=False)
fm = function([mx, my], [s1, s2], mode=get_default_mode().including("scan").excluding("scan_pushout_seqs_ops"))
assert sum(isinstance(n.op, Scan) for n in fm.maker.fgraph.apply_nodes) == 1
r1, r2 = fm(np.arange(4).astype(floatX), np.arange(4).astype(floatX))
assert_allclose(r1, np.arange(4) + 1)
assert_allclose(r2, np.arange(4) * 2)

grow = scan(lambda h: h + 1, outputs_info=[pt.zeros(1)], n_steps=3, return_updates=False)
fg_in = FunctionGraph(outputs=[grow], clone=True, copy_inputs=False, copy_orphans=False)
ScanInplaceOptimizer().apply(fg_in)
assert equal_computations([grow], fg_in.outputs)
assert fg_in.outputs[0].owner.inputs[0].owner.op.destroy_map == {0: [1]}
fg_m = FunctionGraph(outputs=[s1, s2], clone=True)
ScanMerge().apply(fg_m)
assert sum(isinstance(n.op, Scan) for n in fg_m.apply_nodes) == 1

# --- gradients next to random draws, integer inputs, disconnected states ---------------------
from pytensor.gradient import DisconnectedInputError  # noqa: E402
from pytensor.graph.fg import MissingInputError  # noqa: E402
from pytensor.tensor.random.utils import RandomStream  # noqa: E402

ru, rx0 = pt.matrix("ru"), pt.vector("rx0")


def noisy(u_t, x_tm1):
    return u_t * 2.0 + x_tm1 + RandomStream(5).uniform(low=-1.0, high=1.0, size=(2,))


rxs, rupd = scan(noisy, sequences=[ru], outputs_info=[rx0])
rgu, rgx0 = pytensor.grad(rxs.sum(), [ru, rx0])
rvals = function([ru, rx0], [rgu, rgx0], updates=rupd)(np.ones((3, 2), dtype=floatX), np.zeros(2, dtype=floatX))
assert_allclose(rvals[0], 2.0 * np.array([[3.0, 3.0], [2.0, 2.0], [1.0, 1.0]]))
assert_allclose(rvals[1], [3.0, 3.0])

ku, kk, kx0, kz0 = pt.vector("ku"), pt.ivector("kk"), pt.vector("kx0"), pt.vector("kz0")
kx, kz = scan(lambda u_t, k_t, x, z: [x * u_t + pt.cast(k_t, floatX), x + 1.0],
              sequences=[ku, kk], outputs_info=[kx0, kz0], return_updates=False)
kcost = (kx + kz).sum()
kfn = function([ku, kk, kx0, kz0], pytensor.grad(kcost, kk), on_unused_input="ignore")
kval = kfn(np.ones(3, dtype=floatX), np.arange(3, dtype="int32"), np.ones(3, dtype=floatX), np.ones(3, dtype=floatX))
assert_allclose(kval, np.zeros(3))
try:
    pytensor.grad(kcost, kz0)  # the z state is never read by the step
    raise AssertionError("expected DisconnectedInputError")
except DisconnectedInputError:
    pass

# --- an update may only read what the step was given ------------------------------------------
cnt, inc = pytensor.shared(np.asarray(0.0, dtype=floatX)), pt.scalar("inc")
try:
    scan(lambda: (pt.zeros(()), {cnt: cnt + inc}), n_steps=3)
    raise AssertionError("expected MissingInputError")
except MissingInputError:
    pass

# --- memory rewrites: only the steps and rows read are kept, last-read states untraced ---------
mx0 = pt.scalar("mx0")
mxs = scan(lambda x: x + 1, outputs_info=[mx0], n_steps=10, return_updates=False)
mf = function([mx0], mxs[-3], mode="FAST_RUN")
[mnode] = [n for n in mf.maker.fgraph.apply_nodes if isinstance(n.op, Scan)]
assert int(mnode.inputs[0].data) == 8  # the last two steps are not run
assert_allclose(mf(0), 8)

mseq = pt.vector("mseq")
mh0 = pt.scalar("mh0")
mh, ma, mb, mc = scan(lambda s, h: (h + s, h * s + 1.0, h * s + 2.0, h * s + 3.0), sequences=[mseq],
                      outputs_info=[mh0, None, None, None], n_steps=20, return_updates=False)
mf = function([mseq, mh0], [ma[-7], mb[-3:-1], mc[-6:], mh[-1]], mode="FAST_RUN")
[mnode] = [n for n in mf.maker.fgraph.apply_nodes if isinstance(n.op, Scan)]
assert [int(v.data) for v in mnode.op.outer_nitsot(mnode.inputs)] == [7, 3, 6]
mv = np.arange(20, dtype=floatX)
mhist = np.concatenate([[0.0], np.cumsum(mv)])[:-1]  # the state each step reads
mres = mf(mv, 0.0)
assert_allclose(mres[0], mhist[-7] * mv[-7] + 1)
assert_allclose(mres[1], mhist[-3:-1] * mv[-3:-1] + 2)
assert_allclose(mres[2], mhist[-6:] * mv[-6:] + 3)
assert_allclose(mres[3], mv.sum())

macc = reduce(lambda v, acc: acc + v, mseq, pt.constant(np.asarray(0.0, dtype=floatX)), return_updates=False)
mf = function([mseq], macc, mode=pytensor.compile.mode.get_mode("FAST_RUN").excluding("inplace"))
[mnode] = [n for n in mf.maker.fgraph.apply_nodes if isinstance(n.op, Scan)]
assert mnode.op.info.n_sit_sot == 0 and mnode.op.info.n_untraced_sit_sot == 1
assert mnode.inputs[2].type.ndim == 0
assert_allclose(mf(mv), mv.sum())

# --- a loop of values the same at every step is the value repeated (nit_sot rows kept) ------
from pytensor.scan.rewriting import scan_push_out_add  # noqa: E402,F401

pW1, pW2, ph = pt.matrix("pW1"), pt.matrix("pW2"), pt.vector("ph")
po = scan(lambda h, A, B: pt.dot(h, A + B), non_sequences=[ph, pW1, pW2], n_steps=5, return_updates=False)
pinfo = ScanInfo(n_seqs=1, mit_mot_in_slices=(), mit_mot_out_slices=(), mit_sot_in_slices=(),
                 sit_sot_in_slices=(), n_nit_sot=1, n_untraced_sit_sot=0, n_non_seqs=0, as_while=False)
ps_in = pt.dscalar("ps_in")
pseq, pn, psize = pt.dvector("pseq"), pt.lscalar("pn"), pt.lscalar("psize")
pstored = Scan(inputs=[ps_in], outputs=[ps_in * 2.0], info=pinfo)(pn, pseq[:pn], psize)
pv, pw = np.array([1.0, 2.0], dtype=floatX), np.array([[1.0, 0.0], [0.5, 1.0]], dtype=floatX)
for mode in MODES:
    pf = function([ph, pW1, pW2], po, mode=mode)
    assert any(isinstance(n.op, Scan) for n in pf.maker.fgraph.apply_nodes) == (mode == "FAST_COMPILE")
    assert_allclose(pf(pv, pw, pw), np.tile(pv @ (2 * pw), (5, 1)), rtol=1e-5)
    pf = function([pseq, pn, psize], pstored, mode=mode)
    assert_allclose(pf(np.arange(10.0), 3, 7), [0.0, 2.0, 4.0, 0.0, 0.0, 0.0, 0.0])

# --- accumulated products of sequence slices: one product when only the last is read --------
pA, pB = pt.matrix("pA"), pt.matrix("pB")
pS = scan(lambda a, b, u: u + pt.dot(a, b), sequences=[pA.dimshuffle(0, 1, "x"), pB.dimshuffle(0, "x", 1)],
          outputs_info=[pt.zeros_like(pA)], return_updates=False)
pa, pb = rng.uniform(size=(5, 5)).astype(floatX), rng.uniform(size=(5, 5)).astype(floatX)
for mode in MODES:
    pf = function([pA, pB], pS.owner.inputs[0][-1], mode=mode)
    assert any(isinstance(n.op, Scan) for n in pf.maker.fgraph.apply_nodes) == (mode == "FAST_COMPILE")
    assert_allclose(pf(pa, pb), pa.T @ pb, rtol=1e-5)

# --- steps read at indices known only at run time: only those steps run -------------------
ru, ri, rj = pt.vector("ru"), pt.iscalar("ri"), pt.iscalar("rj")
r1, r2, r3 = scan(lambda u_t: (u_t + 1.0, u_t + 2.0, u_t + 3.0), ru, return_updates=False)
rf = function([ru, ri, rj], [r1[:2], r2[ri], r3[-rj]], allow_input_downcast=True,
              mode=pytensor.compile.mode.get_mode("FAST_RUN").including("scan").excluding("scan_push_out_seq"))
[rnode] = [n for n in rf.maker.fgraph.toposort() if isinstance(n.op, Scan)]
rsteps = function([ru, ri, rj], rnode.inputs[0], accept_inplace=True, on_unused_input="ignore")
rv = np.arange(20, dtype=floatX)
assert rsteps(rv, 3, 15) == 6 and rsteps(rv, 16, 15) == 17 and rsteps(rv, -5, 3) == 18
rres = rf(rv, -5, 15)
assert_allclose(rres[1], rv[-5] + 2)
assert_allclose(rres[2], rv[-15] + 3)

# --- random draws in the loop: the generator is carried, the caller's one untouched -------
grng = pt.random.type.random_generator_type("grng")
gx0 = pt.scalar("gx0")
gfinal, gxs = scan(lambda r, x: pt.random.normal(x, rng=r).owner.outputs, outputs_info=[grng, gx0],
                   n_steps=5, return_updates=False)
gref, gval, gg = [], 0.5, np.random.default_rng(7)
for _ in range(5):
    gval = gg.normal(gval)
    gref.append(gval)
for mode in MODES:
    gf = function([grng, gx0], gxs, mode=mode)
    gcaller = np.random.default_rng(7)
    gstate = gcaller.bit_generator.state
    assert_allclose(gf(gcaller, 0.5), gref, rtol=1e-5)
    assert gcaller.bit_generator.state == gstate
