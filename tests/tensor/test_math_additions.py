"""median, vecdot/matvec/vecmat, dense_dot, ProdWithoutZeros and basic.switch against NumPy, both paths."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.gradient import NullTypeGradError
from lucent.tensor import basic as tb
from lucent.tensor import math as tm
from tests.helpers import run


def test_against_numpy():
    m, v, b = lt.dmatrix("m"), lt.dvector("v"), lt.dtensor3("b")
    mv = np.array([[1.0, 5.0, 2.0], [4.0, 0.0, 0.5], [7.0, 8.0, 9.0], [0.0, -1.0, 2.0]])
    vv = np.array([1.0, 2.0, 3.0])
    bv = np.arange(24.0).reshape(2, 4, 3)
    outs = [
        tm.median(m), tm.median(m, axis=0), tm.median(m, axis=1), tm.median(b, axis=(1, 2)),
        tm.vecdot(m, v), tm.matvec(b, v), tm.vecmat(v, b.mT), tm.dense_dot(m, v),
        tm.vecdot(m, v, dtype="float32"),
        tm.ProdWithoutZeros(axis=1)(m), tm.ProdWithoutZeros(axis=0)(m), tm.ProdWithoutZeros()(m),
        tb.switch(m > 2, m, 0.0),
    ]
    res = run(outs, {m: mv, v: vv, b: bv})
    nz = np.where(mv == 0, 1.0, mv)
    expected = [
        np.median(mv), np.median(mv, axis=0), np.median(mv, axis=1), np.median(bv, axis=(1, 2)),
        mv @ vv, bv @ vv, np.einsum("k,bnk->bn", vv, bv), mv @ vv,
        (mv @ vv).astype("float32"),
        nz.prod(axis=1), nz.prod(axis=0), nz.prod(),
        np.where(mv > 2, mv, 0.0),
    ]
    for got, want in zip(res, expected):
        np.testing.assert_allclose(got, want)
    assert res[8].dtype == np.float32


def test_identities_and_errors():
    assert tb.switch is tm.switch is lt.switch
    assert tm.isnan_ is tm.isnan
    x = lt.matrix(dtype="int8")
    assert tm.ProdWithoutZeros(axis=0)(x).dtype == "int64"
    d = lt.dmatrix()
    with pytest.raises(NullTypeGradError):
        lucent.grad(tm.ProdWithoutZeros(axis=0)(d).sum(), d)
    with pytest.raises(ValueError, match="matvec"):
        tm.matvec(lt.dvector(), lt.dvector())
    with pytest.raises(ValueError, match="vecdot"):
        tm.vecdot(lt.dscalar(), lt.dvector())
