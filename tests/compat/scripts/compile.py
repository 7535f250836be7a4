"""Compiling functions: modes and flags, MonitorMode, Function helpers, pytensor.utils."""

import io
import pickle

import numpy as np
import pytest

import pytensor
import pytensor.tensor as pt
from pytensor import config, function, shared
from pytensor.compile import MonitorMode, optdb
from pytensor.compile.io import In, Out
from pytensor.compile.maker import UnusedInputError
from pytensor.compile.mode import FAST_COMPILE, Mode, get_mode
from pytensor.graph.utils import MissingInputError
from pytensor.link.basic import Container
from pytensor.utils import (
    LOCAL_BITWIDTH,
    PYTHON_INT_BITWIDTH,
    difference,
    flatten,
    from_return_values,
    hash_from_code,
    to_return_values,
    uniq,
)

x = pt.dvector("x")
xv = np.array([1.0, 2.0, 3.0])

# --- modes: PyTensor's names all run -------------------------------------------------
for name in ("CVM", "C", "cvm", "c", "FAST_RUN", "FAST_COMPILE", "NUMBA"):
    f = function([x], pt.exp(x) + 1, mode=name)
    np.testing.assert_allclose(f(xv), np.exp(xv) + 1)
for linker in ("c|py", "cvm_nogc", "cvm", "c", "py", "vm", "numba"):
    f = function([x], x * 2, mode=Mode(linker=linker, optimizer="fast_run"))
    np.testing.assert_allclose(f(xv), xv * 2)
f = function([x], x * 2, mode=Mode(linker="py", optimizer=None))
np.testing.assert_allclose(f(xv), xv * 2)
from pytensor.compile.mode import predefined_linkers, register_linker  # noqa: E402

assert {"py", "c|py", "cvm", "numba"} <= set(predefined_linkers)
register_linker("compat_script_linker", predefined_linkers["py"].__class__())
f = function([x], x * 5, mode=Mode(linker="compat_script_linker", optimizer="fast_compile"))
np.testing.assert_allclose(f(xv), xv * 5)
assert get_mode("FAST_COMPILE") is FAST_COMPILE
assert get_mode(FAST_COMPILE) is FAST_COMPILE
m2 = get_mode("FAST_RUN").excluding("fusion").including("fast_run")
np.testing.assert_allclose(function([x], x + 1, mode=m2)(xv), xv + 1)
with pytest.raises(ValueError):
    get_mode("NO_SUCH_MODE")

# config.mode takes a Mode object as well as a name
with config.change_flags(mode=Mode(linker="py", optimizer="fast_compile")):
    f = function([x], x - 1)
    np.testing.assert_allclose(f(xv), xv - 1)
with config.change_flags(mode="FAST_COMPILE"):
    assert get_mode(None) is FAST_COMPILE

# --- flags that PyTensor programs and test suites set ----------------------------------
with config.change_flags(
    on_shape_error="raise",
    cast_policy="custom",
    cxx="",
    gcc__cxxflags="-O3",
    blas__ldflags="",
    cmodule__warn_no_version=True,
    on_unused_input="ignore",
    linker="py",
):
    assert config.on_shape_error == "raise" and config.cxx == ""
    f = function([x, pt.dscalar("unused")], x + 1)
    np.testing.assert_allclose(f(xv, 0.0), xv + 1)
with pytest.raises(KeyError):
    config.change_flags(no_such_flag_anywhere=1)
assert config.optimizer_excluding == "" and config.optimizer_including == ""
assert config.optimizer_requiring == ""

# --- optdb and MonitorMode --------------------------------------------------------------
assert "merge1" in optdb.__position__ or len(optdb.__position__) > 0
assert optdb.query("+fast_run") is not None

seen = []


def pre(fgraph, i, node, fn):
    seen.append(("pre", i))


def post(fgraph, i, node, fn):
    seen.append(("post", i, np.asarray(fn.outputs[0][0]).copy()))


y = pt.dvector("y")
f = function([x, y], pt.exp(x) * y, mode=MonitorMode(pre_func=pre, post_func=post))
np.testing.assert_allclose(f(xv, xv), np.exp(xv) * xv)
n_nodes = len(f.maker.fgraph.toposort())
assert [s[:2] for s in seen] == [
    step for i in range(n_nodes) for step in (("pre", i), ("post", i))
]
np.testing.assert_allclose(seen[-1][2], np.exp(xv) * xv)

# --- errors: unused, missing, duplicated inputs; givens on an input -------------------
a, b = pt.dscalars("a", "b")
with pytest.raises(UnusedInputError):
    function([a, b], a * 2)
with pytest.raises(MissingInputError):
    function([a], a + b)
with pytest.raises(UnusedInputError):
    function([a, a], a)
with pytest.raises(RuntimeError):
    function([a], a * 2, givens={a: a + 1})
with pytest.raises(TypeError):
    In(a, update=pt.dvector())
f = function([a, b], a + b, givens=[], updates={})
assert f(1.0, 2.0) == 3.0

# rebuild_strict=False lets a given change the type
w = pt.imatrix("w")
u, v = pt.ivectors("u", "v")
f = function([w, v], u * v, givens=[(u, w)], rebuild_strict=False)
assert f(np.ones((3, 5), dtype="int32"), np.arange(5, dtype="int32")).shape == (3, 5)

# --- shared variables: Python ints are int64, updates must keep the type -------------
assert shared(1).type.dtype == ("int64" if PYTHON_INT_BITWIDTH == 64 else "int32")
assert shared(1.0).type.dtype == "float64"
m = shared(np.ones((3, 3)))
with pytest.raises(TypeError):
    function([], [], updates={m: m.sum().dimshuffle("x", "x")})
with pytest.raises(TypeError):
    function([], m, no_default_updates="not a list")

# --- Function: dprint, copy, free, aliasing, shared state ------------------------------
f = function([x], x + 1)
text = f.dprint(file="str")
assert text == pytensor.printing.debugprint(f, file="str") and "x" in text

s = shared(0.0, name="s")
acc = function([a], s, updates={s: s + a})
cp = acc.copy()
cp(5.0)
assert s.get_value() == 5.0  # shared variables are shared with the copy
s2 = shared(0.0, name="s2")
own = acc.copy(swap={s: s2})
own(2.0)
assert s.get_value() == 5.0 and s2.get_value() == 2.0

f = function([x], x * 3)
f.vm.allow_gc = False
f(xv)
f.free()

A = shared(np.zeros((2, 2)) + 0.5)
B = shared(np.zeros((2, 2)) - 0.5)
swap = function([], [], updates=[(A, B), (B, A)])
swap()
assert np.all(A.get_value() == -0.5) and np.all(B.get_value() == 0.5)
assert not np.may_share_memory(A.get_value(borrow=True), B.get_value(borrow=True))

p1, p2 = pt.dvectors("p1", "p2")
g = function([In(p1, mutable=True), In(p2, mutable=True)], [p1 + 1, p2 + 2])
base = np.zeros(3)
r1, r2 = g(base, base)
np.testing.assert_allclose(r1, 1) and np.testing.assert_allclose(r2, 2)

st = pt.dscalar("st")
inc = function([a, In(st, update=st + a, value=Container(st, storage=[np.array(10.0)]))], [])
state = inc.maker.inputs[1].value  # the Container given as value
dec = function([a, In(st, update=st - a, value=state, implicit=False)], [])
inc(1.0)
dec(3.0)
assert state.value == 8.0
dec(1.0, 0.0)  # an explicit value for the state replaces it for this call
assert state.value == -1.0

f = function([x], Out(x[0:2], borrow=True))
out = f(xv)
assert not np.may_share_memory(out, xv)  # a borrowed output never hands back the argument

g = pickle.loads(pickle.dumps(function([a], a * 2, name="twice")))
assert g(2.0) == 4.0 and g.name == "twice"

# --- pytensor.utils ---------------------------------------------------------------------
assert LOCAL_BITWIDTH in (32, 64) and PYTHON_INT_BITWIDTH in (32, 64)
h = hash_from_code("print(1)")
assert h.startswith("m") and h == hash_from_code(b"print(1)") and len(h) == 65
assert uniq([3, 1, 3, 2, 1]) == [3, 1, 2]
assert difference([1, 2, 3, 4], [2, 4]) == [1, 3]
assert flatten([1, (2, [3, 4]), [[5]]]) == [1, 2, 3, 4, 5]
assert to_return_values([7]) == 7 and to_return_values([1, 2]) == [1, 2]
assert from_return_values(7) == [7] and from_return_values((1, 2)) == (1, 2)

buf = io.StringIO()
pytensor.printing.debugprint(function([x], x + 1), file=buf)
assert "x" in buf.getvalue()
