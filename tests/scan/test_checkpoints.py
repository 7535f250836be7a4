"""``scan_checkpoints``: same values and gradients as ``scan``."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

import lucent.tensor as lt
from lucent.gradient import grad
from lucent.scan import scan, scan_checkpoints
from tests.helpers import run


@pytest.mark.slow  # many Numba compiles (nested loops, gradients of gradients)
def test_checkpoints_match_scan():
    s, c0, d = lt.vector("s"), lt.scalar("c0"), lt.scalar("d")
    plain = scan(lambda v, c, d: c * d + v, sequences=[s], outputs_info=[c0], non_sequences=[d],
                 return_updates=False)
    ckpt = scan_checkpoints(lambda v, c, d: c * d + v, sequences=[s], outputs_info=[c0],
                            non_sequences=[d], save_every_N=4, return_updates=False)
    g_plain = grad(plain[-1], [s, c0, d])
    g_ckpt = grad(ckpt[-1], [s, c0, d])
    sv = np.random.default_rng(3).normal(size=10)
    got = run([plain[-1], ckpt[-1], *g_plain, *g_ckpt], {s: sv, c0: 1.5, d: 0.9})
    assert_allclose(got[0], got[1])
    for a, b in zip(got[2:5], got[5:8]):
        assert_allclose(a, b)


def test_checkpoints_reject_taps():
    s, c0 = lt.vector("s"), lt.vector("c0")
    with pytest.raises(RuntimeError, match="taps"):
        scan_checkpoints(lambda v, a, b: a, sequences=[s], outputs_info=[dict(initial=c0, taps=[-2, -1])])
