"""The array-level ops the sparse rewrites produce, against SciPy, on both paths."""

import numpy as np
import pytest
import scipy.sparse as sp

import lucent.tensor as lt
from lucent.sparse import basic as sb
from lucent.sparse import unpacked as su
from tests.helpers import run
from tests.sparse.test_basic import sample


def test_array_ops_match_scipy():
    a = sample("csr", shape=(3, 4))
    c = a.tocsc()
    ad = a.toarray()
    rng = np.random.default_rng(1)
    b, m, v = rng.normal(size=(4, 2)), rng.normal(size=(3, 4)), rng.normal(size=4)
    val, ind, ptr, cval, cind, cptr = (lt.vector(n, dtype=d) for n, d in
                                       [("val", "float64"), ("ind", "int32"), ("ptr", "int32"),
                                        ("cval", "float64"), ("cind", "int32"), ("cptr", "int32")])
    B, M, V, Z = lt.dmatrix("B"), lt.dmatrix("M"), lt.dvector("V"), lt.dmatrix("Z")
    nrows = lt.scalar("nrows", dtype="int32")
    outs = [
        su.sd_csr(val, ind, ptr, B), su.sd_csc(cval, cind, cptr, nrows, B),
        su.mul_s_d_csr(val, ind, ptr, M), su.mul_s_d_csc(cval, cind, cptr, M),
        su.mul_s_v_csr(val, ind, ptr, V), su.structured_add_s_v_csr(val, ind, ptr, V),
        *su.sampling_dot_csr(M, lt.dot(M.T, M), val, ind, ptr, nrows),
        su.usmm_csc_dense(lt.constant(np.full((1, 1), 2.0)), cval, cind, cptr, nrows, B, Z),
    ]
    givens = {val: a.data, ind: a.indices, ptr: a.indptr, cval: c.data, cind: c.indices,
              cptr: c.indptr, nrows: np.int32(3), B: b, M: m, V: v, Z: np.ones((3, 2))}
    got = run(outs, givens)
    np.testing.assert_allclose(got[0], ad @ b)
    np.testing.assert_allclose(got[1], ad @ b)
    np.testing.assert_allclose(sp.csr_matrix((got[2], a.indices, a.indptr), shape=(3, 4)).toarray(), ad * m)
    np.testing.assert_allclose(sp.csc_matrix((got[3], c.indices, c.indptr), shape=(3, 4)).toarray(), ad * m)
    np.testing.assert_allclose(sp.csr_matrix((got[4], a.indices, a.indptr), shape=(3, 4)).toarray(), ad * v)
    added = sp.csr_matrix((got[5], a.indices, a.indptr), shape=(3, 4)).toarray()
    np.testing.assert_allclose(added, np.where(ad != 0, ad + v, 0))
    sampled = sp.csr_matrix((got[6], got[7], got[8]), shape=(3, 4)).toarray()
    np.testing.assert_allclose(sampled, ad * (m @ (m.T @ m).T))
    np.testing.assert_allclose(got[9], 2 * ad @ b + 1)


def test_sampling_dot_csr_values():
    p = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0]]))
    x, y = np.arange(6.0).reshape(2, 3), np.arange(6.0, 12.0).reshape(2, 3)
    data, ind, ptr = su.sampling_dot_csr(x, y, p.data, p.indices, p.indptr, 2)
    got = sp.csr_matrix((data.eval(), ind.eval(), ptr.eval()), shape=(2, 2)).toarray()
    np.testing.assert_allclose(got, p.toarray() * (x @ y.T))


def test_csm_grad_c_is_csm_grad():
    a = sample("csr", shape=(3, 4))
    g = sample("csr", shape=(3, 4)) * 3
    args = [a.data, a.indices, a.indptr, np.array(a.shape, "int32"), g.data, g.indices, g.indptr,
            np.array(g.shape, "int32")]
    np.testing.assert_allclose(su.csm_grad_c(*args).eval(), sb.csm_grad()(*args).eval())


def test_inplace_usmm_declares_what_it_destroys():
    assert su.usmm_csc_dense_inplace.destroy_map == {0: [6]}
    assert str(su.usmm_csc_dense) == "UsmmCscDense{no_inplace}"
    with pytest.raises(NotImplementedError, match="float32/float64"):
        su.usmm_csc_dense(lt.constant(np.ones((1, 1), "int64")), lt.lvector(), lt.ivector(),
                          lt.ivector(), lt.iscalar(), lt.lmatrix(), lt.lmatrix())
