"""scan internals and tensor.optimize (PyTensor's pytensor.scan.utils.ScanArgs, pytensor.compile.rebuild,
pytensor.link.basic.JITLinker, pytensor.scan.views.filter, pytensor.tensor.optimize)."""

import sys
import warnings
from copy import copy

import numpy as np
from numpy.testing import assert_allclose

import pytensor
import pytensor.tensor as pt
from pytensor import function, scan
from pytensor.compile.rebuild import rebuild_collect_shared
from pytensor.compile.sharedvalue import collect_new_shareds, shared
from pytensor.graph.destroyhandler import _contains_cycle
from pytensor.graph.fg import FunctionGraph
from pytensor.link.basic import JITLinker
from pytensor.scan.utils import ScanArgs
from pytensor.scan.views import filter as scan_filter
from pytensor.tensor.optimize import (
    MinimizeOp,
    MinimizeScalarOp,
    minimize,
    minimize_scalar,
    root,
    root_scalar,
)

warnings.simplefilter("ignore")
# The solvers and loops are checked on the reference path (quick to compile).
MODE = "FAST_COMPILE"

# --- rebuild_collect_shared -----------------------------------------------------------
x = pt.dscalar("x")
y = pt.dscalar("y")
deep = x
for i in range(sys.getrecursionlimit() + 100):
    deep = deep + 1
ins, outs, (clone_d, update_d, update_expr, shared_inputs) = rebuild_collect_shared([deep], [x])
assert ins == [x] and outs == [clone_d[deep]] and shared_inputs == []
s = shared(np.float64(2.0), name="s")
s.default_update = s * 2
ins, out, (clone_d, update_d, update_expr, shared_inputs) = rebuild_collect_shared(
    x * s, [y], replace={x: y}
)
assert ins == [y] and shared_inputs == [s] and list(update_d) == [s]
assert function([y], out, givens=[(s, pt.constant(np.float64(3.0)))], mode=MODE)(2.0) == 6.0
try:
    rebuild_collect_shared(x * s, [s])
    raise AssertionError("a shared variable cannot be an explicit input")
except TypeError:
    pass
with collect_new_shareds() as created:
    t = shared(1.0)
assert created == [t]

# --- JITLinker ------------------------------------------------------------------------
f_jit = function([x], x * 2, mode="NUMBA")
assert isinstance(f_jit.maker.linker, JITLinker)
f_py = function([x], x * 2, mode=pytensor.compile.mode.Mode(linker="py"))
assert not isinstance(f_py.maker.linker, JITLinker)

# --- _contains_cycle --------------------------------------------------------------------
v = pt.dvector("v")
fg = FunctionGraph([v], [pt.log(pt.exp(v))])
assert not _contains_cycle(fg, {})
exp_node = fg.outputs[0].owner.inputs[0].owner
assert _contains_cycle(fg, {exp_node: {fg.outputs[0].owner}})

# --- random draws inside a step, ScanArgs -------------------------------------------------
srng = pt.random.RandomStream(seed=3)
seq = pt.dvector("seq")
w = pt.dscalar("w")
s0 = pt.dscalar("s0")


def step(x_t, s_tm1, w_):
    noise = srng.normal(0.0, 1e-12)
    return s_tm1 + x_t * w_, x_t + noise


(acc, ys), updates = scan(
    step, sequences=[seq], outputs_info=[s0, None], non_sequences=[w], strict=True, name="acc"
)
assert len(updates) == 1
f = function([seq, s0, w], [acc, ys], updates=updates, mode=MODE)
acc_val, ys_val = f([1.0, 2.0, 3.0], 0.0, 2.0)
assert_allclose(acc_val, [2.0, 6.0, 12.0])
assert_allclose(ys_val, [1.0, 2.0, 3.0], atol=1e-6)

node = ys.owner
args = ScanArgs.from_node(node)
assert args.info == node.op.info
assert args.inner_inputs == node.op.inner_inputs
assert args.outer_out_nit_sot == [ys]
assert args.outer_in_non_seqs == [w]
assert list(updates.values()) == args.outer_out_shared
x_t = args.inner_in_seqs[0]
info = args.find_among_fields(x_t)
assert (info.name, info.index, info.inner_index, info.agg_index) == ("inner_in_seqs", 0, None, 0)
assert args.get_alt_field(args.outer_out_sit_sot[0], "inner_out") is args.inner_out_sit_sot[0]
maps = node.op.get_oinp_iinp_iout_oout_mappings()
assert maps["outer_out_from_outer_inp"][2] == 0  # the sit_sot buffer -> its output
args_copy = copy(args)
assert args_copy == args
removed = [var for var, _ in args_copy.remove_from_fields(x_t, rm_dependents=True)]
assert ys in removed and args_copy.outer_out_nit_sot == [] and args_copy.outer_out_sit_sot == []
assert args_copy != args

# --- scan.views.filter ------------------------------------------------------------------------
vec = pt.dvector("vec")
evens = scan_filter(lambda e: pt.eq(e % 2, 0), vec)
assert_allclose(function([vec], evens, mode=MODE)(np.arange(10.0)), [0, 2, 4, 6, 8])

# --- tensor.optimize ----------------------------------------------------------------------------
x = pt.dscalar("x")
a = pt.dscalar("a")
c = pt.dscalar("c")
for solver in (minimize_scalar, minimize):
    sol, ok = solver((x - a * c) ** 2, x)
    fn = function([x, a, c], [sol, ok, pt.grad(sol, a)], mode=MODE)
    sol_val, ok_val, g_val = fn(0.0, 2.0, 3.0)
    assert ok_val
    assert_allclose(sol_val, 6.0, rtol=1e-6)
    assert_allclose(g_val, 3.0, rtol=1e-5)
assert isinstance(minimize_scalar((x - a) ** 2, x)[0].owner.op, MinimizeScalarOp)
assert isinstance(minimize((x - a) ** 2, x)[0].owner.op, MinimizeOp)
# the parameters are the x-free inputs
assert minimize((x - a) ** 2 + pt.cast(pt.constant(0), "int64"), x)[0].owner.inputs == [x, a]

r, ok = root_scalar(x + 2 * a * pt.cos(x), x, method="newton", jac=True)
r_val, ok_val, g_val = function([x, a], [r, ok, pt.grad(r, a)], mode=MODE)(0.0, 1.0)
assert ok_val
assert_allclose(r_val, -1.02986653, rtol=1e-7)
assert_allclose(g_val, -2 * np.cos(r_val) / (1 - 2 * np.sin(r_val)), rtol=1e-6)

v1, v2, v3 = pt.dscalar("v1"), pt.dscalar("v2"), pt.dscalar("v3")
(s1, s2), ok = root(pt.stack([v1**2 * v3 - 1, v1 + v2 - 2]), [v1, v2], method="hybr")
s1_val, s2_val, ok_val, g_val = function(
    [v1, v2, v3], [s1, s2, ok, pt.grad(s1, v3)], mode=MODE
)(1.0, 1.0, 4.0)
assert ok_val
assert_allclose([s1_val, s2_val], [0.5, 1.5], rtol=1e-7)
assert_allclose(g_val, -0.5 * 4.0**-1.5, rtol=1e-6)

xv = pt.dvector("xv")
b = pt.dscalar("b")
rosen = (b * (xv[1:] - xv[:-1] ** 2) ** 2 + (1 - xv[:-1]) ** 2).sum()
sol, ok = minimize(rosen, xv, method="L-BFGS-B", optimizer_kwargs={"tol": 1e-14})
sol_val, ok_val = function([xv, b], [sol, ok], mode=MODE)(np.zeros(3), 0.5)
assert ok_val
assert_allclose(sol_val, np.ones(3), atol=1e-6)

print("scan_optimize: ok")
