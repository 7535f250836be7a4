"""Typed lists, slices as values, float-literal autocasting, BlockwiseWithCoreShape and the
indexing / constant helpers of tensor.basic and tensor.subtensor, written against PyTensor."""

import numpy as np
from numpy.testing import assert_allclose, assert_array_equal

import pytensor
import pytensor.tensor as pt
from pytensor.graph.replace import clone_replace
from pytensor.scalar import autocast_float, autocast_float_as
from pytensor.tensor.basic import (
    get_scalar_constant_value,
    get_underlying_scalar_constant_value,
    make_vector,
)
from pytensor.tensor.blockwise import Blockwise, BlockwiseWithCoreShape
from pytensor.tensor.exceptions import NotScalarConstantError
from pytensor.tensor.shape import reshape, specify_shape
from pytensor.tensor.linalg import Solve
from pytensor.tensor.subtensor import (
    as_index_literal,
    get_canonical_form_slice,
    indexed_result_shape,
    slice_len,
)
from pytensor.tensor.type_other import SliceType, make_slice
from pytensor.typed_list import (
    TypedListType,
    append,
    count,
    extend,
    getitem,
    index_,
    insert,
    length,
    make_list,
    remove,
    reverse,
)

MODE = "FAST_COMPILE"
A = np.arange(4.0).reshape(2, 2)
B = np.zeros((3, 1))

# --- typed lists -----------------------------------------------------------------
lst = TypedListType(pt.dmatrix)()
m = pt.dmatrix()
i = pt.lscalar()
s = SliceType()()
f = pytensor.function(
    [lst, m, i, s],
    [append(lst, m), extend(lst, lst), insert(lst, i, m), remove(lst, m), reverse(lst),
     index_(lst, m), count(lst, m), length(lst), getitem(lst, i), getitem(lst, s), lst[1:]],
    mode=MODE,
)
ap, ex, ins, rm, rev, ind, cnt, ln, gi, gs, sl = f([A, B], B, 0, slice(0, 1, 1))
assert len(ap) == 3 and np.array_equal(ap[2], B)
assert len(ex) == 4 and np.array_equal(ex[3], B)
assert np.array_equal(ins[0], B) and len(ins) == 3
assert len(rm) == 1 and np.array_equal(rm[0], A)
assert np.array_equal(rev[0], B)
assert int(ind) == 1 and int(cnt) == 1 and int(ln) == 2
assert_array_equal(gi, A)
assert len(gs) == 1 and np.array_equal(gs[0], A)
assert len(sl) == 1 and np.array_equal(sl[0], B)
try:
    len(lst)
except TypeError as e:
    assert ".length()" in str(e)
else:
    raise AssertionError("len() of a symbolic typed list must raise")
made = make_list([pt.dvector(), pt.dvector()])
assert made.type == TypedListType(pt.dvector)
assert TypedListType(pt.dvector, depth=1).get_depth() == 1
assert lst.ind(m).owner.op == index_ and lst.length().owner.op == length
j = pt.lscalar()
g = pytensor.function([lst, i, j], getitem(lst, make_slice(i, j)), mode=MODE)  # symbolic bounds
assert len(g([A, B, A], 1, 3)) == 2

# --- float literals: config.cast_policy / autocast_float_as -----------------------
assert autocast_float.dtypes == ("float16", "float32", "float64")
assert (pt.fvector() + 1.5).dtype == "float32"
assert (pt.fvector() + 1.1).dtype == "float64"
with autocast_float_as("float32"):
    assert autocast_float.dtypes == ("float32",)
    assert (pt.fvector() + 1.1).dtype == "float32"
    with autocast_float_as("float64"):
        assert (pt.fvector() + 1.5).dtype == "float64"
assert autocast_float.dtypes == ("float16", "float32", "float64")

# --- BlockwiseWithCoreShape -------------------------------------------------------
a = pt.tensor("a", dtype="float64", shape=(None, 3, 3))
b = pt.tensor("b", dtype="float64", shape=(None, 3))
out = Blockwise(Solve(b_ndim=1))(a, b)
core = pt.as_tensor(np.array([3], dtype="int64"))
op = BlockwiseWithCoreShape([a, b, core], [out])
assert isinstance(op.core_op, Solve)
a_val = np.eye(3) * 2 + np.zeros((4, 3, 3))
b_val = np.ones((4, 3))
assert_allclose(pytensor.function([a, b], op(a, b, core), mode=MODE)(a_val, b_val), b_val / 2)

# --- constants found symbolically ------------------------------------------------
c = pt.constant(np.arange(5.0))
assert get_underlying_scalar_constant_value(c[3]) == 3.0
assert get_underlying_scalar_constant_value(pt.second(pt.vector(), 2.0)) == 2.0
assert get_underlying_scalar_constant_value(pt.constant(np.full(3, 7))) == 7
assert get_underlying_scalar_constant_value(make_vector(1, 2, 3)[np.int64(1)]) == 2
try:
    get_scalar_constant_value(pt.constant(np.full(3, 7)))
except NotScalarConstantError:
    pass
else:
    raise AssertionError("get_scalar_constant_value takes 0-d values only")
value = get_scalar_constant_value(pt.constant(3))
value += 1  # a fresh array: the constant keeps its value
assert get_scalar_constant_value(pt.constant(3)) == 3

# --- rebuilding a graph whose static shapes follow input values --------------------
n = pt.as_tensor_variable(50)
vec = pt.vector("vec")
y = reshape(vec, (100 // n, n))
assert y.type.shape == (2, 50)
assert clone_replace(y, {n: pt.as_tensor_variable(25)}, rebuild_strict=False).type.shape == (4, 25)
mat = pt.matrix("mat")
z = specify_shape(mat, (None, n))
assert clone_replace(z, {n: pt.as_tensor_variable(10)}, rebuild_strict=False).type.shape == (None, 10)

# --- shapes of indexed tensors --------------------------------------------------------
assert as_index_literal(pt.constant(2)) == 2 and as_index_literal(None) is None


def value_of(v):
    """A bound given as a Python int or as a graph."""
    return int(v.eval()) if hasattr(v, "eval") else int(v)


canonical, direction = get_canonical_form_slice(slice(None, None, -1), 5)
assert [value_of(v) for v in (canonical.start, canonical.stop, canonical.step, direction)] == [0, 5, 1, -1]
assert value_of(slice_len(slice(1, None, 2), 7)) == 3
x = pt.tensor3("x")
shape = indexed_result_shape(x.shape, (slice(None), np.array([0, 2, 1]), slice(1, None)))
x_val = np.zeros((2, 4, 5))
shape_fn = pytensor.function([x], list(shape), mode=MODE, on_unused_input="ignore")
assert tuple(int(d) for d in shape_fn(x_val)) == x_val[:, [0, 2, 1], 1:].shape

print("arrays_lists: ok")
