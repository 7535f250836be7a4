"""``ScanMerge``: loops over the same steps become one loop, on both execution paths."""

import numpy as np
from numpy.testing import assert_allclose

import lucent
import lucent.tensor as lt
from lucent.compile.mode import Mode
from lucent.scan import scan
from lucent.scan.op import Scan
from lucent.scan.utils import until

#: the fast_run rewrites with each linker: the reference path and the Numba path. The
#: map-like loops here would otherwise be pushed out of their loops whole.
MODES = [
    Mode(linker="py", optimizer="fast_run").excluding("scan_pushout"),
    Mode(linker="numba", optimizer="fast_run").excluding("scan_pushout"),
]


def _scans(f):
    return [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Scan)]


def test_independent_loops_over_the_same_steps_are_merged():
    x, y = lt.vector("x"), lt.vector("y")
    sx = scan(lambda s: s + 1, sequences=[x], n_steps=4, return_updates=False, name="X")
    acc = scan(lambda s, h: h * 0.5 + s, sequences=[y], outputs_info=[lt.zeros(())], n_steps=4,
               return_updates=False, name="Y")
    other = scan(lambda s: s * 3, sequences=[y], n_steps=3, return_updates=False)  # 3 steps: stays
    xv, yv = np.arange(4.0), np.arange(10.0, 14.0)
    h, ref_acc = 0.0, []
    for v in yv:
        h = h * 0.5 + v
        ref_acc.append(h)
    for mode in MODES:
        f = lucent.function([x, y], [sx, acc, other], mode=mode)
        scans = _scans(f)
        assert len(scans) == 2
        merged = [n for n in scans if "&" in (n.op.name or "")]
        assert len(merged) == 1 and merged[0].op.name == "X&Y"
        got = f(xv, yv)
        assert_allclose(got[0], xv + 1)
        assert_allclose(got[1], ref_acc)
        assert_allclose(got[2], yv[:3] * 3)


def test_dependent_loops_and_other_truncation_are_not_merged():
    x = lt.vector("x")
    sx = scan(lambda s: s + 1, sequences=[x], n_steps=4, return_updates=False)
    sz = scan(lambda s: s * 2, sequences=[sx], n_steps=4, return_updates=False)  # reads sx
    st = scan(lambda s: s - 1, sequences=[x], n_steps=4, truncate_gradient=1, return_updates=False)
    f = lucent.function([x], [sz, st], mode=MODES[1])
    assert len(_scans(f)) == 3
    got = f(np.arange(4.0))
    assert_allclose(got[0], (np.arange(4.0) + 1) * 2)
    assert_allclose(got[1], np.arange(4.0) - 1)


def test_while_loops_with_the_same_condition_are_merged():
    a = lt.scalar("a")
    halve = scan(lambda v, a: (v * 0.5, until(a < 0)), outputs_info=[a], non_sequences=[a],
                 n_steps=5, return_updates=False)
    grow = scan(lambda v, a: (v + 1, until(a < 0)), outputs_info=[a], non_sequences=[a],
                n_steps=5, return_updates=False)
    for mode in MODES:
        f = lucent.function([a], [halve, grow], mode=mode)
        assert len(_scans(f)) == 1
        h, g = f(8.0)
        assert_allclose(h, [4, 2, 1, 0.5, 0.25])
        assert_allclose(g, [9, 10, 11, 12, 13])
        h, g = f(-8.0)  # stops after the first step
        assert_allclose(h, [-4])
        assert_allclose(g, [-7])
