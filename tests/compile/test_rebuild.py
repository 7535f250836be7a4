"""rebuild_collect_shared: graph copies with substitutions, and the shared variables / updates they need."""

import sys

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile.io import Out
from lucent.compile.rebuild import rebuild_collect_shared


def test_deep_graph_and_identity():
    x = lt.dscalar("x")
    out = x
    for i in range(sys.getrecursionlimit() + 200):
        out = out + i
    ins, outs, (clone_d, update_d, update_expr, shared_inputs) = rebuild_collect_shared([out], [x])
    assert ins == [x] and outs == [clone_d[out]]
    assert update_d == {} and update_expr == [] and shared_inputs == []


def test_replace_updates_and_defaults():
    x, y = lt.dscalars("x", "y")
    s = lucent.shared(np.float64(2.0), name="s")
    t = lucent.shared(np.float64(0.0), name="t")
    t.default_update = t + s  # reveals s through the update
    out = x * t
    ins, [new_out, wrapped], (clone_d, update_d, update_expr, shared) = rebuild_collect_shared(
        [out, Out(x + 1, borrow=True)], [y], replace={x: y}, updates=None,
    )
    assert ins == [y] and isinstance(wrapped, Out) and wrapped.borrow
    assert lucent.function([y], new_out, givens=[(t, lt.constant(np.float64(3.0)))], mode="FAST_COMPILE")(2.0) == 6.0
    assert shared == [t, s]  # s found while copying t's default update
    assert set(update_d) == {t}
    # no_default_updates drops it; an explicit update replaces it
    _, _, (_, upd, _, _) = rebuild_collect_shared(out, [x], no_default_updates=True)
    assert upd == {}
    _, _, (_, upd, _, _) = rebuild_collect_shared(out, [x], no_default_updates=[t])
    assert upd == {}
    # copy_inputs_over=False clones the roots
    ins, new_out, _ = rebuild_collect_shared(out, [x], copy_inputs_over=False)
    assert ins[0] is not x and ins[0].type == x.type


def test_errors():
    x, y = lt.dscalars("x", "y")
    s = lucent.shared(1.0)
    with pytest.raises(TypeError, match="explicit input"):
        rebuild_collect_shared(x * s, [s])
    with pytest.raises(TypeError, match="SharedVariable"):
        rebuild_collect_shared(x, [x], updates={x: x + 1})
    with pytest.raises(TypeError, match="same type"):
        rebuild_collect_shared(x, [x], updates={s: lt.dvector()})
    with pytest.raises(AssertionError, match="replacement"):
        rebuild_collect_shared(x + y, [], replace=[(x, y), (y, x + 1)])
    with pytest.raises(TypeError, match="Variables or Out"):
        rebuild_collect_shared([3], [x])
