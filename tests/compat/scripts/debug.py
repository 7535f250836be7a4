"""Debugging tools: DebugMode, NanGuardMode, profiles, Print, printers, COp, EnumType C helpers."""

import contextlib
import io
import logging

import numpy as np

import pytensor
import pytensor.tensor as pt
from pytensor.compile.debug.debugmode import (
    BadDestroyMap,
    BadViewMap,
    DebugMode,
    StochasticOrder,
    str_diagnostic,
)
from pytensor.compile.debug.nanguardmode import NanGuardMode, contains_inf, contains_nan
from pytensor.compile.debug.profiling import ProfileStats
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.graph.rewriting.basic import node_rewriter
from pytensor.graph.rewriting.db import EquilibriumDB
from pytensor.link.c.op import COp
from pytensor.link.c.type import EnumList
from pytensor.printing import PatternPrinter, PPrinter, Print, default_printer, min_informative_str
from pytensor.tensor.math import add

# --- DebugMode ---------------------------------------------------------------------------
x, y = pt.dvectors("x", "y")
f = pytensor.function([x], (2.0 * x + 7) / 2.0, mode=DebugMode())
np.testing.assert_allclose(f([1.0, 2.0]), [4.5, 5.5])


class AddIntoFirst(Op):
    def make_node(self, a, b):
        return Apply(self, [a, b], [a.type()])

    def perform(self, node, inputs, out):
        a, b = inputs
        out[0][0] = a
        out[0][0] += b


try:
    pytensor.function([x, y], AddIntoFirst()(x, y), mode="DEBUG_MODE")([1.0, 2.0], [3.0, 4.0])
except BadDestroyMap:
    pass
else:
    raise AssertionError("an undeclared in-place write must raise BadDestroyMap")


class AliasedOutputs(Op):
    def make_node(self, a):
        return Apply(self, [a], [a.type(), a.type()])

    def perform(self, node, inputs, out):
        r = inputs[0] * 1
        out[0][0] = r[:-1]
        out[1][0] = r[1:]


first, second = AliasedOutputs()(x)
try:
    pytensor.function([x], first * 2 + second * 2, mode="DEBUG_MODE")([1.0, 2.0, 3.0])
except BadViewMap:
    pass
else:
    raise AssertionError("two used outputs sharing memory must raise BadViewMap")


class Shifted(Op):
    __props__ = ()

    def make_node(self, a, b):
        return Apply(self, [a, b], [a.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] + inputs[1]


flip = [False]


@node_rewriter([add])
def sometimes(fgraph, node):
    flip[0] = not flip[0]
    return [Shifted()(*node.inputs)] if flip[0] else False


db = EquilibriumDB()
db.register("sometimes", sometimes, "all")
try:
    pytensor.function([x, y], add(x, y), mode=DebugMode(optimizer=db.query("+all"), stability_patience=3))
except StochasticOrder:
    pass
else:
    raise AssertionError("a rewrite giving different graphs must raise StochasticOrder")

diagnostic = str_diagnostic(np.array([1.0, 2.0]), np.array([1.0, 2.5]), None, None)
assert "rtol, atol" in diagnostic and "2.5" in diagnostic

# --- NanGuardMode --------------------------------------------------------------------------
g = pytensor.function([x], pt.log(x), mode=NanGuardMode(nan_is_error=True, inf_is_error=True, big_is_error=False))
np.testing.assert_allclose(g([1.0]), [0.0])
try:
    g([-1.0])
except AssertionError:
    pass
else:
    raise AssertionError("NanGuardMode must stop at a NaN")
assert contains_nan(np.array([np.nan])) and contains_inf(np.array([-np.inf, 1.0]))
assert not contains_nan(np.arange(3))

# --- profiles ------------------------------------------------------------------------------
profile = ProfileStats(False, gpu_checks=False)
h = pytensor.function([x], pt.exp(x).sum(), profile=profile, name="profiled")
h(np.ones(5))
h(np.ones(5))
assert h.profile is profile and profile.fct_callcount == 2
text = io.StringIO()
profile.summary(text)
assert text.getvalue()

# --- Print ---------------------------------------------------------------------------------
for mode in ("FAST_COMPILE", "FAST_RUN"):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        p = pytensor.function([x], Print("seen", attrs=("shape",))(x * 2) + 1, mode=mode)
        np.testing.assert_allclose(p([1.0, 2.0]), [3.0, 5.0])
    assert "seen shape = (2,)" in out.getvalue(), out.getvalue()
collected = []
q = pytensor.function([x], Print("c", global_fn=lambda op, v: collected.append(op.message))(x))
q([1.0])
assert collected == ["c"]

# --- printers ------------------------------------------------------------------------------
z = x + y
printer = PPrinter()
printer.assign(z.owner.op, PatternPrinter(("|%(0)s - %(1)s|", -1000)))
printer.assign(lambda pstate, r: True, default_printer)
assert printer(z) == "|x - y|"

A, B, D, E = (pt.matrix(name=n) for n in "ABDE")
C = A + B
C.name = "C"
assert min_informative_str(C + (D + E)) == "A. Add\n B. C\n C. Add\n  D. D\n  E. E"


# --- DebugMode__warn_input_not_reused: an op declared in place that allocates is logged ---------
class DoubleClaimsInPlace(Op):
    __props__ = ()
    destroy_map = {0: [0]}

    def make_node(self, a):
        a = pt.as_tensor_variable(a)
        return Apply(self, [a], [a.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] * 2  # a new array, although destroy_map promises in-place work


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


collect = _Collect()
debug_logger = logging.getLogger("pytensor.compile.debugmode")
debug_logger.addHandler(collect)
try:
    g = pytensor.function(
        [x], DoubleClaimsInPlace()(pt.exp(x)), mode=DebugMode(optimizer=None), accept_inplace=True
    )
    np.testing.assert_allclose(g([0.0, 1.0]), 2 * np.exp([0.0, 1.0]))
    assert any("DoubleClaimsInPlace" in m for m in collect.messages), collect.messages
    collect.messages.clear()
    with pytensor.config.change_flags(DebugMode__warn_input_not_reused=False):
        g([0.0, 1.0])
    assert collect.messages == [], collect.messages
finally:
    debug_logger.removeHandler(collect)

# --- COp with a perform: runs (its C code is not needed) -----------------------------------
class AddOne(COp):
    __props__ = ()

    def make_node(self, a):
        a = pt.as_tensor_variable(a)
        return Apply(self, [a], [a.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] + 1

    def c_code(self, node, name, inputs, outputs, sub):
        raise NotImplementedError("no C implementation")


np.testing.assert_allclose(pytensor.function([x], AddOne()(x))([1.0]), [2.0])

# --- EnumType C helper -----------------------------------------------------------------------
colours = EnumList("RED", ("GREEN", "green"), ctype="int", cname="Colour")
code = colours.c_to_string()
assert "enum_to_string_Colour(int" in code
assert 'case RED' in code and 'case GREEN' in code and "PyExc_ValueError" in code
try:
    EnumList("lowercase")
except AttributeError:
    pass
else:
    raise AssertionError("constant names must be capitals")
