"""``map``, ``reduce``, ``foldl``, ``foldr``."""

import numpy as np
from numpy.testing import assert_allclose

import lucent.tensor as lt
from lucent.scan import foldl, foldr, map, reduce
from tests.helpers import run


def test_views_match_python():
    x, y = lt.vector("x"), lt.vector("y")
    z = lt.constant(np.float64(0.0))
    m = map(lambda a, b: a * b, sequences=[x, y], return_updates=False)
    r = reduce(lambda a, acc: acc + a, sequences=[x], outputs_info=[z], return_updates=False)
    fl = foldl(lambda a, acc: acc * 2 + a, sequences=[x], outputs_info=[z], return_updates=False)
    fr = foldr(lambda a, acc: acc * 2 + a, sequences=[x], outputs_info=[z], return_updates=False)
    xv, yv = np.arange(1.0, 5.0), np.arange(5.0, 9.0)
    got = run([m, r, fl, fr], {x: xv, y: yv})
    assert_allclose(got[0], xv * yv)
    assert_allclose(got[1], xv.sum())
    assert_allclose(got[2], ((1 * 2 + 2) * 2 + 3) * 2 + 4)
    assert_allclose(got[3], ((4 * 2 + 3) * 2 + 2) * 2 + 1)


def test_reduce_with_updates_returns_pair():
    import warnings

    x = lt.vector("x")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        last, updates = reduce(lambda a, acc: acc + a, sequences=[x], outputs_info=[lt.constant(np.float64(0))])
    assert updates == {} and last.type.ndim == 0
