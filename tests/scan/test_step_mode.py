"""A scan given its own step mode runs its body with that mode, on both paths."""

import warnings

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile.monitormode import MonitorMode
from lucent.scan import scan


@pytest.mark.slow
def test_monitor_mode_sees_every_inner_node_on_the_numba_path():
    seen = []

    def post(fgraph, i, node, fn):
        seen.extend(np.asarray(o[0]).copy() for o in fn.outputs)

    k = lt.iscalar("k")
    a = lt.dvector("a")
    res = scan(
        lambda p, a_: p * a_, outputs_info=lt.ones_like(a), non_sequences=a, n_steps=k,
        mode=MonitorMode(post_func=post), return_updates=False,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the loop runs through the perform fallback
        f = lucent.function([a, k], res[-1], mode="FAST_RUN")
        out = f(np.array([2.0, 3.0]), 3)
    np.testing.assert_allclose(out, [8.0, 27.0])
    # one Mul per step, seen by the monitor
    assert len(seen) == 3
    np.testing.assert_allclose(seen[-1], [8.0, 27.0])
