"""Sparse matrices: types, variables, shared values and the basic sparse ops."""

import warnings

import numpy as np
import scipy.sparse as sp

import pytensor
import pytensor.sparse as sparse
import pytensor.tensor as pt
from pytensor.gradient import grad
from pytensor.sparse import (
    CSM,
    CSMProperties,
    DenseFromSparse,
    SparseFromDense,
    SparseTensorType,
    as_sparse_or_tensor_variable,
    as_sparse_variable,
    csc_from_dense,
    csm_properties,
    csr_from_dense,
    dense_from_sparse,
    structured_dot,
    transpose,
)
from pytensor.sparse.sharedvar import SparseTensorSharedVariable
from pytensor.sparse.variable import SparseConstant, SparseVariable

warnings.simplefilter("ignore")

dense = np.array([[1.5, 0.0, 0.0, 2.0], [0.0, 0.0, -3.0, 0.0], [0.0, 4.0, 0.0, 0.0]])
a_csr, a_csc = sp.csr_matrix(dense), sp.csc_matrix(dense)

# --- the type ---------------------------------------------------------------
t = SparseTensorType("csr", "float64")
assert t.format == "csr" and t.dtype == "float64" and t.shape == (None, None)
assert repr(t) == "Sparse(float64, (None, None), csr)"
assert t == SparseTensorType("csr", "float64") and t != SparseTensorType("csc", "float64")
assert SparseTensorType("csc", "float32", shape=(3, None)).shape == (3, None)
assert t.filter(a_csr) is a_csr
assert t.filter(a_csc).format == "csr"
try:
    t.filter(a_csc, strict=True)
    raise AssertionError("strict filter accepted a csc matrix")
except TypeError:
    pass
f32 = SparseTensorType("csr", "float32")
assert f32.filter(a_csr, allow_downcast=True).dtype == np.float32
try:
    f32.filter(a_csr)
    raise AssertionError("filter downcast float64 to float32")
except TypeError:
    pass
assert t.values_eq_approx(a_csr, a_csr.copy())
assert not t.values_eq_approx(a_csr, a_csr * 2)
assert SparseTensorType.may_share_memory(a_csr, a_csr.data)
assert not SparseTensorType.may_share_memory(a_csr, a_csr.copy())
info = t.get_shape_info(a_csr)
assert info == ((3, 4), 4, 4, 4, 4)
assert t.get_size(info) == 4 * 8 + (4 + 4) * 4

# --- variables and constants --------------------------------------------------
x = sparse.csr_matrix("x", dtype="float64")
y = sparse.csc_matrix("y", dtype="float64")
assert isinstance(x, SparseVariable) and x.format == "csr" and y.format == "csc"
assert str(x) == "SparseVariable{csr,float64}"
assert x.T.format == "csc" and isinstance(x.toarray().type, pt.TensorType)
c = as_sparse_variable(a_csc)
assert isinstance(c, SparseConstant) and c.format == "csc"
assert as_sparse_variable(x) is x
assert isinstance(as_sparse_or_tensor_variable(a_csr), SparseVariable)
assert not isinstance(as_sparse_or_tensor_variable(dense), SparseVariable)
try:
    as_sparse_variable(pt.dmatrix())
    raise AssertionError("a dense variable was taken as sparse")
except TypeError:
    pass

# --- ops on the default mode and on the Python path ------------------------------
d = pt.dmatrix("d")
data, indices, indptr, shape = csm_properties(x)
assert isinstance(data.owner.op, CSMProperties)
rebuilt = CSM("csr")(data * 2, indices, indptr, shape)
outputs = [
    x.shape,
    x.T,
    transpose(x),
    x.toarray(),
    dense_from_sparse(y),
    csr_from_dense(d),
    csc_from_dense(d),
    rebuilt,
    x + x,
    x + d,
    x - x,
    -x,
    x * d,
    structured_dot(x, d.T),
    indptr,
]
for mode in (None, "FAST_COMPILE"):
    fn = pytensor.function([x, y, d], outputs, mode=mode)
    res = fn(a_csr, a_csc, dense)
    assert tuple(res[0]) == (3, 4)
    assert res[1].format == "csc" and np.array_equal(res[1].toarray(), dense.T)
    assert np.array_equal(res[2].toarray(), dense.T)
    assert isinstance(res[3], np.ndarray) and np.array_equal(res[3], dense)
    assert np.array_equal(res[4], dense)
    assert res[5].format == "csr" and np.array_equal(res[5].toarray(), dense)
    assert res[6].format == "csc" and np.array_equal(res[6].toarray(), dense)
    assert np.array_equal(res[7].toarray(), 2 * dense)
    assert sp.issparse(res[8]) and np.array_equal(res[8].toarray(), 2 * dense)
    assert isinstance(res[9], np.ndarray) and np.array_equal(res[9], 2 * dense)
    assert sp.issparse(res[10]) and res[10].count_nonzero() == 0
    assert np.array_equal(res[11].toarray(), -dense)
    assert sp.issparse(res[12]) and np.array_equal(res[12].toarray(), dense * dense)
    np.testing.assert_allclose(res[13], dense @ dense.T)
    assert np.array_equal(res[14], a_csr.indptr)

assert isinstance(dense_from_sparse, DenseFromSparse)
assert isinstance(csr_from_dense, SparseFromDense) and csr_from_dense.format == "csr"

# --- empty matrices, NaN and float32 ----------------------------------------------
fx = sparse.csr_matrix("fx", dtype="float32")
fn = pytensor.function([fx], [fx.T, fx.toarray()], mode="FAST_COMPILE")
empty = sp.csr_matrix((0, 5), dtype="float32")
tr, dn = fn(empty)
assert tr.shape == (5, 0) and dn.shape == (0, 5) and dn.dtype == np.float32
with_nan = sp.csr_matrix(np.array([[np.nan, 0.0], [0.0, 1.0]], dtype="float32"))
tr, dn = fn(with_nan)
assert np.isnan(dn[0, 0]) and tr.dtype == np.float32

# --- gradients ------------------------------------------------------------------------
w = np.arange(12.0).reshape(3, 4)
cost = (dense_from_sparse(csr_from_dense(d)) * w).sum()
g = pytensor.function([d], grad(cost, d))(dense)
np.testing.assert_allclose(g, w * (dense != 0))  # structured: stored entries only
cost = (DenseFromSparse(structured=False)(csc_from_dense(d)) * w).sum()
g = pytensor.function([d], grad(cost, d))(dense)
np.testing.assert_allclose(g, w)
e = pt.dmatrix("e")
cost = (structured_dot(csr_from_dense(d), e) ** 2).sum()
gd, ge = pytensor.function([d, e], grad(cost, [d, e]))(dense, w.T)
g_out = 2 * dense @ w.T
np.testing.assert_allclose(gd, (g_out @ w) * (dense != 0))
np.testing.assert_allclose(ge, dense.T @ g_out)

# --- shared sparse values ------------------------------------------------------------------
s = pytensor.shared(sp.csc_matrix(np.eye(3)), name="s")
assert isinstance(s, SparseTensorSharedVariable) and s.format == "csc" and s.dtype == "float64"
step = pytensor.function([], s.toarray().sum(), updates=[(s, s + s)])
assert step() == 3.0
assert np.array_equal(s.get_value().toarray(), 2 * np.eye(3))
assert sparse.shared(sp.csr_matrix(np.eye(2))).format == "csr"

# --- indexing, storage, sums, comparisons ----------------------------------------------------
xi = sparse.csr_matrix("xi", dtype="float64")
v = pt.dvector("v")
outs = [
    xi[1:, :2],
    xi[0, 3],
    xi[[0, 2]],
    xi[[0, 2], [0, 1]],
    sparse.hstack([xi, xi], format="csr"),
    sparse.vstack([xi, xi]),
    sparse.clean(xi),
    sparse.sp_sum(xi, axis=0),
    xi.sum(),
    sparse.col_scale(xi, v),
    xi > xi,
    sparse.square_diagonal(pt.dvector("dg")),
]
fn = pytensor.function([xi, v, outs[-1].owner.inputs[0]], outs, mode="FAST_COMPILE")
dg = np.array([1.0, 0.0, 2.0])
r = fn(a_csr, np.arange(4.0), dg)
assert np.array_equal(r[0].toarray(), dense[1:, :2]) and r[0].format == "csr"
assert r[1] == 2.0
assert np.array_equal(r[2].toarray(), dense[[0, 2]])
assert np.array_equal(r[3], np.array([1.5, 4.0]))
assert r[4].format == "csr" and r[4].shape == (3, 8)
assert r[5].format == "csc" and r[5].shape == (6, 4)
assert np.array_equal(r[6].toarray(), dense)
np.testing.assert_allclose(r[7], dense.sum(axis=0))
np.testing.assert_allclose(r[8], dense.sum())
np.testing.assert_allclose(r[9].toarray(), dense * np.arange(4.0))
assert r[10].dtype == np.uint8 and r[10].count_nonzero() == 0
assert np.array_equal(r[11].toarray(), np.diag(dg))
assert sparse.diag(sparse.csc_matrix()).type.ndim == 1
dd = pt.dmatrix("dd")
dot_fn = pytensor.function([xi, dd], [sparse.dot(xi, dd), sparse.dot(dd.T, xi.T)], mode="FAST_COMPILE")
r1, r2 = dot_fn(a_csr, np.ones((4, 2)))
assert isinstance(r1, np.ndarray) and np.allclose(r1, dense @ np.ones((4, 2)))
assert np.allclose(r2, np.ones((2, 4)) @ dense.T)

print("sparse compat script: OK")

# --- structured element-wise functions, vector ops, products with sparse results -------------
import pytensor.sparse.math as psm
from pytensor.sparse.linalg import block_diag
from pytensor.sparse.rewriting import (
    CSMGradC, SamplingDotCSR, StructuredDotCSC, UsmmCscDense, local_structured_dot, sd_csc, sd_csr,
)

xs = sparse.csr_matrix("xs", dtype="float64")
xc = sparse.csc_matrix("xc", dtype="float64")
vv = pt.dvector("vv")
m1, m2 = pt.dmatrix("m1"), pt.dmatrix("m2")
a_small = sp.csr_matrix(np.array([[0.5, 0.0, 2.0], [0.0, 0.0, 1.5], [3.0, 0.25, 0.0]]))
ad = a_small.toarray()
vec = np.array([1.0, -2.0, 0.5])
mm = np.arange(9.0).reshape(3, 3) / 10
outs = [
    psm.structured_exp(xs), psm.structured_sigmoid(xs), psm.sqrt(xs), psm.structured_pow(xs, 2),
    psm.structured_add(xs, 1.0), psm.abs(psm.neg(xs)), psm.mul_s_v(xs, vv), psm.structured_add_s_v(xs, vv),
    psm.add_s_s_data(xs, xs), psm.true_dot(xs, m1), psm.sampling_dot(m1, m2, xs),
    psm.usmm(pt.constant(2.0), xs, m1, m2), psm.structured_dot(xc, m1), sparse.csm_properties(xc)[0],
    psm.sp_sum(xc, axis=1), psm.dot(m1, xc), psm.add(xc, m1), psm.multiply(xc, m1),
]
for mode in ("FAST_COMPILE", "FAST_RUN"):
    f = pytensor.function([xs, xc, vv, m1, m2], outs, mode=mode)
    r = f(a_small, a_small.tocsc(), vec, mm, mm.T)
    pattern = ad != 0
    np.testing.assert_allclose(r[0].toarray(), np.where(pattern, np.exp(ad), 0))
    np.testing.assert_allclose(r[1].toarray(), np.where(pattern, 1 / (1 + np.exp(-ad)), 0))
    np.testing.assert_allclose(r[2].toarray(), np.sqrt(ad))
    np.testing.assert_allclose(r[3].toarray(), ad**2)
    np.testing.assert_allclose(r[4].toarray(), np.where(pattern, ad + 1, 0))
    np.testing.assert_allclose(r[5].toarray(), ad)
    np.testing.assert_allclose(r[6].toarray(), ad * vec)
    np.testing.assert_allclose(r[7].toarray(), np.where(pattern, ad + vec, 0))
    np.testing.assert_allclose(r[8].toarray(), 2 * ad)
    assert r[9].format == "csr"
    np.testing.assert_allclose(r[9].toarray(), ad @ mm)
    np.testing.assert_allclose(r[10].toarray(), pattern * ad * (mm @ mm))
    np.testing.assert_allclose(r[11], 2 * ad @ mm + mm.T)
    np.testing.assert_allclose(r[12], ad @ mm)
    np.testing.assert_allclose(np.sort(r[13]), np.sort(a_small.data))
    np.testing.assert_allclose(r[14], ad.sum(axis=1))
    np.testing.assert_allclose(r[15], mm @ ad)
    np.testing.assert_allclose(r[16], ad + mm)
    np.testing.assert_allclose(r[17].toarray(), ad * mm)

# the array-level ops the sparse rewrites produce
csc = a_small.tocsc()
T = pt.as_tensor_variable
np.testing.assert_allclose(sd_csc(T(csc.data), T(csc.indices), T(csc.indptr), T(np.int32(3)), T(mm)).eval(), ad @ mm)
np.testing.assert_allclose(sd_csr(T(a_small.data), T(a_small.indices), T(a_small.indptr), T(mm)).eval(), ad @ mm)
# SamplingDotCSR and UsmmCscDense have only a C implementation in PyTensor: build them only.
z_data, z_ind, z_ptr = SamplingDotCSR()(
    T(mm), T(mm.T), T(a_small.data), T(a_small.indices), T(a_small.indptr), T(np.int32(3))
)
assert z_data.type.ndim == 1 and z_ind.type.dtype == "int32" and z_ptr.type.dtype == "int32"
u = UsmmCscDense(inplace=False)(
    T(np.ones((1, 1))), T(csc.data), T(csc.indices), T(csc.indptr), T(np.int32(3)), T(mm), T(np.zeros((3, 3)))
)
assert u.type.ndim == 2 and str(u.owner.op) == "UsmmCscDense{no_inplace}"
assert CSMGradC is not None and local_structured_dot is not None

# block_diag of sparse (or dense) matrices is sparse
bd = block_diag(a_small, sp.csr_matrix(np.eye(2)), format="csr").eval()
assert bd.format == "csr" and bd.shape == (5, 5)
np.testing.assert_allclose(bd.toarray()[:3, :3], ad)

# pt.dot of a sparse operand is a StructuredDot, as PyTensor dispatches it
assert isinstance(pt.dot(xs, m1).owner.op, psm.StructuredDot)

print("sparse compat script (round 4): OK")

# --- structure ops compiled in the default mode: dtypes, empty and unsorted matrices ---------
from pytensor.sparse import construct_sparse_from_list


def _unsorted(m):
    """``m`` with the indices of each row / column stored in reverse order."""
    m = m.copy()
    for k in range(len(m.indptr) - 1):
        lo, hi = m.indptr[k], m.indptr[k + 1]
        m.indices[lo:hi] = m.indices[lo:hi][::-1].copy()
        m.data[lo:hi] = m.data[lo:hi][::-1].copy()
    m.has_sorted_indices = False
    return m


rows_i = np.array([0, 2, -1])
for dtype in ("float32", "int64"):
    xr = sparse.csr_matrix("xr", dtype=dtype)
    yc = sparse.csc_matrix("yc", dtype=dtype)
    dm = pt.matrix("dm", dtype=dtype)
    outs = [
        sparse.remove0(xr),
        sparse.ensure_sorted_indices(yc),
        sparse.diag(xr[:3, :3]),
        xr[::-1, 1:3],
        yc[1:, ::2],
        sparse.get_item_scalar(yc, (2, -1)),
        sparse.get_item_list(xr, rows_i),
        sparse.get_item_list(yc, rows_i),
        sparse.get_item_2lists(yc, rows_i, np.array([1, 0, 3])),
        sparse.eq(xr, sparse.csr_from_dense(dm)),
        sparse.lt(xr, dm),
        sparse.ge(yc, dm),
        construct_sparse_from_list(dm, dm[:3], np.array([0, 2, 2])),
    ]
    fn = pytensor.function([xr, yc, dm], outs)
    base = sp.csr_matrix(np.array([[0, 2, 0, 1], [3, 0, 0, 0], [0, 0, 4, -5], [1, 0, 0, 2]], dtype=dtype))
    base.data[0] = 0  # an explicit zero
    for xv, yv in ((base, _unsorted(base.tocsc())), (_unsorted(base), base.tocsc()),
                   (sp.csr_matrix((4, 4), dtype=dtype), sp.csc_matrix((4, 4), dtype=dtype))):
        xd, yd = xv.toarray(), yv.toarray()
        dv = np.arange(16, dtype=dtype).reshape(4, 4) % 3
        r = fn(xv.copy(), yv.copy(), dv)
        assert r[0].format == "csr" and np.count_nonzero(r[0].data) == r[0].nnz
        np.testing.assert_array_equal(r[0].toarray(), xd)
        assert r[1].format == "csc" and np.array_equal(r[1].toarray(), yd)
        assert all(np.all(np.diff(r[1].indices[r[1].indptr[k]:r[1].indptr[k + 1]]) > 0) for k in range(4))
        np.testing.assert_array_equal(r[2], np.diag(xd[:3, :3]))
        np.testing.assert_array_equal(r[3].toarray(), xd[::-1, 1:3])
        np.testing.assert_array_equal(r[4].toarray(), yd[1:, ::2])
        assert r[5] == yd[2, -1]
        np.testing.assert_array_equal(r[6].toarray(), xd[rows_i])
        np.testing.assert_array_equal(r[7].toarray(), yd[rows_i])
        np.testing.assert_array_equal(r[8], yd[rows_i, [1, 0, 3]])
        np.testing.assert_array_equal(r[9].toarray(), (xd == dv).astype(np.uint8))
        np.testing.assert_array_equal(np.asarray(r[10]), (xd < dv).astype(np.uint8))
        np.testing.assert_array_equal(np.asarray(r[11]), (yd >= dv).astype(np.uint8))
        scattered = np.zeros((4, 4), dtype)
        np.add.at(scattered, [0, 2, 2], dv[:3])
        np.testing.assert_array_equal(r[12].toarray(), scattered)

print("sparse compat script (round 5): OK")
