"""PyTensor's array library beyond the basics: raise_op, extra_ops, sort, pad and
the array helpers of tensor.basic / tensor.shape, checked against NumPy."""

import numpy as np
from numpy.testing import assert_allclose, assert_array_equal

import pytensor
import pytensor.tensor as pt
from pytensor.raise_op import Assert, CheckAndRaise, assert_op
from pytensor.tensor import basic as ptb
from pytensor.tensor import extra_ops as eo
from pytensor.tensor.pad import pad
from pytensor.tensor.shape import shape_padaxis, shape_padleft, shape_padright, shape_tuple, specify_broadcastable
from pytensor.tensor.sort import ArgSortOp, SortOp, argsort, sort

x = pt.dmatrix("x")
v = pt.dvector("v")
iv = pt.lvector("iv")
X = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 1.0]])
V = np.array([0.5, 2.5, 1.0])
IV = np.array([2, 0, 1, 1, 4])

# raise_op: the check passes the value through, or raises its exception with its message
checked = Assert("v too long")(v, v.shape[0] < 4)
f = pytensor.function([v], checked * 2)
assert_allclose(f(V), V * 2)
try:
    f(np.zeros(5))
    raise RuntimeError("Assert did not raise")
except AssertionError as e:
    assert "v too long" in str(e)


f = pytensor.function([v], CheckAndRaise(ValueError, "needs positive")(v, pt.all(v > 0)))
assert_allclose(f(V), V)
try:
    f(-V)
    raise RuntimeError("CheckAndRaise did not raise")
except ValueError as e:
    assert "needs positive" in str(e)
f = pytensor.function([v], assert_op(v, 1) + 1)  # always true: removed when compiled
assert not any(isinstance(n.op, CheckAndRaise) for n in f.maker.fgraph.apply_nodes)

# extra_ops
outs = [
    eo.cumsum(x, axis=-1), eo.cumprod(x, axis=0), eo.cumsum(x), eo.diff(x, n=1, axis=0),
    eo.searchsorted(sort(v), V, side="right"), eo.bincount(iv, minlength=7),
    eo.bincount(iv, weights=pt.cast(iv, "float64")), eo.squeeze(x[:1], axis=0),
    eo.compress(np.array([1, 0, 1]), x, axis=1), eo.repeat(x, np.array([2, 0, 1]), axis=1), eo.repeat(v, 2),
    eo.bartlett(5), eo.fill_diagonal(x, 7.0), eo.fill_diagonal_offset(x, 7.0, -1), eo.to_one_hot(iv, 5),
    eo.broadcast_to(v, (2, 3)), eo.linspace(0.0, 1.0, 5), eo.geomspace(1.0, 100.0, 3), eo.logspace(0.0, 2.0, 3),
    eo.concat_with_broadcast([x, pt.ones((1, 3))], axis=0),
]
expected = [
    np.cumsum(X, -1), np.cumprod(X, 0), np.cumsum(X), np.diff(X, 1, 0),
    np.searchsorted(np.sort(V), V, side="right"), np.bincount(IV, minlength=7),
    np.bincount(IV, IV.astype(float)), X[0], np.compress([1, 0, 1], X, axis=1),
    np.repeat(X, [2, 0, 1], axis=1), np.repeat(V, 2), np.bartlett(5),
    np.where(np.eye(2, 3) == 1, 7.0, X), np.where(np.eye(2, 3, -1) == 1, 7.0, X), np.eye(5)[IV],
    np.broadcast_to(V, (2, 3)), np.linspace(0, 1, 5), np.geomspace(1, 100, 3), np.logspace(0, 2, 3),
    np.concatenate([X, np.ones((1, 3))]),
]
f = pytensor.function([x, v, iv], outs, on_unused_input="ignore")
for got, exp in zip(f(X, V, IV), expected):
    assert_allclose(got, exp, rtol=1e-6)

vals, index, inverse, counts = eo.unique(iv, return_index=True, return_inverse=True, return_counts=True)
for got, exp in zip(pytensor.function([iv], [vals, index, inverse, counts])(IV),
                    np.unique(IV, return_index=True, return_inverse=True, return_counts=True)):
    assert_array_equal(got, np.ravel(exp))
rows, cols = eo.unravel_index(iv, (2, 3))
flat = eo.ravel_multi_index((rows, cols), (2, 3))
r, c, fl = pytensor.function([iv], [rows, cols, flat])(IV)
assert_array_equal(r, np.unravel_index(IV, (2, 3))[0])
assert_array_equal(c, np.unravel_index(IV, (2, 3))[1])
assert_array_equal(fl, IV)
a, b = eo.broadcast_arrays(v, x)
assert_allclose(pytensor.function([x, v], a)(X, V), np.broadcast_to(V, (2, 3)))
assert len(eo.broadcast_shape(v, x)) == 2

f = pytensor.function([iv], eo.repeat(pt.arange(5), iv))
try:
    f(-IV)
    raise RuntimeError("repeat with negative counts did not raise")
except ValueError:
    pass

# sort
f = pytensor.function([x], [sort(x, axis=0), sort(x, axis=None), argsort(x, axis=-1, stable=True),
                            argsort(x, kind="mergesort", axis=0)])
s0, sn, a1, a0 = f(X)
assert_allclose(s0, np.sort(X, 0))
assert_allclose(sn, np.sort(X, None))
assert_array_equal(a1, np.argsort(X, -1, stable=True))
assert_array_equal(a0, np.argsort(X, 0, kind="mergesort"))
assert isinstance(sort(x).owner.op, SortOp) and isinstance(argsort(x).owner.op, ArgSortOp)
g = pytensor.function([v], pytensor.grad((sort(v) * np.arange(3.0)).sum(), v))(V)
assert_allclose(g, np.arange(3.0)[np.argsort(np.argsort(V))])

# tensor.basic gaps
m3 = pt.dmatrix("m3")
M3 = np.arange(9.0).reshape(3, 3) + 1
outs = [
    pt.nonzero(x)[1], pt.flatnonzero(x), pt.nonzero_values(x), pt.tri(3, 4, 1), pt.tril(m3), pt.triu(m3, 1),
    pt.tril_indices(3)[1], pt.triu_indices_from(m3, 1)[0], pt.identity_like(m3), pt.full((2, 2), 3.0),
    pt.full_like(x, 2.0), pt.roll(x, 1, axis=1), pt.roll(x, -2), pt.horizontal_stack(x, x),
    pt.vertical_stack(x, x), pt.flatten(x), pt.tile(v, (2, 1)), pt.inverse_permutation(np.array([2, 0, 1])),
    pt.permute_row_elements(x, np.array([2, 0, 1])), pt.diagonal(m3, 1), pt.trace(m3), pt.diag(v),
    pt.diag(m3, -1), pt.choose(np.array([0, 1, 0]), [v, v * 10]), pt.atleast_3d(v), pt.expand_dims(v, (0, 2)),
    pt.take_along_axis(x, argsort(x, axis=1), axis=1), x[ptb.ix_([1, 0], [2, 1])], pt.matrix_transpose(x),
    pt.where(x)[0], ptb.alloc_diag(v, offset=1), pt.empty((2, 3)).shape,
    pt.empty_like(x).shape, pt.atleast_1d(pt.as_tensor(3.0)),
]
expected = [
    np.nonzero(X)[1], np.flatnonzero(X), X[X != 0], np.tri(3, 4, 1), np.tril(M3), np.triu(M3, 1),
    np.tril_indices(3)[1], np.triu_indices_from(M3, 1)[0], np.eye(3), np.full((2, 2), 3.0),
    np.full_like(X, 2.0), np.roll(X, 1, axis=1), np.roll(X, -2), np.hstack([X, X]),
    np.vstack([X, X]), X.ravel(), np.tile(V, (2, 1)), np.argsort([2, 0, 1]),
    X[:, [2, 0, 1]], np.diagonal(M3, 1), np.trace(M3), np.diag(V),
    np.diag(M3, -1), np.choose([0, 1, 0], [V, V * 10]), np.atleast_3d(V).reshape(1, 1, 3) * 0 + V,
    np.expand_dims(V, (0, 2)), np.sort(X, 1), X[np.ix_([1, 0], [2, 1])], X.T,
    np.where(X)[0], np.diag(V, 1), [2, 3], [2, 3], [3.0],
]
f = pytensor.function([x, v, m3], outs, on_unused_input="ignore")
for i, (got, exp) in enumerate(zip(f(X, V, M3), expected)):
    assert_allclose(got, exp, err_msg=str(i))
parts = pt.split(x, [1, 2], n_splits=2, axis=1)
p0, p1 = pytensor.function([x], parts)(X)
assert_allclose(p0, X[:, :1]) and assert_allclose(p1, X[:, 1:])

# tensor.shape helpers
y = specify_broadcastable(pt.dmatrix("y"), 0)
assert y.type.shape == (1, None)
assert shape_padleft(v).type.ndim == 2 and shape_padright(v, 2).type.ndim == 3
assert shape_padaxis(v, 1).type.shape == (None, 1)
assert len(shape_tuple(x)) == 2

# pad: every NumPy mode
cases = [
    ("constant", {"constant_values": ((1, 2), (3, 4))}), ("edge", {}), ("linear_ramp", {"end_values": (5, -4)}),
    ("maximum", {}), ("minimum", {"stat_length": 1}), ("mean", {}), ("reflect", {}), ("symmetric", {}),
    ("wrap", {}),
]
f = pytensor.function([x], [pad(x, ((1, 2), (2, 1)), mode, **kw) for mode, kw in cases])
for got, (mode, kw) in zip(f(X), cases):
    assert_allclose(got, np.pad(X, ((1, 2), (2, 1)), mode, **kw), err_msg=mode)
