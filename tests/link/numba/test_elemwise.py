"""Elemwise and DimShuffle kernels against ``perform``: shapes, layouts, in-place.

The fused chain of the benchmark is the main subject: it exercises the
flat vectorised loop, the nested loop for strided inputs, the block
fallback to libm when ``sin`` gets an argument outside its fast range, and
NaN/inf inputs. Kernels are built once per node and reused across the
parametrisations (compiling is the slow part).
"""

import functools

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent.tensor as lt  # noqa: E402
from lucent.graph.fg import FunctionGraph  # noqa: E402
from lucent.link.numba.dispatch import numba_funcify  # noqa: E402
from lucent.scalar import basic as ps  # noqa: E402
from lucent.tensor.elemwise import DimShuffle, Elemwise  # noqa: E402
from lucent.tensor.rewriting.elemwise import fusion_rewriter  # noqa: E402

RNG = np.random.default_rng(7)


def perform(node, values):
    storage = [[None] for _ in node.outputs]
    node.op.perform(node, [v.copy() if isinstance(v, np.ndarray) else v for v in values], storage)
    return [s[0] for s in storage]


def check(node, kernel, values, rtol=1e-13):
    got = kernel(*values)
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, perform(node, values)):
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape, g.dtype, e.dtype)
        if e.dtype.kind == "f":
            np.testing.assert_allclose(g, e, rtol=rtol, atol=1e-15, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, e)
    return got


def fused(inputs, output):
    fg = FunctionGraph(inputs, [output])
    fusion_rewriter.apply(fg)
    node = fg.outputs[0].owner
    assert len(fg.apply_nodes) == 1 or isinstance(node.op, Elemwise)
    return node


def chain(x, y):
    return lt.exp(-x * x) * lt.sin(y) + lt.log1p(abs(x * y)) - lt.tanh(x) / (1 + y * y)


@functools.lru_cache(maxsize=None)
def chain_kernel(ndim):
    x, y = lt.tensor(dtype="float64", shape=(None,) * ndim), lt.tensor(dtype="float64", shape=(None,) * ndim)
    node = fused([x, y], chain(x, y))
    return node, numba_funcify(node.op, node)


@pytest.mark.parametrize("layout", ["c", "transposed", "strided"])
def test_chain_matches_perform(layout):
    node, k = chain_kernel(2)
    a, b = RNG.standard_normal((37, 1100)), RNG.standard_normal((37, 1100)) * 3
    if layout == "transposed":
        a, b = a.T.copy().T, b.T.copy().T
    elif layout == "strided":
        a, b = a[:, ::2], b[:, 1::2]
    check(node, k, [a, b])


def test_chain_special_values_and_libm_fallback():
    """NaN/inf and sin arguments beyond the fast range recompute the block with libm."""
    node, k = chain_kernel(1)
    a, b = RNG.standard_normal(3000), RNG.standard_normal(3000)
    b[[5, 1500]] = [1e7, -3e15]
    a[[7, 9, 11]] = [np.nan, np.inf, -np.inf]
    b[[13, 2999]] = [np.nan, np.inf]
    with np.errstate(all="ignore"):
        check(node, k, [a, b])
        check(node, k, [a[::-1], b[::-1]])  # nested path with the same values


def test_zero_d_and_empty():
    node, k = chain_kernel(0)
    check(node, k, [np.array(0.3), np.array(-1.2)])
    node, k = chain_kernel(2)
    for shape in [(0, 5), (3, 0), (0, 0)]:
        check(node, k, [np.zeros(shape), np.zeros(shape)])


def test_broadcasting_static_ones_and_scalar_constants():
    x = lt.matrix("x")
    row = lt.tensor(dtype="float64", shape=(1, None))
    col = lt.tensor(dtype="float32", shape=(None, 1))
    node = fused([x, row, col], lt.tanh(x + row) * col - 2.5)
    k = numba_funcify(node.op, node)
    a = RNG.standard_normal((9, 6))
    r = RNG.standard_normal((1, 6))
    c = RNG.standard_normal((9, 1)).astype("float32")
    check(node, k, [a, r, c])
    check(node, k, [a.T.copy().T, r, c])
    with pytest.raises(ValueError, match="static length 1"):
        k(a, RNG.standard_normal((2, 6)), c)
    with pytest.raises(ValueError, match="not compatible"):
        k(a, r, RNG.standard_normal((8, 1)).astype("float32"))


def test_runtime_broadcasting_is_refused_like_perform():
    x, y = lt.matrix("x"), lt.matrix("y")
    node = (x + y).owner
    k = numba_funcify(node.op, node)
    with pytest.raises(ValueError):
        perform(node, [np.ones((3, 4)), np.ones((1, 4))])
    with pytest.raises(ValueError):
        k(np.ones((3, 4)), np.ones((1, 4)))


@pytest.mark.parametrize("dtypes", [("int8", "float32"), ("uint8", "int16"), ("bool", "int64"), ("float32", "float64")])
def test_mixed_dtypes(dtypes):
    x, y = lt.vector(dtype=dtypes[0]), lt.vector(dtype=dtypes[1])
    node = fused([x, y], (x * y + x) // 3 if "float" not in "".join(dtypes) else lt.exp(x) * y - x)
    k = numba_funcify(node.op, node)
    vals = [np.arange(-20, 20).astype(d) if d != "bool" else np.arange(40) % 3 == 0 for d in dtypes]
    check(node, k, vals, rtol=1e-6)


def test_all_scalar_like_inputs_and_several_outputs():
    from lucent.scalar.composite import Composite

    a, b = ps.float64(), ps.float64()
    comp = Composite([a, b], [a + b, ps.exp(a) * b, ps.lt(a, b)])
    x = lt.tensor(dtype="float64", shape=(1, 1))
    y = lt.matrix("y")
    node = Elemwise(comp).make_node(x, y)
    k = numba_funcify(node.op, node)
    outs = check(node, k, [np.array([[0.5]]), RNG.standard_normal((4, 5))])
    assert len(outs) == 3 and outs[2].dtype == bool


class TestInplace:
    @functools.cached_property
    def kernels(self):
        x, y = lt.vector("x"), lt.vector("y")
        plain = Elemwise(ps.mul, {0: 0}).make_node(x, y)
        fused_node = fused([x, y], chain(x, y))
        sin_node = Elemwise(fused_node.op.scalar_op, {0: 0}).make_node(x, y)
        return [(n, numba_funcify(n.op, n)) for n in (plain, sin_node)]

    def test_writes_into_the_destroyed_input(self):
        for node, k in self.kernels:
            a, b = RNG.standard_normal(2000), RNG.standard_normal(2000)
            b[100] = 1e9  # forces the buffered libm fallback of one block
            expected = perform(node, [a, b])[0]
            out = k(a, b)
            assert out is a or np.shares_memory(out, a)
            np.testing.assert_allclose(a, expected, rtol=1e-13)

    def test_readonly_or_overlapping_target_gets_a_new_array(self):
        node, k = self.kernels[0]
        a = RNG.standard_normal(100)
        ro = a.copy()
        ro.flags.writeable = False
        out = k(ro, a)
        assert not np.shares_memory(out, ro)
        np.testing.assert_allclose(out, ro * a)
        c = RNG.standard_normal(101)
        expected = c[1:] * c[:-1]
        out = k(c[1:], c[:-1])  # overlapping views in a different place
        np.testing.assert_allclose(out, expected)
        d = RNG.standard_normal(50)
        out = k(d, d)  # the same view twice is safe in place
        assert out is d or np.shares_memory(out, d)


@pytest.mark.parametrize(
    "in_shape, order",
    [((2, 3), (1, 0)), ((2, 3), ("x", 0, "x", 1)), ((1, 3), (1,)), ((1, 1), ()), ((), ("x", "x")),
     ((4, 1, 5), (2, "x", 0))],
)
def test_dimshuffle_is_a_view_like_perform(in_shape, order):
    x = lt.tensor(dtype="float64", shape=tuple(1 if s == 1 else None for s in in_shape))
    node = DimShuffle(len(in_shape), order).make_node(x)
    k = numba_funcify(node.op, node)
    a = RNG.standard_normal(in_shape)
    got = k(a)
    (expected,) = perform(node, [a])
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    assert np.shares_memory(got, a)


def test_vecmath_functions_are_inlined_into_the_kernel_by_llvm():
    """The transcendental helpers carry ``alwaysinline``: a loop calling them calls none of them.

    Compiled here without the disk cache, whose entries cannot be inspected.
    """
    from numba import njit

    from lucent.link.numba.dispatch import vecmath

    @njit
    def loop(a):
        out = np.empty_like(a)
        for i in range(a.size):
            out[i] = vecmath.vtanh(a[i]) + vecmath.vexp(a[i]) * vecmath.vlog1p(a[i] * a[i])
        return out

    a = RNG.standard_normal(64)
    np.testing.assert_allclose(loop(a), np.tanh(a) + np.exp(a) * np.log1p(a * a), rtol=1e-14)
    ir = loop.inspect_llvm(loop.signatures[0])
    assert "define" in ir
    calls = [line for line in ir.splitlines() if "call " in line and any(f in line for f in ("vexp", "vtanh", "vlog1p"))]
    assert calls == []


def test_each_loop_body_has_its_own_names():
    """A name assigned in two loops costs Numba a quadratic SSA pass: every name is assigned in one body."""
    import re

    from lucent.link.numba.dispatch.elemwise import ElemwiseCodegen

    x, y = lt.dvector("x"), lt.dvector("y")
    node = fused([x, y], lt.sin(chain(x, y)))  # sin adds the range-checked safe body
    source = ElemwiseCodegen(node.op, node).source()
    assigned = re.findall(r"^\s*([a-z]+\d+) = ", source, flags=re.M)
    scalar_names = [n for n in assigned if re.fullmatch(r"[a-z]*[at]\d+", n)]
    assert scalar_names and len(scalar_names) == len(set(scalar_names))


def test_first_length_mismatch_decides_the_message():
    x, y, z = lt.dvector("x"), lt.dvector("y"), lt.dvector("z")
    node = (x + y + z).owner
    if len(node.inputs) != 3:  # canonical add may nest; build the 3-input op directly
        node = Elemwise(ps.add)(x, y, z).owner
    k = numba_funcify(node.op, node)
    with pytest.raises(ValueError, match="dimension 0: an input has length 1"):
        k(np.ones(3), np.ones(1), np.ones(4))
    with pytest.raises(ValueError, match="not compatible in dimension 0$"):
        k(np.ones(3), np.ones(4), np.ones(1))
    assert k(np.ones(3), np.ones(3), np.ones(3)).tolist() == [3.0, 3.0, 3.0]


@pytest.mark.parametrize("shape", [(2, 3, 4), (0, 3), (), (5,)])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int16", "complex128"])
def test_flat_view_is_a_view_that_keeps_its_array_alive(shape, dtype):
    """The flat view of a C array (built without Numba's reshape) has the array's data,
    length ``size`` and a unit step, and owns a reference to the array's memory."""
    import gc

    import numba

    from lucent.link.numba.dispatch.elemwise import flat_view

    @numba.njit
    def flat(x):
        return flat_view(x)

    @numba.njit
    def flat_of_fresh(n):
        return flat_view(np.arange(n * 2.0).reshape((n, 2)))

    a = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    g = flat(a)
    assert g.shape == (a.size,) and g.strides == (a.itemsize,)
    assert a.size == 0 or np.shares_memory(g, a)
    np.testing.assert_array_equal(g, a.ravel())
    g = flat_of_fresh(4)
    gc.collect()
    np.testing.assert_array_equal(g, np.arange(8.0))


def test_borrowed_flat_view_reads_and_writes_the_array():
    """Kernels read their arguments and write their returned outputs through it."""
    from numba import njit

    from lucent.link.numba.dispatch.elemwise import borrowed_flat_view

    @njit
    def double_into(x, out):
        f = borrowed_flat_view(x)
        g = borrowed_flat_view(out)
        for k in range(f.size):
            g[k] = 2.0 * f[k]

    x = np.arange(12.0).reshape(3, 4)
    out = np.empty_like(x)
    double_into(x, out)
    np.testing.assert_array_equal(out, 2 * x)


@pytest.mark.parametrize("name", ["flat_view", "borrowed_flat_view"])
def test_flat_views_of_arrays_not_typed_c(name):
    """Typed A or F, the array must be C-contiguous when the view is made: a view then, an error otherwise.

    (Generated kernels take these views only behind ``is_c_layout``; typed
    A or F that branch is compiled but never runs.)
    """
    from numba import njit

    from lucent.link.numba.dispatch import elemwise

    view = getattr(elemwise, name)

    @njit("float64(float64[:, :])")  # layout A whatever the argument's
    def total(a):
        f = view(a)
        s = 0.0
        for k in range(f.size):
            s += f[k] * (k + 1)
        return s

    x = np.arange(12.0).reshape(3, 4)
    assert total(x) == float((x.ravel() * np.arange(1, 13)).sum())
    assert total(np.empty((0, 4))) == 0.0
    assert total(np.arange(4.0).reshape(4, 1)[::1, :]) == float((np.arange(4.0) * np.arange(1, 5)).sum())
    with pytest.raises(ValueError, match="C-contiguous"):
        total(np.asfortranarray(x))
    with pytest.raises(ValueError, match="C-contiguous"):
        total(x[:, ::2])


@pytest.mark.parametrize(
    "order, keeps_order", [(("x", 0, 1), True), ((0, "x", 1, "x"), True), ((1, 0), False), ((1, "x", 0), False)]
)
def test_a_dimshuffle_keeping_the_order_of_a_c_array_is_typed_c(order, keeps_order):
    """Kernels reading such a view take their contiguous loop; a transpose stays an A view."""
    from numba import types

    from lucent.tensor.elemwise import DimShuffle

    x = lt.dmatrix("x")
    node = DimShuffle(2, order)(x).owner
    kernel = numba_funcify(node.op, node)
    value = RNG.standard_normal((3, 4))
    got = kernel(value)
    np.testing.assert_array_equal(got, np.transpose(value, [o for o in order if o != "x"]).reshape(got.shape))
    assert np.shares_memory(got, value)
    (sig,) = [s for s in kernel.overloads if s[0] == types.Array(types.float64, 2, "C")]
    assert (kernel.overloads[sig].signature.return_type.layout == "C") == keeps_order
