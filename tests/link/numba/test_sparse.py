"""Sparse matrices on the Numba path: the struct of their arrays in, native kernels, SciPy out.

Also what the tools built on top show of them: DebugMode's view checks, the
profiler's bytes and density, SharedView's row and GraphView's labels.
"""

import warnings

import numba
import numpy as np
import pytest
import scipy.sparse as sp

import lucent
import lucent.tensor as lt
from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.link.numba.dispatch.sparse_types import CSMatrixType, as_kernel_input, make_csc, make_csr
from lucent.link.numba.linker import NumbaLinkerWarning
from lucent.sparse import basic as sb
from lucent.sparse import math as sm


def _csr(shape=(5, 4), seed=0):
    return sp.random(*shape, density=0.5, format="csr", random_state=seed)


def test_box_unbox_and_build_without_copies():
    a = _csr()
    assert numba.typeof(a) == CSMatrixType("csr", "float64", "int32")

    @numba.njit
    def twice_transposed(x):
        return make_csc(x.data * 2.0, x.indices, x.indptr, (x.shape[1], x.shape[0])), x.shape

    out, shape = twice_transposed(a)
    assert isinstance(out, sp.csc_matrix) and shape == a.shape
    np.testing.assert_allclose(out.toarray(), 2 * a.toarray().T)
    assert np.shares_memory(out.indices, a.indices)  # boxed around the same arrays

    @numba.njit
    def constant_sum():
        return a.data.sum()

    assert np.isclose(constant_sum(), a.data.sum())

    @numba.njit
    def build(d, i, p):
        return make_csr(d, i, p, (2, 2))

    m = build(np.array([1.0, 2.0]), np.array([0, 1], np.int32), np.array([0, 1, 2], np.int32))
    np.testing.assert_allclose(m.toarray(), np.diag([1.0, 2.0]))


def test_kernel_inputs_are_converted_only_when_needed():
    a = _csr()
    assert as_kernel_input(a, "csr", np.dtype("float64")) is a
    wide = sp.csr_matrix((a.data, a.indices.astype(np.int64), a.indptr.astype(np.int64)), shape=a.shape)
    narrow = as_kernel_input(wide, "csr", np.dtype("float64"))
    assert narrow.indices.dtype == np.int32 and np.array_equal(narrow.toarray(), a.toarray())
    other = as_kernel_input(a, "csc", np.dtype("float32"))
    assert other.format == "csc" and other.dtype == np.float32


def test_a_graph_of_sparse_ops_runs_natively_and_matches_the_reference():
    x, y = sb.csr_matrix("x", dtype="float64"), sb.csc_matrix("y", dtype="float64")
    d, v = lt.dmatrix("d"), lt.dvector("v")
    outs = [
        sb.dense_from_sparse(x), sb.csc_from_dense(d), x.T, -x, x + y, x * y, x + d, x * d,
        sm.structured_dot(x, d.T), sm.dot(d, y.T), sm.dot(x, v), sm.sp_sum(y, 0), sm.sp_sum(x),
        sm.structured_sigmoid(x), sm.mul_s_v(x, v), sb.col_scale(y, v), sb.row_scale(x, d[:, 0]),
        sb.hstack([x, y], format="csr"), sb.vstack([x, y], format="csc"), sm.dot(x, y.T),
        sm.sampling_dot(d, d, sb.csr_from_dense(lt.dot(d, d.T))), sb.cast(x, "float32"),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fast = lucent.function([x, y, d, v], outs, mode="FAST_RUN")
    assert fast.maker.linker.python_fallback_reason is None and not fast.maker.linker.fallback_ops
    ref = lucent.function([x, y, d, v], outs, mode="FAST_COMPILE")
    a = _csr()
    args = (a, _csr(seed=1).tocsc(), np.abs(np.random.default_rng(0).normal(size=(5, 4))), np.arange(4.0))
    for k, (got, want) in enumerate(zip(fast(*args), ref(*args))):
        if sp.issparse(want):
            assert sp.issparse(got) and got.format == want.format and got.dtype == want.dtype, k
            got, want = got.toarray(), want.toarray()
        np.testing.assert_allclose(got, want, err_msg=f"output {k}", rtol=1e-6)


def test_errors_inside_kernels_name_the_problem():
    x = sb.csr_matrix("x")
    d = lt.dmatrix("d")
    f = lucent.function([x, d], sm.structured_dot(x, d), mode="FAST_RUN")
    with pytest.raises(ValueError, match="do not align"):
        f(_csr(), np.ones((3, 2)))


def test_bsr_graphs_run_on_the_python_linker():
    b = sb.bsr_matrix("b")
    with pytest.warns(NumbaLinkerWarning, match="BSR"):
        lucent.function([b], sb.dense_from_sparse(b), mode="FAST_RUN")


class _SharesData(Op):
    """Deliberately wrong: returns a matrix viewing its input's data without a view_map."""

    __props__ = ()

    def make_node(self, x):
        x = sb.as_sparse_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        output_storage[0][0] = sp.csr_matrix((x.data, x.indices.copy(), x.indptr.copy()), shape=x.shape)


def test_debugmode_compares_sparse_values_and_catches_undeclared_views():
    from lucent.debugmode import BadViewMap, DebugMode

    x = sb.csr_matrix("x")
    f = lucent.function([x], [sm.structured_exp(x), x.T, sm.mul_s_d(x, lt.constant(2.0))], mode=DebugMode())
    a = _csr()
    got = f(a)
    np.testing.assert_allclose(got[1].toarray(), a.toarray().T)
    bad = lucent.function([x], _SharesData()(x), mode=DebugMode())
    with pytest.raises(BadViewMap, match="shares memory with input 0"):
        bad(a)


def test_profile_counts_sparse_bytes_and_density():
    x = sb.csr_matrix("x")
    f = lucent.function([x], sm.structured_exp(x), mode="FAST_COMPILE", profile=True)
    a = _csr((10, 10))
    f(a)
    rows = f.profile.as_rows()
    csm_row = next(r for r in rows if isinstance(r["node"].op, sb.CSM))
    assert csm_row["output_bytes"][0] == a.data.nbytes + a.indices.nbytes + a.indptr.nbytes
    assert f"nnz {a.nnz} of 100 (density {a.nnz:.3g}%)" in csm_row["note"]


def test_shared_view_row_and_graph_labels():
    from lucent.graph.dot import type_text
    from lucent.widgets.shared_view import _summarize_sparse

    a = _csr((10, 10))
    row = _summarize_sparse(a)
    assert row["format"] == "csr" and row["nnz"] == a.nnz and row["shape"] == [10, 10]
    assert row["density"] == pytest.approx(a.nnz) and "csr" in row["dtype"]
    assert row["max"] == pytest.approx(a.data.max())
    assert type_text(sb.csc_matrix("y").type) == "csc float64 (?, ?)"
