"""Sparse rewrites: Remove0 works in place when its input may be overwritten."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import lucent
from lucent.link.numba.linker import NumbaLinkerWarning
from lucent.sparse import basic as sb


def _with_zero():
    return sp.csr_matrix((np.array([0.0, 1.0]), np.array([0, 1]), np.array([0, 2])), shape=(1, 2))


@pytest.mark.parametrize("mutable", [True, False])
def test_inplace_remove0_only_on_mutable_inputs(mutable):
    x = sb.csr_matrix("x")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaLinkerWarning)
        f = lucent.function([lucent.In(x, borrow=True, mutable=mutable)], sb.Remove0()(x), mode="FAST_RUN")
    ops = [n.op for n in f.maker.fgraph.toposort()]
    assert ops == [sb.Remove0(inplace=mutable)]
    m = _with_zero()
    assert f(m).nnz == 1
    assert m.nnz == (1 if mutable else 2)


def test_no_inplace_on_fast_compile():
    x = sb.csr_matrix("x")
    f = lucent.function([lucent.In(x, mutable=True)], sb.remove0(x), mode="FAST_COMPILE")
    assert not any(getattr(n.op, "inplace", False) for n in f.maker.fgraph.toposort())


def _ops(f):
    return [type(n.op) for n in f.maker.fgraph.toposort()]


def test_csm_properties_of_a_built_matrix_are_its_inputs():
    from lucent.sparse.rewriting import local_csm_properties_csm  # noqa: F401  (registered)
    import lucent.tensor as lt

    data, ind, ptr = lt.dvector("data"), lt.ivector("ind"), lt.ivector("ptr")
    built = sb.CSR(data, ind, ptr, np.array([2, 2], dtype="int32"))
    f = lucent.function([data, ind, ptr], sb.csm_properties(built)[0] * 2)
    assert sb.CSMProperties not in _ops(f) and sb.CSM not in _ops(f)
    np.testing.assert_allclose(f(np.array([1.0, 2.0]), np.array([0, 1], "int32"), np.array([0, 1, 2], "int32")), [2, 4])


def test_dense_sparse_dense_round_trip_is_removed():
    import lucent.tensor as lt

    m = lt.dmatrix("m")
    for convert in (sb.csr_from_dense, sb.csc_from_dense):
        f = lucent.function([m], sb.dense_from_sparse(convert(m)) + 1)
        assert sb.SparseFromDense not in _ops(f) and sb.DenseFromSparse not in _ops(f)


def test_array_level_rewrites_when_applied():
    import lucent.tensor as lt
    from lucent.graph.fg import FunctionGraph
    from lucent.graph.rewriting.basic import in2out
    from lucent.sparse import math as sm
    from lucent.sparse import rewriting as sr
    from lucent.sparse import unpacked as su

    x, xc, d, v = sb.csr_matrix("x"), sb.csc_matrix("xc"), lt.dmatrix("d"), lt.dvector("v")
    outs = [sm.structured_dot(xc, d), sm.structured_dot(x, d), sm.mul_s_d(x, d), sm.mul_s_v(x, v),
            sm.structured_add_s_v(x, v)]
    fg = FunctionGraph([x, xc, d, v], outs, clone=True)
    rewriter = in2out(sr.local_structured_dot, sr.local_mul_s_d, sr.local_mul_s_v, sr.local_structured_add_s_v)
    rewriter.rewrite(fg)
    ops = {type(n.op) for n in fg.apply_nodes}
    assert {su.StructuredDotCSC, su.StructuredDotCSR, su.MulSDCSR, su.MulSVCSR, su.StructuredAddSVCSR} <= ops
    a = sp.random(3, 3, density=0.6, format="csr", random_state=0)
    dv, vv = np.arange(9.0).reshape(3, 3), np.arange(3.0)
    got = lucent.function(fg.inputs, fg.outputs, mode="FAST_COMPILE")(a, a.tocsc(), dv, vv)
    ad = a.toarray()
    np.testing.assert_allclose(got[0], ad @ dv)
    np.testing.assert_allclose(got[1], ad @ dv)
    np.testing.assert_allclose(got[2].toarray(), ad * dv)
    np.testing.assert_allclose(got[3].toarray(), ad * vv)
    np.testing.assert_allclose(got[4].toarray(), np.where(ad != 0, ad + vv, 0))


def test_usmm_needs_a_blas_library_as_in_pytensor():
    import lucent.tensor as lt
    from lucent.sparse import math as sm

    x, y, z, a = sb.csr_matrix("x"), lt.dmatrix("y"), lt.dmatrix("z"), lt.dscalar("a")
    f = lucent.function([x, y, z, a], z - a * sm.dot(x, y))
    assert sm.Usmm not in _ops(f)
