"""``schur``, ``qz`` and ``ordqz`` against SciPy on both paths (one compiled function per dtype)."""

import numpy as np
import pytest
import scipy.linalg

import lucent.tensor as lt
from lucent.tensor.linalg import QZ, Schur, ordqz, qz, schur
from tests.helpers import run

RNG = np.random.default_rng(31)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_schur_and_qz_match_scipy(dtype):
    tol = 1e-8 if dtype == "float64" else 2e-3
    x, y = lt.matrix("x", dtype=dtype), lt.matrix("y", dtype=dtype)
    a = RNG.normal(size=(5, 5)).astype(dtype)
    b = RNG.normal(size=(5, 5)).astype(dtype)
    outs = [
        *schur(x),
        *schur(x, output="complex"),
        *schur(x, sort="lhp"),
        *qz(x, y),
        *ordqz(x, y, sort="ouc"),
        *qz(x, y, output="complex", sort="iuc", return_eigenvalues=True),
    ]
    got = run(outs, {x: a, y: b})
    expected = [
        *scipy.linalg.schur(a),
        *scipy.linalg.schur(a, output="complex"),
        *scipy.linalg.schur(a, sort="lhp")[:2],
        *scipy.linalg.qz(a, b),
        *scipy.linalg.ordqz(a, b, sort="ouc"),
        *scipy.linalg.ordqz(a, b, sort="iuc", output="complex"),
    ]
    for out, g, e in zip(outs, got, expected):
        assert g.dtype == out.type.dtype
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)
    T, Z = got[:2]
    np.testing.assert_allclose(Z @ T @ Z.T, a, rtol=tol, atol=tol)


def test_batched_empty_nonfinite_and_types():
    x = lt.tensor("x", dtype="float64", shape=(None, None, None))
    y = lt.tensor("y", dtype="float64", shape=(None, None, None))
    a = RNG.normal(size=(2, 4, 4))
    b = RNG.normal(size=(2, 4, 4))
    a_bad = a.copy()
    a_bad[1, 0, 0] = np.nan
    T, Z = schur(x, sort="rhp")
    AA, BB, alpha, beta, Q, QZZ = ordqz(x, y, sort="lhp")
    t, z, aa, bb, al, be, q, zz = run([T, Z, AA, BB, alpha, beta, Q, QZZ], {x: a_bad, y: b})
    ref_t, ref_z, _ = scipy.linalg.schur(a[0], sort="rhp")
    np.testing.assert_allclose(t[0], ref_t, atol=1e-10)
    np.testing.assert_allclose(z[0], ref_z, atol=1e-10)
    assert np.isnan(t[1]).all() and np.isnan(z[1]).all() and np.isnan(al[1]).all()
    for g, e in zip((aa, bb, al, be, q, zz), scipy.linalg.ordqz(a[0], b[0], sort="lhp")):
        np.testing.assert_allclose(g[0], e, atol=1e-10)
    assert alpha.type.dtype == "complex128" and beta.type.dtype == "float64"

    m = lt.dmatrix("m")
    t0, z0 = run(list(schur(m)), {m: np.zeros((0, 0))})
    assert t0.shape == (0, 0) and z0.shape == (0, 0) and t0.dtype == "float64"


def test_schur_qz_errors_and_props():
    with pytest.raises(ValueError, match="output"):
        schur(lt.dmatrix(), output="imaginary")
    with pytest.raises(ValueError, match="sort"):
        Schur(sort="up")
    with pytest.raises(ValueError, match="sort"):
        qz(lt.dmatrix(), lt.dmatrix(), sort="down")
    with pytest.raises(ValueError, match="square"):
        schur(lt.tensor(dtype="float64", shape=(3, 4)))
    assert Schur().inplace_on_inputs([0]).destroy_map == {0: [0]}
    assert QZ().inplace_on_inputs([1]).destroy_map == {1: [1]}
    t, z = schur(lt.tensor(dtype="float32", shape=(3, 3)), output="complex")
    assert t.type.dtype == "complex64" and t.type.shape == (3, 3)


@pytest.mark.not_debugmode(reason="checks the caller's buffer holds the result; DebugMode runs every node on copies")
def test_in_place_schur_and_qz_leave_their_factor_in_the_input():
    """With a mutable input, the in-place rewrite lets Schur/QZ write T (AA, BB) into it, as LAPACK does."""
    import lucent
    from lucent import In
    from tests.helpers import current_mode

    mode = lucent.compile.mode.get_mode(current_mode()).including("inplace")
    a_val, b_val = RNG.normal(size=(2, 4, 4))
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    t, _ = schur(x)
    f = lucent.function([In(x, mutable=True)], t, mode=mode)
    assert f.maker.fgraph.outputs[0].owner.op.destroy_map == {0: [0]}
    buf = np.asfortranarray(a_val)
    f(buf)
    np.testing.assert_allclose(buf, scipy.linalg.schur(a_val)[0], atol=1e-12)
    aa, bb, _, _ = qz(x, y)
    g = lucent.function([In(x, mutable=True), In(y, mutable=True)], [aa, bb], mode=mode)
    bufs = np.asfortranarray(a_val), np.asfortranarray(b_val)
    g(*bufs)
    for got, ref in zip(bufs, scipy.linalg.qz(a_val, b_val)):
        np.testing.assert_allclose(got, ref, atol=1e-12)
    # A protected input is never offered.
    h = lucent.function([x], t, mode=mode)
    assert not h.maker.fgraph.outputs[0].owner.op.destroy_map
